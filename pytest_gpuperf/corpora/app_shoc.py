"""Application corpus, SHOC (Danalis et al., 2010; Dao took FFT, BFS, sgemm, spmv and Stencil2D from it,
§2.6.1): reduction, scan, md, an FFT, triad, Stencil2D and both CSR spmv kernels, each ported as one
OpenCL C kernel (``app_kernel``)."""

from __future__ import annotations

import numpy as np

from .app_kernel import (AppKernel, Cost, Origin, Out, Problem, binomial_pmf, f32, i32, quantile_lengths,
                         quantile_total, tiled, uniform)

SH = "SHOC"


def _values(rng, n, lo=-1.0, hi=1.0):
    return tiled(rng, n, lambda r, m: uniform(r, m, lo, hi))


# ---- reduction -----------------------------------------------------------------------------------------

REDUCTION = r"""
KERNEL void shoc_reduction(GLOBAL const float* in, GLOBAL float* out, int chunk, int reps) {
  LOCAL_MEM float sdata[256];
  int tid = LID;
  int base = GROUP * chunk;
  float s = 0.0f;
  for (int r = 0; r < reps; ++r)
    for (int i = tid; i < chunk; i += 2 * LSIZE) s += in[base + i] + in[base + i + LSIZE];
  sdata[tid] = s;
  BARRIER;
  for (int w = LSIZE / 2; w > 0; w >>= 1) {
    if (tid < w) sdata[tid] += sdata[tid + w];
    BARRIER;
  }
  if (tid == 0) out[GROUP] = sdata[0];
}
"""


def _reduction(rng, groups: int, chunk: int, reps: int) -> Problem:
    x = _values(rng, groups * chunk, 0, 1)

    def ref():
        return {"out": x.reshape(groups, chunk).astype(np.float64).sum(axis=1) * reps}
    return Problem(groups, ("in", "out", i32(chunk), i32(reps)), {"in": x}, {"out": Out(np.float32, groups)}, ref,
                   rtol=1e-4)


def _reduction_cost(groups: int, chunk: int, reps: int) -> Cost:
    n = groups * chunk
    return Cost(1.0 * n * reps, 4.0 * n * reps + 4 * groups, groups, 4 * (n + groups))


# ---- scan (bottom scan) --------------------------------------------------------------------------------

SCAN = r"""
KERNEL void shoc_scan(GLOBAL const float* in, GLOBAL const float* isums, GLOBAL float* out, int chunk, int reps) {
  LOCAL_MEM float buf[2][256];
  int tid = LID;
  int base = GROUP * chunk;
  for (int r = 0; r < reps; ++r) {
    float seed = isums[GROUP];
    for (int t = 0; t < chunk; t += 4 * LSIZE) {
      int i = base + t + 4 * tid;
      float v0 = in[i], v1 = in[i + 1], v2 = in[i + 2], v3 = in[i + 3];
      float s1 = v0 + v1, s2 = s1 + v2, s3 = s2 + v3;
      int p = 0;
      buf[0][tid] = s3;
      BARRIER;
      for (int d = 1; d < LSIZE; d <<= 1) {
        float v = buf[p][tid];
        if (tid >= d) v += buf[p][tid - d];
        buf[1 - p][tid] = v;
        p = 1 - p;
        BARRIER;
      }
      float before = seed + (tid > 0 ? buf[p][tid - 1] : 0.0f);
      out[i] = before;
      out[i + 1] = before + v0;
      out[i + 2] = before + s1;
      out[i + 3] = before + s2;
      seed += buf[p][LSIZE - 1];
      BARRIER;
    }
  }
}
"""


def _scan(rng, groups: int, chunk: int, reps: int) -> Problem:
    x = _values(rng, groups * chunk, 0, 1)
    sums = x.reshape(groups, chunk).sum(axis=1, dtype=np.float64)
    isums = (np.cumsum(sums) - sums).astype(np.float32)

    def ref():
        inc = np.cumsum(x.reshape(groups, chunk).astype(np.float64), axis=1)
        return {"out": (inc - x.reshape(groups, chunk) + isums[:, None]).reshape(-1)}
    return Problem(groups, ("in", "isums", "out", i32(chunk), i32(reps)), {"in": x, "isums": isums},
                   {"out": Out(np.float32, groups * chunk)}, ref, rtol=1e-4, atol=1e-3)


