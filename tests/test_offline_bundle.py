"""An offline host's round trip on this machine's OpenCL device: ``gpuperf offline bundle`` writes the
plugin wheel, the wheels the host lacks and ``run.sh``; ``run.sh`` installs from the bundle alone into a
virtual environment, runs the shipped suites and packs ``OUT.tgz``; ``gpuperf offline collect`` puts
its results under ``results/<key>/`` without overwriting anything and imports them into a history."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_gpuperf.cli import main as gpuperf
from pytest_gpuperf.devices import discover
from pytest_gpuperf.offline.bundle import manifest_of, requirements
from pytest_gpuperf.util import jsonio

CL = [d for d in discover().devices if d.backend == "opencl"]
pytestmark = pytest.mark.skipif(not CL, reason="no OpenCL device (install pocl-opencl-icd)")


def test_bundle_run_collect(tmp_path: Path, checkout_wheel: Path) -> None:
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    have = [r.split(">")[0].split("=")[0] for r in requirements([])]  # this machine has them all: only the plugin
    bundle = tmp_path / "bundle"
    # the wheel the bundle builds without --wheel, built once per session (conftest.checkout_wheel)
    args = ["offline", "bundle", str(bundle), "--python", here, "--wheel", str(checkout_wheel)] + [
        a for h in have for a in ("--host-has", h)]
    assert gpuperf(args) == 0
    manifest = manifest_of(bundle)
    assert manifest["plugin"]["wheel"] == checkout_wheel.name and manifest["wheels"] == []
    assert (bundle / "wheels" / checkout_wheel.name).read_bytes() == checkout_wheel.read_bytes()
    out = tmp_path / "out"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST_")) and k != "GPUPERF_CACHE"},
           "GPUPERF_VENV": str(tmp_path / "venv"), "GPUPERF_PYTHON": sys.executable, "GPUPERF_TAG": "host-1",
           "GPUPERF_COMMIT": "abc1234"}
    work = tmp_path / "work"
    work.mkdir()
    started = time.monotonic()
    proc = subprocess.run(["bash", str(bundle / "run.sh"), str(out), "--gpuperf-device=0", "-k",
                           "test_math_function and sin- and fp32"], cwd=work, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    # what one short test and the start-up took here (on a busy host, far more than on a quiet one): the batch
    # limit below must leave the first tuning test time to finish, never all twelve
    limit = int(min(60, max(8, time.monotonic() - started)))
    site = subprocess.run([str(tmp_path / "venv" / "bin" / "python"), "-c",
                           "import pytest_gpuperf; print(pytest_gpuperf.__file__)"], capture_output=True, text=True,
                          cwd=work, env=env)  # the host's environment: no PYTHONPATH into a checkout
    assert str(tmp_path / "venv") in site.stdout  # the bundle's plugin, not this checkout's
    assert (bundle / "cache").is_dir()  # what a first run stores, beside the bundle for every host that runs it
    archive = Path(f"{out}.tgz")
    assert archive.is_file()
    into, history = tmp_path / "results", tmp_path / "h.db"
    for _ in range(2):  # collecting twice keeps one copy of an identical file
        assert gpuperf(["offline", "collect", str(archive), "--into", str(into), "--history", str(history)]) == 0
    (placed,) = into.glob("*/host-1-opencl.json.xz")  # evidence is stored compressed
    doc = jsonio.read_json(placed)
    assert doc["environment"]["commit"] == "abc1234"
    assert any(m["name"] == "accuracy.fp32.sin.max_ulp" for m in doc["metrics"])
    assert list(into.glob("*/logs/host-1.log.xz"))
    assert gpuperf(["offline", "collect", str(tmp_path / "nothing.tgz"), "--into", str(into)]) == 2

    # a batch limit interrupts the run: what finished is written, marked interrupted, and packed
    cut = tmp_path / "cut"
    proc = subprocess.run(["bash", str(bundle / "run.sh"), str(cut), "--gpuperf-device=0", "suites/test_workgroup_tuning.py", "-k", "test_tune"],
                          cwd=work, env={**env, "GPUPERF_TAG": "cut", "GPUPERF_TIME_LIMIT": str(limit)}, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert Path(f"{cut}.tgz").is_file() and f"GPUPERF_TIME_LIMIT={limit} s reached" in (cut / "cut.log").read_text()
    (doc_path,) = cut.glob("results/*/cut-opencl.json")
    cut_doc = json.loads(doc_path.read_text())
    assert cut_doc["run"]["interrupted"] is True and cut_doc["metrics"]


def test_a_bundle_starts_its_cache_from_a_named_folder_and_refuses_a_missing_one(tmp_path: Path, checkout_wheel: Path) -> None:
    have = [r.split(">")[0].split("=")[0] for r in requirements([])]
    base = ["--python", f"{sys.version_info.major}.{sys.version_info.minor}", "--wheel", str(checkout_wheel)] + [
        a for h in have for a in ("--host-has", h)]
    old = tmp_path / "old-cache" / "tuning"
    old.mkdir(parents=True)
    (old / "entry.json").write_text("{}")
    assert gpuperf(["offline", "bundle", str(tmp_path / "b"), *base, "--cache", str(tmp_path / "old-cache")]) == 0
    assert (tmp_path / "b" / "cache" / "tuning" / "entry.json").read_text() == "{}"
    assert manifest_of(tmp_path / "b")["cache"] == str(tmp_path / "old-cache")
    assert gpuperf(["offline", "bundle", str(tmp_path / "c"), *base, "--cache", str(tmp_path / "nowhere")]) == 2
