"""Exhaustive (all 2^32) or strided sweep of a unary binary32 function on the device, checked on the
device against the binary64 function of the same library.

Each work-item walks a grid-stride loop over input bit patterns ``start + k·stride`` and computes both
error conventions in double: steps between ``y`` and ``(float)ref`` (CUDA's) and ``|y − ref| / ulp(ref)``
(OpenCL's, Goldberg ulp with the binary32 exponent range). Per work-group maxima are reduced in local
memory as 64-bit keys ``float_bits(err) << 32 | input_bits`` (non-negative floats order like their
bits), so one pass returns each group's worst input; the host takes the maximum and MPFR re-scores it.
inf/nan mismatches are counted separately (and the largest such input kept).
Two comparison kernels time the same inputs: ``acc_ref``, the *plain one-kernel sweep against an fp64
reference* the target is set against (evaluate the binary32 function, evaluate the binary64 reference,
compare — ulp of the reference, one figure — and reduce the maximum; no argmax, no second convention, no
mismatch classes), and ``acc_plain`` (evaluate only, results folded into one word per work-group), which
shows what the reference itself costs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..devices.dialect import dialect, per_language

GROUPS = 4096
LOCAL = 256

_BODY = r"""
  {
    float x = AS_FLOAT(b);
    float y = FN32(x);
    double r = FN64((double)x);
    float rf = (float)r;
    int ny = isnan(y), nr = isnan(r);
    double ecr = 0.0, eulp = 0.0;
    int bad = (ny != nr) || (!ny && !nr && (isinf(y) != isinf(rf) || (isinf(y) && (y > 0) != (rf > 0))));
    if (bad) { KEYT kk = (((KEYT)1) << 32) | (KEYT)b; mm = kk > mm ? kk : mm; }
    else if (!ny && !isinf(y)) {
      I64 oy = (I64)AS_INT(y); oy = oy < 0 ? -(oy & (I64)0x7fffffff) : oy;
      I64 orf = (I64)AS_INT(rf); orf = orf < 0 ? -(orf & (I64)0x7fffffff) : orf;
      ecr = (double)(oy > orf ? oy - orf : orf - oy);
      double a = fabs(r);
      int e = a == 0.0 ? -126 : ilogb(a); e = e < -126 ? -126 : (e > 127 ? 127 : e);
      eulp = fabs((double)y - r) * ldexp(1.0, 23 - e);  // exact: a power-of-two scale
    }
#if GP_SUM
    if (!bad) { sc += ecr; su += eulp; sn += 1.0; }
#endif
    KEYT kc = (((KEYT)AS_UINT((float)ecr)) << 32) | (KEYT)b;
    KEYT ku = (((KEYT)AS_UINT((float)eulp)) << 32) | (KEYT)b;
    bc = kc > bc ? kc : bc; bu = ku > bu ? ku : bu;
  }