def _scan_cost(groups: int, chunk: int, reps: int) -> Cost:
    n = groups * chunk
    # per element: the work-item's serial sums and outputs (2), the local scan's share (8 steps / 4 elements)
    return Cost(4.0 * n * reps, 8.0 * n * reps, groups, 8 * n + 4 * groups)


# ---- md (Lennard-Jones force) --------------------------------------------------------------------------

MD = r"""
KERNEL void shoc_md(GLOBAL float* force, GLOBAL const float* position, int neighCount, GLOBAL const int* neighList,
                    float cutsq, float lj1, float lj2, int inum, int reps) {
  int idx = GID;
  float ix = position[4 * idx], iy = position[4 * idx + 1], iz = position[4 * idx + 2];
  float fx = 0.0f, fy = 0.0f, fz = 0.0f;
  for (int r = 0; r < reps; ++r)
    for (int j = 0; j < neighCount; ++j) {
      int jidx = neighList[j * inum + idx];
      float delx = ix - position[4 * jidx], dely = iy - position[4 * jidx + 1], delz = iz - position[4 * jidx + 2];
      float r2inv = delx * delx + dely * dely + delz * delz;
      if (r2inv < cutsq) {
        r2inv = 1.0f / r2inv;
        float r6inv = r2inv * r2inv * r2inv;
        float f = r2inv * r6inv * (lj1 * r6inv - lj2);
        fx += delx * f;
        fy += dely * f;
        fz += delz * f;
      }
    }
  force[4 * idx] = fx;
  force[4 * idx + 1] = fy;
  force[4 * idx + 2] = fz;
  force[4 * idx + 3] = 0.0f;
}
"""

def md_offsets(count: int) -> np.ndarray:
    """The ``count`` lattice offsets nearest to an atom (its own excluded): its neighbour list."""
    r = np.arange(-4, 5)
    d = np.stack(np.meshgrid(r, r, r, indexing="ij"), axis=-1).reshape(-1, 3)
    d = d[(d != 0).any(axis=1)]
    return d[np.argsort((d * d).sum(axis=1), kind="stable")][:count]


