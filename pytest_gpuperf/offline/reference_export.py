"""``gpuperf offline references CACHE --into DIR``: a machine's stored references as a read-only layer for others.

What a first run on a card measures and a warm run replays — the tuning suite's exhaustive tables and
``tuned_workgroup``'s picks, the kernel-class suite's Nsight Compute profile — is kept in the cache
directory, keyed by kernel source, device, driver and toolkit (:data:`~..paths.REFERENCE_STORES`). This
copies the entries of such a cache (a machine's ``$GPUPERF_CACHE``, or the ``cache/`` a bundle's ``run.sh``
filled) into a folder of ``<store>/<key>.json.xz`` files that ``$GPUPERF_REFERENCES`` can name on every
machine of a fleet (a shared, read-only folder), or that the project ships for the cards it measured
(:data:`~..paths.REVIEWED_REFERENCES`). A machine whose card, driver, toolkit and sources match a key then
replays the entry as a warm run does — the tuning picks and the optimum re-timed and checked on its own card,
the profile spot-checked against its own counters — and a machine that matches none measures as before.

Every entry is checked against its store's schema and must name its key's parts (``key_fields``: written
by this version of the plugin); ``--device`` keeps the entries of those device keys only. An entry already
in the folder under the same key is kept as it is (the reviewed one stays) unless ``replace`` is set. A
cache folder that does not exist, or holds no entry of either store, is an error, never "nothing to copy".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..errors import GpuPerfError
from ..paths import REFERENCE_STORES, safe_name
from ..schemas import SchemaError, validate
from ..schemas.keyed_store import SHIPPED_SUFFIX
from ..util.jsonio import read_bytes, read_text, write_xz


@dataclass
class Exported:
    """What :func:`export` did: the files written, those kept as they were, the entries left out and why."""

    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def describe(self) -> str:
        lines = [f"gpuperf offline references: {len(self.written)} written, {len(self.kept)} already there "
                 f"(kept), {len(self.skipped)} left out"]
        lines += [f"  left out: {why}" for why in self.skipped]
        return "\n".join(lines)


def _entries(cache: Path) -> list[tuple[str, Path]]:
    """(store folder, entry file) of every entry of a reference store under ``cache``."""
    return [(folder, f) for folder in REFERENCE_STORES for f in sorted((cache / folder).glob("*.json"))]


def _same(path: Path, data: bytes) -> bool:
    """Whether the xz file at ``path`` holds ``data``."""
    try:
        return read_bytes(path) == data
    except (OSError, ValueError, EOFError):
        return False


def export(cache: Path, into: Path, devices: Sequence[str] = (), replace: bool = False) -> Exported:
    """Copy the reference entries of ``cache`` (of ``devices`` only, where given) into ``into``."""
    if not cache.is_dir():
        raise GpuPerfError(f"{cache}: no such folder; name a cache folder (a machine's $GPUPERF_CACHE or "
                           "~/.cache/pytest-gpuperf, or the cache/ of a bundle that ran)")
    found = _entries(cache)
    if not found:
        raise GpuPerfError(f"{cache} holds no entry under {' or '.join(f'{f}/' for f in REFERENCE_STORES)}: is it "
                           "the cache folder of a machine that ran the tuning or kernel-class suites?")
    wanted = {safe_name(d) for d in devices}
    out, seen = Exported(), set()
    for folder, f in found:
        try:
            entry = json.loads(read_text(f))
            validate(entry, REFERENCE_STORES[folder], source=str(f))
        except (OSError, ValueError, SchemaError) as exc:
            out.skipped.append(f"{f}: {exc}")
            continue
        device = str(entry.get("device", ""))
        seen.add(device)
        if wanted and device not in wanted:
            continue
        if not isinstance(entry.get("key_fields"), dict):
            out.skipped.append(f"{f}: it names no key_fields (written by an older pytest-gpuperf); run the suites "
                               "again with this version to measure it anew")
            continue
        try:
            name = safe_name(f.stem, "cache key")
        except GpuPerfError as exc:
            out.skipped.append(f"{f}: {exc}")
            continue
        target = into / folder / f"{name}{SHIPPED_SUFFIX}"
        data = json.dumps(entry, sort_keys=True, separators=(",", ":")).encode("utf-8")
        if target.exists() and (not replace or _same(target, data)):
            out.kept.append(target)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        out.written.append(write_xz(target, data))
    if wanted and not (wanted & seen):
        raise GpuPerfError(f"{cache} holds no entry of device {', '.join(sorted(wanted))}; its entries are of "
                           f"{', '.join(sorted(d for d in seen if d)) or 'no device'}")
    return out
