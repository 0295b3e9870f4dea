"""The held-out kernels of the PTX model ported from SHOC and the CUDA samples (:mod:`.heldout_kernels`):
SHOC Spmv's ``spmv_csr_scalar_kernel``, sortingNetworks' ``bitonicSortShared`` and quasirandomGenerator's
``quasirandomGeneratorKernel``, each with its launch shape, inputs and NumPy reference (what a port is:
:mod:`.heldout_port`)."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .launch_shape import Shape
from .heldout_port import HostProblem, Port, layout, uniform

# ---- SHOC Spmv: spmv_csr_scalar_kernel -------------------------------------------------------------------------

SPMV = r"""
KERNEL void spmv_csr_scalar_kernel(GLOBAL const float* RESTRICT val, GLOBAL const int* RESTRICT cols,
                                   GLOBAL const int* RESTRICT rowDelimiters, const int dim,
                                   GLOBAL float* RESTRICT out, GLOBAL const float* RESTRICT vec) {
  int myRow = BID_X * BDIM_X + TID_X;
  if (myRow < dim) {
    float t = 0.0f;
    int start = rowDelimiters[myRow];
    int end = rowDelimiters[myRow + 1];
#pragma unroll 1
    for (int j = start; j < end; j++) {
      int col = cols[j];
      t += val[j] * vec[col];
    }
    out[myRow] = t;
  }
}
"""


def _spmv_nnz(rows: int) -> int:
    return rows * rows // 100  # SHOC: a 1 % dense matrix


def _spmv_shape(p: Mapping[str, int]) -> Shape:
    block, rows = p["block"], p["rows"]
    nnz = _spmv_nnz(rows)
    return layout((-(-rows // block),), (block,), (nnz / rows,), p, 8 * nnz + 4 * (rows + 1) + 8 * rows)


def _spmv_problem(rng: np.random.Generator, s: Shape) -> HostProblem:
    rows = s.size["rows"]
    nnz = _spmv_nnz(rows)
    row_of = np.sort(rng.integers(0, rows, nnz))  # every entry equally likely in any row, as SHOC's fill
    col = rng.integers(0, rows, nnz).astype(np.int32)
    order = np.lexsort((col, row_of))  # columns ascending within a row, as SHOC stores them
    row_of, col = row_of[order], col[order]
    delim = np.searchsorted(row_of, np.arange(rows + 1)).astype(np.int32)
    val = uniform(rng, nnz, 0.0, 10.0)  # SHOC: MAX_RANDOM_VAL · rand() / RAND_MAX
    vec = uniform(rng, rows, 0.0, 10.0)

    def ref() -> dict[str, np.ndarray]:
        prod = val.astype(np.float64) * vec.astype(np.float64)[col]
        sums = np.add.reduceat(np.append(prod, 0.0), delim[:-1]) * (np.diff(delim) > 0)
        return {"out": sums}
    return HostProblem(("val", "cols", "rowDelimiters", np.int32(rows), "out", "vec"),
                       {"val": val, "cols": col, "rowDelimiters": delim, "out": np.full(rows, -1.0, np.float32),
                        "vec": vec}, ref, rtol=1e-4, atol=1e-3)


# ---- CUDA samples sortingNetworks: bitonicSortShared -----------------------------------------------------------

BITONIC = r"""
#define SHARED_SIZE_LIMIT 1024U
WL_FN void Comparator(LOCAL_PTR(uint) keyA, LOCAL_PTR(uint) valA, LOCAL_PTR(uint) keyB, LOCAL_PTR(uint) valB, uint dir) {
  uint t;
  if ((*keyA > *keyB) == dir) {
    t = *keyA; *keyA = *keyB; *keyB = t;
    t = *valA; *valA = *valB; *valB = t;
  }
}
KERNEL void bitonicSortShared(GLOBAL uint* d_DstKey, GLOBAL uint* d_DstVal, GLOBAL uint* d_SrcKey, GLOBAL uint* d_SrcVal,
                              uint arrayLength, uint dir) {
  LOCAL_MEM uint s_key[SHARED_SIZE_LIMIT];
  LOCAL_MEM uint s_val[SHARED_SIZE_LIMIT];
  uint tx = (uint)TID_X;
  d_SrcKey += (uint)BID_X * SHARED_SIZE_LIMIT + tx;
  d_SrcVal += (uint)BID_X * SHARED_SIZE_LIMIT + tx;
  d_DstKey += (uint)BID_X * SHARED_SIZE_LIMIT + tx;
  d_DstVal += (uint)BID_X * SHARED_SIZE_LIMIT + tx;
  s_key[tx + 0] = d_SrcKey[0];
  s_val[tx + 0] = d_SrcVal[0];
  s_key[tx + (SHARED_SIZE_LIMIT / 2)] = d_SrcKey[(SHARED_SIZE_LIMIT / 2)];
  s_val[tx + (SHARED_SIZE_LIMIT / 2)] = d_SrcVal[(SHARED_SIZE_LIMIT / 2)];
#pragma unroll 1
  for (uint size = 2; size < arrayLength; size <<= 1) {
    uint ddd = dir ^ ((tx & (size / 2)) != 0);
#pragma unroll 1
    for (uint stride = size / 2; stride > 0; stride >>= 1) {
      BARRIER;
      uint pos = 2 * tx - (tx & (stride - 1));
      Comparator(&s_key[pos + 0], &s_val[pos + 0], &s_key[pos + stride], &s_val[pos + stride], ddd);
    }
  }
#pragma unroll 1
  for (uint stride = arrayLength / 2; stride > 0; stride >>= 1) {
    BARRIER;
    uint pos = 2 * tx - (tx & (stride - 1));
    Comparator(&s_key[pos + 0], &s_val[pos + 0], &s_key[pos + stride], &s_val[pos + stride], dir);
  }
  BARRIER;
  d_DstKey[0] = s_key[tx + 0];
  d_DstVal[0] = s_val[tx + 0];
  d_DstKey[(SHARED_SIZE_LIMIT / 2)] = s_key[tx + (SHARED_SIZE_LIMIT / 2)];
  d_DstVal[(SHARED_SIZE_LIMIT / 2)] = s_val[tx + (SHARED_SIZE_LIMIT / 2)];
}
"""
#: the sample's shared-memory array: every block sorts 1024 keys with 512 threads, whatever the array length
SHARED_SIZE_LIMIT = 1024


def _bitonic_shape(p: Mapping[str, int]) -> Shape:
    length, n = p["length"], p["n"]
    if length < 4 or length & (length - 1) or length > SHARED_SIZE_LIMIT or n % SHARED_SIZE_LIMIT:
        raise ValueError(f"bitonicSortShared: array length {length} must be a power of two in 4 … 1024 and the "
                         f"{n} keys a multiple of 1024")
    m = length.bit_length() - 1
    # the merge loop runs log2(L) − 1 times, its inner loop log2(size) times (mean log2(L) / 2), the last log2(L)
    return layout((n // SHARED_SIZE_LIMIT,), (SHARED_SIZE_LIMIT // 2,), (m - 1, m / 2, m), p, 16 * n)


def _bitonic_problem(rng: np.random.Generator, s: Shape) -> HostProblem:
    length, n = s.size["length"], s.size["n"]
    keys = rng.permutation(n).astype(np.uint32) * np.uint32(7) + np.uint32(3)  # distinct keys: one sorted order
    vals = np.arange(n, dtype=np.uint32)

    def ref() -> dict[str, np.ndarray]:
        order = np.argsort(keys.reshape(-1, length), axis=1, kind="stable")
        return {"dst_key": np.take_along_axis(keys.reshape(-1, length), order, 1).reshape(-1),
                "dst_val": np.take_along_axis(vals.reshape(-1, length), order, 1).reshape(-1)}
    return HostProblem(("dst_key", "dst_val", "src_key", "src_val", np.uint32(length), np.uint32(1)),
                       {"dst_key": np.zeros(n, np.uint32), "dst_val": np.zeros(n, np.uint32), "src_key": keys,
                        "src_val": vals}, ref)


# ---- CUDA samples quasirandomGenerator: quasirandomGeneratorKernel ------------------------------------------------

QRNG_DIMENSIONS, QRNG_RESOLUTION = 3, 31


def qrng_table() -> np.ndarray:
    """The generator's 3 × 31 direction table: 31-bit values from a fixed seed (the sample computes
    Niederreiter's from polynomials on the host; any table does the same work)."""
    return np.random.default_rng(31).integers(1, 1 << 31, (QRNG_DIMENSIONS, QRNG_RESOLUTION), dtype=np.uint32)


