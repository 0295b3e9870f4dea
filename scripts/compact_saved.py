"""Store the saved runs under ``results/`` in fewer bytes without changing what any reader takes from them.

Every tracked ``*.gz`` and ``*.xz`` under the folders named is rewritten in place, at the same path (with
``--xz``, each ``*.json.gz`` becomes ``*.json.xz`` beside it, the ``.gz`` removed, whatever the size, so every
saved run has one form; each kept gate check's plain ``gatecheck.json`` (in a ``gatecheck-*`` folder) becomes
``gatecheck.json.xz``; and each ``*.log.gz`` becomes ``*.log.xz`` where that is smaller and no tracked file
outside those folders names it, with or without ``.gz``, so a doc or test that names a log keeps finding it,
while a reader that asks for ``x.log`` finds either form, :func:`pytest_gpuperf.util.jsonio.saved`):

* a results document (schema ``pytest-gpuperf/1``) in the saved form
  (:func:`pytest_gpuperf.report.results.saved_form`, written by :func:`~pytest_gpuperf.report.results.dumps`):
  compact JSON, each metric's ``info.line`` left out where its verdict is one whose line only restates the
  stored fields (``results.RESTATED_LINE``), and each metric's ``baseline`` holding only the fields its readers
  take (``results.SAVED_BASELINE_KEYS``, the detection power among them: not the copy of the entry's tolerance,
  identity, test and citation, nor the significance test's figures, and a ``delta_rel`` only where the values do
  not give it);
* any other file (logs, CSV, other JSON) with the same bytes inside, only compressed again.

Compression is gzip level 9 with mtime 0, or with ``--zopfli`` Zopfli's gzip encoder (``pip install zopfli``;
the same gzip format, about a tenth fewer bytes, slow), or xz for ``*.xz``
(:func:`pytest_gpuperf.util.jsonio.xz_bytes`), so the same input gives the same file. A file is replaced only
where the new one is smaller.

``--check REV`` compares every tracked file under the folders with the one at git revision ``REV`` (an ``x.xz``
with ``x.gz`` there, where it was converted since): a results document must equal the one at ``REV`` less the
restated lines and the baseline fields the saved form leaves out, key for key and float for float, and still
follow the results schema; any other file must hold the same bytes. It prints one line per file that differs
and exits 1 if any does.

    python3 scripts/compact_saved.py --zopfli results
    python3 scripts/compact_saved.py --xz results && git add -A results
    python3 scripts/compact_saved.py --delta results/nvidia-h200
    python3 scripts/compact_saved.py --delta --anchor results/nvidia-h200
    python3 scripts/compact_saved.py --check main results

``--delta`` stores each saved run of a folder as its difference from the folder's ``aa-1.json.xz``, else, below a
device's folder, from its run with the most metrics (a baseline's or a study's first run), else, in a device's own
folder of unrelated suites, from the run with the most metrics of its own set (``pocl6-2-opencl`` against
``pocl6-1-opencl``: the same name but for the run number; a run of no set stays whole;
:mod:`pytest_gpuperf.util.saved_delta`; about a third of the bytes for a gate check's later runs), where that is
smaller and reads back as the same document; every reader gets the whole document back
(:func:`pytest_gpuperf.util.jsonio.read_bytes`), and the other modes leave a delta as it is.

``--delta --anchor`` on a device's folder stores instead each whole run of its folders (a gate check's
``aa-1.json.xz``, a baseline's or a study's first run) as its difference from the device's anchor
(``../<folder>/aa-1.json.xz``): the complete first run of a folder with the most metrics (a short early run would
save a tenth of what a full one does), the newest among equals — the card's newest complete run, stored whole
again where it had been stored as a delta — where that is smaller and reads back as the same document, and each
whole run of the device's own folder as its difference from the anchor (``<folder>/aa-1.json.xz``) likewise:
copied out of the device's folder alone, such a run names the folder to copy with it. The anchor stays whole. An
earlier anchor that other folders' runs name is freed where that saves bytes: those runs are stored against the
anchor instead, then it is stored against the anchor like any whole run. A folder's later runs stay the differences from its first run, now read through two deltas, the most a reader
follows: a run whose deltas are themselves the bases of others stays as it is. A device with no gate check (a CPU
device's folder of unrelated suites) is anchored on the newest of the complete runs of its own folder with the most
metrics, and each set's first run is stored against it (``pocl6-1-opencl`` against ``ubuntu2604-1-opencl``): the
same suites on the same device differ in their readings only. A card measured through a second backend (NVIDIA's
OpenCL beside CUDA) has an anchor for each: the other backend's runs are stored against its own fullest complete gate
check's first run (else its own folder's), made whole for them only where the runs moved save more than that costs.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import posixpath
import re
import subprocess
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_gpuperf import RESULTS_SCHEMA  # noqa: E402
from pytest_gpuperf.report import results  # noqa: E402
from pytest_gpuperf.offline.intake import GATECHECK_FILE  # noqa: E402  (the file a gate check writes beside its runs)
from pytest_gpuperf.schemas import problems  # noqa: E402
from pytest_gpuperf.util import jsonio, saved_delta  # noqa: E402


def _ls(folders: list[str]) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", "--", *folders], cwd=ROOT, capture_output=True, check=True).stdout
    return [p for p in out.decode("utf-8").split("\0") if p and (ROOT / p).exists()]


def tracked(folders: list[str]) -> list[str]:
    """The tracked ``*.gz`` and ``*.xz`` files under ``folders`` (paths relative to the repository root)."""
    return sorted(p for p in _ls(folders) if p.endswith(jsonio.COMPRESSED))


def archived_gatechecks(folders: list[str]) -> list[str]:
    """The tracked plain gate-check files of kept gate checks under ``folders``: each ``gatecheck.json`` in a
    folder named ``gatecheck-*`` (a device folder's own ``gatecheck.json`` is where ``gpuperf baseline
    gatecheck`` writes and appends by default, so it stays plain)."""
    return sorted(p for p in _ls(folders)
                  if Path(p).name == GATECHECK_FILE and Path(p).parent.name.startswith("gatecheck-"))


def gatecheck_to_xz(name: str) -> tuple[str, int, int]:
    """Store the kept gate-check file ``name`` as ``gatecheck.json.xz`` beside it (the same bytes inside; every
    reader takes either form, :func:`pytest_gpuperf.util.jsonio.saved`); (the name now, bytes before, after)."""
    path = ROOT / name
    old = path.read_bytes()
    target = path.with_name(path.name + jsonio.XZ)
    new = jsonio.xz_bytes(old)
    replace(target, new)
    path.unlink()
    return str(target.relative_to(ROOT)), len(old), len(new)


def results_document(text: bytes) -> dict[str, Any] | None:
    """The parsed document if ``text`` is a results document, else None."""
    try:
        return results_form(json.loads(text))
    except ValueError:
        return None


def results_form(doc: Any) -> dict[str, Any] | None:
    """``doc`` where it is a results document (a parsed one, or one read back through its deltas), else None."""
    if isinstance(doc, dict) and doc.get("schema") == RESULTS_SCHEMA and isinstance(doc.get("metrics"), list):
        return doc
    return None


def inner(name: str, raw: bytes) -> bytes:
    """What the file ``name`` holds once rewritten: a results document re-encoded, anything else unchanged."""
    doc = results_document(raw) if jsonio.uncompressed_name(name).endswith(".json") else None
    return raw if doc is None else results.dumps(results.saved_form(doc)).encode("utf-8")


def compress(data: bytes, zopfli: bool, xz: bool = False) -> bytes:
    if xz:
        return jsonio.xz_bytes(data)
    if zopfli:
        import zopfli.gzip as zgzip

        return zgzip.compress(data)
    return jsonio.gz_bytes(data)


def named_outside(folders: list[str]) -> str:
    """The text of every tracked file outside ``folders`` (docs, code, tests, baselines): where a saved file
    may be named."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    inside = tuple(f.rstrip("/") + "/" for f in folders)
    texts = []
    for name in out.decode("utf-8").split("\0"):
        path = ROOT / name
        if name and not name.startswith(inside) and path.is_file() and not name.endswith(jsonio.COMPRESSED):
            texts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(texts)


