"""The sibling rule (``baselines/sibling_verdict.py``) on figures given directly: the samples' significance
beyond the floor, the floor alone where a card carries no samples, siblings that read 0, exact figures and
what makes figures incomparable. The sibling check on results documents: ``tests/test_fleet_siblings.py``."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.baselines.sibling_verdict import SiblingFigure, sibling_verdict
from pytest_gpuperf.verdictwords import Sibling


def _noisy(median: float, n: int = 40, cv: float = 0.005, seed: int = 0) -> list[float]:
    return list(median * (1.0 + cv * np.random.default_rng(seed).standard_normal(n)))


def _fig(value: float | None, samples=None, unit: str = "us", identity=None) -> SiblingFigure:
    return SiblingFigure(value, None if samples is None else [float(x) for x in samples], unit, identity)


# --- samples: the gate's statistics --------------------------------------------------------------------

def test_samples_beyond_the_floor_and_significant_decide_by_direction():
    sibs = [_fig(10.0, _noisy(10.0, seed=1)), _fig(10.0, _noisy(10.0, seed=2))]
    slow = _fig(11.0, _noisy(11.0, seed=3))
    j = sibling_verdict(slow, sibs, "lower", 0.03)
    assert j.verdict == Sibling.OUTLIER and j.basis == "samples" and j.reason == ""
    assert j.difference is not None and j.difference.significant and 1.08 < j.ratio < 1.12
    # the siblings' figure is the median of their samples pooled
    assert j.siblings_value == pytest.approx(float(np.median(sibs[0].samples + sibs[1].samples)))
    # the same figures where higher is better: the card is the better one
    assert sibling_verdict(slow, sibs, "higher", 0.03).verdict == Sibling.BETTER


def test_beyond_the_floor_but_not_significant_is_same_with_the_statistics_in_the_reason():
    # five samples a side spread over ±50 %: the medians differ by 20 %, the test cannot tell
    sibs = [_fig(10.0, [5.0, 8.0, 10.0, 12.0, 15.0])]
    card = _fig(12.0, [6.0, 9.0, 12.0, 14.0, 18.0])
    j = sibling_verdict(card, sibs, "lower", 0.03)
    assert j.ratio == pytest.approx(1.2) and j.difference is not None and not j.difference.significant
    assert j.verdict == Sibling.SAME and j.basis == "samples"
    assert j.reason.startswith("beyond the 3% floor but not significant (p=")
    assert f"[{j.difference.ci_low:.4g}, {j.difference.ci_high:.4g}]" in j.reason


def test_a_significant_effect_inside_the_floor_is_same_without_a_reason():
    sibs = [_fig(10.0, _noisy(10.0, n=200, cv=0.001, seed=1))]
    card = _fig(10.2, _noisy(10.2, n=200, cv=0.001, seed=2))
    j = sibling_verdict(card, sibs, "lower", 0.03)
    assert j.difference is not None and j.difference.significant
    assert j.verdict == Sibling.SAME and j.reason == ""
    assert sibling_verdict(card, sibs, "lower", 0.01).verdict == Sibling.OUTLIER


# --- no samples on every card: the floor alone ---------------------------------------------------------

def test_without_samples_on_every_card_the_values_and_the_floor_alone_decide():
    # the card has samples, a sibling has none: its samples are not pooled, the values are judged
    card = _fig(1.10, _noisy(1.10, seed=1))
    sibs = [_fig(1.0, _noisy(1.0, seed=2)), _fig(1.0), _fig(3.0)]
    j = sibling_verdict(card, sibs, "lower", 0.03)
    assert j.basis == "values" and j.difference is None
    assert j.siblings_value == 1.0  # the median of the siblings' values
    assert j.ratio == pytest.approx(1.10) and j.verdict == Sibling.OUTLIER
    assert j.reason == "no raw samples on every card: the floor alone decides"
    # higher is better: the ratio-safe edge 1 / 1.03, not 0.97
    assert sibling_verdict(_fig(0.975), [_fig(1.0)], "higher", 0.03).verdict == Sibling.SAME
    assert sibling_verdict(_fig(0.96), [_fig(1.0)], "higher", 0.03).verdict == Sibling.OUTLIER
    assert sibling_verdict(_fig(1.05), [_fig(1.0)], "higher", 0.03).verdict == Sibling.BETTER
    # a bound is worse above, like lower-is-better
    assert sibling_verdict(_fig(4.0), [_fig(1.0)], "bound", 0.03).verdict == Sibling.OUTLIER


def test_samples_too_few_or_not_finite_fall_back_to_the_values():
    card = _fig(2.0, [2.0, 2.0, float("nan"), 2.0, 2.0, 2.0])
    sibs = [_fig(1.0, [1.0] * 6)]
    j = sibling_verdict(card, sibs, "lower", 0.03)
    assert j.basis == "values" and j.verdict == Sibling.OUTLIER and j.ratio == 2.0
    j = sibling_verdict(_fig(2.0, [2.0] * 4), [_fig(1.0, [1.0] * 4)], "lower", 0.03)
    assert j.basis == "values" and j.verdict == Sibling.OUTLIER


# --- siblings that read 0 ------------------------------------------------------------------------------

@pytest.mark.parametrize("value, better, verdict", [
    (2.0, "lower", Sibling.OUTLIER), (2.0, "bound", Sibling.OUTLIER), (-2.0, "lower", Sibling.BETTER),
    (2.0, "higher", Sibling.BETTER), (-2.0, "higher", Sibling.OUTLIER),
])
def test_siblings_that_read_0_leave_no_ratio_the_sign_decides(value, better, verdict):
    j = sibling_verdict(_fig(value), [_fig(0.0), _fig(0.0)], better, 0.03)
    assert (j.verdict, j.basis, j.ratio, j.siblings_value) == (verdict, "values", None, 0.0)
    assert j.reason == "the siblings read 0"


def test_a_card_reading_0_like_its_siblings_is_same():
    j = sibling_verdict(_fig(0.0), [_fig(0.0)], "lower", 0.03)
    assert (j.verdict, j.basis, j.ratio, j.reason) == (Sibling.SAME, "values", None, "")


# --- exact figures -------------------------------------------------------------------------------------

def test_an_exact_figure_must_equal_its_siblings_whatever_the_floor():
    sibs = [_fig(3.0), _fig(3.0), _fig(3.0)]
    j = sibling_verdict(_fig(3.0000001), sibs, "exact", 0.5)
    assert (j.verdict, j.basis, j.siblings_value, j.ratio) == (Sibling.OUTLIER, "values", 3.0, None)
    assert j.reason == "an exact figure that differs from its siblings'"
    j = sibling_verdict(_fig(3.0), sibs, "exact", 0.5)
    assert (j.verdict, j.reason) == (Sibling.SAME, "")
    # samples do not make an exact figure a timing: its value is judged
    assert sibling_verdict(_fig(7.0, [7.0] * 6), [_fig(3.0, [3.0] * 6)], "exact", 0.03).basis == "values"


# --- incomparable --------------------------------------------------------------------------------------

def test_another_unit_identity_or_no_finite_value_is_incomparable():
    card = _fig(1.0, _noisy(1.0), identity={"n": 4096})
    unit = sibling_verdict(card, [_fig(1.0, _noisy(1.0), unit="ms", identity={"n": 4096})], "lower", 0.03)
    ident = sibling_verdict(card, [_fig(1.0, _noisy(1.0), identity={"n": 8192})], "lower", 0.03)
    for j in (unit, ident):
        assert (j.verdict, j.basis, j.ratio, j.siblings_value) == (Sibling.INCOMPARABLE, "-", None, None)
        assert j.reason == "measured another way on a sibling (unit or identity differs)"
    # an empty identity and none are the same options
    assert sibling_verdict(_fig(1.0, identity={}), [_fig(1.0)], "lower", 0.03).verdict == Sibling.SAME
    j = sibling_verdict(_fig(1.0), [_fig(1.0), _fig(None)], "lower", 0.03)
    assert (j.verdict, j.reason) == (Sibling.INCOMPARABLE, "no finite value on every card")


def test_no_sibling_is_a_clear_error():
    with pytest.raises(ValueError, match="at least one sibling"):
        sibling_verdict(_fig(1.0), [], "lower", 0.03)
