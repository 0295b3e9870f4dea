"""Mixed-precision refinement, host side: matrices of prescribed condition, the backward error,
the stall rule and the κ limit."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from pytest_gpuperf.precision import refine
from pytest_gpuperf.precision.conditioned import backward_error, orthogonal, product, with_condition


@pytest.mark.parametrize("kappa", [1.0, 1e3, 1e8])
def test_matrices_have_the_condition_asked_for(kappa):
    a = with_condition(64, kappa, np.random.default_rng(3))
    assert np.linalg.cond(a) == pytest.approx(kappa, rel=1e-6 if kappa < 1e6 else 1e-3)


def test_orthogonal_is_orthogonal():
    q = orthogonal(32, np.random.default_rng(0))
    assert np.allclose(q.T @ q, np.eye(32), atol=1e-13)


def test_matrices_are_dense():
    assert np.count_nonzero(with_condition(256, 100.0, np.random.default_rng(1)) == 0.0) == 0


def test_product_is_the_exactly_rounded_matrix_vector_product():
    rng = np.random.default_rng(2)
    a, x = with_condition(40, 10.0, rng), rng.uniform(-1, 1, 40)
    want = np.array([float(sum(Fraction(p) for p in (a[i] * x).tolist())) for i in range(40)])
    assert np.array_equal(product(a, x), want)


#: the bits of a 192×192 test matrix and its right-hand side, made as the refinement suite makes them
_BITS = """
import hashlib, sys, numpy as np
from pytest_gpuperf.precision.conditioned import orthogonal, product, with_condition
rng = np.random.default_rng(7)
if sys.argv[1] == "qr":  # a Haar-random construction through LAPACK's QR and BLAS products
    q1, _ = np.linalg.qr(rng.standard_normal((192, 192)))
    q2, _ = np.linalg.qr(rng.standard_normal((192, 192)))
    a = (q1 * np.linspace(1.0, 0.01, 192)) @ q2.T
    b = a @ rng.uniform(-1.0, 1.0, 192)
else:
    a = with_condition(192, 100.0, rng)
    b = product(a, rng.uniform(-1.0, 1.0, 192))
print(hashlib.sha256(a.tobytes() + b.tobytes()).hexdigest())
"""


def _bits(how: str, coretype: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    done = subprocess.run([sys.executable, "-c", _BITS, how], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_matrices_and_right_hand_sides_do_not_depend_on_the_hosts_blas_kernels():
    """The solve's backward error is a rounding residue of its inputs: made through BLAS, the inputs round
    differently on CPUs whose BLAS picks other kernels (OpenBLAS chooses them per CPU; forced here with
    OPENBLAS_CORETYPE to the SSE3 and AVX kernels every x86-64 host runs)."""
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip(f"OpenBLAS core types are forced here for x86-64 hosts only, not {platform.machine()}")
    kinds = (None, "Prescott", "Sandybridge")
    qr = {_bits("qr", k) for k in kinds}
    if len(qr) == 1:
        pytest.skip("this host's BLAS rounds the QR construction the same for every forced core type, "
                    "so it shows no contrast to check against (not OpenBLAS with DYNAMIC_ARCH?)")
    assert len({_bits("layers", k) for k in kinds}) == 1


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
