"""One kernel text for CUDA and OpenCL: a macro prelude per backend.

The models compare a prediction with a measurement of the *same* kernel on each backend, so the
corpus is written once in a C subset and the prelude maps work-item indexing, address spaces,
barriers and the float math functions onto each language.
"""

from __future__ import annotations

_CUDA = r"""
#define KERNEL extern "C" __global__
#define GLOBAL
#define LOCAL_MEM __shared__
#define GID ((int)(blockIdx.x * blockDim.x + threadIdx.x))
#define LID ((int)threadIdx.x)
#define GROUP ((int)blockIdx.x)
#define LSIZE ((int)blockDim.x)
#define BARRIER __syncthreads()
#define RESTRICT __restrict__
"""

_OPENCL = r"""
#define KERNEL __kernel
#define GLOBAL __global
#define LOCAL_MEM __local
#define GID ((int)get_global_id(0))
#define LID ((int)get_local_id(0))
#define GROUP ((int)get_group_id(0))
#define LSIZE ((int)get_local_size(0))
#define BARRIER barrier(CLK_LOCAL_MEM_FENCE)
#define RESTRICT restrict
#define sinf sin
#define cosf cos
#define expf exp
#define logf log
#define sqrtf sqrt
#define fabsf fabs
#define fminf fmin
#define fmaxf fmax
"""


#: The prelude per kernel language (``Dialect.name``).
PRELUDES = {"cuda": _CUDA, "opencl": _OPENCL}


def render(body: str, backend: str) -> str:
    """Prefix ``body`` with the prelude of ``backend`` (``"cuda"`` or ``"opencl"``)."""
    if backend in PRELUDES:
        return PRELUDES[backend] + body
    raise ValueError(f"unknown backend {backend!r}: expected 'cuda' or 'opencl'")
