"""Helpers shared by the tests that run pytest on a generated suite, and by those that kill a writer
half-way through a write."""

from __future__ import annotations

import atexit
import importlib.util
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SUITES = Path(__file__).resolve().parents[1] / "pytest_gpuperf" / "suites"
_runs: dict[str, tuple[Path, list[str]]] = {}

#: the head of a generated suite: imports and a kernel whose run time grows with its ``n`` argument
WORK_HEAD = '''
import os
import numpy as np
SRC = """__kernel void work(__global float *x, int n) {
    float v = x[get_global_id(0)];
    for (int i = 0; i < n; ++i) v = v * 0.9999f + 0.5f;
    x[get_global_id(0)] = v; }"""
'''


def kill_mid_write(proc: subprocess.Popen, flag: Path, timeout_s: float = 30.0) -> None:
    """SIGKILL ``proc`` once it has created ``flag`` (it does so in the middle of its write)."""
    try:
        deadline = time.time() + timeout_s
        while not flag.exists():
            assert proc.poll() is None, "the writer exited before reaching the middle of its write"
            assert time.time() < deadline, "the writer never reached the middle of its write"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()


def baseline_folder(root: Path, name: str = "bl") -> Path:
    """``root/name``, created: a ``--gpuperf-baseline-dir`` a gating run names must exist (a missing one is a
    usage error, never an empty baseline)."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def finish_within(proc: subprocess.Popen, limit_s: float) -> str:
    """Output of a pytest subprocess started with ``start_new_session=True``; fails the calling test
    (and kills the whole process group) past ``limit_s``."""
    import os
    import signal

    import pytest

    try:
        return proc.communicate(timeout=limit_s)[0]
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"pytest did not exit within {limit_s} s:\n{proc.communicate()[0][-3000:]}")


def app_study_on_pocl(pytester: Any) -> tuple[Path, list[str]]:
    """(results file, output lines) of the application study run on the OpenCL device through the plugin
    (``suites/test_model_apps.py`` under ``--gpuperf-profile=study``, ``-rs``), run once per test session by
    the first test that asks, in its own ``pytester``: the study's tests and its doc table's test read the same
    run (a run costs seconds), and none changes the file. Fails the asking test unless the study's test passed
    and Dao's counter model skipped (a CPU device has no counters)."""
    if "apps" not in _runs:
        out = pytester.path / "apps.json"
        result = pytester.runpytest("--gpuperf-device=opencl:0", "-p", "no:cacheprovider", "--gpuperf-profile=study",
                                    f"--gpuperf-baseline-dir={baseline_folder(pytester.path)}", f"--gpuperf-json={out}",
                                    "-rs", str(SUITES / "test_model_apps.py"))
        result.assert_outcomes(passed=1, skipped=1)
        folder = Path(tempfile.mkdtemp(prefix="gpuperf-app-study-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _runs["apps"] = (Path(shutil.copy(out, folder / "apps-opencl.json")), list(result.outlines))
    return _runs["apps"]


def gpuperf_in_process(capsys: Any, *args: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``gpuperf ARGS`` through the console script's own entry point
    (``cli.main``) in this interpreter, argparse's usage errors included. The statuses, messages and files
    are the CLI's; a fresh interpreter for each case would add its imports (a second or more) and check
    nothing more — a test checks the process's own exit status through the console script once."""
    from pytest_gpuperf.cli import main

    capsys.readouterr()
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return int(code or 0), out, err


def load_script(name: str) -> Any:
    """One of the repository's ``scripts/<name>.py`` imported as module ``name`` (registered in
    ``sys.modules`` first: its dataclasses look their module up); imported once, shared by every test."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[1] / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


#: a tiny project whose one figure is (1 + the memory plant's size) MB exactly: the gate-check protocol without a
#: device figure's noise; ``{better}`` is the figure's direction
TINY_PLANTED = '''
from pytest_gpuperf.gatecheck import plants

def test_tiny(gpu_device, gpuperf_record, gpuperf_plant):
    gpuperf_record("tiny.moved", 1e6 * (1.0 + plants.fraction(gpuperf_plant, "memory")), "bytes", better="{better}",
                   tolerance={{"rel": 0.03}})
'''


def baselined_tiny_suite(tmp_path: Path, device: str, better: str) -> tuple[Any, Path]:
    """Write :data:`TINY_PLANTED` under ``tmp_path/suites`` and make its baseline with one unplanted run; returns
    that run's outcome (its ``doc`` and results file) and the baseline folder."""
    from pytest_gpuperf.gatecheck import run as gc

    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "test_tiny.py").write_text(TINY_PLANTED.format(better=better))
    bl = tmp_path / "bl"
    o = gc.run_pytest(device, ["suites/", "--gpuperf-update-baselines"], tmp_path / "u.json", tmp_path / "u.log",
                      baseline_dir=str(bl), cwd=tmp_path)
    assert o.exit == 0, o.log.read_text()[-2000:]
    return o, bl