def rewrite(name: str, zopfli: bool, to_xz: bool = False, named: bool = False) -> tuple[str, int, int]:
    """Rewrite ``name`` in place where that makes it smaller (``to_xz``: a ``.json.gz`` as ``.json.xz`` beside
    it, the ``.gz`` removed; a ``.log.gz`` as ``.log.xz`` where smaller, unless ``named``: a file outside the
    folders names it); (the name now, bytes before, bytes after)."""
    path = ROOT / name
    old = path.read_bytes()
    run = to_xz and name.endswith(".json" + jsonio.GZ)
    other = to_xz and name.endswith(".log" + jsonio.GZ) and not named
    target = path.with_name(path.name[: -len(jsonio.GZ)] + jsonio.XZ) if run or other else path
    new = compress(inner(name, jsonio.unpack(old, name)), zopfli, xz=target.suffix == jsonio.XZ)
    if len(new) < len(old) or run:  # a run converted whatever the size: every saved run one form
        replace(target, new)
        if target != path:
            path.unlink()
        return str(target.relative_to(ROOT)), len(old), len(new)
    return name, len(old), len(old)


#: the run of a gate-check folder its other runs are stored against (``--delta``)
DELTA_BASE = "aa-1.json.xz"


@functools.lru_cache(maxsize=None)
def delta_base(folder: Path) -> Path | None:
    """The run a folder's other runs are stored against: its first A/A run (:data:`DELTA_BASE`), else, in a folder
    of one set of runs below a device's (a baseline's, a study's), its whole saved results document with the most
    metrics (the first by name among equals: a plant's few metrics make a poor base for a full run), or the fullest
    run its deltas are already stored against; None where it has none. A device's own folder holds runs of unrelated
    suites: stored against their set's fullest run (:func:`set_base`) or, with ``--anchor``, the device's anchor."""
    if (folder / DELTA_BASE).exists():
        return folder / DELTA_BASE
    if folder.parent.parent == ROOT:
        return None
    named = Counter(b for d, b in stored_against(folder.parent).items() if d.parent == folder == b.parent)
    if named:  # of the runs its deltas are stored against, the fullest: itself perhaps a delta of the anchor since
        return max(sorted(named), key=lambda b: len(jsonio.read_json(b).get("metrics") or ()))
    return _fullest(sorted(folder.glob("*.json" + jsonio.XZ)))


