"""Ctrl-C on the real PoCL device, in a real pytest subprocess: the run ends as *interrupted*.

What a user saw before: a Ctrl-C during a normal measurement was reported as a hang (``gpuperf ABANDONED
…: did not finish within 0 s; the kernel hangs``), and one that landed in the end-of-run writes ended
the process with a raw traceback, exit 130, and neither results file nor history line. Now the run
exits with pytest's ``INTERRUPTED`` status (2), says "interrupted", never "hang", and the results JSON
and the history record hold what finished, with ``run.interrupted`` set where the test loop was cut
short. Each case runs under a hard timeout, so a regression is a failed test, not a hung CI job.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pytest_gpuperf.devices import discover
from pytest_gpuperf.history.backends import read_runs
from suite_support import finish_within

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not any(d.backend == "opencl" for d in discover().devices),
                                reason="no OpenCL device (install pocl-opencl-icd)")

#: a test that records a metric and finishes, one that is interrupted (``HOW``), one that runs after it
PROJECT = textwrap.dedent('''
    import os
    from pathlib import Path
    import numpy as np

    ADD = "__kernel void add(__global float *x) { x[get_global_id(0)] += 1.0f; }"

    class Unshowable:
        """An argument whose repr is itself interrupted: pytest lets that through its safe repr."""
        def __repr__(self):
            raise KeyboardInterrupt

    def _stopped_with(handle):
        raise KeyboardInterrupt

    def test_a_finishes(gpu_device, gpu_kernel, gpu_measure, gpuperf_record):
        k = gpu_kernel.compile(ADD, "add")
        buf = gpu_kernel.to_device(np.zeros(1024, np.float32))
        m = gpu_measure(k, (1024,), None, [buf], warmup=1, min_repeats=3, max_repeats=5)
        us = m.stats.scaled(1e6)
        gpuperf_record("interrupt.add_us", us.median, "us", stats=us)

    def test_b_interrupted(gpu_device, gpu_kernel, gpu_measure):
        how = os.environ.get("HOW", "")
        if how == "raise":
            raise KeyboardInterrupt
        if how == "unrenderable":  # the place the interrupt landed cannot be shown with its arguments
            _stopped_with(Unshowable())
        if how == "signal":  # measures until the parent's SIGINT (never converges: min_repeats is huge)
            k = gpu_kernel.compile(ADD, "add")
            buf = gpu_kernel.to_device(np.zeros(1 << 16, np.float32))
            Path(os.environ["MARKER"]).write_text("measuring")
            gpu_measure(k, (1 << 16,), None, [buf], warmup=1, min_repeats=10**7, max_repeats=10**7, budget_s=120)

        if how == "gc":  # the signal lands in a garbage-collector callback, whose exceptions Python drops
            import gc, signal
            sent = []

            def during_collection(phase, info):
                if phase == "start" and not sent:
                    sent.append(os.kill(os.getpid(), signal.SIGINT))
                    sum(range(100000))  # the handler runs here, inside the callback

            gc.callbacks.append(during_collection)
            try:
                gc.collect()
            finally:
                gc.callbacks.remove(during_collection)

        if how == "swallow":  # a library call that catches everything, as Kernel Tuner's host queries do
            Path(os.environ["MARKER"]).write_text("waiting")
            try:
                import time
                time.sleep(60)
            except:  # noqa: E722
                pass

    def test_c_later():
        pass
''')

#: sends SIGINT to its own process from inside the results write, as a Ctrl-C that lands there would
SIGINT_IN_WRITES = textwrap.dedent('''
    import os
    import signal

    from pytest_gpuperf.report import results

    _write = results.write

    def write(path, doc):
        os.kill(os.getpid(), signal.SIGINT)
        _write(path, doc)

    results.write = write
''')

HANG_WORDING = re.compile(r"\bhangs?\b|\bhung\b", re.IGNORECASE)


def _start(tmp_path: Path, how: str, sigint_in_writes: bool = False) -> tuple[subprocess.Popen, Path]:
    (tmp_path / "test_project.py").write_text(PROJECT)
    if sigint_in_writes:
        (tmp_path / "conftest.py").write_text(SIGINT_IN_WRITES)
    marker = tmp_path / "measuring"
    (tmp_path / "bl").mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "HOW": how, "MARKER": str(marker)}
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--gpuperf-device=opencl:0",
           f"--gpuperf-baseline-dir={tmp_path / 'bl'}", f"--gpuperf-json={tmp_path / 'r.json'}",
           f"--gpuperf-history={tmp_path / 'h.db'}", "--gpuperf-timeout=5", "test_project.py"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    return proc, marker


def _wait_for(marker: Path, proc: subprocess.Popen, what: str) -> None:
    """Until the test in ``proc`` wrote ``marker`` (fails, killing the run, after 60 s or if it ended)."""
    deadline = time.monotonic() + 60
    while not marker.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"{what} never started:\n{proc.communicate()[0][-3000:]}")
        time.sleep(0.05)


def _check_records(tmp_path: Path, out: str, interrupted: bool) -> None:
    """The results file and the history run exist, hold the finished test's metric and agree on
    ``interrupted``."""
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["run"]["interrupted"] is interrupted, out
    assert [m["name"] for m in doc["metrics"]] == ["interrupt.add_us"], out
    runs = read_runs(str(tmp_path / "h.db"))
    assert len(runs) == 1, out
    assert runs[0].options["interrupted"] is interrupted
    assert [m.name for m in runs[0].metrics] == ["interrupt.add_us"]


def _check_no_hang_wording(out: str) -> None:
    assert "ABANDONED" not in out and not HANG_WORDING.search(out), out
    assert "Traceback" not in out, out


@pytest.mark.parametrize("how", ["signal", "raise", "unrenderable"])
def test_ctrl_c_during_the_run_ends_it_as_interrupted_with_records_of_what_finished(tmp_path, how):
    """``signal``: SIGINT from outside while a normal kernel is being measured (the user's Ctrl-C);
    ``raise``: a test raises KeyboardInterrupt itself; ``unrenderable``: it does so in a frame whose argument's
    repr raises too, so pytest's report of the interrupt fails. Exit 2 (pytest's INTERRUPTED), the later test
    never runs, and results and history hold the first test's metric, marked interrupted."""
    proc, marker = _start(tmp_path, how)
    if how == "signal":
        _wait_for(marker, proc, "the measuring test")
        time.sleep(0.5)  # inside the measurement loop
        proc.send_signal(signal.SIGINT)
    out = finish_within(proc, limit_s=60)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    _check_no_hang_wording(out)
    _check_records(tmp_path, out, interrupted=True)
    assert "gpuperf INTERRUPTED: Ctrl-C stopped the run before every test ran" in out
    assert "marked \"interrupted\"" in out
    assert "1 passed" in out, out  # the later test never ran
    if how == "unrenderable":
        assert "where, with its arguments, could not be shown (KeyboardInterrupt" in out, out


