"""One kernel text for both backends: the project's OpenCL-to-CUDA shim (:func:`..devices.dialect.portable`) plus the
double-precision switch.

OpenCL needs ``cl_khr_fp64`` enabled for ``double``; CUDA does not know the pragma, so it comes from
the language's own binary64 prelude. The kernels of this package use only what both dialects share through the shim (``fabs``,
``sqrt``, ``exp``, ``rint``, ``ldexp``, ``ilogb``, ``copysign`` on ``double`` and ``float``). The CUDA side
is written from the CUDA documentation and not run here (no CUDA GPU on the development machine).
"""

from __future__ import annotations

from ..devices.dialect import dialect
from ..devices.dialect import portable


def source(text: str, backend: str) -> str:
    """``text`` (OpenCL C) as ``backend`` compiles it: the language's binary64 prelude (the
    ``cl_khr_fp64`` pragma on OpenCL, nothing on CUDA: ``devices.dialect``), then the shim."""
    return portable(dialect(backend).fp64_prelude + text, backend)
