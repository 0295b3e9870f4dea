"""A baseline's band holds a figure's own noise within a run, not only its runs' spread."""

from __future__ import annotations

import pytest

from pytest_gpuperf.baselines import merge, noise
from pytest_gpuperf.baselines.verdicts import band


def _doc(value: float, se: float | None) -> dict:
    info = {} if se is None else {noise.OWN_SE: se}
    return {"device": {"name": "GPU", "is_cpu": False}, "environment": {}, "run": {},
            "metrics": [{"test": "t", "name": "model.sampled.copy.error", "value": value, "unit": "ratio",
                         "better": "lower", "stats": None, "info": info, "identity": {}}]}


def test_three_runs_that_agree_by_chance_do_not_narrow_the_band_below_one_run_s_own_error():
    agreeing = [0.041, 0.041, 0.030]  # H100 runs of one kernel; each run's own error_se read 0.047-0.058
    with_se = merge.merge_runs([_doc(v, 0.05) for v in agreeing], k=6.0)["model.sampled.copy.error"]
    without = merge.merge_runs([_doc(v, None) for v in agreeing], k=6.0)["model.sampled.copy.error"]
    assert band(with_se["value"], with_se["tolerance"]) >= 6.0 * 0.05 * 0.99
    assert band(without["value"], without["tolerance"]) < 0.1  # the runs' spread alone: a third of it


@pytest.mark.parametrize("metric,expected", [
    ({"stats": {"mad": 2.0}, "info": {noise.OWN_SE: 9.0}}, 2.0 * 1.4826),  # raw repeats win
    ({"stats": None, "info": {noise.OWN_SE: 0.25}}, 0.25),
    ({"stats": None, "info": {noise.OWN_SE: float("nan")}}, None),
    ({"stats": None, "info": {noise.OWN_SE: -1.0}}, None),
    ({"stats": None, "info": {noise.OWN_SE: True}}, None),
    ({"stats": None, "info": None}, None),
])
def test_a_figure_s_own_noise_is_its_repeats_else_its_standard_error(metric, expected):
    got = noise.within_sigma(metric)
    assert got == (None if expected is None else pytest.approx(expected, rel=1e-3))
