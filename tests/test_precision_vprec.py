"""VPREC emulated precision (issue 17), host side: the rounding against NumPy's binary32 and binary16
where (r, p) match, the template rewrite, and the fewest-bits search."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.precision import vprec
from pytest_gpuperf.precision.programs import PROGRAMS
from pytest_gpuperf.precision.template import TypedTemplate


def wide(rng: np.random.Generator, lo: int, hi: int, n: int = 200_000) -> np.ndarray:
    x = rng.standard_normal(n) * np.exp2(rng.integers(lo, hi, n))
    # ties of the target format: exactly halfway between two neighbours, both parities
    ties = (np.arange(1, 2001, dtype=np.float64) + 0.5)
    return np.concatenate([x, ties, -ties, [0.0, -0.0, np.inf, -np.inf]])


@pytest.mark.parametrize("r,p,dtype,lo,hi", [(8, 23, np.float32, -160, 140), (5, 10, np.float16, -30, 20)])
def test_rounding_matches_ieee_formats_with_subnormals_and_overflow(r, p, dtype, lo, hi):
    x = wide(np.random.default_rng(7), lo, hi)
    with np.errstate(over="ignore"):
        ref = x.astype(dtype).astype(np.float64)
    got = vprec.round_host(x, vprec.Format(r, p))
    assert np.array_equal(got, ref)
    assert np.isinf(got).any() and (np.abs(got[np.isfinite(got)]) < np.finfo(dtype).tiny).any()  # both edges hit


def test_binary64_is_a_fixed_point_and_nan_stays_nan():
    x = np.array([np.pi, -1e-310, 1e308, np.nan])
    y = vprec.round_host(x, vprec.Format(11, 52))
    assert np.array_equal(y[:3], x[:3]) and np.isnan(y[3])


def test_fewer_bits_give_a_coarser_grid():
    x = np.random.default_rng(1).uniform(1.0, 2.0, 10_000)
    for p in (3, 10, 20):
        y = vprec.round_host(x, vprec.Format(11, p))
        assert np.max(np.abs(y - x)) <= 2.0 ** (-p - 1) * 1.0000001
        assert np.all(np.mod(y * 2 ** p, 1.0) == 0)  # on the grid of spacing 2^-p in [1, 2)


def test_format_limits():
    with pytest.raises(ValueError):
        vprec.Format(12, 10)
    with pytest.raises(ValueError):
        vprec.Format(8, 0)
    f = vprec.Format(5, 10)
    assert (f.emax, f.emin, f.max_finite) == (15, -14, 65504.0)


def test_render_rounds_every_operation_once():
    t = TypedTemplate.parse(PROGRAMS["reduction"].template)
    src = vprec.render(t, vprec.Format(8, 12))
    assert "T_tree tree" not in src and "double tree[256];" in src
    assert "double acc = VP((T_acc)0);" in src
    assert "acc = VP(acc + ((T_acc)prod));" in src
    assert "tree[lid] = VP((T_tree)acc);" in src
    assert "#define GP_P 12" in src and "#define GP_EMAX 127" in src
    assert src.count("VP(") == 1 + 5  # the macro's definition + prod, acc (2), tree (2)


def test_fewest_bits_is_the_smallest_passing_p():
    calls = []

    def err(p):
        calls.append(p)
        return 2.0 ** -p

    s = vprec.fewest_bits(err, 1e-6)
    assert s.p == 20 and 2.0 ** -19 > 1e-6 >= 2.0 ** -20
    assert 19 in s.errors and 20 in s.errors
    assert len(calls) == len(set(calls)) <= 8
    assert vprec.fewest_bits(lambda p: 1.0, 1e-3).p is None
    with pytest.raises(ValueError):
        vprec.fewest_bits(lambda p: -1.0, 1.0)
