"""Mixed-precision refinement (issue 17), host side: matrices of prescribed condition, the backward error,
the stall rule and the κ limit."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.precision import refine
from pytest_gpuperf.precision.conditioned import backward_error, orthogonal, with_condition


@pytest.mark.parametrize("kappa", [1.0, 1e3, 1e8])
def test_matrices_have_the_condition_asked_for(kappa):
    a = with_condition(64, kappa, np.random.default_rng(3))
    assert np.linalg.cond(a) == pytest.approx(kappa, rel=1e-6 if kappa < 1e6 else 1e-3)


def test_orthogonal_is_orthogonal():
    q = orthogonal(32, np.random.default_rng(0))
    assert np.allclose(q.T @ q, np.eye(32), atol=1e-13)


def test_condition_below_one_is_refused():
    with pytest.raises(ValueError):
        with_condition(8, 0.5, np.random.default_rng(0))


def test_backward_error_tells_a_good_solution_from_a_perturbed_one():
    rng = np.random.default_rng(5)
    a = with_condition(50, 1e4, rng)
    b = rng.uniform(-1, 1, 50)
    x = np.linalg.solve(a, b)
    good = backward_error(a, x, b)
    assert good < 50 * np.finfo(float).eps
    assert backward_error(a, x * (1 + 1e-6), b) > 1e3 * good
    assert backward_error(a, np.full(50, np.nan), b) == float("inf")


def test_stall_rule_and_kappa_limit():
    assert not refine.stagnant([1e-7, 1e-10, 1e-13])
    assert refine.stagnant([1e-8, 9e-9, 8e-9, 7e-9])
    assert not refine.stagnant([1e-8, 1e-9, 1e-10, 1e-11])
    pts = [refine.SweepPoint(10.0 ** k, 2, k < 7, 1e-16, 1e-10) for k in range(1, 9)]
    assert refine.kappa_limit(pts) == 1e7
    assert refine.kappa_limit(pts[:3]) is None