#: a run's number before its backend at the end of a saved run's name: the runs of one set share the rest
RUN_NUMBER = re.compile(r"\d+(?=-[a-z0-9]+\.json\.xz$)")


def set_base(path: Path) -> Path | None:
    """In a device's own folder (runs of unrelated suites), the run ``path`` is stored against: the run with the
    most metrics of its own set, the runs named as it is but for the run number (``pocl6-1-opencl.json.xz``,
    ``pocl6-2-…``), read back whole where it is itself stored against the folder's anchor; None for a run of no set,
    which stays whole."""
    if RUN_NUMBER.search(path.name) is None:
        return None
    stem = RUN_NUMBER.sub("#", path.name)
    members = sorted(p for p in path.parent.glob("*.json" + jsonio.XZ) if RUN_NUMBER.sub("#", p.name) == stem)
    return _fullest(members, decoded=True) if len(members) > 1 else None


def _fullest(paths: list[Path], newest: bool = False, decoded: bool = False) -> Path | None:
    """The whole saved results document with the most metrics among ``paths`` (a plant's few metrics make a poor
    base for a full run) — ``newest``: the newest of those (its run's ``finished``) — the first among equals; None
    where there is none. ``decoded``: a run stored as a delta competes too, read back whole, and an interrupted run
    does not (the anchor: the card's newest complete run, wherever it is stored now)."""
    best: tuple[tuple[Any, ...], Path] | None = None
    for path in paths:
        raw = jsonio.unpack(path.read_bytes(), path)
        if saved_delta.is_delta(raw) and not decoded:
            continue
        # a delta read back whole through its deltas
        doc = results_form(jsonio.read_json(path)) if saved_delta.is_delta(raw) else results_document(raw)
        if doc is None or (decoded and (doc.get("run") or {}).get("interrupted")):
            continue
        key = (len(doc.get("metrics") or ()), *([str((doc.get("run") or {}).get("finished") or "")] if newest else []))
        if best is None or key > best[0]:
            best = (key, path)
    return None if best is None else best[1]


