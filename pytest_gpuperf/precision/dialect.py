"""One kernel text for both backends: the project's OpenCL-to-CUDA shim (:mod:`..tuning.shim`) plus the
double-precision switch.

OpenCL needs ``cl_khr_fp64`` enabled for ``double``; CUDA does not know the pragma, so it is emitted on
OpenCL only. The kernels of this package use only what both dialects share through the shim (``fabs``,
``sqrt``, ``exp``, ``rint``, ``ldexp``, ``ilogb``, ``copysign`` on ``double`` and ``float``). The CUDA side
is written from the CUDA documentation and not run here (no CUDA GPU on the development machine).
"""

from __future__ import annotations

from ..tuning.shim import for_backend

_OPENCL = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"


def source(text: str, backend: str) -> str:
    """``text`` (OpenCL C) as ``backend`` compiles it."""
    if backend == "opencl":
        return for_backend(_OPENCL + text, "opencl")
    if backend == "cuda":
        return for_backend(text, "cuda")
    raise ValueError(f"unknown backend {backend!r}")
