"""Application corpus, PolyBench/GPU (Grauer-Gray et al., 2012; the GPU port of PolyBench's linear-algebra
and stencil kernels): gemm, syrk, syr2k, covariance, atax, bicg, gesummv, jacobi-2d, convolution-2d and
fdtd-2d, each ported as one OpenCL C kernel (``app_kernel``). PolyBench/GPU's kernels are deliberately
naive (one output per work-item, no tiling); the ports keep that, except where a note says otherwise."""

from __future__ import annotations

from typing import Callable

import numpy as np

from .app_kernel import AppKernel, Cost, Origin, Out, Problem, f32, i32, tiled, uniform

PO = "PolyBench/GPU"


def _values(rng, n, lo=-1.0, hi=1.0):
    return tiled(rng, n, lambda r, m: uniform(r, m, lo, hi))


# ---- gemm, syrk, syr2k: one output per work-item, 32 × 8 work-items per group ---------------------------

TILE_32x8 = r"""
  int lx = LID % 32, ly = LID / 32;
  int tiles_j = NJ / 32;
  int j = (GROUP % tiles_j) * 32 + lx;
  int i = (GROUP / tiles_j) * 8 + ly;
"""

GEMM = r"""
KERNEL void polybench_gemm(GLOBAL const float* a, GLOBAL const float* b, GLOBAL const float* c_in, GLOBAL float* c,
                           float alpha, float beta, int ni, int nj, int nk) {
#define NJ nj
""" + TILE_32x8 + r"""
#undef NJ
  float acc = c_in[i * nj + j] * beta;
  for (int k = 0; k < nk; k++) acc += alpha * a[i * nk + k] * b[k * nj + j];
  c[i * nj + j] = acc;
}
"""

SYRK = r"""
KERNEL void polybench_syrk(float alpha, float beta, GLOBAL const float* a, GLOBAL const float* c_in, GLOBAL float* c,
                           int m, int n) {
#define NJ n
""" + TILE_32x8 + r"""
#undef NJ
  float acc = c_in[i * n + j] * beta;
  for (int k = 0; k < m; k++) acc += alpha * a[i * m + k] * a[j * m + k];
  c[i * n + j] = acc;
}
"""

SYR2K = r"""
KERNEL void polybench_syr2k(GLOBAL const float* a, GLOBAL const float* b, GLOBAL const float* c_in, GLOBAL float* c,
                            float alpha, float beta, int m, int n) {
#define NJ n
""" + TILE_32x8 + r"""
#undef NJ
  float acc = c_in[i * n + j] * beta;
  for (int k = 0; k < m; k++) acc += alpha * a[i * m + k] * b[j * m + k] + alpha * b[i * m + k] * a[j * m + k];
  c[i * n + j] = acc;
}
"""

ALPHA, BETA = 1.5, 1.2  # PolyBench's own


def _gemm(rng, ni: int, nj: int, nk: int) -> Problem:
    a, b, c = _values(rng, ni * nk), _values(rng, nk * nj), _values(rng, ni * nj)

    def ref():
        ah, bh = a.reshape(ni, nk).astype(np.float64), b.reshape(nk, nj).astype(np.float64)
        return {"c": (BETA * c.reshape(ni, nj) + ALPHA * ah @ bh).reshape(-1)}
    return Problem(ni * nj // 256, ("a", "b", "c_in", "c", f32(ALPHA), f32(BETA), i32(ni), i32(nj), i32(nk)),
                   {"a": a, "b": b, "c_in": c}, {"c": Out(np.float32, ni * nj)}, ref, rtol=1e-4, atol=1e-4)


def _gemm_cost(ni: int, nj: int, nk: int) -> Cost:
    return Cost(3.0 * ni * nj * nk, 4.0 * (ni * nk + nk * nj + 2 * ni * nj), ni * nj // 256,
                4 * (ni * nk + nk * nj + 2 * ni * nj))


