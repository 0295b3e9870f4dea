"""scripts/fetch_gpu_session.sh never loses data: a corpus that arrives beside an existing one is merged
(first measurement kept, repeats recorded), and a results file that would replace a different one of the
same name is refused with the fix. Real saved files (the H100 corpus, an H200 results document) are
packed as a session on a GPU host without network packs them (session.tgz of results/<key>/ and logs/)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from pytest_gpuperf.util import jsonio

from pytest_gpuperf.models.power import load_corpus, save_corpus

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "fetch_gpu_session.sh"
KEY = "nvidia-h100-80gb-hbm3"


def _session(tmp: Path, files: dict[str, Path]) -> Path:
    """A session.tgz holding ``files`` (name → source) under results/<KEY>/, as gpu_prologue.sh packs it."""
    src = tmp / "packed"
    (src / "results" / KEY).mkdir(parents=True)
    (src / "logs").mkdir()
    for name, path in files.items():  # committed results are stored compressed; a session packs plain JSON
        (src / "results" / KEY / name).write_bytes(jsonio.read_bytes(path))
    tgz = tmp / "session.tgz"
    with tarfile.open(tgz, "w:gz") as tar:
        tar.add(src, arcname=".")
    return tgz


def _run(cwd: Path, tgz: Path) -> subprocess.CompletedProcess:
    if shutil.which("bash") is None:
        pytest.skip("bash is needed to run the fetch script")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "GPUPERF_FETCH_BASELINES": "0"}
    return subprocess.run(["bash", str(SCRIPT), str(tgz)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def _corpus_parts(tmp: Path) -> tuple[Path, Path]:
    dev, entries = load_corpus(ROOT / "results" / KEY / "power-corpus-cuda.json")
    entries = [dataclasses.replace(e, info={k: v for k, v in e.info.items() if k != "repeats"}) for e in entries]
    a, b = tmp / "a.json", tmp / "b.json"
    save_corpus(a, dev, entries[:30])
    # a second call measured configurations 20-29 again (other watts) and 30-39 for the first time
    save_corpus(b, dev, [dataclasses.replace(e, watts=e.watts * 1.02) for e in entries[20:30]] + entries[30:40])
    return a, b


def test_a_second_corpus_is_merged_not_copied_over(tmp_path):
    a, b = _corpus_parts(tmp_path)
    work = tmp_path / "repo"
    (work / "results" / KEY).mkdir(parents=True)
    shutil.copy(a, work / "results" / KEY / "power-corpus-cuda.json")
    out = _run(work, _session(tmp_path, {"power-corpus-cuda.json": b}))
    assert out.returncode == 0, out.stdout + out.stderr
    _, merged = load_corpus(work / "results" / KEY / "power-corpus-cuda.json")
    assert len(merged) == 40  # 30 kept + 10 new; the 10 measured twice carry their repeat
    assert sum(1 for e in merged if e.info.get("repeats")) == 10


def test_a_different_results_file_of_the_same_name_is_refused(tmp_path):
    work = tmp_path / "repo"
    (work / "results" / KEY).mkdir(parents=True)
    mine = work / "results" / KEY / "default-1-cuda.json"
    mine.write_text(json.dumps({"schema": "an older run"}))
    before = mine.read_bytes()
    run = ROOT / "results" / "nvidia-h200" / "upgrade-2b-cuda.json"
    out = _run(work, _session(tmp_path, {"default-1-cuda.json": run}))
    assert out.returncode == 2 and "new GPUPERF_TAG" in out.stderr
    assert mine.read_bytes() == before  # the older run is untouched


def test_a_new_results_file_lands_and_enters_the_history(tmp_path):
    work = tmp_path / "repo"
    work.mkdir()
    run = ROOT / "results" / "nvidia-h200" / "upgrade-2b-cuda.json"
    out = _run(work, _session(tmp_path, {"default-9-cuda.json": run}))
    assert out.returncode == 0, out.stdout + out.stderr
    assert (work / "results" / KEY / "default-9-cuda.json").read_bytes() == jsonio.read_bytes(run)
    assert "imported 1 new run" in out.stdout
