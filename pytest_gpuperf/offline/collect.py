"""``gpuperf offline collect OUT.tgz``: bring an offline host's run back into the results store.

Each results document lands in ``<into>/<device key>/`` under its own name (a different file already
there keeps its name and the newcomer gets ``-2``, ``-3``…: nothing is overwritten, nothing lost), each
log beside them under ``logs/``, and, with ``--history``, every run is imported into the history store
(runs already there are skipped by the importer)."""

from __future__ import annotations

import filecmp
import json
import shutil
import tarfile
import tempfile
from pathlib import Path

from ..errors import GpuPerfError


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


def _free(dest: Path) -> Path:
    n = 2
    candidate = dest
    while candidate.exists():
        candidate = dest.with_name(f"{dest.stem}-{n}{dest.suffix}")
        n += 1
    return candidate


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
                doc = json.loads(path.read_text(encoding="utf-8"))
                key = str(doc["device"]["key"])
            except (ValueError, KeyError, TypeError):
                echo(f"skipped {path.name}: not a results document")
                continue
            dest = into / key / path.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            if dest.exists() and filecmp.cmp(path, dest, shallow=False):
                placed.append(dest)
                continue
            dest = _free(dest)
            shutil.copy2(path, dest)
            placed.append(dest)
            echo(f"collected {dest}")
            for log in root.glob("*.log"):
                logs = into / key / "logs"
                logs.mkdir(exist_ok=True)
                target = logs / log.name
                if not (target.exists() and filecmp.cmp(log, target, shallow=False)):
                    shutil.copy2(log, _free(target))
        if history and placed:
            from ..cli import main as gpuperf

            code = gpuperf(["history", "import", *map(str, placed), "--db", history])
            if code != 0:
                raise GpuPerfError(f"the results were collected, but importing them into {history} failed (exit {code})")
        return placed