def stored_against(parent: Path) -> dict[Path, Path]:
    """Each run stored as a delta in ``parent`` (a device's folder) or its folders, with the run it names as its
    base: of its own folder, of a sibling one or (from the device's folder) the anchor."""
    named = {}
    for path in [*parent.glob("*.json" + jsonio.XZ), *parent.glob("*/*.json" + jsonio.XZ)]:
        base = jsonio.base_of(path)
        if base is not None:
            named[path] = base
    return named


def bases(folder: Path) -> set[Path]:
    """The runs of ``folder`` that a stored delta, of ``folder`` or of a sibling folder, names as its base: they
    stay whole, or their deltas would not read."""
    return {base for base in stored_against(folder.parent).values() if base.parent == folder}


def depth(path: Path) -> int:
    """How many deltas the saved run ``path`` is read through: 0 for a whole document, 1 for the difference from
    one, and so on (counted past :data:`~pytest_gpuperf.util.saved_delta.MAX_DEPTH` no further)."""
    n = 0
    while n <= saved_delta.MAX_DEPTH and (path := jsonio.base_of(path)) is not None:
        n += 1
    return n


def to_delta(name: str) -> tuple[str, int, int, str]:
    """Store the saved run ``name`` as its difference from its folder's base run (:func:`delta_base`,
    :mod:`pytest_gpuperf.util.saved_delta`) where that is smaller and reads back as the same document, key for
    key and in order; (name, bytes before, bytes after, the base's name)."""
    path = ROOT / name
    old = path.read_bytes()
    base_path = set_base(path) if path.parent.parent.parent == ROOT else delta_base(path.parent)
    raw = jsonio.unpack(old, name)
    if base_path is None or path == base_path or saved_delta.is_delta(raw) or path in bases(path.parent) \
            or depth(base_path) >= saved_delta.MAX_DEPTH:
        return name, len(old), len(old), ""
    return store_against(path, old, base_path, base_path.name)


def store_against(path: Path, old: bytes, base_path: Path, ref: str) -> tuple[str, int, int, str]:
    """Store the whole saved run ``path`` (its stored bytes ``old``) as its difference from ``base_path``, which it
    names ``ref``, where that is smaller and reads back as the same document, key for key and in order (:func:`delta_bytes`);
    (its name, bytes before, bytes after, ``ref`` where stored so)."""
    new = delta_bytes(path, base_path, ref)
    if new is None or len(new) >= len(old):
        return shown(path), len(old), len(old), ""
    replace(path, new)
    return shown(path), len(old), len(new), ref


