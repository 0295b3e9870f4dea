"""The kernel language a device compiles — CUDA C++ (NVRTC) or OpenCL C — as one object.

Code that generates kernel text asks the dialect (``DeviceInfo.dialect``, or :func:`dialect` for a
backend name) for the spelling it needs instead of branching on the backend: how an entry point and
its global-memory pointers are declared, how a work-item finds its index, how to read the cycle
counter, which build options turn on fast math, what a kernel using fp16/fp64 must declare first.
This module is the one home of that knowledge; a kernel written out twice (one text per language) is
looked up in a table made by :func:`per_language`, keyed by :attr:`Dialect.name`.

Every string here is part of kernels whose timings are in the committed baselines: changing one
byte changes what was measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Dialect:
    """Spellings of one kernel language (each field is a fragment pasted verbatim into kernel text)."""

    #: ``"cuda"`` | ``"opencl"``: also the key of per-language tables (kernel texts written twice)
    name: str
    #: what declares a kernel entry point (CUDA's ``extern "C"`` keeps the name unmangled for lookup)
    entry: str
    #: address-space qualifier of a global-memory pointer parameter, with its trailing space ("" in CUDA)
    global_ptr: str
    #: the 64-bit signed integer type (``long`` is 32 bits on some CUDA hosts, 64 in OpenCL C)
    int64: str
    #: flat global index of the work-item in dimension 0, as a self-contained expression
    global_id: str
    #: index of the work-item within its work-group / of the work-group, dimension 0
    local_id: str
    group_id: str
    #: work-group barrier over local (shared) memory, as a statement
    barrier: str
    #: expression reading the SM cycle counter inside a kernel (OpenCL: through :attr:`clock_helper`)
    clock: str
    #: definitions :attr:`clock` needs ("" where it is built in); inline PTX, so NVIDIA's OpenCL only
    clock_helper: str
    #: pragma (with newline) that keeps the next loop rolled: NVRTC unrolls small constant loops on its own,
    #: which would merge a timed section's iterations; "" where the compiler does not
    unroll_once: str
    #: what a kernel using the half2 intrinsics (``__hfma2``, ``__half2float``) includes ("" where none exist)
    half_intrinsics: str
    #: what a kernel computing in binary16 / binary64 declares first (header or extension pragma)
    fp16_prelude: str
    fp64_prelude: str
    #: the binary16 scalar type
    half_type: str
    #: build options for the compiler's fast math (approximate SFU intrinsics, FTZ, no IEEE division/sqrt)
    fast_math: tuple[str, ...]
    #: whether :attr:`fast_math` relaxes binary64 too (OpenCL's -cl-fast-relaxed-math does; CUDA's
    #: --use_fast_math only touches binary32), so a fast build cannot serve as an fp64 reference
    fast_math_relaxes_fp64: bool
    #: suffix of the C math library's binary32 functions (``sinf``); "" where built-ins are overloaded
    libm_float_suffix: str
    #: the error convention the language's documented math-library bounds are stated in: steps from the
    #: correctly rounded result (``cr``, CUDA) or ulps of the exact value (``ulp``, OpenCL)
    libm_bound_convention: str
    #: the IEEE rounding modes a kernel can ask of +, −, ×, ÷, sqrt and fma (CUDA's ``__fadd_rz``-style
    #: intrinsics; OpenCL C rounds to nearest only)
    rounding_modes: tuple[str, ...]
    #: the macros that let one kernel text compile in this language (:func:`portable`): OpenCL C's
    #: spellings (``__kernel``, ``get_global_id``, ``barrier``) and the project's neutral ones
    #: (``KERNEL``, ``GID``, ``BARRIER``, ``LOCAL_MEM``) mapped onto CUDA C, and the neutral ones and C's
    #: ``sinf``-style names onto OpenCL C
    prelude: str = ""


CUDA = Dialect(
    name="cuda",
    entry='extern "C" __global__',
    global_ptr="",
    int64="long long",
    global_id="(blockIdx.x * blockDim.x + threadIdx.x)",
    local_id="threadIdx.x",
    group_id="blockIdx.x",
    barrier="__syncthreads();",
    clock="clock64()",
    clock_helper="",
    unroll_once="#pragma unroll 1\n",
    half_intrinsics="#include <cuda_fp16.h>\n",
    fp16_prelude="#include <cuda_fp16.h>\n",
    fp64_prelude="",
    half_type="__half",
    fast_math=("--use_fast_math",),
    fast_math_relaxes_fp64=False,
    libm_float_suffix="f",
    libm_bound_convention="cr",
    rounding_modes=("rn", "rz", "ru", "rd"),
    prelude=r"""
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

