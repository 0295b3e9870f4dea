"""The cohort noise model (``baselines/cohort.py``): its statistics on numbers worked by hand, and its
decisions — which card × metric is flagged, a card's fleet-relative verdict, the bit-for-bit majority of an
exact figure, a new cohort against an old one. The fleet report and the rollout gate on saved runs:
``tests/test_fleet_report.py``."""

from __future__ import annotations

import math

import pytest

from pytest_gpuperf.baselines import catalog, cohort
from pytest_gpuperf.verdictwords import Compare, FleetCard


# --- the statistics ---------------------------------------------------------------------------------

def test_bh_is_benjamini_hochberg():
    p = [0.01, 0.04, 0.03, 0.005]
    # by hand: sorted 0.005, 0.01, 0.03, 0.04 → ×4/rank = 0.02, 0.02, 0.04, 0.04 (monotone from the top)
    assert cohort.bh(p) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert cohort.bh([]) == []


def test_robust_z_is_one_sided_towards_worse():
    assert cohort.robust_z(12.0, 10.0, 1.0, "lower") == pytest.approx(2.0)
    assert cohort.robust_z(12.0, 10.0, 1.0, "higher") == pytest.approx(-2.0)
    # the σ is never below the metric's own noise: 10 % noise on a median of 10 is σ = 1, not 0.01
    assert cohort.robust_z(12.0, 10.0, 0.01, "lower", noise_rel=0.1) == pytest.approx(2.0)
    assert cohort.p_value(0.0) == pytest.approx(0.5)


def test_a_run_s_own_noise_needs_three_samples():
    assert cohort.robust_cv([1.0, 2.0]) is None
    assert cohort.robust_cv([1.0, 2.0, 3.0]) == pytest.approx(1.482602218505602 / 2)
    assert cohort.median_se_rel([1.0, 2.0, 3.0]) == pytest.approx(math.sqrt(math.pi / 2) * 1.482602218505602 / 2
                                                                  / math.sqrt(3))
    assert cohort.robust_cv([-1.0, 0.0, 1.0]) is None  # a zero median has no relative noise


def test_a_zero_mad_falls_back_to_the_mean_absolute_deviation():
    med, sigma = cohort.center_and_spread([1.0, 1.0, 1.0, 1.0, 2.0])
    assert med == 1.0 and sigma == pytest.approx(cohort.MEANAD_TO_SIGMA * 0.2)


def test_between_cards_welch_and_mann_whitney_see_a_shift_of_every_card():
    old = [10.0, 10.2, 9.9, 10.1, 10.05]
    assert cohort.between_cards(old, [x * 1.2 for x in old], "lower") < 0.001
    assert cohort.between_cards(old, [x * 1.2 for x in old], "higher") > 0.5  # higher is better: not worse
    assert cohort.between_cards(old, [x * 1.2 for x in old], "lower", "mannwhitney") < 0.01
    assert cohort.between_cards([1.0], [2.0, 3.0], "lower") == 1.0  # one card: no spread between cards


def test_between_cards_needs_two_cards_a_side_and_reads_identical_cards_by_their_direction():
    assert cohort.between_cards([1.0, 2.0], [5.0], "lower") == 1.0
    assert cohort.between_cards([1.0, 2.0], [5.0], "lower", "mannwhitney") == 1.0
    assert cohort.between_cards([1.0, 1.1], [2.0, 2.1], "lower") < 0.05  # two a side are enough
    # no spread on either side: worse is certain, as good or better is not worse at all
    assert cohort.between_cards([1.0, 1.0, 1.0], [2.0, 2.0, 2.0], "lower") == 0.0
    assert cohort.between_cards([2.0, 2.0, 2.0], [1.0, 1.0, 1.0], "lower") == 1.0


def test_worse_effect_is_direction_aware_and_ratio_safe():
    assert cohort.worse_effect(11.0, 10.0, "lower") == pytest.approx(0.1)
    assert cohort.worse_effect(0.5, 0.25, "lower") == pytest.approx(1.0)  # a reference below 1 is a ratio too
    assert cohort.worse_effect(10.0, 11.0, "higher") == pytest.approx(0.1)
    assert cohort.worse_effect(0.5, 1.0, "higher") == pytest.approx(1.0)  # half the bandwidth: twice the time
    assert cohort.worse_effect(1.0, 0.0, "lower") == math.inf
    assert cohort.worse_effect(-1.0, 0.0, "lower") == -math.inf
    assert cohort.worse_effect(0.0, 0.0, "lower") == 0.0
    assert math.isnan(cohort.worse_effect(1.0, -1.0, "lower"))
    # higher is better and the value fell to 0 or below: infinitely worse than a positive reference
    assert cohort.worse_effect(0.0, 5.0, "higher") == math.inf
    assert cohort.worse_effect(0.0, 0.0, "higher") == 0.0
    assert math.isnan(cohort.worse_effect(-1.0, -2.0, "higher"))


# --- the decisions ----------------------------------------------------------------------------------

def test_the_effect_floor_is_the_largest_of_class_noise_and_the_family_band():
    # a GPU timing from one run per card: the class floor (3 %) until 3 × the noise is wider
    assert cohort.effect_floor("us", {}, False, 0.0) == (pytest.approx(0.03), 0.0)
    assert cohort.effect_floor("us", {}, False, 0.05) == (pytest.approx(0.15), 0.0)
    # a family whose fixed band stands for one card's noise (a model's error) raises the floor, both terms
    assert cohort.effect_floor("ratio", {}, False, 0.0, name="model.ptx.x.mape") == (pytest.approx(0.2), 0.05)
    # a band that holds the differences between boards (a DRAM latency) is what the cohort is there to see
    rel, floor_abs = cohort.effect_floor("cycles", {}, False, 0.0, name="memory.dram.latency.cycles")
    assert rel < 0.05 and floor_abs == 0.0


