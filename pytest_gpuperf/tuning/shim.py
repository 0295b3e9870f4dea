"""One OpenCL C source for both backends: a prelude that maps the OpenCL C subset our benchmark
kernels use onto CUDA C, so the CUDA comparison runs the very same kernel text (NVRTC compiles it).

Why a shim rather than two sources: the tuner's analyses (coalescing, workload transformation) read
the kernel text, and one text guarantees that both backends tune the same algorithm.
"""

from __future__ import annotations

CUDA_PRELUDE = r"""
typedef unsigned int uint;
#define __kernel extern "C" __global__
#define __global
#define __local __shared__
#define __constant const
#define WL_FN __device__ inline
#define LOCAL_PTR(T) T*
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
#define barrier(flags) __syncthreads()
#define atomic_add(p, v) atomicAdd((p), (v))
#define atomic_inc(p) atomicAdd((p), 1u)
#define rsqrt(x) rsqrtf(x)
__device__ inline size_t __cl_dim3(uint d, dim3 v) { return d == 0 ? v.x : (d == 1 ? v.y : v.z); }
#define get_local_id(d) ((size_t)__cl_dim3((d), threadIdx))
#define get_local_size(d) ((size_t)__cl_dim3((d), blockDim))
#define get_group_id(d) ((size_t)__cl_dim3((d), blockIdx))
#define get_num_groups(d) ((size_t)__cl_dim3((d), gridDim))
#define get_global_id(d) (get_group_id(d) * get_local_size(d) + get_local_id(d))
#define get_global_size(d) (get_num_groups(d) * get_local_size(d))
"""

OPENCL_PRELUDE = r"""
#define WL_FN inline
#define LOCAL_PTR(T) __local T*
"""


#: The prelude per kernel language (``Dialect.name``).
PRELUDES = {"cuda": CUDA_PRELUDE, "opencl": OPENCL_PRELUDE}


def for_backend(source: str, backend: str) -> str:
    """The kernel text as the given backend compiles it."""
    try:
        return PRELUDES[backend] + source
    except KeyError:
        raise ValueError(f"unknown backend {backend!r}; expected 'cuda' or 'opencl'") from None
