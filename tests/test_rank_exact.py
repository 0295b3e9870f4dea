"""The gate's rank test: exact over every arrangement where the sides are small, as scipy's permutation test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from pytest_gpuperf.timing.difference import EXACT_ARRANGEMENTS, difference, exact_rank_test, midranks, rank_p_value

#: three runs of a timer-quantized time: each run's five samples on a 32 ns grid, the runs 1-3 % apart
TIED = np.array([306.048, 306.08, 306.08, 306.112, 306.144, 308.576, 308.608, 308.736, 308.768, 308.768, 315.392,
                 315.424, 315.648, 315.68, 315.872])


@pytest.mark.parametrize("seed", range(8))
def test_the_exact_p_is_scipy_s_permutation_test_with_ties(seed):
    rng = np.random.default_rng(seed)
    b = np.round(rng.choice(TIED, 5) + rng.normal(0.0, 4.0, 5) / 32, 1) * 1.0
    ref = sps.mannwhitneyu(TIED, b, method=sps.PermutationMethod(n_resamples=EXACT_ARRANGEMENTS)).pvalue
    assert rank_p_value(TIED, b) == pytest.approx(ref, rel=1e-12)


def test_sides_that_do_not_overlap_reach_the_exact_minimum_where_scipy_s_auto_test_could_not():
    b = TIED[::3] * 1.05
    assert sps.mannwhitneyu(TIED, b).pvalue > 0.001  # the normal approximation: never significant
    assert rank_p_value(TIED, b) == pytest.approx(2 / math.comb(20, 5))
    d = difference(TIED, b)
    assert d.significant and d.p_value < d.alpha


def test_beyond_the_limit_the_asymptotic_test_stands():
    a, b = np.arange(40.0), np.arange(10.0) + 0.5
    assert not exact_rank_test(40, 10)
    assert rank_p_value(a, b) == sps.mannwhitneyu(a, b).pvalue
    assert exact_rank_test(15, 5) and exact_rank_test(5, 15)


def test_equal_sides_and_identical_constants_are_not_significant():
    assert rank_p_value(TIED[:5], TIED[:5].copy()) == 1.0
    assert difference([3.0] * 15, [3.0] * 5).p_value == 1.0


def test_the_larger_side_second_gives_the_same_exact_p_as_scipy():
    """The arrangements of the smaller side are enumerated, whichever it is."""
    a = TIED[::3] * 1.01
    ref = sps.mannwhitneyu(a, TIED, method=sps.PermutationMethod(n_resamples=EXACT_ARRANGEMENTS)).pvalue
    assert rank_p_value(a, TIED) == pytest.approx(ref, rel=1e-12) == rank_p_value(TIED, a)


def test_midranks_are_scipy_s_ranks_bit_for_bit_with_and_without_ties():
    rng = np.random.default_rng(7)
    for i in range(2000):
        n = int(rng.integers(1, 40))
        x = (rng.integers(0, 4, n) * 0.032 if i % 2 else rng.normal(size=n)).astype(np.float64)
        assert np.array_equal(midranks(x), sps.rankdata(x)), x
    assert midranks(TIED).tolist() == sps.rankdata(TIED).tolist()