def _qrng_text() -> str:
    rows = ",\n  ".join("{" + ", ".join(f"{int(v)}u" for v in row) + "}" for row in qrng_table())
    return r"""
#define QRNG_DIMENSIONS 3
#define QRNG_RESOLUTION 31
#define INT_SCALE (1.0f / (float)0x80000001U)
CONSTANT_TABLE uint c_Table[QRNG_DIMENSIONS][QRNG_RESOLUTION] = {
  """ + rows + r"""
};
KERNEL void quasirandomGeneratorKernel(GLOBAL float* d_Output, uint seed, uint N) {
  CONSTANT_PTR(uint) dimBase = &c_Table[TID_Y][0];
  uint tid = UMUL24(BDIM_X, BID_X) + TID_X;
  uint threadN = UMUL24(BDIM_X, GDIM_X);
#pragma unroll 1
  for (uint pos = tid; pos < N; pos += threadN) {
    uint result = 0;
    uint data = seed + pos;
    for (int bit = 0; bit < QRNG_RESOLUTION; bit++, data >>= 1)
      if (data & 1) {
        result ^= dimBase[bit];
      }
    d_Output[UMUL24(TID_Y, N) + pos] = (float)(result + 1) * INT_SCALE;
  }
}
"""


def _qrng_shape(p: Mapping[str, int]) -> Shape:
    bx, grid, n = p["bx"], p["grid"], p["n"]
    if n % (bx * grid):
        raise ValueError(f"quasirandomGeneratorKernel: N = {n} is not a multiple of the {bx * grid} threads per dimension")
    return layout((grid, 1), (bx, QRNG_DIMENSIONS), (n // (bx * grid),), p, 4 * QRNG_DIMENSIONS * n)


def _qrng_problem(rng: np.random.Generator, s: Shape) -> HostProblem:
    n, seed = s.size["n"], 0  # the sample's seed

    def ref() -> dict[str, np.ndarray]:
        data = np.arange(n, dtype=np.uint64) + seed
        out = np.zeros((QRNG_DIMENSIONS, n), np.uint32)
        for bit, column in enumerate(qrng_table().T):
            on = ((data >> np.uint64(bit)) & np.uint64(1)).astype(bool)
            out[:, on] ^= column[:, None]
        return {"out": ((out + np.uint32(1)).astype(np.float32) * np.float32(2.0 ** -31)).reshape(-1)}
    return HostProblem(("out", np.uint32(seed), np.uint32(n)), {"out": np.full(QRNG_DIMENSIONS * n, -1.0, np.float32)}, ref)


PORTS: tuple[Port, ...] = (
    Port("spmv_csr_scalar_kernel", SPMV,
         "the vector read with a read-only global load (`__restrict__ const`, the texture path on sm_90) "
         "instead of a texture fetch, passed as a last argument; the row loop kept rolled; SHOC's 1 % random "
         "fill drawn as a row and a column per non-zero (a position may repeat; SHOC's never does)", _spmv_shape, _spmv_problem, dict(block=32, rows=300)),
    Port("bitonicSortShared", BITONIC,
         "cooperative groups' block sync written as a barrier, the comparator's references as pointers; "
         "loops kept rolled; distinct generated keys", _bitonic_shape, _bitonic_problem, dict(length=64, n=2048)),
    Port("quasirandomGeneratorKernel", _qrng_text(),
         "a generated direction table in the same `__constant__` table (the sample computes Niederreiter's on "
         "the host); the sample loop kept rolled", _qrng_shape, _qrng_problem, dict(bx=32, grid=4, n=4096)),
)