#define KERNEL extern "C" __global__
#define GLOBAL
#define LOCAL_MEM __shared__
#define GID ((int)(blockIdx.x * blockDim.x + threadIdx.x))
#define LID ((int)threadIdx.x)
#define GROUP ((int)blockIdx.x)
#define LSIZE ((int)blockDim.x)
#define BARRIER __syncthreads()
#define RESTRICT __restrict__
""",
)

OPENCL = Dialect(
    name="opencl",
    entry="__kernel",
    global_ptr="__global ",
    int64="long",
    global_id="get_global_id(0)",
    local_id="get_local_id(0)",
    group_id="get_group_id(0)",
    barrier="barrier(CLK_LOCAL_MEM_FENCE);",
    clock="gp_clock()",
    clock_helper=("inline ulong gp_clock(void) { ulong t; asm volatile(\"mov.u64 %0, %%clock64;\" : \"=l\"(t)); "
                  "return t; }\n"),
    unroll_once="",
    half_intrinsics="",
    fp16_prelude="#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n",
    fp64_prelude="#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
    half_type="half",
    fast_math=("-cl-fast-relaxed-math",),
    fast_math_relaxes_fp64=True,
    libm_float_suffix="",
    libm_bound_convention="ulp",
    rounding_modes=("rn",),
    prelude=r"""
#define WL_FN inline
#define LOCAL_PTR(T) __local T*

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
""",
)

DIALECTS: dict[str, Dialect] = {d.name: d for d in (CUDA, OPENCL)}


def dialect(backend: str) -> Dialect:
    """The dialect of ``backend`` (``"cuda"`` or ``"opencl"``); ValueError naming both otherwise."""
    try:
        return DIALECTS[backend]
    except KeyError:
        raise ValueError(f"unknown backend {backend!r}: expected one of {', '.join(map(repr, DIALECTS))}") from None


def per_language(**entries: T) -> dict[str, T]:
    """A table of what is written once per kernel language — the texts of one kernel, a function's spelling,
    a check only one language's intrinsics allow — keyed by :attr:`Dialect.name`, in :data:`DIALECTS` order.

    Code outside ``devices/`` keeps no table keyed by a backend's name of its own (``tests/
    test_devices_model.py``): it builds this one, which refuses a table that misses a language or names an
    unknown one, so a new backend's dialect finds, at import, every text it still needs."""
    missing, unknown = [n for n in DIALECTS if n not in entries], [n for n in entries if n not in DIALECTS]
    if missing or unknown:
        raise ValueError(f"a per-language table needs exactly the languages {', '.join(map(repr, DIALECTS))}: "
                         + "; ".join(([f"missing {', '.join(map(repr, missing))}"] if missing else [])
                                     + ([f"unknown {', '.join(map(repr, unknown))}"] if unknown else [])))
    return {n: entries[n] for n in DIALECTS}


def portable(source: str, backend: str) -> str:
    """A kernel written once for both languages (OpenCL C, or the neutral ``KERNEL``/``GID`` macros),
    as ``backend`` compiles it: the language's :attr:`Dialect.prelude`, then the text.

    One prelude per language for every such kernel (the tuning benchmarks, the model corpora, the
    precision kernels, users' kernels through the API): it once was two — an OpenCL-C-to-CUDA shim and
    a neutral-macro prelude. Joining them changed the CUDA texts by macros the other kernels do not
    use; NVRTC 13.0 for sm_90 gives byte-identical machine code for each of the 66 kernel builds the
    committed baselines time (checked offline before the change)."""
    return dialect(backend).prelude + source


def prelude_lines(source: str, backend: str) -> int:
    """How many lines of :func:`portable`'s prelude stand before the kernel's own text in ``source`` (0 where it
    does not start with it): a compiler's line numbers count them."""
    prelude = dialect(backend).prelude
    return prelude.count("\n") if prelude and source.startswith(prelude) else 0


def portable_fp64(source: str, backend: str) -> str:
    """:func:`portable` for a kernel that computes in ``double``: the language's binary64 prelude first
    (:attr:`Dialect.fp64_prelude`: the ``cl_khr_fp64`` pragma on OpenCL, nothing on CUDA), then the text.
    The precision kernels use only what both languages share through the prelude (``fabs``, ``sqrt``,
    ``exp``, ``rint``, ``ldexp``, ``ilogb``, ``copysign`` on ``double`` and ``float``)."""
    return portable(dialect(backend).fp64_prelude + source, backend)
