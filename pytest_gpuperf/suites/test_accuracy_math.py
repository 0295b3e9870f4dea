"""Math functions of the CUDA math library and OpenCL built-ins in binary32 and binary64 against MPFR
(through long double bulk references, every maximum and every near-boundary case re-derived by MPFR),
plus CUDA fast intrinsics, OpenCL ``native_*``/``half_*`` and fast-math builds.

Per function and precision:

* ``accuracy.<fmt>.<fn>.max_ulp`` — measured maximum in the backend's documented convention (CUDA:
  steps from the correctly rounded result; OpenCL: ulps of the exact value), gated ``better="lower"``
  against the baseline, while the test itself checks the documented bound (``info.bound``, citation);
  ``info`` holds the worst input (decimal, hex, bits), the device and MPFR results, the other
  convention's maximum and the inf/nan mismatch counts.
* ``accuracy.<fmt>.<fn>.mean_ulp`` — mean error in the same convention, over the same inputs.

Inputs: every binade of the format (subnormals included, both signs), the special values (all pairs
for binary functions) and a dense sample of the useful domain (see ``functions.FUNCTIONS``) — a seeded
set of fixed size per device type (identity ``{"inputs": "seeded", "n", "seed"}``), the same every run.
On GPUs every unary binary32 function, fast intrinsic and CUDA fast-math build is also swept over all
its inputs (2^32 — lgamma's less the interval without a documented bound —, or every input of an
intrinsic's documented domain): its ``max_ulp`` is then a certificate, MPFR-confirmed at the worst
input, and its ``mean_ulp`` the mean over all those inputs (identity ``{"inputs": "exhaustive", ...}``).
Deterministic statistics are gated tightly against the baseline (any change of the library is news);
the documented bound is checked by the test itself, baseline or not.
An inf/nan mismatch is its own failure class and fails the test with the input.
"""

from __future__ import annotations

import pytest

from pytest_gpuperf.accuracy import fastmath_check, findings, functions, mathfn_check
from pytest_gpuperf.gatecheck import plants


@pytest.mark.parametrize("fmt_name", ["fp32", "fp64"])
@pytest.mark.parametrize("fn", list(functions.FUNCTIONS))
def test_math_function(gpu_device, gpuperf_record, gpuperf_plant, accuracy_seed, accuracy_rng, fn, fmt_name):
    info = gpu_device.info
    if fmt_name == "fp64" and not info.fp64:
        pytest.skip(f"{info.name} has no binary64 support")
    out = mathfn_check.check_function(gpu_device, fn, fmt_name, accuracy_rng, accuracy_seed,
                                      plant=plants.ulp_function(gpuperf_plant))
    for r in out.records:
        gpuperf_record(**r)
    findings.check(info, out.key, out.problem)


def _fast_params():
    return [pytest.param(v, id=f"{v.backend}-{v.label}") for v in functions.FAST]


@pytest.mark.parametrize("variant", _fast_params())
def test_fast_variant(gpu_device, gpuperf_record, accuracy_seed, accuracy_rng, variant):
    info = gpu_device.info
    if variant.backend != info.backend:
        article = "an" if variant.backend[:1] in "aeiou" else "a"
        pytest.skip(f"{variant.label} is {article} {variant.backend} function; this device is {info.backend}")
    out = fastmath_check.check_variant(gpu_device, variant, accuracy_rng, accuracy_seed)
    for r in out.records:
        gpuperf_record(**r)
    assert out.problem is None, out.problem
