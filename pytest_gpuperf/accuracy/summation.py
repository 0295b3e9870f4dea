"""Global summation (Taufer et al.'s benchmark, thesis ch. 4.1) in float, double, Kahan-compensated and
composite float2/double2 (CMP TwoSum addition, thesis Fig. 3) precision, serial (one work-item) or
parallel (64 blocks × 32 threads, the thesis' optimal configuration, each thread a strided partial sum
followed by a one-thread reduction of the partials with the same arithmetic), plus a pairwise tree
(log2 n passes of x[2i] + x[2i+1]). The exact sum is an integer combination of the inputs' significands, rounded once by MPFR."""

from __future__ import annotations

import gmpy2
import numpy as np

from ..devices import ndrange
from ..devices.dialect import dialect, per_language

ACC = {
    "plain": "s += v;",
    # Kahan: c holds the running compensation (the part of y that did not reach s)
    "kahan": "{ T y = v - c; T t2 = s + y; c = (t2 - s) - y; s = t2; }",
    # CMP float2/double2 addition of (v, 0): z.value = s + v; t = z.value − s;
    # z.error = s − (z.value − t) + (v − t) + error
    "cmp2": "{ T z = s + v; T t = z - s; c = (s - (z - t)) + (v - t) + c; s = z; }",
}
LO = {"plain": "c", "kahan": "-c", "cmp2": "c"}

CUDA = r"""
extern "C" __global__ void acc_sum(const T* __restrict__ x, unsigned long long n, T* __restrict__ out) {
  unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long nt = (unsigned long long)gridDim.x * blockDim.x;
  T s = 0, c = 0;
  for (unsigned long long i = t; i < n; i += nt) { T v = x[i]; ACC }
  out[t] = s; out[nt + t] = LO;
}
extern "C" __global__ void acc_pair(const T* __restrict__ x, unsigned long long n, T* __restrict__ y) {
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long m = (n + 1) / 2;
  if (i < m) y[i] = (2 * i + 1 < n) ? x[2 * i] + x[2 * i + 1] : x[2 * i];
}
"""
OPENCL = "\n" + dialect("opencl").fp64_prelude + r"""__kernel void acc_sum(__global const T* x, ulong n, __global T* out) {
  ulong t = get_global_id(0), nt = get_global_size(0);
  T s = 0, c = 0;
  for (ulong i = t; i < n; i += nt) { T v = x[i]; ACC }
  out[t] = s; out[nt + t] = LO;
}
__kernel void acc_pair(__global const T* x, ulong n, __global T* y) {
  ulong i = get_global_id(0), m = (n + 1) / 2;
  if (i < m) y[i] = (2 * i + 1 < n) ? x[2 * i] + x[2 * i + 1] : x[2 * i];
}
"""


#: The summation kernels per kernel language (``Dialect.name``).
SOURCES = per_language(cuda=CUDA, opencl=OPENCL)


#: where ``acc_sum`` writes its sum: the gate check's ``summation`` plant scales what it writes
WRITE = "out[t] = s; out[nt + t] = LO;"


def source(backend: str, ctype: str, method: str, plant: float = 0.0) -> str:
    """The summation kernels for ``ctype`` and ``method``. ``plant``: the gate check's ``summation`` plant
    (:mod:`pytest_gpuperf.gatecheck.plants`) — ``acc_sum`` scales the sum it writes by (1 + ``plant``): the
    zero-sum data set's result is its rounding error, so the error grows by ``plant`` (a wrong scaling in
    the kernel's arithmetic, as a broken reduction would make)."""
    src = SOURCES[backend]
    if plant > 0:
        scale = f"(T){1.0 + plant!r}"
        src = src.replace(WRITE, f"out[t] = s * {scale}; out[nt + t] = ({LO[method]}) * {scale};")
    # OpenCL C forbids the T macro clash with nothing; plain textual substitution keeps both readable
    return src.replace("ACC", ACC[method]).replace("LO;", LO[method] + ";").replace("T ", f"{ctype} ") \
        .replace("const T*", f"const {ctype}*").replace("T*", f"{ctype}*").replace("(T)", f"({ctype})")