def _md(rng, groups: int, side: int, neigh: int, reps: int) -> Problem:
    """Atoms on a jittered lattice ``side`` wide and deep, stacked in z (at least 9 layers: the neighbour
    offsets reach 4 sites either way)."""
    n = groups * 256
    if n % (side * side) or n // (side * side) < 9:
        raise ValueError(f"md: {n} atoms do not fill at least 9 layers of {side}×{side}")
    i = np.arange(n, dtype=np.int32)
    pos = np.zeros((n, 4), np.float32)
    pos[:, :3] = tiled(rng, 3 * n, lambda r, m: uniform(r, m, -0.2, 0.2)).reshape(n, 3)
    pos[:, 0] += i % side
    pos[:, 1] += (i // side) % side
    pos[:, 2] += i // (side * side)
    off = md_offsets(neigh)
    nbr = np.empty((neigh, n), np.int32)
    for row, o in zip(nbr, off[:, 0] + side * off[:, 1] + side * side * off[:, 2]):
        np.remainder(i + np.int32(o), n, out=row)
    cutsq, lj1, lj2 = 2.6 ** 2, 1.5, 2.0

    def ref():
        p = pos[:, :3].astype(np.float64)
        d = p[None, :, :] - p[nbr]
        r2 = (d * d).sum(axis=2)
        inv = np.where(r2 < cutsq, 1.0 / r2, 0.0)
        r6 = inv ** 3
        f = (inv * r6 * (lj1 * r6 - lj2))[:, :, None] * d
        out = np.zeros((n, 4))
        out[:, :3] = f.sum(axis=0) * reps
        return {"force": out.reshape(-1)}
    return Problem(groups, ("force", "position", i32(neigh), "neighList", f32(cutsq), f32(lj1), f32(lj2), i32(n), i32(reps)),
                   {"position": pos.reshape(-1), "neighList": nbr.reshape(-1)},
                   {"force": Out(np.float32, 4 * n)}, ref, rtol=1e-3, atol=1e-3)


def _md_cost(groups: int, side: int, neigh: int, reps: int) -> Cost:
    n = groups * 256
    # per neighbour: the distance (8) and, for the ~80 % within the cutoff, the force (13)
    return Cost(float(n) * neigh * reps * (8 + 0.8 * 13), 4.0 * n * neigh * reps + 32.0 * n, groups,
                4 * n * neigh + 32 * n)


# ---- FFT (512-point, radix 2, in local memory) ---------------------------------------------------------

FFT = r"""
#define FT_N 512
#define FT_LOG 9
KERNEL void shoc_fft(GLOBAL const float* in, GLOBAL float* out, GLOBAL const float* twiddle, int per_group, int reps) {
  LOCAL_MEM float re[FT_N];
  LOCAL_MEM float im[FT_N];
  LOCAL_MEM float wr[FT_N / 2];
  LOCAL_MEM float wi[FT_N / 2];
  int tid = LID;
  wr[tid] = twiddle[2 * tid];
  wi[tid] = twiddle[2 * tid + 1];
  for (int r = 0; r < reps; ++r)
    for (int b = 0; b < per_group; ++b) {
      int base = 2 * FT_N * (GROUP * per_group + b);
      for (int e = tid; e < FT_N; e += LSIZE) {
        int rev = 0;
        for (int k = 0; k < FT_LOG; ++k) rev |= ((e >> k) & 1) << (FT_LOG - 1 - k);
        re[rev] = in[base + 2 * e];
        im[rev] = in[base + 2 * e + 1];
      }
      BARRIER;
      for (int len = 2; len <= FT_N; len <<= 1) {
        int hl = len / 2;
        int k = tid % hl;
        int i0 = (tid / hl) * len + k, i1 = i0 + hl;
        int w = k * (FT_N / len);
        float tr = wr[w] * re[i1] - wi[w] * im[i1];
        float ti = wr[w] * im[i1] + wi[w] * re[i1];
        re[i1] = re[i0] - tr;
        im[i1] = im[i0] - ti;
        re[i0] += tr;
        im[i0] += ti;
        BARRIER;
      }
      for (int e = tid; e < FT_N; e += LSIZE) {
        out[base + 2 * e] = re[e];
        out[base + 2 * e + 1] = im[e];
      }
      BARRIER;
    }
}
"""


def _fft(rng, groups: int, per_group: int, reps: int) -> Problem:
    n = groups * per_group
    x = _values(rng, 2 * 512 * n)
    m = np.arange(256)
    tw = np.stack([np.cos(2 * np.pi * m / 512), -np.sin(2 * np.pi * m / 512)], axis=1).astype(np.float32).reshape(-1)

    def ref():
        c = x.reshape(n, 512, 2).astype(np.float64)
        f = np.fft.fft(c[..., 0] + 1j * c[..., 1], axis=1)
        return {"out": np.stack([f.real, f.imag], axis=-1).reshape(-1)}
    return Problem(groups, ("in", "out", "twiddle", i32(per_group), i32(reps)), {"in": x, "twiddle": tw},
                   {"out": Out(np.float32, 2 * 512 * n)}, ref, rtol=1e-4, atol=1e-3)


def _fft_cost(groups: int, per_group: int, reps: int) -> Cost:
    n = groups * per_group
    return Cost(5.0 * 512 * 9 * n * reps, 8192.0 * n * reps, groups, 8192 * n + 2048)


# ---- triad ---------------------------------------------------------------------------------------------

TRIAD = r"""
KERNEL void shoc_triad(GLOBAL const float* A, GLOBAL const float* B, GLOBAL float* C, float s, int chunk, int reps) {
  int base = GROUP * chunk;
  for (int r = 0; r < reps; ++r)
    for (int i = LID; i < chunk; i += LSIZE) C[base + i] = A[base + i] + s * B[base + i];
}
"""


def _triad(rng, groups: int, chunk: int, reps: int) -> Problem:
    n = groups * chunk
    a, b = _values(rng, n), _values(rng, n)
    return Problem(groups, ("A", "B", "C", f32(1.75), i32(chunk), i32(reps)), {"A": a, "B": b},
                   {"C": Out(np.float32, n)}, lambda: {"C": a + np.float32(1.75) * b.astype(np.float64)})


def _triad_cost(groups: int, chunk: int, reps: int) -> Cost:
    n = groups * chunk
    return Cost(2.0 * n * reps, 12.0 * n * reps, groups, 12 * n)


# ---- Stencil2D -----------------------------------------------------------------------------------------

STENCIL2D = r"""
KERNEL void shoc_stencil2d(GLOBAL const float* data, GLOBAL float* newData, int width, int rows_per_group,
                           float wCenter, float wCardinal, float wDiagonal, int reps) {
  LOCAL_MEM float sh[3][258];
  int tiles = (width - 2) / LSIZE;
  int tx = GROUP % tiles, ty = GROUP / tiles;
  int x = 1 + tx * LSIZE + LID;
  int y0 = 1 + ty * rows_per_group;
  for (int r = 0; r < reps; ++r) {
    for (int k = 0; k < 2; ++k) {
      int row = (y0 - 1 + k) * width;
      sh[k][LID + 1] = data[row + x];
      if (LID == 0) sh[k][0] = data[row + x - 1];
      if (LID == LSIZE - 1) sh[k][LSIZE + 1] = data[row + x + 1];
    }
    for (int y = y0; y < y0 + rows_per_group; ++y) {
      int nxt = (y - y0 + 2) % 3, mid = (y - y0 + 1) % 3, top = (y - y0) % 3;
      int row = (y + 1) * width;
      sh[nxt][LID + 1] = data[row + x];
      if (LID == 0) sh[nxt][0] = data[row + x - 1];
      if (LID == LSIZE - 1) sh[nxt][LSIZE + 1] = data[row + x + 1];
      BARRIER;
      int l = LID + 1;
      newData[y * width + x] = wCenter * sh[mid][l]
          + wCardinal * (sh[top][l] + sh[nxt][l] + sh[mid][l - 1] + sh[mid][l + 1])
          + wDiagonal * (sh[top][l - 1] + sh[top][l + 1] + sh[nxt][l - 1] + sh[nxt][l + 1]);
      BARRIER;
    }
  }
}
"""


def _stencil2d(rng, tiles: int, tile_rows: int, rows_per_group: int, reps: int) -> Problem:
    width, height = tiles * 256 + 2, tile_rows * rows_per_group + 2
    d = _values(rng, width * height)
    wc, wn, wd = 0.25, 0.15, 0.05

    def ref():
        a = d.reshape(height, width).astype(np.float64)
        out = np.full((height, width), np.nan)
        out[1:-1, 1:-1] = (wc * a[1:-1, 1:-1] + wn * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
                           + wd * (a[:-2, :-2] + a[:-2, 2:] + a[2:, :-2] + a[2:, 2:]))
        return {"newData": out.reshape(-1)}
    return Problem(tiles * tile_rows, ("data", "newData", i32(width), i32(rows_per_group), f32(wc), f32(wn), f32(wd), i32(reps)),
                   {"data": d}, {"newData": Out(np.float32, width * height)}, ref)


def _stencil2d_cost(tiles: int, tile_rows: int, rows_per_group: int, reps: int) -> Cost:
    width, height = tiles * 256 + 2, tile_rows * rows_per_group + 2
    inner = (width - 2) * (height - 2)
    return Cost(17.0 * inner * reps, 8.0 * inner * reps, tiles * tile_rows, 8 * width * height)


# ---- spmv (CSR, scalar and vector) ---------------------------------------------------------------------

SPMV_SCALAR = r"""
KERNEL void shoc_spmv_scalar(GLOBAL const float* val, GLOBAL const float* vec, GLOBAL const int* cols,
                             GLOBAL const int* rowDelimiters, int dim, GLOBAL float* out, int reps) {
  int myRow = GID;
  if (myRow >= dim) return;
  float t = 0.0f;
  int start = rowDelimiters[myRow], end = rowDelimiters[myRow + 1];
  for (int r = 0; r < reps; ++r)
    for (int j = start; j < end; ++j) t += val[j] * vec[cols[j]];
  out[myRow] = t;
}
"""

SPMV_VECTOR = r"""
#define SV_WIDTH 32
KERNEL void shoc_spmv_vector(GLOBAL const float* val, GLOBAL const float* vec, GLOBAL const int* cols,
                             GLOBAL const int* rowDelimiters, int dim, GLOBAL float* out, int reps) {
  LOCAL_MEM float partialSums[128];
  int t = LID;
  int id = t & (SV_WIDTH - 1);
  int myRow = GROUP * (LSIZE / SV_WIDTH) + t / SV_WIDTH;
  float mySum = 0.0f;
  int vecStart = rowDelimiters[myRow], vecEnd = rowDelimiters[myRow + 1];
  for (int r = 0; r < reps; ++r)
    for (int j = vecStart + id; j < vecEnd; j += SV_WIDTH) mySum += val[j] * vec[cols[j]];
  partialSums[t] = mySum;
  BARRIER;
  for (int bar = SV_WIDTH / 2; bar > 0; bar /= 2) {
    if (id < bar) partialSums[t] += partialSums[t + bar];
    BARRIER;
  }
  if (id == 0) out[myRow] = partialSums[t];
}
"""


#: Columns of both SpMV matrices: the vector gathered through the column index (4 MB, held in an H100's L2)
SPMV_COLS = 1 << 20


def row_length_pmf(rows: int, nnz: int, ncols: int = SPMV_COLS) -> np.ndarray:
    """The distribution of a row's non-zeros as SHOC's ``initRandomMatrix`` makes them: every position of the
    matrix holds a non-zero with probability ``nnz / (rows · ncols)``, so a row's count is binomial."""
    return binomial_pmf(ncols, nnz / (rows * ncols))


def csr_lengths(rng: np.random.Generator, rows: int, nnz: int, ncols: int = SPMV_COLS) -> np.ndarray:
    """The rows' lengths, the first draw of a problem's generator (so that they can be rebuilt from the
    kernel's seed without the matrix): :func:`row_length_pmf`'s quantiles in random row order."""
    return quantile_lengths(rng, row_length_pmf(rows, nnz, ncols), rows)


def _csr(rng, rows: int, nnz: int, reps: int, groups: int, ncols: int = SPMV_COLS) -> Problem:
    lens = csr_lengths(rng, rows, nnz, ncols)
    ptr = np.concatenate([[0], np.cumsum(lens, dtype=np.int64)]).astype(np.int32)
    total = int(ptr[-1])
    val = _values(rng, total)
    cols = tiled(rng, total, lambda r, m: r.integers(0, ncols, m, dtype=np.int32))
    x = uniform(rng, ncols, -1, 1)

    def ref():
        row = np.repeat(np.arange(rows), lens)
        return {"out": np.bincount(row, weights=val.astype(np.float64) * x[cols], minlength=rows) * reps}
    return Problem(groups, ("val", "vec", "cols", "rowDelimiters", i32(rows), "out", i32(reps)),
                   {"val": val, "vec": x, "cols": cols, "rowDelimiters": ptr}, {"out": Out(np.float32, rows)}, ref,
                   rtol=1e-4, atol=1e-4)


def _csr_cost(rows: int, nnz: int, reps: int, groups: int, ncols: int = SPMV_COLS) -> Cost:
    total = quantile_total(row_length_pmf(rows, nnz, ncols), rows)
    return Cost(2.0 * total * reps, 8.0 * total * reps + 12.0 * rows + 4.0 * ncols, groups,
                8 * total + 8 * rows + 4 + 4 * ncols)


#: Rows per work-group: one per work-item (scalar), one per 32 work-items of a group of 128 (vector)
SCALAR_ROWS, VECTOR_ROWS = 256, 4


def _scalar(rng, groups: int, nnz: int, reps: int) -> Problem:
    return _csr(rng, groups * SCALAR_ROWS, nnz, reps, groups)


def _scalar_cost(groups: int, nnz: int, reps: int) -> Cost:
    return _csr_cost(groups * SCALAR_ROWS, nnz, reps, groups)


def _vector(rng, groups: int, nnz: int, reps: int) -> Problem:
    return _csr(rng, groups * VECTOR_ROWS, nnz, reps, groups)


def _vector_cost(groups: int, nnz: int, reps: int) -> Cost:
    return _csr_cost(groups * VECTOR_ROWS, nnz, reps, groups)


KERNELS: tuple[AppKernel, ...] = (
    AppKernel("shoc_reduction", Origin(SH, "Reduction", "reduce"),
              "each group sums a contiguous chunk (the original strides over the whole array by the grid's size, "
              "so a group's share would depend on the number of groups); `reps` passes accumulate",
              ("memory", "local", "regular"), REDUCTION, 256, _reduction, _reduction_cost,
              gpu=dict(groups=32768, chunk=32768, reps=80), tiny=dict(groups=16, chunk=1024, reps=2)),
    AppKernel("shoc_scan", Origin(SH, "Scan", "bottom_scan"),
              "the block offsets (the original's top_scan of the reduce kernel's sums) computed on the host and "
              "passed in; one element per work-item and tile step of 4 (float4 in the original); `reps` passes "
              "recompute the scan",
              ("memory", "local", "regular"), SCAN, 256, _scan, _scan_cost,
              gpu=dict(groups=32768, chunk=16384, reps=80), tiny=dict(groups=16, chunk=2048, reps=2)),
    AppKernel("shoc_md", Origin(SH, "MD", "compute_lj_force"),
              "atoms on a jittered lattice whose 128 nearest lattice sites are each atom's neighbour list (the "
              "original builds the list from distances); float4 positions as four floats; `reps` passes accumulate",
              ("irregular", "memory", "warm-up"), MD, 256, _md, _md_cost,
              gpu=dict(groups=32768, side=64, neigh=128, reps=80), tiny=dict(groups=36, side=32, neigh=32, reps=2)),
    AppKernel("shoc_fft", Origin(SH, "FFT", "fft1D_512 (forward)"),
              "a radix-2 decimation-in-time FFT of 512 points in local memory, one butterfly per work-item and "
              "stage (the original does radix-8 passes with 64 work-items and a transpose); twiddles from a table; "
              "each group transforms a batch, `reps` times",
              ("local", "memory", "regular"), FFT, 256, _fft, _fft_cost,
              gpu=dict(groups=32768, per_group=16, reps=80), tiny=dict(groups=8, per_group=2, reps=2)),
    AppKernel("shoc_triad", Origin(SH, "Triad", "Triad"),
              "each group owns a chunk and rewrites it `reps` times (the original launches one element per "
              "work-item per pass from the host)",
              ("memory", "regular"), TRIAD, 256, _triad, _triad_cost,
              gpu=dict(groups=32768, chunk=16384, reps=56), tiny=dict(groups=16, chunk=1024, reps=2)),
    AppKernel("shoc_stencil2d", Origin(SH, "Stencil2D", "StencilKernel"),
              "a group sweeps down a strip 256 columns wide with a three-row window in local memory (the "
              "original loads a 2-D tile with halo); one step recomputed `reps` times instead of time steps",
              ("memory", "local", "regular"), STENCIL2D, 256, _stencil2d, _stencil2d_cost,
              gpu=dict(tiles=16, tile_rows=2048, rows_per_group=64, reps=80),
              tiny=dict(tiles=2, tile_rows=8, rows_per_group=4, reps=2)),
    AppKernel("shoc_spmv_scalar", Origin(SH, "Spmv", "spmv_csr_scalar_kernel"),
              "row lengths spread as SHOC's initRandomMatrix spreads them (each position a non-zero with the same "
              "probability, so a row's count is binomial, about nnz/rows), as that distribution's quantiles in random "
              "row order so that the total is known without the matrix; 2^20 columns drawn at random for each "
              "non-zero (SHOC's square matrix keeps a row's columns in order); `reps` passes accumulate. Not "
              "`imbalanced`: every group's 256 rows are a random draw of the same near-equal lengths, so the first "
              "groups do a typical share",
              ("memory", "irregular", "warm-up"), SPMV_SCALAR, 256, _scalar, _scalar_cost,
              gpu=dict(groups=32768, nnz=262_144_000, reps=150), tiny=dict(groups=16, nnz=14_336, reps=2)),
    AppKernel("shoc_spmv_vector", Origin(SH, "Spmv", "spmv_csr_vector_kernel"),
              "row lengths spread as SHOC's initRandomMatrix spreads them (binomial, about nnz/rows; its quantiles "
              "in random row order), 2^20 columns drawn at random for each non-zero, 32 work-items per row, four "
              "rows per group; `reps` passes accumulate. Not `imbalanced`: every group's rows are a random draw of "
              "the same near-equal lengths, so the first groups do a typical share",
              ("memory", "irregular", "local", "warm-up"), SPMV_VECTOR, 128, _vector, _vector_cost,
              gpu=dict(groups=65536, nnz=524_288_000, reps=80), tiny=dict(groups=16, nnz=4096, reps=2)),
)