"""

CUDA_SRC = r"""
#define AS_FLOAT __uint_as_float
#define AS_INT __float_as_int
#define AS_UINT __float_as_uint
#define KEYT unsigned long long
#define I64 long long
extern "C" __global__ void acc_sweep(unsigned int start, unsigned int stride, unsigned long long count,
                                     unsigned long long* out_cr, unsigned long long* out_ulp, unsigned long long* out_mm,
                                     double* out_sum) {
  __shared__ unsigned long long s[3][WG_SIZE];
  KEYT bc = 0, bu = 0, mm = 0;
#if GP_SUM
  __shared__ double d[3][WG_SIZE];
  double sc = 0.0, su = 0.0, sn = 0.0;
#endif
  for (unsigned long long k = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; k < count;
       k += (unsigned long long)gridDim.x * blockDim.x) {
    unsigned int b = start + (unsigned int)k * stride;
    BODY
  }
  int t = threadIdx.x;
  s[0][t] = bc; s[1][t] = bu; s[2][t] = mm;
#if GP_SUM
  d[0][t] = sc; d[1][t] = su; d[2][t] = sn;
#endif
  __syncthreads();
  for (int h = WG_SIZE / 2; h > 0; h >>= 1) {
    if (t < h) for (int j = 0; j < 3; ++j) {
      KEYT o = s[j][t + h]; if (o > s[j][t]) s[j][t] = o;
#if GP_SUM
      d[j][t] += d[j][t + h];
#endif
    }
    __syncthreads();
  }
  if (t == 0) {
    out_cr[blockIdx.x] = s[0][0]; out_ulp[blockIdx.x] = s[1][0]; out_mm[blockIdx.x] = s[2][0];
#if GP_SUM
    for (int j = 0; j < 3; ++j) out_sum[3 * blockIdx.x + j] = d[j][0];
#endif
  }
}
extern "C" __global__ void acc_plain(unsigned int start, unsigned int stride, unsigned long long count,
                                     unsigned int* out) {
  unsigned int acc = 0;
  for (unsigned long long k = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; k < count;
       k += (unsigned long long)gridDim.x * blockDim.x) {
    unsigned int b = start + (unsigned int)k * stride;
    acc ^= __float_as_uint(FN32(__uint_as_float(b)));
  }
  if (acc == 0x7fc00001u) out[blockIdx.x] = acc;  // keeps the work; practically never stores
}
extern "C" __global__ void acc_ref(unsigned int start, unsigned int stride, unsigned long long count,
                                   unsigned int* out) {
  __shared__ unsigned int s[WG_SIZE];
  float m = 0.0f;
  for (unsigned long long k = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; k < count;
       k += (unsigned long long)gridDim.x * blockDim.x) {
    float x = __uint_as_float(start + (unsigned int)k * stride);
    float y = FN32(x);
    double r = FN64((double)x);
    double a = fabs(r);
    int e = a == 0.0 ? -126 : ilogb(a); e = e < -126 ? -126 : (e > 127 ? 127 : e);
    m = fmaxf(m, (float)(fabs((double)y - r) * ldexp(1.0, 23 - e)));  // fmaxf drops NaN (inf - inf)
  }
  int t = threadIdx.x;
  s[t] = __float_as_uint(m);
  __syncthreads();
  for (int h = WG_SIZE / 2; h > 0; h >>= 1) {
    if (t < h && s[t + h] > s[t]) s[t] = s[t + h];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
"""

OPENCL_SRC = "\n" + dialect("opencl").fp64_prelude + r"""#define AS_FLOAT as_float
#define AS_INT as_int
#define AS_UINT as_uint
#define KEYT ulong
#define I64 long
__kernel void acc_sweep(uint start, uint stride, ulong count, __global ulong* out_cr, __global ulong* out_ulp,
                        __global ulong* out_mm, __global double* out_sum) {
  __local ulong s[3][WG_SIZE];
  KEYT bc = 0, bu = 0, mm = 0;
#if GP_SUM
  __local double d[3][WG_SIZE];
  double sc = 0.0, su = 0.0, sn = 0.0;
#endif
  for (ulong k = get_global_id(0); k < count; k += get_global_size(0)) {
    uint b = start + (uint)k * stride;
    BODY
  }
  int t = get_local_id(0);
  s[0][t] = bc; s[1][t] = bu; s[2][t] = mm;
#if GP_SUM
  d[0][t] = sc; d[1][t] = su; d[2][t] = sn;
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = WG_SIZE / 2; h > 0; h >>= 1) {
    if (t < h) for (int j = 0; j < 3; ++j) {
      KEYT o = s[j][t + h]; if (o > s[j][t]) s[j][t] = o;
#if GP_SUM
      d[j][t] += d[j][t + h];
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) {
    int g = get_group_id(0);
    out_cr[g] = s[0][0]; out_ulp[g] = s[1][0]; out_mm[g] = s[2][0];
#if GP_SUM
    for (int j = 0; j < 3; ++j) out_sum[3 * g + j] = d[j][0];
#endif
  }
}
__kernel void acc_plain(uint start, uint stride, ulong count, __global uint* out) {
  uint acc = 0;
  for (ulong k = get_global_id(0); k < count; k += get_global_size(0)) {
    uint b = start + (uint)k * stride;
    acc ^= as_uint(FN32(as_float(b)));
  }
  if (acc == 0x7fc00001u) out[get_group_id(0)] = acc;
}
__kernel void acc_ref(uint start, uint stride, ulong count, __global uint* out) {
  __local uint s[WG_SIZE];
  float m = 0.0f;
  for (ulong k = get_global_id(0); k < count; k += get_global_size(0)) {
    float x = as_float(start + (uint)k * stride);
    float y = FN32(x);
    double r = FN64((double)x);
    double a = fabs(r);
    int e = a == 0.0 ? -126 : ilogb(a); e = e < -126 ? -126 : (e > 127 ? 127 : e);
    m = fmax(m, (float)(fabs((double)y - r) * ldexp(1.0, 23 - e)));
  }
  int t = get_local_id(0);
  s[t] = as_uint(m);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = WG_SIZE / 2; h > 0; h >>= 1) {
    if (t < h && s[t + h] > s[t]) s[t] = s[t + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) out[get_group_id(0)] = s[0];
}
"""


#: the gate check's ``ulp`` plant (:mod:`pytest_gpuperf.gatecheck.plants`): the next float above the
#: result on inputs whose low 4 mantissa bits are zero (1 input in 16) — a 1-ulp error on some inputs
PLANT = per_language(
    cuda=("__device__ __forceinline__ float gp_plant(float r, float x) {\n"
          "  return ((__float_as_uint(x) & 15u) == 0u && isfinite(r)) ? nextafterf(r, __int_as_float(0x7f800000)) : r; }\n"),
    opencl=("inline float gp_plant(float r, float x) {\n"
            "  return ((as_uint(x) & 15u) == 0u && isfinite(r)) ? nextafter(r, INFINITY) : r; }\n"),
)


#: The sweep program per kernel language (``Dialect.name``).
SOURCES = per_language(cuda=CUDA_SRC, opencl=OPENCL_SRC)


def _call(fn: str) -> str:
    """A function name (``expf``) or an expression in ``x0`` (``1.0f / sqrtf(x0)``) as a macro body."""
    return fn if "x0" in fn else f"{fn}(x0)"


def source(backend: str, fn32: str, fn64: str, plant: bool = False, sums: bool = False) -> str:
    """The sweep program for ``fn32`` checked against ``fn64`` (names or expressions in ``x0``);
    ``plant``: the gate check's 1-ulp plant on the binary32 result; ``sums``: also sum both error
    conventions over the scored inputs (for a mean over every input — off for the timed sweep suite,
    whose checked-vs-reference time ratio measures the checking it always does)."""
    src = SOURCES[backend]
    body32 = f"gp_plant(({_call(fn32)}), x0)" if plant else f"({_call(fn32)})"
    head = src[:src.index("#define AS_FLOAT")] if "#pragma" in src[:40] else ""
    macros = (f"#define FN32(x0) {body32}\n#define FN64(x0) ({_call(fn64)})\n"
              f"#define GP_SUM {int(sums)}\n")
    rest = src[len(head):]
    # the plant helper needs the AS_* macros' types only through the intrinsics it calls itself
    return (head + macros + (PLANT[backend] if plant else "") + rest.replace("BODY", _BODY)
            .replace("WG_SIZE", str(LOCAL)))


@dataclass
class SweepResult:
    count: int
    seconds: float  # device time of the checked sweep
    plain_seconds: float  # device time of the evaluate-only sweep
    ref_seconds: float  # device time of the plain one-kernel sweep against the fp64 reference
    ref_max_ulp: float  # that kernel's maximum (ulp convention, finite results only)
    worst_cr: tuple[float, int]  # (steps, input bits)
    worst_ulp: tuple[float, int]
    mismatch_bits: int | None  # largest input bits with an inf/nan mismatch, None if none
    #: with ``sums``: (Σ cr, Σ ulp, inputs scored) over every input without an inf/nan mismatch (matching
    #: nan/inf results score 0, as in :func:`.ulp.ulp_errors`); summed in a fixed order, so deterministic
    sums: tuple[float, float, int] | None = None

    def mean(self, metric: str) -> float:
        """The mean error in ``metric`` (``cr`` or ``ulp``) over every scored input."""
        if self.sums is None:
            raise ValueError("this sweep ran without sums=True")
        s_cr, s_ulp, n = self.sums
        return (s_cr if metric == "cr" else s_ulp) / n if n else 0.0


def _unpack(keys: np.ndarray) -> tuple[float, int]:
    k = int(keys.max())
    err = float(np.array([k >> 32], np.uint32).view(np.float32)[0])
    return err, k & 0xFFFFFFFF


def run_sweep(device, fn32: str, fn64: str, stride: int, count: int, chunk: int = 1 << 30,
              timeout_s: float = 120.0, *, start: int = 0, options: tuple[str, ...] = (), plant: bool = False,
              checked_only: bool = False, sums: bool = False) -> SweepResult:
    """Check ``count`` inputs ``start + k·stride`` (k < count) of ``fn32`` against ``fn64`` on ``device``.

    ``checked_only`` skips the two comparison kernels (evaluate-only and plain reference sweep), for
    certificates that need only the checked maximum; their times are then 0. ``sums`` also returns the
    error sums for a mean over every checked input (:attr:`SweepResult.sums`)."""
    backend = device.info.backend
    src = source(backend, fn32, fn64, plant, sums)
    groups = GROUPS if not device.info.is_cpu else 4 * max(1, device.info.compute_units)
    k_sweep = device.compile(src, "acc_sweep", options)
    k_plain = None if checked_only else device.compile(src, "acc_plain", options)
    k_ref = None if checked_only else device.compile(src, "acc_ref", options)
    ref_out = device.empty(groups * 4)
    ref_max = 0.0
    outs = [device.empty(groups * 8) for _ in range(3)]
    sum_out = device.empty(groups * 3 * 8)
    sum_parts: list[np.ndarray] = []
    plain_out = device.empty(groups * 4)
    keys = [[], [], []]
    secs = plain = ref = 0.0
    done = 0
    while done < count:
        n = min(chunk, count - done)
        args = [np.uint32(start & 0xFFFFFFFF), np.uint32(stride), np.uint64(n)]
        h = device.timed(lambda: device.launch(k_sweep, (groups * LOCAL,), (LOCAL,), [*args, *outs, sum_out]))
        secs += device.elapsed(h, timeout_s)
        for j in range(3):
            keys[j].append(device.to_host(outs[j], np.uint64, groups).copy())
        if sums:
            sum_parts.append(device.to_host(sum_out, np.float64, 3 * groups).reshape(groups, 3).copy())
        if k_plain is not None and k_ref is not None:
            hp = device.timed(lambda: device.launch(k_plain, (groups * LOCAL,), (LOCAL,), [*args, plain_out]))
            plain += device.elapsed(hp, timeout_s)
            hr = device.timed(lambda: device.launch(k_ref, (groups * LOCAL,), (LOCAL,), [*args, ref_out]))
            ref += device.elapsed(hr, timeout_s)
            ref_max = max(ref_max, float(device.to_host(ref_out, np.uint32, groups).view(np.float32).max()))
        start += n * stride
        done += n
    cr = _unpack(np.concatenate(keys[0]))
    ul = _unpack(np.concatenate(keys[1]))
    mm = int(np.concatenate(keys[2]).max())
    tot = None
    if sums:
        parts = np.concatenate(sum_parts)
        # fsum: exactly rounded, so the order of the groups' partial sums cannot matter
        tot = (math.fsum(parts[:, 0]), math.fsum(parts[:, 1]), int(math.fsum(parts[:, 2])))
    return SweepResult(count, secs, plain, ref, ref_max, cr, ul, (mm & 0xFFFFFFFF) if mm else None, tot)
