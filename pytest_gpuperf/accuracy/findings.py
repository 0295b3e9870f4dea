"""Known, reproduced accuracy findings of specific OpenCL/CUDA implementations.

A finding listed here still runs, records its metric and reports the failing input; the test is then
marked ``xfail`` (not ``pass``) with the finding's description, so CI on that implementation stays green
while the violation stays visible. Entries name a ``backend:platform device`` substring and the test key; a fixed
implementation turns the xfail into a pass (``strict=False``), and the entry should then be removed."""

from __future__ import annotations

import pytest

#: CuPy's three ways of calling a math function (suites/test_accuracy_users.py keys its findings by them)
CUPY_APIS = (("cupy", "ufunc"), ("cupy_elementwise", "ElementwiseKernel"), ("cupy_raw", "RawKernel"))

KNOWN: list[tuple[str, str, str]] = [
    ("cuda:CUDA", "math.fp64.hypot",
     "CUDA hypot (binary64, CUDA 13 / NVRTC 13.0, H100) overflows to inf for hypot(tiny, DBL_MAX), e.g. "
     "hypot(0x0.0000000000001p-1022, 0x1.fffffffffffffp+1023), whose correctly rounded value is DBL_MAX "
     "(64 inputs of the special-value grid; results/nvidia-h100-80gb-hbm3/accuracy-cuda.json.xz)"),
    ("opencl:Portable Computing Language", "search.fp32.tgamma",
     "PoCL tgamma (binary32) loses most of its accuracy where the result is subnormal (x just above a "
     "negative integer ≤ -36): e.g. x = -0x1.2ffffep+5 gives 4.667e-40 vs 5.012e-40 (MPFR), > 16 ulp"),
    ("opencl:Portable Computing Language", "fuzz.fp64.exp.overflow_edge",
     "PoCL exp (binary64) overflows to inf at x = 0x1.62e42fefa39efp+9 = 709.782712893384, whose correctly "
     "rounded exp is the finite 1.7976931348622732e+308"),
] + [
    # CuPy compiles every kernel with -ftz=true (cupy/cuda/compiler.py). libdevice's binary64 log family
    # tests the scaled argument for zero by reading its high word as a binary32 (PTX: mov.b32 %f1, %r15;
    # setp.eq.f32 %p3, %f1, 0f00000000); under -ftz=true that compare becomes setp.eq.ftz.f32, the high
    # word of a scaled negative subnormal is a binary32 subnormal, it compares equal to zero, and -inf is
    # selected where IEEE 754 gives NaN. The project's build (no -ftz) returns NaN on the same input.
    # Reproduced offline with NVRTC 13.0 (the one-line PTX difference) and on an H100.
    ("cuda:CUDA", f"{library}.math.fp64.{fn}",
     f"CuPy's {how} {fn} (binary64, CuPy 14 / NVRTC 13.0, H100) returns -inf for negative subnormal inputs, "
     f"e.g. {fn}(-0x0.0000000000001p-1022), where IEEE 754 and the project's own build give NaN: CuPy "
     "builds with -ftz=true, which flushes libdevice's binary32 zero test of the argument's high word "
     "(setp.eq.ftz.f32)")
    for library, how in CUPY_APIS for fn in ("log", "log2", "log10")
] + [
    # the same hypot as the project's build (math.fp64.hypot above): CuPy calls CUDA's hypot, flags or not
    ("cuda:CUDA", f"{library}.math.fp64.hypot",
     f"CuPy's {how} hypot (binary64, CuPy 14 / NVRTC 13.0, H100) overflows to inf for hypot(tiny, DBL_MAX), "
     "e.g. hypot(0x0.0000000000001p-1022, 0x1.fffffffffffffp+1023) — CUDA's hypot, as in the project's "
     "build (math.fp64.hypot; results/nvidia-h100-80gb-hbm3/default-5c-cuda.json.xz, 64 inputs)")
    for library, how in CUPY_APIS
]


def check(info, key: str, problem: str | None) -> None:
    """Fail with ``problem`` unless it is a known finding of this device's implementation (then xfail)."""
    if not problem:
        return
    where = f"{info.backend}:{info.platform} {info.name}"
    for platform, k, why in KNOWN:
        if platform in where and key == k:
            pytest.xfail(f"known finding: {why}. This run: {problem}")
    pytest.fail(problem, pytrace=False)
