"""A CPU device's figure measured while other processes held the host's cores is not judged: verdict
``contended`` (never a pass, never a failure), and a run with more than a tenth of its metrics contended
is not a valid gate and fails. Real contention: busy-loop processes beside a real PoCL measurement.

The work is small (2500 loop steps a launch, 8x that while contended: a window of about a second, far
above the ten clock ticks the contention reading needs)."""

from __future__ import annotations

import json

import pytest

from pytest_gpuperf import exits
from pytest_gpuperf.devices import discover
from pytest_gpuperf.timing import observers
from suite_support import WORK_HEAD
from suite_support import baseline_folder

INV = discover()
pytestmark = pytest.mark.skipif(not any(d.backend == "opencl" and d.is_cpu for d in INV.devices),
                                reason="needs a CPU OpenCL device (install pocl-opencl-icd)")

SUITE = WORK_HEAD + '''
import subprocess, sys, time
import pytest

BUSY = "import time\\nt = time.perf_counter()\\nwhile time.perf_counter() - t < 20: pass\\n"


@pytest.mark.parametrize("k", range(int(os.environ.get("QUIET", "1"))))
def test_quiet(gpuperf_record, k):
    gpuperf_record(f"quiet.{k}.count", 1.0, "configs", better="exact", tolerance={"abs": 0})


def test_work(gpu_device, gpu_kernel, gpu_measure, gpuperf_record):
    hogs = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(int(os.environ.get("HOGS", "0")))]
    try:
        time.sleep(0.2 if hogs else 0)
        k = gpu_kernel.compile(SRC, "work")
        buf = gpu_kernel.to_device(np.ones(4096, np.float32))
        n = int(os.environ.get("WORK_ITERS", "2500"))
        m = gpu_measure(k, (4096,), (64,), [buf, np.int32(n)], min_repeats=5, max_repeats=5)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    ms = m.stats.scaled(1e3)
    if os.environ.get("NEGATIVE"):  # a differenced figure gone below zero on this host: an impossible value
        gpuperf_record("kernel.work.gap_ms", -ms.median, "ms", better="lower")
    gpuperf_record("kernel.work.ms", ms.median, "ms", better="lower", stats=ms)
    # a count of the work's outputs: the same whoever held the cores (deterministic), so always judged
    out = gpu_kernel.to_host(buf, np.float32)
    gpuperf_record("kernel.work.finite", float(np.isfinite(out).sum()), "count", better="exact", tolerance={"abs": 0})
'''


def _run(pytester, *args, **env):
    for k, v in env.items():
        pytester._monkeypatch.setenv(k, str(v))
    return pytester.runpytest_subprocess("--gpuperf-device=opencl:0", f"--gpuperf-baseline-dir={baseline_folder(pytester.path, 'bl')}",
                                         "-p", "no:cacheprovider", *args)


def test_contended_metric_is_not_judged_and_too_many_fail_the_run(pytester):
    pytester.makepyfile(SUITE)
    assert _run(pytester, "--gpuperf-update-baselines", HOGS=0, QUIET=1, WORK_ITERS=300).ret == 0
    out = pytester.path / "r.json"
    # the work grows 67x while two other processes hold the cores: judged, it would lie far outside the band —
    # and far beyond the most that two cores' worth of other work can explain (at most 1/MIN_SHARE = 10x,
    # FAR_BEYOND = 3 times that): the run names it, though it cannot gate it
    result = _run(pytester, f"--gpuperf-json={out}", HOGS=2, QUIET=1, WORK_ITERS=20000, GITHUB_ACTIONS="true")
    doc = json.loads(out.read_text())
    work = next(m for m in doc["metrics"] if m["name"] == "kernel.work.ms")
    assert work["info"]["host"]["contended"] >= 1 and work["info"]["host"]["remeasured"] == observers.RETRIES, work["info"]
    assert work["verdict"] == "contended"
    beyond = work["info"]["would_regress"]
    assert beyond["factor"] > beyond["limit"] == pytest.approx(observers.FAR_BEYOND * beyond["explained"], rel=1e-3)
    assert doc["run"]["would_regress"] == ["kernel.work.ms"]
    result.stdout.fnmatch_lines(["*WOULD HAVE REGRESSED: 1 metric(s) of opencl:0*kernel.work.ms x*run again alone*"])
    # the count was taken in the same contended test, and is judged on its value
    finite = next(m for m in doc["metrics"] if m["name"] == "kernel.work.finite")
    assert finite["info"]["host"]["contended"] >= 1 and finite["verdict"] == "pass", finite
    # one of three metrics contended: more than a tenth, so the run is not a valid gate — its own status, not 1
    assert result.ret == exits.HOST_TOO_BUSY, result.stdout.str()
    result.stdout.fnmatch_lines([f"*HOST TOO BUSY TO GATE (exit {exits.HOST_TOO_BUSY}): opencl:0: 1 of 3 metrics*"])
    assert "::error title=gpuperf%3A HOST TOO BUSY TO GATE::opencl:0: 1 of 3 metrics" in result.stdout.str()


def test_a_few_contended_metrics_leave_the_run_green_and_say_so(pytester):
    pytester.makepyfile(SUITE)
    assert _run(pytester, "--gpuperf-update-baselines", HOGS=0, QUIET=10).ret == 0
    result = _run(pytester, HOGS=2, QUIET=10, WORK_ITERS=20000)  # 1 contended of 12 metrics: under a tenth
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*kernel.work.ms*contended*", "*HOST BUSY: 1 metric(s) of opencl:0*not gated*"])


def test_an_impossible_value_measured_on_a_busy_host_says_so(pytester):
    """The error an impossible value raises names the host's marks when other work held its cores (a quiet
    host's figure gets no such words: tests/test_observers_busy_note.py)."""
    pytester.makepyfile(SUITE)
    busy = _run(pytester, HOGS=2, NEGATIVE=1, WORK_ITERS=20000)
    busy.stdout.fnmatch_lines(["*impossible value: kernel.work.gap_ms = -*measured while other work held this "
                               "host's CPUs*windows contended*run it again on a quiet host*"])


def test_the_verdict_rule():
    info = {"host": {"contended": 1}}
    assert observers.contended_verdict("regressed", info, is_cpu=True) == "contended"
    assert observers.contended_verdict("pass", info, is_cpu=True) == "contended"
    assert observers.contended_verdict("regressed", info, is_cpu=False) == "regressed"  # GPU figures: device-timed
    assert observers.contended_verdict("new", info, is_cpu=True) == "new"
    assert observers.contended_verdict("regressed", {"host": {"contended": 0, "busy": 2}}, is_cpu=True) == "regressed"
