"""A batch system's time limit on the real PoCL device: SIGTERM to the whole process group, then SIGKILL
after a grace period (what Slurm does). ``gpuperf run`` ends as interrupted, as with Ctrl-C: the results
JSON and the history line are written for what finished, marked interrupted, before the SIGKILL.

The signal lands at a known point, not after a guessed sleep: a plugin (``-p``) in the test's folder
writes a marker once the first test has finished and then waits; the parent signals when it sees it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pytest_gpuperf.devices import discover
from pytest_gpuperf.history.backends import read_runs

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not any(d.backend == "opencl" for d in discover().devices),
                                reason="no OpenCL device (install pocl-opencl-icd)")

#: a pytest plugin: after the first test, write MARKER (this process's id) and wait for the signal
WAIT_AFTER_FIRST = textwrap.dedent('''
    import os
    import time
    from pathlib import Path

    def pytest_runtest_logfinish(nodeid, location):
        marker = Path(os.environ["GPUPERF_TEST_MARKER"])
        if not marker.exists():
            marker.write_text(str(os.getpid()))
            time.sleep(120)  # the signal ends this wait
''')

#: a shipped test that records a metric within seconds on PoCL, and a second one the signal keeps from running
SELECTION = ["suites/test_accuracy_math.py", "-k", "test_math_function and (sin- or cos-) and fp32"]

#: Slurm's KillWait is 30 s by default; generous here, so a loaded host is not a failure
GRACE_S = 90


def wait_for(marker: Path, proc: subprocess.Popen, limit_s: float = 300) -> int:
    """The process id the plugin wrote into ``marker`` once the first test finished (fails, killing the
    group, if the run ended first or after ``limit_s``)."""
    deadline = time.monotonic() + limit_s
    while not (marker.exists() and marker.read_text().strip()):
        if proc.poll() is not None or time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"the first test never finished:\n{proc.communicate()[0][-3000:]}")
        time.sleep(0.05)
    return int(marker.read_text())


def time_limit(proc: subprocess.Popen, *groups: int) -> str:
    """SIGTERM to every process group in ``groups``, then SIGKILL to them after :data:`GRACE_S`: a batch
    system's time limit. Returns the output."""
    for group in groups:
        os.killpg(group, signal.SIGTERM)
    try:
        return proc.communicate(timeout=GRACE_S)[0]
    except subprocess.TimeoutExpired:
        for group in groups:
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return proc.communicate()[0] + "\n[SIGKILL after the grace period]"


def check_interrupted(results: Path, history: Path, out: str) -> None:
    """The results JSON and the history line exist, hold the first test's metrics, marked interrupted."""
    assert results.is_file(), out[-4000:]
    doc = json.loads(results.read_text())
    assert doc["run"]["interrupted"] is True, out[-4000:]
    assert doc["metrics"], out[-4000:]
    runs = read_runs(str(history))
    assert len(runs) == 1 and runs[0].options["interrupted"] is True, out[-4000:]
    assert runs[0].metrics


def test_sigterm_to_the_process_group_ends_gpuperf_run_as_interrupted_with_records(tmp_path: Path) -> None:
    (tmp_path / "wait_after_first.py").write_text(WAIT_AFTER_FIRST)
    marker = tmp_path / "first-done"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path), os.environ.get("PYTHONPATH", "")]),
           "GPUPERF_TEST_MARKER": str(marker)}
    results, history = tmp_path / "r.json", tmp_path / "h.db"
    cmd = [sys.executable, "-m", "pytest_gpuperf.cli", "run", "-p", "no:cacheprovider", "-p", "wait_after_first",
           "--gpuperf-device=opencl:0", f"--gpuperf-json={results}", f"--gpuperf-history={history}", *SELECTION]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    wait_for(marker, proc)
    out = time_limit(proc, proc.pid)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out[-4000:]
    assert "gpuperf INTERRUPTED: SIGTERM stopped the run before every test ran" in out, out[-4000:]
    assert "Traceback" not in out, out[-4000:]
    check_interrupted(results, history, out)


#: a pytest plugin: in the first test's call, before it measures anything, write MARKER and wait for the signal
WAIT_IN_FIRST_CALL = textwrap.dedent('''
    import os
    import time
    from pathlib import Path

    def pytest_runtest_call(item):
        marker = Path(os.environ["GPUPERF_TEST_MARKER"])
        if not marker.exists():
            marker.write_text(str(os.getpid()))
            time.sleep(120)  # the signal ends this wait
''')