def _syrk(rng, n: int, m: int) -> Problem:
    a, c = _values(rng, n * m), _values(rng, n * n)

    def ref():
        ah = a.reshape(n, m).astype(np.float64)
        return {"c": (BETA * c.reshape(n, n) + ALPHA * ah @ ah.T).reshape(-1)}
    return Problem(n * n // 256, (f32(ALPHA), f32(BETA), "a", "c_in", "c", i32(m), i32(n)), {"a": a, "c_in": c},
                   {"c": Out(np.float32, n * n)}, ref, rtol=1e-4, atol=1e-4)


def _syrk_cost(n: int, m: int) -> Cost:
    return Cost(3.0 * n * n * m, 4.0 * (n * m + 2 * n * n), n * n // 256, 4 * (n * m + 2 * n * n))


def _syr2k(rng, n: int, m: int) -> Problem:
    a, b, c = _values(rng, n * m), _values(rng, n * m), _values(rng, n * n)

    def ref():
        ah, bh = a.reshape(n, m).astype(np.float64), b.reshape(n, m).astype(np.float64)
        return {"c": (BETA * c.reshape(n, n) + ALPHA * (ah @ bh.T + bh @ ah.T)).reshape(-1)}
    return Problem(n * n // 256, ("a", "b", "c_in", "c", f32(ALPHA), f32(BETA), i32(m), i32(n)), {"a": a, "b": b, "c_in": c},
                   {"c": Out(np.float32, n * n)}, ref, rtol=1e-4, atol=1e-4)


def _syr2k_cost(n: int, m: int) -> Cost:
    return Cost(6.0 * n * n * m, 4.0 * (2 * n * m + 2 * n * n), n * n // 256, 4 * (2 * n * m + 2 * n * n))


# ---- covariance ----------------------------------------------------------------------------------------

COVARIANCE = r"""
KERNEL void polybench_covariance(GLOBAL float* symmat, GLOBAL const float* data, int m, int n) {
  int j1 = GROUP;
  for (int j2 = j1 + LID; j2 < m; j2 += LSIZE) {
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += data[i * m + j1] * data[i * m + j2];
    symmat[j1 * m + j2] = s;
    symmat[j2 * m + j1] = s;
  }
}
"""


def _covariance(rng, m: int, n: int) -> Problem:
    data = _values(rng, n * m, 0, 1).reshape(n, m)
    data = (data - data.mean(axis=0, dtype=np.float64)).astype(np.float32).reshape(-1)  # the mean kernel's work

    def ref():
        d = data.reshape(n, m).astype(np.float64)
        return {"symmat": (d.T @ d).reshape(-1)}
    return Problem(m, ("symmat", "data", i32(m), i32(n)), {"data": data}, {"symmat": Out(np.float32, m * m)}, ref,
                   rtol=1e-4, atol=1e-4)


def _covariance_cost(m: int, n: int) -> Cost:
    return Cost(1.0 * m * m * n, 4.0 * (n * m + m * m), m, 4 * (n * m + m * m))


# ---- atax (kernel 1), bicg (kernel 2), gesummv: matrix-vector products ---------------------------------

ATAX = r"""
KERNEL void polybench_atax(GLOBAL const float* A, GLOBAL const float* x, GLOBAL float* tmp, int nx, int ny, int reps) {
  int i = GID;
  for (int r = 0; r < reps; ++r) {
    float s = 0.0f;
    for (int j = 0; j < ny; j++) s += A[i * ny + j] * x[j];
    tmp[i] = s;
  }
}
"""

BICG = r"""
KERNEL void polybench_bicg(GLOBAL const float* A, GLOBAL const float* r, GLOBAL float* s, int nx, int ny, int reps) {
  int j = GID;
  for (int p = 0; p < reps; ++p) {
    float acc = 0.0f;
    for (int i = 0; i < nx; i++) acc += A[i * ny + j] * r[i];
    s[j] = acc;
  }
}
"""

GESUMMV = r"""
KERNEL void polybench_gesummv(GLOBAL const float* a, GLOBAL const float* b, GLOBAL const float* x, GLOBAL float* y,
                              float alpha, float beta, int n, int m, int reps) {
  int i = GID;
  for (int r = 0; r < reps; ++r) {
    float tmp = 0.0f, acc = 0.0f;
    for (int j = 0; j < m; j++) {
      tmp += a[i * m + j] * x[j];
      acc += b[i * m + j] * x[j];
    }
    y[i] = alpha * tmp + beta * acc;
  }
}
"""


def _matvec(rng, groups: int, k: int, reps: int, vec: str, out: str, transposed: bool) -> Problem:
    """One output per work-item (``groups`` × 256 of them), each a dot product of length ``k`` with the vector
    ``vec``: atax's A·x over a tall A (rows of ``k``), or with ``transposed`` bicg's rᵀ·A (``k`` rows)."""
    n = groups * 256
    a, v = _values(rng, n * k), uniform(rng, k, -1, 1)
    rows, cols = (k, n) if transposed else (n, k)
    return Problem(groups, ("A", vec, out, i32(rows), i32(cols), i32(reps)), {"A": a, vec: v}, {out: Out(np.float32, n)},
                   lambda: {out: v.astype(np.float64) @ a.reshape(rows, cols) if transposed
                            else a.reshape(rows, cols).astype(np.float64) @ v}, rtol=1e-4, atol=1e-4)


def _matvec_cost(groups: int, k: int, reps: int) -> Cost:
    n = groups * 256
    return Cost(2.0 * n * k * reps, 4.0 * n * (k + 1) * reps, groups, 4 * (n * k + k + n))


def _atax(rng, groups: int, ny: int, reps: int) -> Problem:
    return _matvec(rng, groups, ny, reps, "x", "tmp", transposed=False)


def _atax_cost(groups: int, ny: int, reps: int) -> Cost:
    return _matvec_cost(groups, ny, reps)


def _bicg(rng, groups: int, nx: int, reps: int) -> Problem:
    return _matvec(rng, groups, nx, reps, "r", "s", transposed=True)


def _bicg_cost(groups: int, nx: int, reps: int) -> Cost:
    return _matvec_cost(groups, nx, reps)


def _gesummv(rng, groups: int, m: int, reps: int) -> Problem:
    n = groups * 256
    a, b, x = _values(rng, n * m), _values(rng, n * m), uniform(rng, m, -1, 1)

    def ref():
        return {"y": ALPHA * (a.reshape(n, m).astype(np.float64) @ x) + BETA * (b.reshape(n, m).astype(np.float64) @ x)}
    return Problem(groups, ("a", "b", "x", "y", f32(ALPHA), f32(BETA), i32(n), i32(m), i32(reps)),
                   {"a": a, "b": b, "x": x}, {"y": Out(np.float32, n)}, ref, rtol=1e-4, atol=1e-4)


def _gesummv_cost(groups: int, m: int, reps: int) -> Cost:
    n = groups * 256
    return Cost(4.0 * n * m * reps, 4.0 * n * (2 * m + 1) * reps, groups, 4 * (2 * n * m + m + n))


# ---- jacobi-2d, convolution-2d, fdtd-2d: a strip of 256 columns × `rows` rows per group ----------------

STRIP = r"""
  int tiles = (width - 2) / LSIZE;
  int j = 1 + (GROUP % tiles) * LSIZE + LID;
  int i0 = 1 + (GROUP / tiles) * rows;
"""

JACOBI = r"""
KERNEL void polybench_jacobi2d(GLOBAL const float* A, GLOBAL float* B, int width, int rows, int reps) {
""" + STRIP + r"""
  for (int r = 0; r < reps; ++r)
    for (int i = i0; i < i0 + rows; ++i)
      B[i * width + j] = 0.2f * (A[i * width + j] + A[i * width + j - 1] + A[i * width + j + 1]
                                 + A[(i + 1) * width + j] + A[(i - 1) * width + j]);
}
"""

CONV2D = r"""
KERNEL void polybench_conv2d(GLOBAL const float* A, GLOBAL float* B, int width, int rows, int reps) {
""" + STRIP + r"""
  float c11 = +0.2f, c21 = +0.5f, c31 = -0.8f;
  float c12 = -0.3f, c22 = +0.6f, c32 = -0.9f;
  float c13 = +0.4f, c23 = +0.7f, c33 = +0.10f;
  int nj = width;
  for (int r = 0; r < reps; ++r)
    for (int i = i0; i < i0 + rows; ++i)
      B[i * nj + j] = c11 * A[(i - 1) * nj + (j - 1)] + c21 * A[(i - 1) * nj + (j + 0)] + c31 * A[(i - 1) * nj + (j + 1)]
                    + c12 * A[(i + 0) * nj + (j - 1)] + c22 * A[(i + 0) * nj + (j + 0)] + c32 * A[(i + 0) * nj + (j + 1)]
                    + c13 * A[(i + 1) * nj + (j - 1)] + c23 * A[(i + 1) * nj + (j + 0)] + c33 * A[(i + 1) * nj + (j + 1)];
}
"""

FDTD = r"""
KERNEL void polybench_fdtd2d(GLOBAL const float* ex, GLOBAL const float* ey, GLOBAL const float* hz, GLOBAL float* hz_out,
                             int width, int rows, int reps) {
""" + STRIP + r"""
  int ny = width;
  for (int r = 0; r < reps; ++r)
    for (int i = i0 - 1; i < i0 - 1 + rows; ++i)
      hz_out[i * ny + j - 1] = hz[i * ny + j - 1] - 0.7f * (ex[i * (ny + 1) + j] - ex[i * (ny + 1) + j - 1]
                                                            + ey[(i + 1) * ny + j - 1] - ey[i * ny + j - 1]);
}
"""


def _grid(tiles: int, tile_rows: int, rows: int) -> tuple[int, int]:
    return tiles * 256 + 2, tile_rows * rows + 2


def _strip_stencil(rng, tiles: int, tile_rows: int, rows: int, reps: int,
                   inner: Callable[[np.ndarray], np.ndarray]) -> Problem:
    """A kernel that reads grid A and writes B on its inner points from their 3 × 3 neighbourhood (jacobi-2d,
    convolution-2d): ``inner(A)`` is the reference's inner points of B; its border is NaN (the kernel must
    leave it unwritten)."""
    w, h = _grid(tiles, tile_rows, rows)
    a = _values(rng, w * h)

    def ref():
        out = np.full((h, w), np.nan)
        out[1:-1, 1:-1] = inner(a.reshape(h, w).astype(np.float64))
        return {"B": out.reshape(-1)}
    return Problem(tiles * tile_rows, ("A", "B", i32(w), i32(rows), i32(reps)), {"A": a}, {"B": Out(np.float32, w * h)}, ref)


def _jacobi(rng, tiles: int, tile_rows: int, rows: int, reps: int) -> Problem:
    return _strip_stencil(rng, tiles, tile_rows, rows, reps, lambda x: 0.2 * (
        x[1:-1, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:] + x[2:, 1:-1] + x[:-2, 1:-1]))


def _jacobi_cost(tiles: int, tile_rows: int, rows: int, reps: int) -> Cost:
    w, h = _grid(tiles, tile_rows, rows)
    inner = (w - 2) * (h - 2)
    return Cost(5.0 * inner * reps, 8.0 * inner * reps, tiles * tile_rows, 8 * w * h)


#: the kernel's weights c[row offset + 1][col offset + 1]: B[i][j] = Σ c[r][k] A[i + r − 1][j + k − 1]
#: (PolyBench's c11…c33 naming is c{col}{row})
CONV_C = np.array([[0.2, 0.5, -0.8], [-0.3, 0.6, -0.9], [0.4, 0.7, 0.10]])


def _conv2d(rng, tiles: int, tile_rows: int, rows: int, reps: int) -> Problem:
    def inner(x: np.ndarray) -> np.ndarray:
        h, w = x.shape
        return sum(c * x[r:h - 2 + r, k:w - 2 + k] for (r, k), c in np.ndenumerate(CONV_C))
    return _strip_stencil(rng, tiles, tile_rows, rows, reps, inner)


def _conv2d_cost(tiles: int, tile_rows: int, rows: int, reps: int) -> Cost:
    w, h = _grid(tiles, tile_rows, rows)
    inner = (w - 2) * (h - 2)
    return Cost(17.0 * inner * reps, 8.0 * inner * reps, tiles * tile_rows, 8 * w * h)


def _fdtd2d(rng, tiles: int, tile_rows: int, rows: int, reps: int) -> Problem:
    w, h = _grid(tiles, tile_rows, rows)  # hz is (h − 1) × w here: rows 0 … h − 2 updated, columns 0 … w − 3
    ex, ey, hz = _values(rng, h * (w + 1)), _values(rng, (h + 1) * w), _values(rng, h * w)

    def ref():
        e_x, e_y, z = ex.reshape(h, w + 1).astype(np.float64), ey.reshape(h + 1, w), hz.reshape(h, w)
        out = np.full((h, w), np.nan)
        n_i, n_j = h - 2, w - 2
        out[:n_i, :n_j] = z[:n_i, :n_j] - 0.7 * (e_x[:n_i, 1:n_j + 1] - e_x[:n_i, :n_j] + e_y[1:n_i + 1, :n_j] - e_y[:n_i, :n_j])
        return {"hz_out": out.reshape(-1)}
    return Problem(tiles * tile_rows, ("ex", "ey", "hz", "hz_out", i32(w), i32(rows), i32(reps)),
                   {"ex": ex, "ey": ey, "hz": hz}, {"hz_out": Out(np.float32, h * w)}, ref, rtol=1e-5, atol=1e-5)


def _fdtd2d_cost(tiles: int, tile_rows: int, rows: int, reps: int) -> Cost:
    w, h = _grid(tiles, tile_rows, rows)
    inner = (w - 2) * (h - 2)
    return Cost(5.0 * inner * reps, 16.0 * inner * reps, tiles * tile_rows, 4 * (h * (w + 1) + (h + 1) * w + 2 * h * w))


STRIP_DIFF = ("a group updates a strip of 256 columns × `rows` rows of a rectangular grid (the original, one point "
              "per work-item of a square one); `reps` passes recompute one step instead of the host's time loop")

KERNELS: tuple[AppKernel, ...] = (
    AppKernel("polybench_gemm", Origin(PO, "gemm", "gemm"),
              "C accumulated in a register and written to a second buffer (the original updates C in global memory "
              "at every k); 2-D groups of 32 × 8 linearised",
              ("compute", "regular", "warm-up"), GEMM, 256, _gemm, _gemm_cost,
              gpu=dict(ni=16384, nj=16384, nk=7168), tiny=dict(ni=32, nj=128, nk=16)),
    AppKernel("polybench_syrk", Origin(PO, "syrk", "syrk_kernel"),
              "C accumulated in a register and written to a second buffer; 2-D groups of 32 × 8 linearised (the "
              "A[j][k] reads stride by a row per work-item, as in the original)",
              ("compute", "regular", "warm-up"), SYRK, 256, _syrk, _syrk_cost,
              gpu=dict(n=8192, m=1536), tiny=dict(n=128, m=16),
              far_from_bound=("A[j][k] is read with a row's stride between the work-items of a warp (as in the "
                              "original): one sector per work-item per load")),
    AppKernel("polybench_syr2k", Origin(PO, "syr2k", "syr2k_kernel"),
              "C accumulated in a register and written to a second buffer; 2-D groups of 32 × 8 linearised",
              ("compute", "regular", "warm-up"), SYR2K, 256, _syr2k, _syr2k_cost,
              gpu=dict(n=8192, m=768), tiny=dict(n=128, m=16),
              far_from_bound=("A[j][k] and B[j][k] are read with a row's stride between the work-items of a "
                              "warp (as in the original): one sector per work-item per load")),
    AppKernel("polybench_covariance", Origin(PO, "covariance", "covar_kernel"),
              "one group per column j1 with its work-items over j2 ≥ j1 (the original, one work-item per j1, has "
              "too few work-items for a GPU); the mean and centring kernels' work done on the host. The triangle "
              "makes the first groups the heaviest",
              ("imbalanced", "compute", "warm-up"), COVARIANCE, 256, _covariance, _covariance_cost,
              gpu=dict(m=24576, n=640), tiny=dict(m=32, n=64),
              far_from_bound=("each work-item's sum over the rows reads data[i·m + j1], one address per group, "
                              "in a dependent chain")),
    AppKernel("polybench_atax", Origin(PO, "atax", "atax_kernel1"),
              "a tall matrix (rows of `ny`) so that one row per work-item gives many work-groups; the sum kept in a "
              "register; `reps` passes rewrite tmp",
              ("memory", "regular"), ATAX, 256, _atax, _atax_cost,
              gpu=dict(groups=32768, ny=128, reps=75), tiny=dict(groups=8, ny=64, reps=2)),
    AppKernel("polybench_bicg", Origin(PO, "bicg", "bicgKernel2"),
              "a wide matrix (`nx` rows) so that one column per work-item gives many work-groups; the sum kept in "
              "a register; `reps` passes rewrite s",
              ("memory", "regular"), BICG, 256, _bicg, _bicg_cost,
              gpu=dict(groups=32768, nx=128, reps=75), tiny=dict(groups=8, nx=64, reps=2)),
    AppKernel("polybench_gesummv", Origin(PO, "gesummv", "gesummv_kernel"),
              "tall matrices (rows of `m`) so that one row per work-item gives many work-groups; the sums kept in "
              "registers; `reps` passes rewrite y",
              ("memory", "regular"), GESUMMV, 256, _gesummv, _gesummv_cost,
              gpu=dict(groups=32768, m=64, reps=75), tiny=dict(groups=8, m=64, reps=2)),
    AppKernel("polybench_jacobi2d", Origin(PO, "jacobi-2d-imper", "runJacobi2D_kernel1"),
              STRIP_DIFF, ("memory", "regular"), JACOBI, 256, _jacobi, _jacobi_cost,
              gpu=dict(tiles=16, tile_rows=2048, rows=64, reps=75), tiny=dict(tiles=2, tile_rows=8, rows=4, reps=2)),
    AppKernel("polybench_conv2d", Origin(PO, "2DCONV", "Convolution2D_kernel"),
              STRIP_DIFF.replace("recompute one step instead of the host's time loop", "recompute the convolution"),
              ("memory", "regular"), CONV2D, 256, _conv2d, _conv2d_cost,
              gpu=dict(tiles=16, tile_rows=2048, rows=64, reps=75), tiny=dict(tiles=2, tile_rows=8, rows=4, reps=2)),
    AppKernel("polybench_fdtd2d", Origin(PO, "fdtd-2d", "fdtd_kernel3 (hz update)"),
              STRIP_DIFF + "; hz written to a second buffer (the original updates it in place); the ex and ey "
              "kernels not ported", ("memory", "regular"), FDTD, 256, _fdtd2d, _fdtd2d_cost,
              gpu=dict(tiles=16, tile_rows=2048, rows=32, reps=75), tiny=dict(tiles=2, tile_rows=8, rows=4, reps=2)),
)
