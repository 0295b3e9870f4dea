"""Composite-precision (CMP float2) operations on the real OpenCL device (PoCL in CI): the figures are
deterministic (same seed, same values), the float2 division keeps its error component (far more accurate
than binary32 on the same inputs, as Taufer's CMP division is designed to be), and the scoring is MPFR's on
the float2 inputs' exact values, so a float2 result equal to the binary32 one scores like it."""

from __future__ import annotations

import numpy as np

from pytest_gpuperf.accuracy import composite_ops


def test_division_keeps_the_error_component_and_figures_repeat(cl_device):
    a = composite_ops.check(cl_device, "div", np.random.default_rng(11), 11)
    b = composite_ops.check(cl_device, "div", np.random.default_rng(11), 11)
    assert (a.float2, a.float32) == (b.float2, b.float32)
    assert a.float32 > 2.0 ** -26 and a.float2 < a.float32 * 1e-3, a


def test_relative_error_is_mpfr_s_on_the_exact_inputs():
    xv, xe = np.array([1.5], np.float32), np.array([2.0 ** -30], np.float32)
    yv, ye = np.array([3.0], np.float32), np.array([0.0], np.float32)
    exact = (1.5 + 2.0 ** -30) * 3.0  # exact in binary64
    err = composite_ops.relative_errors("mul", [xv, xe, yv, ye], np.array([4.5], np.float32), np.zeros(1, np.float32))
    assert err[0] == abs(4.5 - exact) / exact
    assert composite_ops.relative_errors("mul", [xv, xe, yv, ye], np.array([4.5], np.float32),
                                         np.array([3 * 2.0 ** -30], np.float32))[0] == 0.0
