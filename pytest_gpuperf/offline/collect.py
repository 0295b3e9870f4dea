"""``gpuperf offline collect OUT.tgz``: bring an offline host's run back into the results store.

Each results document lands in ``<into>/<device key>/`` under its own name, gzip-compressed (results
are evidence: kept whole, kept small); a different file already there keeps its name and the newcomer
gets ``-2``, ``-3``… — nothing is overwritten, nothing lost. Each log lands beside them under ``logs/``, and, with ``--history``, every run is imported into the history store
(runs already there are skipped by the importer)."""

from __future__ import annotations

import tarfile
import tempfile
from pathlib import Path

from ..errors import GpuPerfError
from ..util import jsonio


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


def collect(source: Path, into: Path, history: str | None = None, echo=print) -> list[Path]:
    """Copy the run's results and logs into ``into``; returns the results files now there."""
    with tempfile.TemporaryDirectory(prefix="gpuperf-collect-") as tmp:
        root = _unpacked(source, Path(tmp))
        found = sorted(root.glob("results/*/*.json"))
        if not found:
            raise GpuPerfError(f"{source}: holds no results/<key>/*.json; did the run record anything? (see its log)")
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
        if history and placed:
            from ..cli import main as gpuperf

            code = gpuperf(["history", "import", *map(str, placed), "--db", history])
            if code != 0:
                raise GpuPerfError(f"the results were collected, but importing them into {history} failed (exit {code})")
        return placed