@pytest.mark.parametrize("how", ["swallow", "gc"])
def test_a_ctrl_c_that_the_code_under_test_swallows_still_ends_the_run(tmp_path, how):
    """SIGINT lands in a bare ``except:`` of the code under test, which carries on (``swallow``), or in a garbage-
    collector callback, whose exception Python reports and drops (``gc``): the run still ends after that test
    (exit 2, the later test never runs), with the records marked interrupted."""
    proc, marker = _start(tmp_path, how)
    if how == "swallow":
        _wait_for(marker, proc, "the swallowing test")
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
    out = finish_within(proc, limit_s=60)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    assert "2 passed" in out and "test_c_later" not in out.split("short test summary")[-1], out
    _check_records(tmp_path, out, interrupted=True)
    assert "gpuperf INTERRUPTED: Ctrl-C stopped the run before every test ran" in out


@pytest.mark.parametrize("how", ["", "raise"])
def test_ctrl_c_during_the_final_writes_is_held_until_they_are_done(tmp_path, how):
    """A SIGINT sent from inside the results write (the conftest patches ``report.results.write``): the
    writes finish — results, then the history line — and the run ends as interrupted (exit 2) with a line
    saying so, not a traceback. ``""``: every test had finished, so the records say interrupted false;
    ``"raise"``: a second Ctrl-C after a first one that cut the run short, so they say true."""
    proc, _ = _start(tmp_path, how, sigint_in_writes=True)
    out = finish_within(proc, limit_s=60)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    assert "gpuperf INTERRUPTED" in out, out
    if not how:
        assert "Ctrl-C arrived during the end-of-run writes; they were completed first" in out
        assert "3 passed" in out, out
    _check_no_hang_wording(out)
    _check_records(tmp_path, out, interrupted=bool(how))
    assert f"gpuperf wrote {tmp_path / 'h.db'}" in out
