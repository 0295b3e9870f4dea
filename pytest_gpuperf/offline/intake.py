"""``gpuperf offline collect OUT.tgz``: bring an offline host's run back into the results store.

Each results document lands in ``<into>/<device key>/`` under its own name, gzip-compressed (results
are evidence: kept whole, kept small); a different file already there keeps its name and the newcomer
gets ``-2``, ``-3``… — nothing is overwritten, nothing lost. Each log lands beside them under ``logs/``,
and, with ``--history``, every run is imported into the history store (runs already there are skipped
by the importer). A power corpus (``power-corpus-<backend>.json``, or ``.json.gz`` where the host resumed a
compressed one, collected into ``OUT/results/<key>/``) is joined with the store's corpus of that card, in
the form the store keeps it (one the store lacks lands compressed, as results do; the collector resumes
either form): a configuration measured on both sides keeps the store's measurement, the other as a repeat
(:func:`pytest_gpuperf.power.model_corpus.merge`)."""

from __future__ import annotations

import tarfile
import tempfile
from pathlib import Path
from typing import Callable

from ..errors import GpuPerfError
from ..util import jsonio

#: the files of a power corpus among a run's results, plain or compressed
CORPUS = ("power-corpus-*.json", "power-corpus-*.json.gz")


def _unpacked(source: Path, tmp: Path) -> Path:
    if source.is_dir():
        return source
    if not source.is_file():
        raise GpuPerfError(f"{source}: no such file or folder; pass the OUT.tgz (or OUT folder) run.sh wrote")
    try:
        with tarfile.open(source, "r:gz") as tar:
            tar.extractall(tmp, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise GpuPerfError(f"{source}: not a run archive ({exc})") from None
    return tmp


def _store(src: Path, folder: Path) -> tuple[Path, bool]:
    """``src`` compressed into ``folder`` under its name (``-2``, ``-3``… where a different file holds
    it): (the stored file, whether it is new — False when the same content was already there)."""
    data = src.read_bytes()
    stem, dot, ext = src.name.partition(".")
    n = 1
    while True:
        name = src.name if n == 1 else f"{stem}-{n}{dot}{ext}"
        target = folder / (name + jsonio.GZ)
        if not target.exists():
            folder.mkdir(parents=True, exist_ok=True)
            return jsonio.write_gz(target, data), True
        if jsonio.read_bytes(target) == data:
            return target, False
        n += 1


def _corpus(src: Path, into: Path, echo: Callable[[str], object]) -> Path | None:
    """A power corpus brought back, joined with the store's corpus of its card (or placed, compressed, where the
    store has none): the file now in the store, or None when ``src`` is not a corpus."""
    from ..models.power_model import read_corpus, save_corpus
    from ..power.model_corpus import merge

    try:
        device = read_corpus(src)[0]
        key = str(device["key"])
    except (ValueError, KeyError, TypeError) as exc:
        echo(f"skipped {src.name}: not a power corpus ({exc})")
        return None
    existing = jsonio.saved(into / key / src.name.removesuffix(jsonio.GZ))
    if not existing.exists():
        placed = jsonio.write_gz(existing, jsonio.read_bytes(src))
        echo(f"collected {placed}")
        return placed
    if jsonio.read_bytes(existing) == jsonio.read_bytes(src):
        return existing
    try:
        device, entries, meta = merge([existing, src])
    except ValueError as exc:
        raise GpuPerfError(f"{src.name} cannot be joined with {existing}: {exc}; move one of them away") from None
    save_corpus(existing, device, entries, meta)
    echo(f"joined {src.name} with {existing}: {len(entries)} configurations")
    return existing


def collect(source: Path, into: Path, history: str | None = None, echo=print) -> list[Path]:
    """Copy the run's results and logs into ``into`` and join its power corpora with the store's; returns
    the results files now there."""
    with tempfile.TemporaryDirectory(prefix="gpuperf-collect-") as tmp:
        root = _unpacked(source, Path(tmp))
        corpora = sorted(p for pattern in CORPUS for p in root.glob(f"results/*/{pattern}"))
        found = [p for p in sorted(root.glob("results/*/*.json")) if p not in corpora]
        if not found and not corpora:
            raise GpuPerfError(f"{source}: holds no results/<key>/*.json; did the run record anything? (see its log)")
        joined = [c for c in (_corpus(path, into, echo) for path in corpora) if c is not None]
        placed: list[Path] = []
        for path in found:
            try:
                key = str(jsonio.read_json(path)["device"]["key"])
            except (ValueError, KeyError, TypeError):
                echo(f"skipped {path.name}: not a results document")
                continue
            stored, new = _store(path, into / key)
            placed.append(stored)
            if not new:
                continue
            echo(f"collected {stored}")
            for log in root.glob("*.log"):
                _store(log, into / key / "logs")
        if not placed and not joined:
            raise GpuPerfError(f"{source}: none of {', '.join(p.name for p in found + corpora)} is a results document "
                               f"or a power corpus; nothing collected")
        if history and placed:
            from ..history.cli import import_files

            try:
                code = import_files([str(p) for p in placed], history)
            except GpuPerfError as exc:
                raise GpuPerfError(f"the results were collected, but importing them into {history} failed: {exc}") from None
            if code != 0:
                raise GpuPerfError(f"the results were collected, but importing them into {history} failed (exit {code})")
        return placed
