"""A baseline's band holds the noise a figure carries for itself within a run, not only its runs' spread."""

from __future__ import annotations

import pytest

from pytest_gpuperf.baselines import merge, noise
from pytest_gpuperf.baselines.verdicts import band, compare
from pytest_gpuperf.schemas.results_doc import ResultsDocument

TEST_BAND = {"abs": 0.02, "rel": 0.5}  # the band a per-kernel model error's test sets (catalog)


def _doc(value: float, se: float | None) -> ResultsDocument:
    info = {} if se is None else {noise.OWN_SE: se}
    return ResultsDocument.from_json({"device": {"name": "GPU", "is_cpu": False}, "environment": {}, "run": {},
                                      "metrics": [{"test": "t", "name": "model.sampled.scale.error", "value": value,
                                                   "unit": "ratio", "better": "lower", "stats": None, "info": info,
                                                   "identity": {}, "tolerance": dict(TEST_BAND)}]})


def test_three_runs_that_agree_by_chance_do_not_narrow_the_band_below_one_run_s_own_error():
    # an H200 kernel's error over three baseline runs; each run's own error_se read 0.008-0.013, and the
    # next unchanged run read 0.0405: against the runs' spread alone that is a regression
    agreeing, se = [0.00716, 0.00803, 0.00823], 0.009
    with_se = merge.merge_runs([_doc(v, se) for v in agreeing], k=6.0)["model.sampled.scale.error"]
    without = merge.merge_runs([_doc(v, None) for v in agreeing], k=6.0)["model.sampled.scale.error"]
    assert band(with_se["value"], with_se["tolerance"]) == pytest.approx(6.0 * se)
    assert band(without["value"], without["tolerance"]) == pytest.approx(0.02)  # the test's own band
    assert compare(0.0405, "lower", without).verdict == "regressed"
    # in the band its own error sets: not regressed; and the gate records such a figure without judging it
    # (the catalog declares one kernel's error informational: it moves by ~65 % of itself between machines)
    assert compare(0.0405, "lower", with_se).verdict == "pass"
    gated = compare(0.0405, "lower", with_se, name="model.sampled.scale.error", unit="ratio")
    assert gated.verdict == "ungated" and gated.reason.startswith("informational: ")


@pytest.mark.parametrize("info,expected", [
    ({noise.OWN_SE: 0.25}, 0.25),
    ({noise.OWN_SE: 0}, 0.0),
    ({noise.OWN_SE: float("nan")}, None),
    ({noise.OWN_SE: -1.0}, None),
    ({noise.OWN_SE: True}, None),
    ({noise.OWN_SE: "0.1"}, None),
    (None, None),
])
def test_a_figure_s_own_standard_error_is_read_only_when_it_is_a_finite_non_negative_number(info, expected):
    assert noise.own_se({"info": info}) == expected


def test_the_provenance_is_the_latest_run_s_whatever_order_the_runs_are_named_in():
    """A later A/A run is told apart from the runs an entry was made from by the entry's date: named newest
    first, the runs still give the newest run's finish (an older one's would count newer runs twice)."""
    def doc(started: str, finished: str, commit: str, value: float) -> ResultsDocument:
        return ResultsDocument.from_json({
            "device": {"name": "GPU", "is_cpu": False}, "environment": {"commit": commit},
            "run": {"started": started, "finished": finished},
            "metrics": [{"test": "t", "name": "latency.fp32.fma.cycles", "value": value, "unit": "cycles",
                         "better": "lower", "stats": None, "info": {}, "identity": {}}]})
    newest = doc("2026-12-05T05:32:36+00:00", "2026-12-05T05:40:00+00:00", "new", 4.2)
    older = [doc("2026-12-05T02:03:45+00:00", "2026-12-05T02:10:00+00:00", "old", 4.0),
             doc("2026-12-05T02:11:54+00:00", "2026-12-05T02:17:09+00:00", "old", 4.1)]
    for order in ([newest, *older], [*older, newest], [older[1], newest, older[0]]):
        entry = merge.merge_runs(order, k=6.0)["latency.fp32.fma.cycles"]
        assert entry["provenance"]["date"] == "2026-12-05T05:40:00+00:00", order
        assert entry["provenance"]["commit"] == "new"
        assert entry["run_values"] == [4.0, 4.1, 4.2]