def _reference(values: list[float], noise: float = 0.0) -> cohort.Reference:
    return cohort.reference("memory.copy.device_us", values, [noise] * len(values), [], better="lower",
                            unit="us", identity="{}", info={}, is_cpu=False)


def test_a_card_far_beyond_its_cohort_and_the_floor_is_flagged_and_one_inside_the_floor_is_not():
    ref = _reference([100.0, 100.5, 99.5, 100.2, 99.8, 100.1])
    assert ref.median == pytest.approx(100.05) and ref.n == 6 and ref.floor == pytest.approx(0.03)
    rows = [cohort.card_row("memory.copy.device_us", v, ref) for v in (100.0, 102.0, 120.0, 80.0)]
    flags = cohort.flag(rows, fdr=0.01)
    # 2 % slower is many MADs away but inside the 3 % floor; 20 % slower is both; 20 % faster is not worse
    assert flags == [False, False, True, False]
    assert all("q" in r for r in rows) and rows[2]["z"] > 10 and rows[2]["effect"] == pytest.approx(120 / 100.05 - 1)
    # the cohort's own noise raises the floor: 3 × 10 % = 30 % hides the 20 % card
    noisy = _reference([100.0, 100.5, 99.5, 100.2, 99.8, 100.1], noise=0.1)
    assert cohort.flag([cohort.card_row("memory.copy.device_us", 120.0, noisy)]) == [False]


def test_the_floors_and_the_fdr_are_edges_a_card_must_pass_strictly_and_the_fdr_is_one_percent():
    row = {"effect": 0.1, "floor": 0.1, "worse_by": 5.0, "floor_abs": 0.0, "p": 1e-9}
    assert not cohort.beyond_floor(row)  # at the relative floor, not beyond it
    assert not cohort.beyond_floor(dict(row, floor=0.05, floor_abs=5.0))  # at the absolute floor
    assert cohort.beyond_floor(dict(row, floor=0.05))
    # one test at p = 0.015 is not flagged at the default FDR (1 %), and is at 2 %
    assert cohort.flag([dict(row, floor=0.05, p=0.015)]) == [False]
    assert cohort.flag([dict(row, floor=0.05, p=0.015)], fdr=0.02) == [True]


def test_an_infinite_effect_is_kept_as_its_repr_and_still_flags():
    ref = _reference([0.0, 0.0, 0.0, 0.0, 0.0])
    row = cohort.card_row("memory.copy.device_us", 5.0, ref)
    assert row["effect"] == "inf" and cohort.beyond_floor(row)


@pytest.mark.parametrize("flagged, confirmed, verdict", [
    (False, None, FleetCard.OK), (True, None, FleetCard.UNCERTAIN), (True, True, FleetCard.FAIL),
    (True, False, FleetCard.WARN)])
def test_a_flagged_card_is_uncertain_until_its_confirmation_run(flagged, confirmed, verdict):
    assert cohort.card_verdict(flagged, confirmed) == verdict


def test_exact_figures_are_compared_bit_for_bit_against_a_strict_majority():
    shared, count, odd = cohort.odd_ones([0.3, 0.3, 0.1 + 0.2, 0.3])  # 0.1 + 0.2 is 0.30000000000000004
    assert shared == 0.3 and count == 3 and odd == [False, False, True, False]
    assert cohort.odd_ones([1, 1, 2, 2]) is None  # a tie is no majority
    # a figure the gate judges within a band: one step of the grid is the same figure, two steps differ
    l2 = [61056256.0] * 8 + [63010560.0] * 2  # one footprint step (3.2 %) apart, as unchanged H200s read it
    tol = catalog.grid_tolerance("memory.l2.size.bytes", False)
    assert catalog.grid_tolerance("accuracy.fp32.sin.max_ulp", False) is None  # exact, compared bit for bit
    assert cohort.odd_ones(l2) is not None and any(cohort.odd_ones(l2)[2])  # bit for bit, two would fail
    shared, count, odd = cohort.odd_ones(l2, tol)
    assert (shared, count, odd) == (61056256.0, 10, [False] * 10)
    shared, count, odd = cohort.odd_ones([61056256.0] * 8 + [61056256.0 * 0.66] * 2, tol)  # an L2 a third smaller
    assert count == 8 and odd == [False] * 8 + [True] * 2
    assert cohort.exact_value([2.5, 2.5, 3.0]) == 2.5


def test_a_new_cohort_is_worse_only_when_significant_and_beyond_the_floor():
    assert cohort.timed_shift(0.001, 0.10, 0.03, 0.05) == Compare.WORSE
    assert cohort.timed_shift(0.001, -0.10, 0.03, 0.05) == Compare.BETTER
    assert cohort.timed_shift(0.001, 0.02, 0.03, 0.05) == Compare.SAME  # inside the floor
    assert cohort.timed_shift(0.2, 0.10, 0.03, 0.05) == Compare.SAME  # not significant
    assert cohort.timed_shift(0.05, 0.10, 0.03, 0.05) == Compare.WORSE  # an adjusted p at the FDR is significant
    assert cohort.timed_shift(0.05, -0.10, 0.03, 0.05) == Compare.BETTER
    assert cohort.timed_shift(0.001, 0.03, 0.03, 0.05) == Compare.SAME  # at the floor, not beyond it
    assert cohort.exact_shift("3", "4", "lower") == Compare.WORSE
    assert cohort.exact_shift("4", "3", "lower") == Compare.BETTER
    assert cohort.exact_shift("3", "4", "exact") == Compare.WORSE  # an exact figure that moves is worse
    assert cohort.exact_shift("'a'", "'b'", "lower") == Compare.WORSE  # not a number: any change is worse