def test_a_time_limit_in_the_first_test_still_leaves_a_results_file_naming_the_test_it_stopped(tmp_path: Path) -> None:
    """A batch job killed before its first test measured anything: the results file is written all the same,
    marked interrupted, with no metric and that test's outcome ``interrupted`` — told apart from a job that never
    started (no file)."""
    (tmp_path / "wait_in_first_call.py").write_text(WAIT_IN_FIRST_CALL)
    marker = tmp_path / "in-first"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path), os.environ.get("PYTHONPATH", "")]),
           "GPUPERF_TEST_MARKER": str(marker)}
    results = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "pytest_gpuperf.cli", "run", "-p", "no:cacheprovider", "-p", "wait_in_first_call",
           "--gpuperf-device=opencl:0", f"--gpuperf-json={results}", *SELECTION]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    wait_for(marker, proc)
    out = time_limit(proc, proc.pid)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out[-4000:]
    doc = json.loads(results.read_text())
    assert doc["run"]["interrupted"] is True and doc["metrics"] == [], out[-4000:]
    (test,) = doc["tests"]
    assert test["outcome"] == "interrupted" and test["test"].startswith("suites/test_accuracy_math.py::test_math_function")


#: a pytest plugin: the SIGINT and SIGTERM handlers the OS holds (``sigaction``; ``signal.getsignal`` answers from
#: Python's own record) once the run's are installed, and at each test's start and end
HANDLERS_AT_TEST_BOUNDARIES = textwrap.dedent('''
    import ctypes
    import os
    import signal

    import pytest

    class Sigaction(ctypes.Structure):  # glibc's struct sigaction
        _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16), ("flags", ctypes.c_int),
                    ("restorer", ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)

    def note(where):
        with open(os.environ["GPUPERF_TEST_MARKER"], "a") as out:
            for sig in (signal.SIGINT, signal.SIGTERM):
                act = Sigaction()
                assert libc.sigaction(sig, None, ctypes.byref(act)) == 0, ctypes.get_errno()
                out.write(f"{where} {sig.name} {act.handler or 0:#x} {act.flags & 0xffffffff:#x}\\n")

    @pytest.hookimpl(trylast=True)
    def pytest_configure(config):
        note("configure")

    def pytest_runtest_logstart(nodeid, location):
        note("start")

    def pytest_runtest_logfinish(nodeid, location):
        note("end")
''')

#: a handler installed with this flag is reset to the default action (for SIGTERM: the end of the process) as the
#: kernel delivers the signal to it, until the handler installs one again
SA_RESETHAND = 0x80000000


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads glibc's struct sigaction")
def test_handlers_that_pocl_installs_over_the_runs_are_replaced_at_every_test_boundary(tmp_path: Path) -> None:
    """LLVM inside PoCL installs its own SIGINT and SIGTERM handlers when the OpenCL devices are listed (during
    collection), over the run's; its handler is reset to the default as the signal arrives, so a second SIGTERM
    in that moment (a batch system's to every process of the job, and ``run.sh`` forwarding the one it got) ends
    the run with nothing written. From each test's start on, the handlers the OS holds are again the run's, which
    such a signal does not reset."""
    (tmp_path / "handlers_at_test_boundaries.py").write_text(HANDLERS_AT_TEST_BOUNDARIES)
    notes = tmp_path / "handlers"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path), os.environ.get("PYTHONPATH", "")]),
           "GPUPERF_TEST_MARKER": str(notes)}
    cmd = [sys.executable, "-m", "pytest_gpuperf.cli", "run", "-p", "no:cacheprovider", "-p",
           "handlers_at_test_boundaries", "--gpuperf-device=opencl:0", *SELECTION]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = [line.split() for line in notes.read_text().splitlines()]
    installed = {sig: handler for where, sig, handler, _ in lines if where == "configure"}
    assert set(installed) == {"SIGINT", "SIGTERM"} and "0x0" not in installed.values(), lines
    at_tests = [line for line in lines if line[0] != "configure"]
    # two tests or more, each running a kernel built on PoCL, each started and ended: two notes of two signals
    assert len(at_tests) >= 2 * 2 * 2, lines
    assert all(handler == installed[sig] and not int(flags, 16) & SA_RESETHAND
               for _, sig, handler, flags in at_tests), "\n".join(" ".join(line) for line in lines)
