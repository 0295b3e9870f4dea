"""The end of a run and its course: a live status line during long tests on the terminal (not on a stream
pytest captures), the summary table of the rows that are not ``pass`` (``--gpuperf-summary``), and a
GitHub annotation for every summary line that fails the run. On PoCL; the status line's runs in pytest
subprocesses (it writes to the terminal's own descriptor, which an in-process run does not have), the
summary's and the annotations' in this interpreter (``pytester.runpytest``: the same plugin, the same output,
without a fresh interpreter's start for each of their eight runs)."""

from __future__ import annotations

import pytest

from pytest_gpuperf.devices import discover
from pytest_gpuperf.report import progress

CL = [d for d in discover().devices if d.backend == "opencl"]
pytestmark = pytest.mark.skipif(not CL, reason="no OpenCL device (install pocl-opencl-icd)")

SLOW = '''
import time

def test_quick_first(gpu_device):  # opens the device (and builds its check kernel) before the slow test's clock runs
    pass

def test_slow(gpuperf_record, gpu_device, request):
    from pytest_gpuperf.report import progress

    print("a line the test prints, captured")
    gpuperf_record("area.first.us", 1.0, "us")
    task = progress.of(request.config).task("tuning k", "configurations")
    task(3, 12)
    time.sleep(1.6)
    task.close()

def test_quick_last():
    pass
'''


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makepyfile(SLOW)
    return pytester.runpytest_subprocess("--gpuperf-device=opencl:0", "-p", "no:cacheprovider", *args)


def test_a_long_test_shows_its_measurement_elapsed_time_and_what_is_left(pytester, monkeypatch, tmp_path):
    monkeypatch.setenv("GPUPERF_CACHE", str(tmp_path / "cache"))  # where the tests' durations are kept
    result = _run(pytester, "--gpuperf-progress=0.4")
    result.assert_outcomes(passed=3)
    out = result.stdout.str()
    (line,) = [ln for ln in out.splitlines() if ln.startswith("gpuperf [2/3] ")]
    assert "test_slow[opencl:0]: running" in line and "last measured area.first.us" in line
    assert "tuning k: 3/12 configurations, ~" in line and " left" in line.split("tuning k")[1]
    assert "session ~" in line and "left for 1 more test(s)" in line  # from the first test's duration
    assert "a line the test prints" not in out, "the test's own output stays captured"
    # each test's duration is kept for the next session's estimate
    kept = progress.load_durations(tmp_path / "cache" / progress.DURATIONS)
    slow = next(v for k, v in kept.items() if k.endswith("::test_slow[opencl:0]"))
    last = next(v for k, v in kept.items() if k.endswith("::test_quick_last"))
    # the sleep bounds the slow test's duration from below; the empty last test is the one to compare with (the
    # first opens the device, which on a busy host can take longer than the sleep)
    assert len(kept) == 3 and slow >= 1.6 and last < slow, kept


def test_no_status_line_for_short_tests_or_when_off(pytester, monkeypatch, tmp_path):
    monkeypatch.setenv("GPUPERF_CACHE", str(tmp_path / "cache"))
    assert "gpuperf [" not in _run(pytester, "--gpuperf-progress=0").stdout.str()
    assert "gpuperf [" not in _run(pytester, "--gpuperf-progress=30").stdout.str()


WORK = '''
def test_work(gpuperf_record, gpu_device):
    gpuperf_record("area.a.count", 1.0, "count", better="exact")
    gpuperf_record("area.b.count", 2.0, "count", better="exact")
'''


def test_the_summary_lists_the_rows_that_are_not_pass_unless_asked_for_all(pytester):
    pytester.makepyfile(WORK)
    common = ("--gpuperf-device=opencl:0", "-p", "no:cacheprovider", "--gpuperf-baseline-dir=bl")
    pytester.mkdir("bl")
    pytester.runpytest(*common, "--gpuperf-update-baselines").assert_outcomes(passed=1)
    def rows(out: str) -> list[str]:  # the table's rows (a busy host's HOST BUSY line may name metrics too)
        return [line.split()[0] for line in out.splitlines() if line.startswith("area.")]

    quiet = pytester.runpytest(*common).stdout.str()
    assert not rows(quiet) and "(2 rows pass or new or ungated or loose not listed; --gpuperf-summary=all" in quiet
    assert "gpuperf opencl:0: 2 pass" in quiet
    every = pytester.runpytest(*common, "--gpuperf-summary=all").stdout.str()
    assert rows(every) == ["area.a.count", "area.b.count"] and "not listed" not in every
    pytester.makeini("[pytest]\ngpuperf_summary = all\n")
    assert "area.a.count" in rows(pytester.runpytest(*common).stdout.str())
    pytester.makeini("[pytest]\ngpuperf_summary = some\n")
    bad = pytester.runpytest(*common)
    assert bad.ret == pytest.ExitCode.USAGE_ERROR and "gpuperf_summary = 'some'" in bad.stderr.str()


ABANDON = '''
import os

def test_gives_up(gpuperf_record, gpu_device):
    gpuperf_record("area.a.count", 1.0, "count", better="exact")
    if os.environ.get("STAGE") == "baseline":
        gpuperf_record("area.b.count", 2.0, "count", better="exact")
    else:
        gpu_device.abandon("a fault poisoned its queue (test)")
'''


def test_every_failing_summary_line_has_its_github_annotation(pytester, monkeypatch):
    """An abandoned device and a metric its test no longer records both fail the run: each red line of the
    summary comes with an ``::error`` annotation."""
    pytester.makepyfile(ABANDON)
    pytester.mkdir("bl")
    common = ("--gpuperf-device=opencl:0", "-p", "no:cacheprovider", "--gpuperf-baseline-dir=bl")
    monkeypatch.setenv("STAGE", "baseline")
    pytester.runpytest(*common, "--gpuperf-update-baselines").assert_outcomes(passed=1)
    monkeypatch.setenv("STAGE", "run")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(pytester.path / "summary.md"))
    result = pytester.runpytest(*common)
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "gpuperf ABANDONED opencl:0: a fault poisoned its queue (test)" in out
    assert "::error title=gpuperf ABANDONED opencl%3A0::a fault poisoned its queue (test)" in out
    assert "MISSING: area.b.count is in the baseline" in out
    assert "::error title=gpuperf missing%3A area.b.count on opencl%3A0::" in out
