"""``gpuperf offline collect`` given an archive an unfriendly host (or a damaged copy) made: a device key
that is not a folder name writes nothing anywhere; an archive that unpacks to gigabytes is refused before
it is unpacked; a truncated one says so; two collects into one store at once keep both runs. Real saved
data: a committed H100 results file and power corpus."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from pytest_gpuperf.cli import main as gpuperf
from pytest_gpuperf.offline.intake import MAX_UNPACKED
from pytest_gpuperf.util import jsonio

ROOT = Path(__file__).resolve().parents[1]
KEY = "nvidia-h100-80gb-hbm3"
RUN = ROOT / "results" / KEY / "memory-cuda.json.xz"
CORPUS = ROOT / "results" / KEY / "power-corpus-cuda.json.xz"
#: "ABS" stands for an absolute path inside the test's folder (a regression must not write outside it)
BAD_KEYS = ["../../x", "ABS", "..", "a/b", "", ".", "A B"]


def _archive(tmp: Path, files: dict[str, bytes], name: str = "out.tgz") -> Path:
    """An OUT.tgz as run.sh packs it (``tar czf OUT.tgz -C OUT .``) holding ``files``."""
    path = tmp / name
    with tarfile.open(path, "w:gz") as tar:
        for rel, data in files.items():
            info = tarfile.TarInfo(f"./{rel}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _with_key(doc_path: Path, key: str) -> bytes:
    import json

    doc = jsonio.read_json(doc_path)
    doc["device"]["key"] = key
    return json.dumps(doc).encode()


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("kind", ["results", "corpus"])
@pytest.mark.parametrize("key", BAD_KEYS)
def test_a_key_that_is_not_a_folder_name_writes_nothing(tmp_path, capsys, kind, key):
    """The results document (or the power corpus) names its card ``../../x`` and the like: exit 2, an error
    naming the key, and nothing written — not in the store, not beside it — though the archive also holds a
    good run."""
    work = tmp_path / "a" / "b" / "c"
    work.mkdir(parents=True)
    key = str(tmp_path / "abs" / "path") if key == "ABS" else key
    good = {f"results/{KEY}/good-cuda.json": jsonio.read_bytes(RUN), "run.log": b"log\n"}
    bad = ({f"results/{KEY}/evil-cuda.json": _with_key(RUN, key)} if kind == "results" else
           {f"results/{KEY}/power-corpus-cuda.json": _with_key(CORPUS, key)})
    archive = _archive(tmp_path, {**good, **bad})
    before = _tree(tmp_path)
    assert gpuperf(["offline", "collect", str(archive), "--into", str(work / "store")]) == 2
    err = capsys.readouterr().err
    assert repr(key) in err and "cannot name a file or folder" in err, err
    assert _tree(tmp_path) == before


def test_an_archive_that_unpacks_to_gigabytes_is_refused_before_unpacking(tmp_path, capsys):
    """A 2 MB archive whose one member is 2 GiB of zeros (gzip members back to back, as gzip allows): refused,
    nothing unpacked into the store."""
    size = 2 * 2**30
    info = tarfile.TarInfo("./results/x/big.json")
    info.size = size
    chunk = gzip.compress(bytes(2**20), compresslevel=9)
    archive = tmp_path / "bomb.tgz"
    with open(archive, "wb") as f:
        f.write(gzip.compress(info.tobuf(format=tarfile.GNU_FORMAT)))
        for _ in range(size // 2**20):
            f.write(chunk)
        f.write(gzip.compress(bytes(1024)))
    assert archive.stat().st_size < 10 * 2**20 < MAX_UNPACKED < size
    assert gpuperf(["offline", "collect", str(archive), "--into", str(tmp_path / "store")]) == 2
    err = capsys.readouterr().err
    assert "unpacks to more than" in err, err
    assert not (tmp_path / "store").exists()


def test_a_truncated_archive_says_it_is_truncated(tmp_path, capsys):
    archive = _archive(tmp_path, {f"results/{KEY}/run-cuda.json": jsonio.read_bytes(RUN)})
    data = archive.read_bytes()
    archive.write_bytes(data[: len(data) // 2])
    assert gpuperf(["offline", "collect", str(archive), "--into", str(tmp_path / "store")]) == 2
    err = capsys.readouterr().err
    assert "truncated or damaged" in err and "Traceback" not in err, err


COLLECT_AFTER_GO = """
import sys, time
from pathlib import Path
from pytest_gpuperf.cli import main
go = Path(sys.argv[1])
while not go.exists():
    time.sleep(0.01)
sys.exit(main(["offline", "collect", sys.argv[2], "--into", sys.argv[3]]))
"""


def test_two_collects_into_one_store_at_once_keep_both_runs(tmp_path):
    """Two real processes collect two different runs of one card (same file name) at the same moment: the
    store ends with both, one under ``-2``, as two collects one after the other do."""
    import json

    doc = jsonio.read_json(RUN)
    archives = []
    for n in range(2):
        doc["run"]["started"] = f"2026-01-0{n + 1}T00:00:00+00:00"
        archives.append(_archive(tmp_path, {f"results/{KEY}/run-cuda.json": json.dumps(doc).encode()}, f"out{n}.tgz"))
    go, store = tmp_path / "go", tmp_path / "store"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    procs = [subprocess.Popen([sys.executable, "-c", COLLECT_AFTER_GO, str(go), str(a), str(store)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for a in archives]
    go.touch()
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    kept = sorted(p.name for p in (store / KEY).glob("*.json.xz"))
    assert kept == ["run-cuda-2.json.xz", "run-cuda.json.xz"], outs
    started = {jsonio.read_json(store / KEY / name)["run"]["started"] for name in kept}
    assert started == {"2026-01-01T00:00:00+00:00", "2026-01-02T00:00:00+00:00"}
