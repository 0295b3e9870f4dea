"""Only regular files are read as baselines and results, and only up to a size: a FIFO at
``baselines/<key>.json`` does not hang a run or ``gpuperf baseline check``, a link to ``/dev/zero`` is not
read until the memory runs out, a link to nothing is an error (never NO BASELINE, never ``ok``), and a
small ``.gz`` that unpacks to hundreds of MiB is refused. Each command runs in a subprocess under a
timeout, so a regression is a failed test, not a hung one."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_gpuperf.devices import discover
from pytest_gpuperf.util.jsonio import MAX_BYTES

ROOT = Path(__file__).resolve().parents[1]
CL = [d for d in discover().devices if d.backend == "opencl"]
KINDS = ["fifo", "dev-zero", "dangling"]


def _plant(path: Path, kind: str) -> None:
    """Put a FIFO, a link to /dev/zero or a link to nothing at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.symlink_to(path.parent / "gone.json")


def _gpuperf(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "pytest_gpuperf.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("named", [False, True], ids=["folder", "file"])
@pytest.mark.parametrize("kind", KINDS)
def test_baseline_check_fails_on_a_special_file_at_once(tmp_path, kind, named):
    """``gpuperf baseline check DIR`` (and ``check DIR/<key>.json``): exit 1, the file named with why."""
    path = tmp_path / "baselines" / "some-card.json"
    _plant(path, kind)
    proc = _gpuperf("baseline", "check", str(path if named else path.parent), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"FAIL {path}" in proc.stdout, proc.stdout
    why = {"fifo": "not a regular file", "dev-zero": "not a regular file", "dangling": "a link to nothing"}[kind]
    assert why in proc.stdout, proc.stdout
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr


PROJECT = textwrap.dedent('''
    def test_uses_the_device(gpu_device, gpuperf_record):
        gpuperf_record("special.value", 1.0, "us")
''')


@pytest.mark.skipif(not CL, reason="no OpenCL device (install pocl-opencl-icd)")
@pytest.mark.parametrize("kind", KINDS)
def test_a_run_refuses_a_special_baseline_file_before_any_test(tmp_path, kind):
    """A run on PoCL whose ``baselines/<key>.json`` is a FIFO, a link to /dev/zero or a link to nothing: one
    usage error naming the file, before any test (not a hang, not NO BASELINE, not the reviewed baseline)."""
    (tmp_path / "test_project.py").write_text(PROJECT)
    path = tmp_path / "bl" / f"{CL[0].key}.json"
    _plant(path, kind)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--gpuperf-device={CL[0].spec}",
                           f"--gpuperf-baseline-dir={tmp_path / 'bl'}", "test_project.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, out[-3000:]
    assert f"malformed baseline file {path}" in out, out[-3000:]
    assert "NO BASELINE" not in out and "passed" not in out


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "bomb", "xz-bomb", "corrupt-xz"])
def test_compare_refuses_a_results_file_that_is_special_or_too_large(tmp_path, kind):
    """``gpuperf compare`` reads results through the same reader: a FIFO or /dev/zero is refused at once, a
    300 KB ``.json.gz`` (or a small ``.json.xz``) that unpacks past the limit is refused without unpacking it
    whole, and a saved run whose bytes were damaged in the middle is refused with the reason, not a traceback."""
    if kind == "corrupt-xz":
        path = tmp_path / "a.json.xz"
        data = bytearray((ROOT / "results" / "nvidia-h100-80gb-hbm3" / "memory-cuda.json.xz").read_bytes())
        data[200:260] = bytes(b ^ 0xFF for b in data[200:260])
        path.write_bytes(bytes(data))
    elif kind == "xz-bomb":
        import lzma

        path = tmp_path / "a.json.xz"
        path.write_bytes(lzma.compress(bytes(MAX_BYTES + 2**20), preset=1))
        assert path.stat().st_size < 2**20
    elif kind == "bomb":
        path = tmp_path / "a.json.gz"
        chunk = gzip.compress(bytes(2**20), compresslevel=9)
        path.write_bytes(chunk * (MAX_BYTES // 2**20 + 8))
        assert path.stat().st_size < 2**20
    else:
        path = tmp_path / "a.json"
        _plant(path, kind)
    other = ROOT / "results" / "nvidia-h100-80gb-hbm3" / "memory-cuda.json.xz"
    proc = _gpuperf("compare", str(path), str(other), cwd=tmp_path)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    why = {"bomb": "unpacks to more than", "xz-bomb": "unpacks to more than",
           "corrupt-xz": "not a readable xz file"}.get(kind, "not a regular file")
    assert why in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
