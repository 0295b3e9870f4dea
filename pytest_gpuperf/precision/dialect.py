"""One kernel text for both backends: the project's OpenCL-to-CUDA shim (:mod:`..tuning.shim`) plus
what double precision and bit casts need.

OpenCL needs ``cl_khr_fp64`` enabled for ``double``; CUDA does not know the pragma, so it is emitted on
OpenCL only. ``GP_AS_LONG``/``GP_AS_DOUBLE`` reinterpret binary64 bits (the VPREC rounding works on
them): ``as_long``/``as_double`` in OpenCL C, ``__double_as_longlong``/``__longlong_as_double`` in CUDA.
The CUDA side is written from the CUDA documentation and not run here (no CUDA GPU on the development
machine).
"""

from __future__ import annotations

from ..tuning.shim import for_backend

_OPENCL = r"""
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define GP_AS_LONG(x) as_long(x)
#define GP_AS_DOUBLE(x) as_double(x)
"""

_CUDA = r"""
#define GP_AS_LONG(x) __double_as_longlong(x)
#define GP_AS_DOUBLE(x) __longlong_as_double(x)
typedef long long gp_long_t;
"""


def source(text: str, backend: str) -> str:
    """``text`` (OpenCL C) as ``backend`` compiles it; ``long`` is 64-bit on both (CUDA: ``long long``)."""
    if backend == "opencl":
        return for_backend(_OPENCL + text, "opencl")
    if backend == "cuda":
        return for_backend(_CUDA + "#define long gp_long_t\n" + text, "cuda")
    raise ValueError(f"unknown backend {backend!r}")
