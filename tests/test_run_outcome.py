"""The run's exit status is decided in one object (``report.run_outcome``): the order its reasons override
each other in, one rule at a time (the pytest runs behind each status: tests/test_core_*.py)."""

from __future__ import annotations

from pytest_gpuperf import exits
from pytest_gpuperf.report.run_outcome import GateFacts, RunOutcome

LINE = ("opencl:0: 3 of 10 metrics ...",)


def settled(status: int = 0, **facts) -> RunOutcome:
    out = RunOutcome(status)
    out.settle(GateFacts(**facts))
    return out


def test_a_clean_run_keeps_pytests_status():
    for status in (0, 1):
        out = settled(status)
        assert (out.status, out.failed, out.error) == (status, False, None)


def test_missing_metrics_fail_unless_the_run_only_writes_baselines():
    assert (settled(missing=True).status, settled(missing=True).failed) == (1, True)
    assert settled(missing=True, judging=False).status == 0


def test_a_busy_host_has_its_own_status_only_where_nothing_judged_failed():
    assert settled(host_busy=LINE).status == exits.HOST_TOO_BUSY
    assert settled(1, host_busy=LINE).status == 1  # a regression is a finding whatever the load
    assert settled(missing=True, host_busy=LINE).status == 1
    assert settled(host_busy=LINE, judging=False).status == 0


def test_a_shared_card_wins_over_a_throttle_and_a_missing_baseline_over_both():
    assert settled(1, throttled=LINE).status == exits.THROTTLED
    assert settled(throttled=LINE, gpu_busy=LINE).status == exits.GPU_TOO_BUSY
    assert settled(throttled=LINE, gpu_busy=LINE, host_busy=LINE, no_baseline=("opencl:0",)).status == exits.NO_BASELINE


def test_an_abandoned_device_fails_a_passing_run_and_says_why():
    out = settled()
    out.abandoned({"cuda:0": "hang"})
    assert (out.status, out.failed) == (1, True) and "cuda:0 abandoned" in out.error
    busy = settled(gpu_busy=LINE)
    busy.abandoned(["cuda:0"])
    assert busy.status == exits.GPU_TOO_BUSY and busy.error is None  # the status already says the run failed
    quiet = settled()
    quiet.abandoned({})
    assert (quiet.status, quiet.failed) == (0, False)


def test_failed_writes_fail_the_run_and_keep_their_message_first():
    out = RunOutcome(0)
    out.writes_failed("results: disk full")
    out.settle(GateFacts())
    out.abandoned(["cuda:0"])
    assert (out.status, out.error) == (1, "results: disk full")


def test_an_interrupt_ends_the_run_as_interrupted_whatever_was_settled():
    out = settled(gpu_busy=LINE)
    out.interrupted()
    assert out.status == 2 and out.failed


def test_the_controller_takes_the_first_workers_status_in_the_precedence():
    out = RunOutcome(0)
    out.workers(True, [None, exits.HOST_TOO_BUSY, exits.THROTTLED])
    assert out.status == exits.THROTTLED
    plain = RunOutcome(0)
    plain.workers(True, [None])
    assert plain.status == 1
    ok = RunOutcome(0)
    ok.workers(False, [])
    assert ok.status == 0


def test_the_interrupted_line_says_when_the_signal_came_and_what_was_kept():
    from pytest_gpuperf.report.run_outcome import interrupted_line

    assert interrupted_line("Ctrl-C", False, False) == "gpuperf INTERRUPTED: Ctrl-C stopped the run before every test ran"
    kept = interrupted_line("SIGTERM", False, True, ["cuda:0"])
    assert "the results and history hold the tests that finished" in kept and kept.endswith(
        "cuda:0 still had work running and was not waited for")
    assert "during the end-of-run writes" in interrupted_line("Ctrl-C", True, True)
