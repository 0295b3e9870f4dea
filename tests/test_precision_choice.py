"""The precision studies give one answer: the tuner's chosen mix comes from its validations alone (no
timing inside the search), so two runs of unchanged code choose the same mix; the speedups are medians
of alternating pairs, whose ratios travel as the figure's samples; the refinement records how many
kernels a solve launches, which says where a size is launch-bound. On PoCL (a real OpenCL device)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.precision import refine
from pytest_gpuperf.precision.conditioned import with_condition
from pytest_gpuperf.precision.programs import PROGRAMS
from pytest_gpuperf.precision.runner import CHOICES, metrics, tune
from pytest_gpuperf.timing.measure import MeasureConfig

QUICK = MeasureConfig(warmup=1, min_repeats=3, max_repeats=5, budget_s=0.05)


def _tune(dev, kernel: str, seed: int = 11, **kw):
    return tune(dev, PROGRAMS[kernel], np.random.default_rng(seed), search_config=QUICK, final_config=QUICK, **kw)


@pytest.mark.parametrize("kernel", ["stencil", "lavamd"])
def test_two_runs_choose_the_same_mix_without_timing_the_search(cl_device, kernel):
    first, second = _tune(cl_device, kernel), _tune(cl_device, kernel)
    assert first.lowered == second.lowered
    assert first.lowered == sorted(first.outcome.furthest.lowered)  # the furthest passing program
    assert first.chosen_error <= first.threshold.value
    # nothing was timed inside the search: every candidate carries the placeholder time of the original
    assert {c.time_s for c in first.outcome.pool} == {first.outcome.original.time_s}


def test_the_thesis_cost_choice_stays_available_and_unknown_choices_are_refused(cl_device):
    res = _tune(cl_device, "reduction", choice="cost")
    assert res.choice == "cost" and "chosen_cost" in res.info()
    assert sorted(res.outcome.best.lowered) == res.lowered
    with pytest.raises(ValueError, match="unknown choice"):
        _tune(cl_device, "reduction", choice="fastest")
    assert set(CHOICES) == {"lowered", "cost"}


def test_metrics_carry_the_choice_in_their_identity_and_the_pairs_as_samples(cl_device):
    res = _tune(cl_device, "nbody")
    ms = {m["name"].rsplit(".", 1)[1]: m for m in metrics(res)}
    assert ms["speedup"]["identity"]["choice"] == "lowered"
    assert ms["fp32_fraction"]["identity"]["choice"] == "lowered"
    assert "choice" not in ms["iterations"]["identity"]  # the search's path does not depend on the choice
    assert list(ms["speedup"]["stats"].samples) == pytest.approx(res.ratios)
    assert ms["speedup"]["value"] == pytest.approx(float(np.median(res.ratios)))


def test_refinement_counts_its_launches_and_reports_the_median_of_paired_ratios(cl_device):
    rng = np.random.default_rng(3)
    n = 48
    a = with_condition(n, 100.0, rng)
    c = refine.compare(cl_device, a, a @ rng.uniform(-1, 1, n), QUICK)
    assert c.launches["fp64"] == 3 * n - 2 + 1  # pivot per column, scale and update per column but the last, one solve
    assert c.launches["mixed"] > c.launches["fp64"]  # demotions, the fp32 solve, refinements, the final residual
    assert len(c.ratios) == len(c.t_mixed.samples) and c.speedup == pytest.approx(float(np.median(c.ratios)))
    assert set(c.us_per_launch) == {"mixed", "fp64"} and all(v > 0 for v in c.us_per_launch.values())