def replace(path: Path, data: bytes) -> None:
    """Write ``data`` at ``path`` through a file beside it, so that no reader sees half a run."""
    tmp = path.with_name(path.name + ".recode.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def shown(path: Path) -> str:
    """``path`` as the repository names it, where it is in the repository."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def first_runs(device: Path, names: list[str]) -> list[Path]:
    """The first runs (:data:`DELTA_BASE`) of the folders of the device's folder ``device`` (gate checks, fresh-machine
    runs) among the tracked ``names``, by name."""
    paths = (ROOT / n for n in names)
    return sorted(p for p in paths if p.name == DELTA_BASE and p.parent.parent == device)


def folder_runs(device: Path, names: list[str]) -> list[Path]:
    """The saved runs (``*.json.xz``) directly in the folders of the device's folder ``device`` among the tracked
    ``names``, by name: what ``--anchor`` may store against the anchor (those stored as deltas stay as they are)."""
    paths = (ROOT / n for n in names)
    return sorted(p for p in paths if p.name.endswith(".json" + jsonio.XZ) and p.parent.parent == device)


def delta_bytes(path: Path, base_path: Path, ref: str) -> bytes | None:
    """The saved run ``path`` (read whole, through the deltas it is stored as) as its difference from
    ``base_path``, named ``ref``, xz-compressed; None where it does not read back as the same document."""
    doc, base = results_document(jsonio.read_bytes(path)), results_document(jsonio.read_bytes(base_path))
    if doc is None or base is None:
        return None
    text = json.dumps(saved_delta.encode(base, doc, ref), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if canonical(saved_delta.decode(json.loads(text), base, shown(path))) != canonical(doc):
        return None
    return jsonio.xz_bytes(text)


def free_earlier(device: Path, top: Path, keep: set[Path] = frozenset()) -> list[tuple[str, int, int, str]]:
    """Free each earlier anchor of ``device`` (a whole run that runs of other folders name, not ``top``): store those
    runs against ``top`` instead, then the earlier anchor itself, where that takes fewer bytes than before and every
    chain stays :data:`~pytest_gpuperf.util.saved_delta.MAX_DEPTH` deep (the earlier anchor's own folder's runs are
    no one's bases, and the runs of other folders stored against it are no other folder's anchor), but those of
    ``keep`` (another backend's anchors); (name, bytes before, bytes after, base) of each run rewritten."""
    named = stored_against(device)
    bases = set(named.values())
    anchors = {b for d, b in named.items() if b.parent != d.parent}  # the runs other folders' runs name
    done = []
    for earlier in sorted(anchors - {top} - keep):
        inside = [d for d, b in named.items() if b == earlier and d.parent == earlier.parent]
        others = sorted(d for d, b in named.items() if b == earlier and d.parent != earlier.parent)
        if jsonio.base_of(earlier) is not None or any(d in bases for d in inside) or any(d in anchors for d in others):
            continue
        moved = [*others, earlier]
        new = {p: delta_bytes(p, top, ref_to(p, top)) for p in moved}
        old = {p: p.stat().st_size for p in moved}
        if None in new.values() or sum(len(v) for v in new.values()) >= sum(old.values()):
            continue
        for p in moved:  # its dependents first: no run is ever left naming a delta of a delta
            replace(p, new[p])
            done.append((shown(p), old[p], len(new[p]), ref_to(p, top)))
    return done


def ref_to(path: Path, base: Path) -> str:
    """How the run ``path`` names ``base`` as its base: ``../<folder>/<file>`` from a folder of the device's,
    ``<folder>/<file>`` from the device's folder itself."""
    return Path(os.path.relpath(base, path.parent)).as_posix()


def anchor(runs: list[Path]) -> Path | None:
    """Of a device's folders' first runs ``runs``, the one the others are stored against (``--anchor``): the complete
    one with the most metrics and, among equals, the newest (the first by name where that ties too), whether stored
    whole or as a delta (:func:`make_whole` restores it): the card's newest complete run is the one kept whole, and
    the runs of later code differ least from it. None where there is none."""
    return _fullest(sorted(runs), newest=True, decoded=True)


def own_anchor(runs: list[Path]) -> Path | None:
    """Of the runs of a device's own folder ``runs`` (a device with no gate check), the one the others are stored
    against: the complete whole one with the most metrics and, among equals, the newest. A run stored as a delta of
    its set's first run is not made whole for it: that would add its bytes to save others'."""
    whole = [p for p in runs if not saved_delta.is_delta(jsonio.unpack(p.read_bytes(), p))]
    return _fullest(sorted(whole), newest=True, decoded=True)


@functools.lru_cache(maxsize=None)
def backend(path: Path) -> str:
    """The backend a saved run measured (its device's ``backend``: ``cuda``, ``opencl``), read once per run: storing
    a run in other bytes never changes what it reads back as."""
    device = jsonio.read_json(path).get("device")
    return str(device.get("backend") or "") if isinstance(device, dict) else ""


def other_anchors(device: Path, names: list[str], top: Path) -> list[Path]:
    """For each backend of the device's runs but the anchor's, that backend's own anchor: of its gate checks' first
    runs, else of the runs of the device's own folder, the complete one with the most metrics, the newest among equals
    (:func:`anchor`). A run of NVIDIA's OpenCL differs less from another OpenCL run of the card than from a CUDA run:
    its metrics, identities and notes are its backend's."""
    ours, by = backend(top), {}
    for kind, paths in (("first", first_runs(device, names)), ("own", device_runs(device, names))):
        for p in paths:
            if (b := backend(p)) and b != ours:
                by.setdefault(b, {}).setdefault(kind, []).append(p)
    found = [anchor(sorted(runs.get("first") or runs.get("own") or [])) for _, runs in sorted(by.items())]
    return [a for a in found if a is not None]


def onto(device: Path, names: list[str], other: Path) -> list[tuple[str, int, int, str]]:
    """Store each run of ``other``'s backend that is whole or stored against a run of another backend as its
    difference from ``other`` (a backend's own anchor, :func:`other_anchors`), where that is smaller, it can name
    ``other`` (a run of a folder inside the device's cannot name one of the device's own folder) and no chain would
    pass :data:`~pytest_gpuperf.util.saved_delta.MAX_DEPTH` (the runs stored against it are no one's base); ``other``
    is stored whole first where it is a delta, and only where the runs moved save more than that costs; (name, bytes
    before, bytes after, base) of each run rewritten."""
    ob, named = backend(other), stored_against(device)
    plan: dict[Path, bytes] = {}
    for p in folder_runs(device, names) + device_runs(device, names):
        base, later = jsonio.base_of(p), [d for d, b in named.items() if b == p]
        if p == other or other.parent == device != p.parent or backend(p) != ob or \
                (base is not None and (base == other or backend(base) == ob)) or any(d in named.values() for d in later):
            continue
        new = delta_bytes(p, other, ref_to(p, other))
        if new is not None and len(new) < p.stat().st_size:
            plan[p] = new
    if not plan:
        return []
    whole = compress(results.dumps(results.saved_form(jsonio.read_json(other))).encode("utf-8"), False, xz=True) \
        if jsonio.base_of(other) is not None else None
    cost = len(whole) - other.stat().st_size if whole is not None else 0
    if sum(p.stat().st_size - len(new) for p, new in plan.items()) <= cost:
        return []
    done = []
    if whole is not None:
        done.append((shown(other), other.stat().st_size, len(whole), ""))
        replace(other, whole)
    for p, new in sorted(plan.items()):
        done.append((shown(p), p.stat().st_size, len(new), ref_to(p, other)))
        replace(p, new)
    return done


def make_whole(path: Path) -> tuple[str, int, int, str]:
    """Store the run ``path``, a delta, as the whole document it reads back as (the new anchor); the runs stored
    against it stay so, one delta deep; (name, bytes before, bytes after, "")."""
    old = path.stat().st_size
    replace(path, compress(results.dumps(results.saved_form(jsonio.read_json(path))).encode("utf-8"), False, xz=True))
    return shown(path), old, path.stat().st_size, ""


def to_anchor(path: Path, anchor_path: Path, named: dict[Path, Path], device: Path) -> tuple[str, int, int, str]:
    """Store the whole run ``path`` of the device's own folder or of one of its folders (a gate check's first run, a
    baseline's or a study's) as its difference from the device's anchor (:func:`anchor`, named from ``path``'s
    folder: :func:`ref_to`) where, in a folder of the device's, it is that folder's base (:func:`delta_base`) or no
    run's base, it and the anchor are whole, no chain would grow past
    :data:`~pytest_gpuperf.util.saved_delta.MAX_DEPTH` (the deltas stored against it are no one's base), and
    :func:`store_against` keeps it; ``named``: the device folder's :func:`stored_against`, read once for all its
    runs (storing one run changes no other's later runs); ``device``: the device's folder, where the anchor is in a
    folder of it or (a device with no gate check) in it, where only the runs beside it can name it; (name, bytes
    before, bytes after, the base as named)."""
    old = path.read_bytes()
    later = [d for d, b in named.items() if b == path]
    if (later and path.parent != device and path != delta_base(path.parent)) or path == anchor_path or \
            device not in (path.parent, path.parent.parent) or anchor_path.parent == device != path.parent or \
            jsonio.base_of(anchor_path) is not None or jsonio.base_of(path) is not None or \
            any(d in named.values() for d in later):
        return shown(path), len(old), len(old), ""
    return store_against(path, old, anchor_path, ref_to(path, anchor_path))


def device_runs(device: Path, names: list[str]) -> list[Path]:
    """The saved runs (``*.json.xz``) directly in the device's folder ``device`` among the tracked ``names``, by
    name: runs of unrelated suites, which ``--anchor`` stores against the anchor where that is smaller."""
    paths = (ROOT / n for n in names)
    return sorted(p for p in paths if p.name.endswith(".json" + jsonio.XZ) and p.parent == device)


def canonical(doc: Any) -> str:
    """A text that two documents share only when every key (in its order), value and float agree."""
    return json.dumps(doc, separators=(",", ":"))


def without_lines(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with every metric's ``info.line`` left out, whatever its verdict, and its ``baseline`` as the
    saved form keeps it."""
    return results.saved_form({**doc, "metrics": [{**m, "info": {k: v for k, v in info(m).items() if k != "line"}}
                                                  for m in doc["metrics"]]})


def info(metric: dict[str, Any]) -> dict[str, Any]:
    return metric["info"] if isinstance(metric.get("info"), dict) else {}


#: what :func:`difference` says of a file that no name of it held at the revision
NEW_SINCE = "new since the revision"


def _at(rev: str, name: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", f"{rev}:{name}"], cwd=ROOT, capture_output=True).returncode == 0


def _whole_at(rev: str, name: str, hops: int = 1) -> bytes:
    """The file ``name`` as it was at ``rev``, uncompressed; a run stored as a delta there read whole, against its
    base (of its folder or a sibling one, itself read whole) as it was at ``rev``
    (:mod:`pytest_gpuperf.util.saved_delta`); ``hops``: the deltas read through to reach it, counting its own."""
    raw = jsonio.unpack(subprocess.run(["git", "show", f"{rev}:{name}"], cwd=ROOT, capture_output=True,
                                       check=True).stdout, name)
    if not saved_delta.is_delta(raw):
        return raw
    if hops > saved_delta.MAX_DEPTH:
        raise ValueError(f"{rev}:{name}: read through more than {saved_delta.MAX_DEPTH} deltas")
    delta = json.loads(raw)
    base_name = posixpath.normpath(f"{Path(name).parent.as_posix()}/{saved_delta.base_name(delta, name)}")
    doc = saved_delta.decode(delta, json.loads(_whole_at(rev, base_name, hops + 1)), name)
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def difference(name: str, rev: str) -> str | None:
    """Why the file ``name`` holds other data than at ``rev`` (None when it holds the same;
    :data:`NEW_SINCE` where neither it nor, for an ``.xz``, its ``.gz`` form was there)."""
    then = name
    if name.endswith(jsonio.XZ) and not _at(rev, name):
        then = name[: -len(jsonio.XZ)] + jsonio.GZ  # converted since REV
        if Path(name).name == GATECHECK_FILE + jsonio.XZ:
            then = name[: -len(jsonio.XZ)]  # a kept gate-check file, plain at REV
    if not _at(rev, then):
        return NEW_SINCE
    before = _whole_at(rev, then)
    after = jsonio.read_bytes(ROOT / name)
    if after == before:
        return None
    was = results_document(before) if jsonio.uncompressed_name(name).endswith(".json") else None
    if was is None:
        return "other bytes inside, and it is not a results document"
    now = json.loads(after)
    if canonical(without_lines(was)) != canonical(without_lines(now)):
        return "the document differs from the one at the revision beyond the metrics' lines and baseline copies"
    for a, b in zip(was["metrics"], now["metrics"]):
        kept = "line" in info(a) and a.get("verdict") not in results.RESTATED_LINE
        if info(b).get("line") != (info(a)["line"] if kept else None):
            return f"{a.get('name')}: its line is {'changed or gone' if kept else 'kept'}, verdict {a.get('verdict')}"
    if problems(was, RESULTS_SCHEMA) != problems(now, RESULTS_SCHEMA):
        return f"the results schema now reads it otherwise: {problems(now, RESULTS_SCHEMA)[:3]}"
    return None


def each(fn: Callable[..., Any], *items: Iterable[Any], jobs: int) -> Iterator[Any]:
    """``fn`` over ``items`` (as :func:`map` takes them), in order: in this process for one job (the script's
    functions need not be importable elsewhere, as where a test loads it from its path), else in ``jobs``
    processes."""
    if jobs <= 1:
        yield from map(fn, *items)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(fn, *items)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", help="folders of saved runs, e.g. results")
    ap.add_argument("--zopfli", action="store_true", help="compress with Zopfli's gzip encoder (pip install zopfli)")
    ap.add_argument("--xz", action="store_true", help="store each *.json.gz as *.json.xz (about a fifth smaller), "
                                                      "each kept gate check's gatecheck.json as gatecheck.json.xz, "
                                                      "and each *.log.gz no file outside the folders names as "
                                                      "*.log.xz where smaller")
    ap.add_argument("--delta", action="store_true", help=f"store each saved run (.json.xz) of a folder as its "
                                                         f"difference from the folder's {DELTA_BASE}, else (below a "
                                                         f"device's folder) its first whole run by name, where smaller")
    ap.add_argument("--anchor", action="store_true", help=f"with --delta, on a device's folder: store each gate "
                                                          f"check's {DELTA_BASE} and each run of the device's own "
                                                          f"folder as its difference from the device's anchor (the "
                                                          f"fullest whole {DELTA_BASE}; with no gate check, the "
                                                          f"fullest run of its own folder), where smaller")
    ap.add_argument("--check", metavar="REV", help="compare each file with the one at git revision REV; write nothing")
    ap.add_argument("--jobs", type=int, default=1, help="files rewritten at once")
    args = ap.parse_args(argv)
    if args.anchor and not args.delta:
        ap.error("--anchor goes with --delta")
    names = tracked(args.folders)
    if not names:
        print(f"no tracked .gz or .xz file under {' '.join(args.folders)}", file=sys.stderr)
        return 2
    if args.check:
        said = {n: why for n in names if (why := difference(n, args.check)) is not None}
        new = sorted(n for n, why in said.items() if why == NEW_SINCE)
        bad = [(n, why) for n, why in said.items() if why != NEW_SINCE]
        for n, why in bad:
            print(f"{n}: {why}")
        print(f"{len(names) - len(said)} of {len(names) - len(new)} files hold what they held at {args.check}"
              f" (results documents less their restated lines and baseline copies); {len(new)} new since")
        return 1 if bad else 0
    before = after = 0
    if args.delta and args.anchor:
        for folder in args.folders:
            device = Path(os.path.normpath(ROOT / folder))
            runs = first_runs(device, names)
            top = anchor(runs) or own_anchor(device_runs(device, names))
            if top is None:
                print(f"{folder}: no complete run to anchor on", file=sys.stderr)
                continue
            print(f"{folder}: anchored on {top.relative_to(device)}", flush=True)
            others = other_anchors(device, names, top)  # each other backend's runs: against its own anchor
            if jsonio.base_of(top) is not None:
                name, old, new, _ = make_whole(top)
                before, after = before + old, after + new
                print(f"{name}: {old} -> {new} bytes (stored whole: the newest complete run)", flush=True)
            for name, old, new, base in free_earlier(device, top, keep=set(others)):
                before, after = before + old, after + new
                print(f"{name}: {old} -> {new} bytes (a delta of {base}; an earlier anchor freed)", flush=True)
            store = functools.partial(to_anchor, anchor_path=top, named=stored_against(device), device=device)
            for name, old, new, base in each(store, [p for p in folder_runs(device, names) + device_runs(device, names)
                                                     if p not in others], jobs=args.jobs):
                before, after = before + old, after + new
                if new < old:
                    print(f"{name}: {old} -> {new} bytes (a delta of {base})", flush=True)
            for other in others:
                print(f"{folder}: its {backend(other)} runs anchored on {other.relative_to(device)}", flush=True)
                for name, old, new, base in onto(device, names, other):
                    before, after = before + old, after + new
                    print(f"{name}: {old} -> {new} bytes" + (f" (a delta of {base})" if base else " (stored whole)"),
                          flush=True)
        print(f"the folders' whole runs: {before} -> {after} bytes ({(before - after) / 2**20:.2f} MiB saved)")
        return 0
    if args.delta:
        runs = [n for n in names if n.endswith(".json" + jsonio.XZ)]
        for name, old, new, base in each(to_delta, runs, jobs=args.jobs):
            before, after = before + old, after + new
            if new < old:
                print(f"{name}: {old} -> {new} bytes (a delta of {base})", flush=True)
        print(f"{len(runs)} runs: {before} -> {after} bytes ({(before - after) / 2**20:.2f} MiB saved)")
        return 0
    if args.xz:
        for name, old, new in map(gatecheck_to_xz, archived_gatechecks(args.folders)):
            before, after = before + old, after + new
            print(f"{name}: {old} -> {new} bytes", flush=True)
    text = named_outside(args.folders) if args.xz else ""
    named = [Path(n).name in text or jsonio.uncompressed_name(Path(n).name) in text for n in names]
    for name, old, new in each(rewrite, names, [args.zopfli] * len(names), [args.xz] * len(names), named,
                               jobs=args.jobs):
        before, after = before + old, after + new
        if new < old:
            print(f"{name}: {old} -> {new} bytes", flush=True)
    print(f"{len(names)} files: {before} -> {after} bytes ({(before - after) / 2**20:.2f} MiB saved)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