def thesis_data(n: int, dtype, rng: np.random.Generator) -> np.ndarray:
    """n values (n even): n/2 drawn with equal probability from U(1e-3, 1e-2) and U(1e2, 1e3), plus their
    negatives, shuffled — the exact sum is 0 (thesis Fig. 8's input intervals)."""
    h = n // 2
    lo = rng.uniform(1e-3, 1e-2, h)
    hi = rng.uniform(1e2, 1e3, h)
    v = np.where(rng.random(h) < 0.5, lo, hi).astype(dtype)
    return rng.permutation(np.concatenate([v, -v]))


def exact_sum(x: np.ndarray) -> float:
    """The exact sum, rounded once to binary64 by MPFR — vectorized, no per-element Python loop.

    Every binary32/64 value is an integer m (|m| < 2^53) times 2^e. m is split into 26-bit halves and
    the halves are summed per exponent with ``np.bincount`` — binary64 accumulation, exact because every
    partial sum stays below 2^53 (chunks of 2^25 values, |half| ≤ 2^27); the per-exponent sums are then
    combined as one Python integer, which MPFR rounds (precision = its bit length, so the only rounding
    is the final conversion to binary64).
    """
    v = np.asarray(x, np.float64).ravel()  # binary32 → binary64 is exact
    if not np.all(np.isfinite(v)):
        raise ValueError("exact_sum needs finite values")
    total = 0
    base = -1074 - 53
    for c in range(0, v.size, 1 << 25):
        mant, exp = np.frexp(v[c:c + (1 << 25)])
        m = np.ldexp(mant, 53).astype(np.int64)  # exact: |m| < 2^53
        idx = exp.astype(np.int64) - 53 - base  # >= 0
        hi = m >> 26  # floor: m = hi·2^26 + lo, 0 <= lo < 2^26
        lo = m - (hi << 26)
        shi = np.bincount(idx, weights=hi.astype(np.float64))
        slo = np.bincount(idx, weights=lo.astype(np.float64))
        for k in np.flatnonzero((shi != 0) | (slo != 0)):
            total += ((int(shi[k]) << 26) + int(slo[k])) << int(k)
    with gmpy2.context(precision=max(64, abs(total).bit_length() + 1)):
        return float(gmpy2.mul_2exp(gmpy2.mpfr(total), base))


class Summer:
    """Compiled kernels and buffers for one (device, dtype, method)."""

    def __init__(self, device, dtype, method: str, plant: float = 0.0):
        self.device, self.dtype, self.method = device, np.dtype(dtype), method
        ctype = "float" if self.dtype == np.float32 else "double"
        src = source(device.info.backend, ctype, method, plant)
        self.k_sum = device.compile(src, "acc_sum")
        self.k_pair = device.compile(src, "acc_pair")

    def sum_enqueue(self, xbuf, n: int, layout: str, scratch) -> tuple[list, object]:
        """Enqueue the summation of ``n`` values; returns (launch handles in order, the buffer holding
        (hi, lo) at [0], [1]) — the handles are what ``Device.timed`` needs on OpenCL."""
        d = self.device
        ev = []
        if layout == "pairwise":
            a, b = xbuf, scratch[0]
            m = n
            while m > 1:
                half = (m + 1) // 2
                ev.append(d.launch(self.k_pair, ndrange((half,), (64,)), (64,), [a, np.uint64(m), b]))
                a, b = b, (scratch[1] if b is scratch[0] else scratch[0])
                m = half
            return ev, a
        groups, local = (1, 1) if layout == "serial" else (64, 32)
        ev.append(d.launch(self.k_sum, (groups * local,), (local,), [xbuf, np.uint64(n), scratch[0]]))
        if groups * local > 1:
            ev.append(d.launch(self.k_sum, (1,), (1,), [scratch[0], np.uint64(2 * groups * local), scratch[1]]))
            return ev, scratch[1]
        return ev, scratch[0]

    def result(self, buf) -> float:
        hl = self.device.to_host(buf, self.dtype, 2)
        return float(self.dtype.type(hl[0]) + self.dtype.type(hl[1])) if self.method != "plain" else float(hl[0])
