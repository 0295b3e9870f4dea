"""Mixed-precision solvers and emulated precision (Lim ch. VI, Verificarlo's VPREC).

* ``precision.refine.n<n>.*`` — Ax = b with A of condition 100 (U Σ Vᵀ, the same bits on every host:
  ``pytest_gpuperf/precision/conditioned.py``): LU in fp32 with fp64
  iterative refinement against the fp64 LU solve, both on the device with the same kernels
  (``pytest_gpuperf/precision/lukernels.py``): ``.speedup`` (median over alternating pairs of fp64 solve
  time / mixed solve time, the ratios as its samples; info: launches per solve and µs per launch, which
  show where a size is bound by launching rather than arithmetic; higher better), ``.iterations`` (refinements to reach a backward error ≤ √n·ε₆₄; lower),
  ``.backward_error`` (final normwise backward error, extended-precision residual; lower).
* ``precision.refine.kappa_limit`` — over κ = 10, 10², …, 10¹⁰ (n = 128 on CPU devices, 512 on GPUs): the
  smallest κ at which refinement no longer converges (higher better); info holds every point.
* ``precision.vprec.<kernel>.min_mantissa_bits`` — the fewest mantissa bits p (exponent bits r = 11) at
  which the kernel, every operation rounded in the kernel to (r, p), stays within binary32 epsilon
  (normwise relative) of its double original; ``precision.vprec.rounding_mismatches`` — elements where the
  in-kernel rounding differs from the NumPy reference (must be 0).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pytest_gpuperf.precision import conditioned, refine, vprec
from pytest_gpuperf.precision.cost import EPS32
from pytest_gpuperf.precision.programs import PROGRAMS
from pytest_gpuperf.timing.measure import MeasureConfig
from pytest_gpuperf.timing.stats import Stats
from pytest_gpuperf.timing.profiles import profile

KAPPA = 100.0
SWEEP = [10.0 ** k for k in range(1, 11)]


def sizes(is_cpu: bool) -> list[int]:
    return [128, 256] if is_cpu else [512, 1024, 2048]


@pytest.mark.gpuperf(requires=["fp64"])
def test_refinement_speedup_over_n(gpu_device, gpu_measure, gpuperf_record, accuracy_rng):
    info = gpu_device.info
    config = MeasureConfig(**{**gpu_measure.config.__dict__, **profile("precision_solve", info.is_cpu)})
    for n in sizes(info.is_cpu):
        a = conditioned.with_condition(n, KAPPA, accuracy_rng)
        b = conditioned.product(a, accuracy_rng.uniform(-1.0, 1.0, n))
        c = refine.compare(gpu_device, a, b, config)
        # on a system of condition 100, fp32 LU + refinement must reach fp64 backward error
        assert c.mixed.converged, f"n={n}: refinement did not converge: {c.mixed.history}"
        assert c.fp64.backward_error < 1e-12, f"n={n}: the fp64 solve itself is wrong ({c.fp64.backward_error:.3g})"
        base = f"precision.refine.n{n}"
        ident = {"kappa": KAPPA, "criterion": "sqrt(n)*eps64", "max_iter": refine.MAX_ITER,
                 "matrix": conditioned.METHOD}
        gpuperf_record(f"{base}.speedup", c.speedup, "ratio", better="higher", stats=Stats.of(c.ratios),
                       identity={**ident, "statistic": "median of paired ratios"}, valid=(0.0, 1e3), info=c.info())
        gpuperf_record(f"{base}.iterations", c.mixed.iterations, "iterations", better="lower", identity=ident,
                       valid=(0, refine.MAX_ITER))
        gpuperf_record(f"{base}.backward_error", c.mixed.backward_error, "1", better="lower", identity=ident,
                       valid=(0.0, 1.0), tolerance=refine.backward_error_tolerance(n))


@pytest.mark.gpuperf(requires=["fp64"])
def test_refinement_condition_sweep(gpu_device, gpuperf_record, accuracy_rng):
    n = 128 if gpu_device.info.is_cpu else 512
    points = refine.sweep(gpu_device, n, SWEEP, accuracy_rng)
    assert points[0].converged, f"κ=10: refinement must converge ({points[0]})"
    limit = refine.kappa_limit(points)
    detail = [{"kappa": p.kappa, "iterations": p.iterations, "converged": p.converged,
               "backward_error": p.backward_error, "forward_error": p.forward_error} for p in points]
    # no limit inside the sweep: the figure is the sweep's end (a lower bound), said in info
    gpuperf_record("precision.refine.kappa_limit", limit if limit is not None else SWEEP[-1] * 10, "1",
                   better="higher", identity={"n": n, "sweep": "10^1..10^10", "matrix": conditioned.METHOD},
                   valid=(1.0, math.inf),
                   info={"points": detail, "bounded": limit is not None,
                         "meaning": "smallest κ of the sweep at which fp32-LU refinement did not converge"})


@pytest.mark.gpuperf(requires=["fp64"])
def test_vprec_rounding_in_kernel_matches_host(gpu_device, gpuperf_record, accuracy_rng):
    x = accuracy_rng.standard_normal(1 << 16) * np.exp2(accuracy_rng.integers(-140, 140, 1 << 16))
    bad = 0
    checked = []
    for r, p in ((8, 23), (5, 10), (11, 30), (3, 2)):
        fmt = vprec.Format(r, p)
        bad += int(np.sum(vprec.round_device(gpu_device, x, fmt) != vprec.round_host(x, fmt)))
        checked.append(f"r={r},p={p}")
    gpuperf_record("precision.vprec.rounding_mismatches", bad, "1", better="exact", valid=(0, x.size),
                   info={"formats": checked, "n": x.size})
    assert bad == 0


@pytest.mark.parametrize("kernel", ["stencil", "reduction"])
@pytest.mark.gpuperf(requires=["fp64"])
def test_vprec_fewest_mantissa_bits(gpu_device, gpuperf_record, accuracy_rng, kernel):
    search, scale = vprec.fewest_bits_on_device(gpu_device, PROGRAMS[kernel], accuracy_rng, EPS32)
    assert search.p is not None, f"{kernel}: even p=52 misses the bound: {search.errors}"
    assert search.errors[search.p] <= EPS32
    if search.p > 1:
        assert search.errors[search.p - 1] > EPS32  # the answer is the fewest: one bit less fails
    gpuperf_record(f"precision.vprec.{kernel}.min_mantissa_bits", search.p, "bits", better="lower",
                   valid=(1, 52), identity={"r": 11, "bound": "rel:2^-23", "rounding": "in-kernel, per operation"},
                   info={"errors_by_p": {str(k): v for k, v in sorted(search.errors.items())},
                         "evaluations": search.evaluations, "output_scale": scale})
