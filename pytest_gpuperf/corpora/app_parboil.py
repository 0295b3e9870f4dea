"""Application corpus, Parboil (Stratton et al., 2012; the suite Dao took CP, cutcp, LBM, MRI-Q,
MRI-gridding, SAD and TPACF from, §2.6.1): sgemm, spmv, stencil, histo, tpacf, cutcp, mri-q,
mri-gridding (binning and gridding), lbm and sad, each ported as one OpenCL C kernel (``app_kernel``)."""

from __future__ import annotations

import numpy as np

from .app_kernel import AppKernel, Cost, Origin, Out, Problem, f32, i32, tiled, uniform

PB = "Parboil"


# ---- sgemm ---------------------------------------------------------------------------------------------

SGEMM = r"""
#define SG_TN 16
#define SG_TH 8
#define SG_TM (SG_TN * SG_TH)
KERNEL void parboil_sgemm(GLOBAL const float* A, int lda, GLOBAL const float* B, int ldb, GLOBAL const float* Cin,
                          GLOBAL float* C, int ldc, int k, float alpha, float beta) {
  LOCAL_MEM float b_s[SG_TH][SG_TN];
  float c[SG_TN];
  for (int i = 0; i < SG_TN; ++i) c[i] = 0.0f;
  int lx = LID % SG_TN, ly = LID / SG_TN;
  int mblocks = lda / SG_TM;
  int gx = GROUP % mblocks, gy = GROUP / mblocks;
  int m = gx * SG_TM + LID;
  int n = gy * SG_TN + lx;
  for (int i = 0; i < k; i += SG_TH) {
    b_s[ly][lx] = B[n + (i + ly) * ldb];
    BARRIER;
    for (int j = 0; j < SG_TH; ++j) {
      float a = A[m + (i + j) * lda];
      for (int kk = 0; kk < SG_TN; ++kk) c[kk] += a * b_s[j][kk];
    }
    BARRIER;
  }
  int t = ldc * gy * SG_TN + m;
  for (int i = 0; i < SG_TN; ++i) C[t + i * ldc] = Cin[t + i * ldc] * beta + alpha * c[i];
}
"""


def _sgemm(rng, m: int, n: int, k: int) -> Problem:
    a, b, cin = uniform(rng, k * m, -1, 1), uniform(rng, k * n, -1, 1), uniform(rng, n * m, -1, 1)
    alpha, beta = 1.5, 0.5

    def ref():
        ah, bh = a.reshape(k, m).astype(np.float64), b.reshape(k, n).astype(np.float64)
        return {"C": (beta * cin.reshape(n, m) + alpha * (bh.T @ ah)).reshape(-1)}
    return Problem((m // 128) * (n // 16), ("A", i32(m), "B", i32(n), "Cin", "C", i32(m), i32(k), f32(alpha), f32(beta)),
                   {"A": a, "B": b, "Cin": cin}, {"C": Out(np.float32, n * m)}, ref, rtol=1e-4, atol=1e-4)


def _sgemm_cost(m: int, n: int, k: int) -> Cost:
    return Cost(2.0 * m * n * k + 3.0 * m * n, 4.0 * (m * k + n * k + 2 * m * n), (m // 128) * (n // 16),
                4 * (m * k + n * k + 2 * m * n))


# ---- spmv (JDS) ----------------------------------------------------------------------------------------

SPMV = r"""
KERNEL void parboil_spmv(GLOBAL float* dst, GLOBAL const float* data, GLOBAL const int* index, GLOBAL const int* perm,
                         GLOBAL const float* x, int dim, GLOBAL const int* jds_ptr, GLOBAL const int* zcnt, int reps) {
  int ix = GID;
  if (ix >= dim) return;
  float sum = 0.0f;
  int bound = zcnt[ix / 32];
  for (int r = 0; r < reps; ++r)
    for (int k = 0; k < bound; ++k) {
      int j = jds_ptr[k] + ix;
      sum += data[j] * x[index[j]];
    }
  dst[perm[ix]] = sum;
}
"""


def mesh_lengths(nx: int, ny: int, nz: int, dofs: int) -> np.ndarray:
    """Row lengths of a finite-element matrix on a structured mesh of ``nx × ny × nz`` nodes (``nz = 1``: a
    plane), ``dofs`` unknowns per node, each coupled with every unknown of the nodes of its neighbouring
    elements: the 3×3×3 nodes around it inside the mesh, fewer on its faces, edges and corners (Parboil's
    medium and large spmv datasets, bcsstk18 and Dubcova3, are such finite-element matrices, so their row
    lengths vary little). Longest first, as the JDS format orders the rows."""
    per_axis = []
    for n in (nx, ny, nz):
        c = np.full(n, 3, np.int64)
        c[0] -= 1
        c[-1] -= 1  # a node on the mesh's boundary has one neighbour less along this axis (n = 1: none)
        per_axis.append(np.bincount(c, minlength=4))  # nodes with 0..3 neighbours along the axis
    counts = np.einsum("i,j,k->ijk", *per_axis)  # nodes by their neighbours along x, y and z
    nb = np.einsum("i,j,k->ijk", *(np.arange(4),) * 3)  # their neighbourhood: the product
    order = np.argsort(-nb, axis=None, kind="stable")
    return np.repeat(dofs * nb.reshape(-1)[order], dofs * counts.reshape(-1)[order]).astype(np.int32)


def jds_layout(lens: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(per-32-row slice maximum, jagged-diagonal starts, rows per diagonal) of rows of lengths ``lens``
    (longest first), as Parboil pads every diagonal to whole 32-row slices."""
    zcnt = lens[::32].astype(np.int64)
    kmax = int(zcnt[0])
    per_k = 32 * np.searchsorted(-zcnt, -np.arange(kmax), side="left")  # slices whose maximum exceeds k
    ptr = np.concatenate([[0], np.cumsum(per_k)])
    return zcnt, ptr, per_k


def _mesh_rows(nx: int, ny: int, nz: int, dofs: int) -> int:
    """The matrix's rows, a whole number of 256-row work-groups."""
    rows = nx * ny * nz * dofs
    if rows % 256:
        raise ValueError(f"parboil_spmv: a mesh of {nx}×{ny}×{nz} nodes × {dofs} unknowns has {rows} rows, "
                         "not a whole number of 256-row work-groups")
    return rows


def _spmv(rng, nx: int, ny: int, nz: int, dofs: int, reps: int) -> Problem:
    rows = _mesh_rows(nx, ny, nz, dofs)
    lens = mesh_lengths(nx, ny, nz, dofs)
    zcnt, ptr, per_k = jds_layout(lens)
    total = int(ptr[-1])
    longer = np.searchsorted(-lens, -np.arange(per_k.size), side="left")  # rows longer than k: a prefix
    data, index = np.zeros(total, np.float32), np.zeros(total, np.int32)
    for k, (start, count) in enumerate(zip(ptr[:-1], longer)):  # diagonal by diagonal: padding stays zero
        data[start:start + count] = uniform(rng, count, -1, 1)
        index[start:start + count] = rng.integers(0, rows, count, dtype=np.int32)
    perm = rng.permutation(rows).astype(np.int32)
    x = uniform(rng, rows, -1, 1)

    def ref():
        rs = np.concatenate([np.arange(c) for c in per_k])
        y = np.bincount(rs, weights=data.astype(np.float64) * x[index], minlength=rows) * reps
        out = np.empty(rows)
        out[perm] = y
        return {"dst": out}
    return Problem(rows // 256, ("dst", "data", "index", "perm", "x", i32(rows), "jds_ptr", "zcnt", i32(reps)),
                   {"data": data, "index": index, "perm": perm, "x": x, "jds_ptr": ptr.astype(np.int32),
                    "zcnt": zcnt.astype(np.int32)}, {"dst": Out(np.float32, rows)}, ref, rtol=1e-4, atol=1e-4)


def _spmv_cost(nx: int, ny: int, nz: int, dofs: int, reps: int) -> Cost:
    rows = _mesh_rows(nx, ny, nz, dofs)
    zcnt, ptr, _ = jds_layout(mesh_lengths(nx, ny, nz, dofs))
    total = int(ptr[-1])
    return Cost(2.0 * total * reps, 8.0 * total * reps + 12.0 * rows, rows // 256,
                8 * total + 12 * rows + 4 * ptr.size + 4 * zcnt.size)


# ---- stencil (7-point, 3-D) ----------------------------------------------------------------------------

STENCIL = r"""
KERNEL void parboil_stencil(float c0, float c1, GLOBAL const float* A0, GLOBAL float* Anext, int nx, int ny, int nz,
                            int zchunk, int reps) {
  int tiles = (nx - 2) / LSIZE;
  int g = GROUP;
  int tx = g % tiles; g /= tiles;
  int j = 1 + g % (ny - 2); g /= (ny - 2);
  int z0 = 1 + g * zchunk;
  int i = 1 + tx * LSIZE + LID;
  int sxy = nx * ny;
  for (int r = 0; r < reps; ++r) {
    int c = i + nx * (j + ny * (z0 - 1));
    float below = A0[c], cur = A0[c + sxy];
    for (int k = z0; k < z0 + zchunk; ++k) {
      c += sxy;
      float above = A0[c + sxy];
      Anext[c] = c1 * (above + below + A0[c + nx] + A0[c - nx] + A0[c + 1] + A0[c - 1]) - cur * c0;
      below = cur;
      cur = above;
    }
  }
}
"""


def _stencil(rng, nx: int, ny: int, nz: int, zchunk: int, reps: int) -> Problem:
    a0 = tiled(rng, nx * ny * nz, lambda r, m: uniform(r, m, -1, 1))
    c0, c1 = 1.0 / 6.0, 1.0 / 6.0 / 6.0

    def ref():
        a = a0.reshape(nz, ny, nx).astype(np.float64)
        out = np.full((nz, ny, nx), np.nan)
        out[1:-1, 1:-1, 1:-1] = c1 * (a[2:, 1:-1, 1:-1] + a[:-2, 1:-1, 1:-1] + a[1:-1, 2:, 1:-1] + a[1:-1, :-2, 1:-1]
                                      + a[1:-1, 1:-1, 2:] + a[1:-1, 1:-1, :-2]) - c0 * a[1:-1, 1:-1, 1:-1]
        return {"Anext": out.reshape(-1)}
    groups = (nx - 2) // 128 * (ny - 2) * ((nz - 2) // zchunk)
    return Problem(groups, (f32(c0), f32(c1), "A0", "Anext", i32(nx), i32(ny), i32(nz), i32(zchunk), i32(reps)),
                   {"A0": a0}, {"Anext": Out(np.float32, nx * ny * nz)}, ref)


def _stencil_cost(nx: int, ny: int, nz: int, zchunk: int, reps: int) -> Cost:
    pts, inner = nx * ny * nz, (nx - 2) * (ny - 2) * (nz - 2)
    return Cost(8.0 * inner * reps, 4.0 * (pts + inner) * reps, (nx - 2) // 128 * (ny - 2) * ((nz - 2) // zchunk), 8 * pts)


# ---- histo ---------------------------------------------------------------------------------------------

HISTO = r"""
#define HI_BINS 4096
KERNEL void parboil_histo(GLOBAL const unsigned int* img, GLOBAL unsigned int* histo, int chunk, int reps) {
  LOCAL_MEM unsigned int sub[HI_BINS];
  for (int b = LID; b < HI_BINS; b += LSIZE) sub[b] = 0u;
  BARRIER;
  int base = GROUP * chunk;
  for (int r = 0; r < reps; ++r)
    for (int e = LID; e < chunk; e += LSIZE) atomic_inc(&sub[img[base + e]]);
  BARRIER;
  for (int b = LID; b < HI_BINS; b += LSIZE) {
    unsigned int v = sub[b];
    if (v) atomic_add(&histo[b], v);
  }
}
"""


def _skewed_pixels(rng: np.random.Generator, m: int) -> np.ndarray:
    """Pixel values in [0, 4096): 60 % in a narrow peak around 2048 (a triangular spread of ±64), the rest
    uniform — a peaked image histogram like Parboil's input, with hot bins."""
    peak = 2048 + rng.integers(0, 64, m) + rng.integers(0, 64, m) - 64
    flat = rng.integers(0, 4096, m)
    return np.where(rng.random(m) < 0.6, peak, flat).astype(np.uint32)


def _histo(rng, groups: int, chunk: int, reps: int) -> Problem:
    img = tiled(rng, groups * chunk, _skewed_pixels)

    def ref():
        return {"histo": np.bincount(img, minlength=4096).astype(np.uint64) * reps}
    return Problem(groups, ("img", "histo", i32(chunk), i32(reps)), {"img": img, "histo": np.zeros(4096, np.uint32)},
                   {}, ref, atol=0)


def _histo_cost(groups: int, chunk: int, reps: int) -> Cost:
    n = groups * chunk
    return Cost(1.0 * n * reps, 4.0 * n * reps, groups, 4 * n + 4 * 4096)


# ---- tpacf ---------------------------------------------------------------------------------------------

TPACF = r"""
#define TP_NB 22
#define TP_TILE 128
KERNEL void parboil_tpacf(GLOBAL const float* dx, GLOBAL const float* dy, GLOBAL const float* dz, GLOBAL const float* rx,
                          GLOBAL const float* ry, GLOBAL const float* rz, GLOBAL const float* binb,
                          GLOBAL unsigned int* hists, int nchunks, int jchunk) {
  LOCAL_MEM float sx[TP_TILE];
  LOCAL_MEM float sy[TP_TILE];
  LOCAL_MEM float sz[TP_TILE];
  LOCAL_MEM float sb[TP_NB];
  LOCAL_MEM unsigned int hist[TP_NB];
  int ib = GROUP / nchunks, jc = GROUP % nchunks;
  int i = ib * TP_TILE + LID;
  float xi = dx[i], yi = dy[i], zi = dz[i];
  if (LID < TP_NB) { hist[LID] = 0u; sb[LID] = binb[LID]; }
  BARRIER;
  for (int t = 0; t < jchunk; t += TP_TILE) {
    int j = jc * jchunk + t + LID;
    sx[LID] = rx[j];
    sy[LID] = ry[j];
    sz[LID] = rz[j];
    BARRIER;
    for (int jj = 0; jj < TP_TILE; ++jj) {
      float dot = xi * sx[jj] + yi * sy[jj] + zi * sz[jj];
      int lo = 0, hi = TP_NB - 1;
      while (hi > lo + 1) {
        int k = (lo + hi) / 2;
        if (dot >= sb[k]) hi = k; else lo = k;
      }
      atomic_inc(&hist[hi]);
    }
    BARRIER;
  }
  if (LID < TP_NB) hists[GROUP * TP_NB + LID] = hist[LID];
}
"""


def _unit_vectors(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    v = rng.standard_normal((3, n))
    v /= np.linalg.norm(v, axis=0)
    return [c.astype(np.float32) for c in v]


def tpacf_boundaries() -> np.ndarray:
    """22 descending bin boundaries of cos θ: +2 (above every dot), cos of 20 angles log-spaced from 0.5°
    to 150°, −2 (below every dot)."""
    theta = np.deg2rad(np.geomspace(0.5, 150.0, 20))
    return np.concatenate([[2.0], np.cos(theta), [-2.0]]).astype(np.float32)


def _tpacf(rng, n_i: int, n_j: int, jchunk: int) -> Problem:
    d, r = _unit_vectors(rng, n_i), _unit_vectors(rng, n_j)
    binb = tpacf_boundaries()
    nchunks = n_j // jchunk
    groups = (n_i // 128) * nchunks

    def ref():
        out = np.zeros((groups, 22), np.int64)
        asc = binb[::-1]
        for ib in range(n_i // 128):
            sl = slice(ib * 128, ib * 128 + 128)
            dots = np.outer(d[0][sl], r[0]) + np.outer(d[1][sl], r[1]) + np.outer(d[2][sl], r[2])
            bins = 22 - np.searchsorted(asc, dots.astype(np.float32), side="right")
            for jc in range(nchunks):
                out[ib * nchunks + jc] = np.bincount(bins[:, jc * jchunk:(jc + 1) * jchunk].ravel(), minlength=22)
        return {"hists": out.reshape(-1)}
    return Problem(groups, ("dx", "dy", "dz", "rx", "ry", "rz", "binb", "hists", i32(nchunks), i32(jchunk)),
                   {"dx": d[0], "dy": d[1], "dz": d[2], "rx": r[0], "ry": r[1], "rz": r[2], "binb": binb},
                   {"hists": Out(np.uint32, groups * 22)}, ref, atol=2)


def _tpacf_cost(n_i: int, n_j: int, jchunk: int) -> Cost:
    pairs = float(n_i) * n_j
    # per pair: the dot (5), four or five bisection steps of an add, a shift, a compare and a select
    return Cost(pairs * 21, 12.0 * (n_i + n_j), (n_i // 128) * (n_j // jchunk),
                12 * (n_i + n_j) + 4 * 22 + 4 * 22 * (n_i // 128) * (n_j // jchunk))


# ---- cutcp ---------------------------------------------------------------------------------------------

CUTCP = r"""
#define CC_DEPTH 32
#define CC_NB (27 * CC_DEPTH)
KERNEL void parboil_cutcp(GLOBAL const float* atoms, GLOBAL float* lattice, int ncx, int ncy, int ncz, float h,
                          float cutoff2, float inv_cutoff2) {
  LOCAL_MEM float sa[CC_NB * 4];
  int g = GROUP;
  int cx = g % ncx, cy = (g / ncx) % ncy, cz = g / (ncx * ncy);
  for (int s = LID; s < CC_NB; s += LSIZE) {
    int nb = s / CC_DEPTH, slot = s % CC_DEPTH;
    int ax = cx + nb % 3 - 1, ay = cy + (nb / 3) % 3 - 1, az = cz + nb / 9 - 1;
    int ok = ax >= 0 && ax < ncx && ay >= 0 && ay < ncy && az >= 0 && az < ncz;
    int src = ok ? ((az * ncy + ay) * ncx + ax) * CC_DEPTH + slot : 0;
    sa[4 * s + 0] = atoms[4 * src + 0];
    sa[4 * s + 1] = atoms[4 * src + 1];
    sa[4 * s + 2] = atoms[4 * src + 2];
    sa[4 * s + 3] = ok ? atoms[4 * src + 3] : 0.0f;
  }
  BARRIER;
  int lx = LID % 8, ly = (LID / 8) % 8, lz = (LID / 64) * 4;
  int X = cx * 8 + lx, Y = cy * 8 + ly, Z = cz * 8 + lz;
  float px = X * h, py = Y * h, pz = Z * h;
  float e0 = 0.0f, e1 = 0.0f, e2 = 0.0f, e3 = 0.0f;
  for (int s = 0; s < CC_NB; ++s) {
    float q = sa[4 * s + 3];
    float dx = px - sa[4 * s], dy = py - sa[4 * s + 1], dz = pz - sa[4 * s + 2];
    float dxy2 = dx * dx + dy * dy;
    float r2 = dxy2 + dz * dz;
    if (r2 < cutoff2 && r2 > 0.0f) { float t = 1.0f - r2 * inv_cutoff2; e0 += q * t * t * rsqrt(r2); }
    dz += h; r2 = dxy2 + dz * dz;
    if (r2 < cutoff2 && r2 > 0.0f) { float t = 1.0f - r2 * inv_cutoff2; e1 += q * t * t * rsqrt(r2); }
    dz += h; r2 = dxy2 + dz * dz;
    if (r2 < cutoff2 && r2 > 0.0f) { float t = 1.0f - r2 * inv_cutoff2; e2 += q * t * t * rsqrt(r2); }
    dz += h; r2 = dxy2 + dz * dz;
    if (r2 < cutoff2 && r2 > 0.0f) { float t = 1.0f - r2 * inv_cutoff2; e3 += q * t * t * rsqrt(r2); }
  }
  int NX = ncx * 8, NY = ncy * 8;
  int p = (Z * NY + Y) * NX + X;
  lattice[p] = e0;
  lattice[p + NX * NY] = e1;
  lattice[p + 2 * NX * NY] = e2;
  lattice[p + 3 * NX * NY] = e3;
}
"""

CC_H, CC_CUTOFF = 0.5, 4.0  # lattice spacing and cutoff (Å): a cell of 8 × 8 × 8 points is one cutoff wide


def _cutcp(rng, ncx: int, ncy: int, ncz: int) -> Problem:
    cells = ncx * ncy * ncz
    cell_idx = np.repeat(np.arange(cells), 32)
    cxyz = np.stack([cell_idx % ncx, (cell_idx // ncx) % ncy, cell_idx // (ncx * ncy)], axis=1)
    pos = (cxyz + rng.random((cells * 32, 3))) * CC_CUTOFF
    q = np.where(rng.random(cells * 32) < 0.75, rng.uniform(-1, 1, cells * 32), 0.0)  # a quarter of the slots empty
    atoms = np.concatenate([pos, q[:, None]], axis=1).astype(np.float32).reshape(-1)
    nx, ny, nz = ncx * 8, ncy * 8, ncz * 8

    def ref():
        a = atoms.reshape(-1, 4).astype(np.float64)
        a = a[a[:, 3] != 0]
        zz, yy, xx = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
        pts = np.stack([xx.ravel(), yy.ravel(), zz.ravel()], axis=1) * CC_H
        out = np.zeros(len(pts))
        for s in range(0, len(pts), 2048):
            d = pts[s:s + 2048, None, :] - a[None, :, :3]
            r2 = (d * d).sum(axis=2)
            inside = (r2 < CC_CUTOFF ** 2) & (r2 > 0)
            t = 1.0 - np.where(inside, r2, 0) / CC_CUTOFF ** 2
            out[s:s + 2048] = np.where(inside, a[None, :, 3] * t * t / np.sqrt(np.where(inside, r2, 1)), 0).sum(axis=1)
        return {"lattice": out}
    return Problem(cells, ("atoms", "lattice", i32(ncx), i32(ncy), i32(ncz), f32(CC_H), f32(CC_CUTOFF ** 2),
                           f32(1 / CC_CUTOFF ** 2)),
                   {"atoms": atoms}, {"lattice": Out(np.float32, nx * ny * nz)}, ref, rtol=1e-3, atol=1e-3)


def _cutcp_cost(ncx: int, ncy: int, ncz: int) -> Cost:
    cells = ncx * ncy * ncz
    pairs = cells * 512.0 * 27 * 32
    inside = 4.0 / 3.0 * np.pi * 8 ** 3 / (24 ** 3)  # share of the 27 cells' volume within the cutoff
    # per pair: the z step, r², two compares (4); inside the cutoff 7 more; per atom and thread of 4 points 5
    return Cost(pairs * (4 + 7 * inside + 5 / 4), 4.0 * cells * (512 + 128), cells, 4 * cells * (512 + 128))


# ---- mri-q ---------------------------------------------------------------------------------------------

MRIQ = r"""
KERNEL void parboil_mriq(int numK, GLOBAL const float* kx, GLOBAL const float* ky, GLOBAL const float* kz,
                         GLOBAL const float* phiMag, GLOBAL const float* x, GLOBAL const float* y,
                         GLOBAL const float* z, GLOBAL float* Qr, GLOBAL float* Qi) {
  int t = GID;
  float sx = x[t], sy = y[t], sz = z[t], qr = 0.0f, qi = 0.0f;
  for (int k = 0; k < numK; ++k) {
    float arg = 6.2831853071795864769f * (kx[k] * sx + ky[k] * sy + kz[k] * sz);
    qr += phiMag[k] * cosf(arg);
    qi += phiMag[k] * sinf(arg);
  }
  Qr[t] = qr;
  Qi[t] = qi;
}
"""


def _mriq(rng, groups: int, numk: int) -> Problem:
    nx = groups * 256
    k = [uniform(rng, numk, -1, 1) for _ in range(3)]
    phi = uniform(rng, numk)
    x = [tiled(rng, nx, lambda r, m: uniform(r, m, -0.5, 0.5)) for _ in range(3)]

    def ref():
        qr, qi = np.zeros(nx), np.zeros(nx)
        for s in range(0, nx, 4096):
            arg = 2 * np.pi * (np.outer(x[0][s:s + 4096], k[0]) + np.outer(x[1][s:s + 4096], k[1])
                               + np.outer(x[2][s:s + 4096], k[2]))
            qr[s:s + 4096] = np.cos(arg) @ phi
            qi[s:s + 4096] = np.sin(arg) @ phi
        return {"Qr": qr, "Qi": qi}
    return Problem(groups, (i32(numk), "kx", "ky", "kz", "phiMag", "x", "y", "z", "Qr", "Qi"),
                   {"kx": k[0], "ky": k[1], "kz": k[2], "phiMag": phi, "x": x[0], "y": x[1], "z": x[2]},
                   {"Qr": Out(np.float32, nx), "Qi": Out(np.float32, nx)}, ref, rtol=1e-3, atol=2e-3)


def _mriq_cost(groups: int, numk: int) -> Cost:
    nx = groups * 256
    # per (voxel, sample): the argument (6), two products and sums (4), sin and cos at 10 each (range
    # reduction and a polynomial are more than that on every device here)
    return Cost(float(nx) * numk * 30, 4.0 * (5 * nx + 4 * numk), groups, 4 * (5 * nx + 4 * numk))


# ---- mri-gridding: binning and gridding ----------------------------------------------------------------

BINNING = r"""
KERNEL void parboil_binning(GLOBAL const float* sample, GLOBAL unsigned int* key, GLOBAL unsigned int* value,
                            GLOBAL unsigned int* binCount, int grid, int per_group, int reps) {
  int base = GROUP * per_group;
  for (int r = 0; r < reps; ++r)
    for (int e = LID; e < per_group; e += LSIZE) {
      int s = base + e;
      float kx = sample[6 * s + 2], ky = sample[6 * s + 3], kz = sample[6 * s + 4];
      unsigned int bin = (unsigned int)kz * grid * grid + (unsigned int)ky * grid + (unsigned int)kx;
      atomic_inc(&binCount[bin]);
      key[s] = bin;
      value[s] = s;
    }
}
"""


def kspace_samples(rng: np.random.Generator, n: int, grid: int, margin: float, power: float = 2.0) -> np.ndarray:
    """``n`` MRI samples (real, imag, kX, kY, kZ, sdc) in grid units, dense at the centre of k-space as
    MRI trajectories are: radius ``(grid/2 − margin)·u^power`` in a uniformly random direction, so the
    density falls as ``r^(1/power − 3)`` (``power`` 2: r^-2.5, more peaked than a radial trajectory's
    r^-2; 0.4: r^-0.5; 1/3 would be uniform)."""
    z = uniform(rng, n, -1, 1)
    phi = uniform(rng, n, 0, 2 * np.pi)
    rxy = np.sqrt(np.maximum(0, 1 - z * z))
    radius = np.float32(grid / 2 - margin) * uniform(rng, n) ** np.float32(power)
    out = np.empty((n, 6), np.float32)
    out[:, 0] = uniform(rng, n, -1, 1)
    out[:, 1] = uniform(rng, n, -1, 1)
    for c, d in ((2, rxy * np.cos(phi)), (3, rxy * np.sin(phi)), (4, z)):
        out[:, c] = np.clip(grid / 2 + d * radius, 0, grid - 1e-3)
    out[:, 5] = 1.0
    return out


def _binning(rng, groups: int, per_group: int, grid: int, reps: int) -> Problem:
    n = groups * per_group
    s = tiled(rng, 6 * n, lambda r, m: kspace_samples(r, m // 6, grid, 0.0).reshape(-1), block=6 << 20)

    def ref():
        k = s.reshape(-1, 6)[:, 2:5].astype(np.uint32)
        bins = (k[:, 2] * grid * grid + k[:, 1] * grid + k[:, 0]).astype(np.uint32)
        return {"key": bins, "value": np.arange(n, dtype=np.uint32),
                "binCount": np.bincount(bins, minlength=grid ** 3).astype(np.uint64) * reps}
    return Problem(groups, ("sample", "key", "value", "binCount", i32(grid), i32(per_group), i32(reps)),
                   {"sample": s, "binCount": np.zeros(grid ** 3, np.uint32)},
                   {"key": Out(np.uint32, n), "value": Out(np.uint32, n)}, ref, atol=0)


def _binning_cost(groups: int, per_group: int, grid: int, reps: int) -> Cost:
    n = groups * per_group
    return Cost(6.0 * n * reps, 20.0 * n * reps, groups, 32 * n + 4 * grid ** 3)


GRIDDING = r"""
KERNEL void parboil_gridding(GLOBAL const float* sample, GLOBAL const int* binStart, GLOBAL const float* lut,
                             float lut_scale, GLOBAL float* gridR, GLOBAL float* gridI, int G, float cutoff2, int reps) {
  int t = GID;
  int X = t % G, Y = (t / G) % G, Z = t / (G * G);
  int nb = G / 2;
  int bx = X / 2, by = Y / 2, bz = Z / 2;
  float px = (float)X, py = (float)Y, pz = (float)Z;
  float re = 0.0f, im = 0.0f;
  for (int r = 0; r < reps; ++r)
    for (int cz = bz - 1; cz <= bz + 1; ++cz) {
      if (cz < 0 || cz >= nb) continue;
      for (int cy = by - 1; cy <= by + 1; ++cy) {
        if (cy < 0 || cy >= nb) continue;
        for (int cx = bx - 1; cx <= bx + 1; ++cx) {
          if (cx < 0 || cx >= nb) continue;
          int b = (cz * nb + cy) * nb + cx;
          for (int s = binStart[b]; s < binStart[b + 1]; ++s) {
            float dx = px - sample[6 * s + 2], dy = py - sample[6 * s + 3], dz = pz - sample[6 * s + 4];
            float r2 = dx * dx + dy * dy + dz * dz;
            if (r2 < cutoff2) {
              float u = r2 * lut_scale;
              int i = (int)u;
              float w = lut[i] + (u - (float)i) * (lut[i + 1] - lut[i]);
              re += w * sample[6 * s];
              im += w * sample[6 * s + 1];
            }
          }
        }
      }
    }
  gridR[t] = re;
  gridI[t] = im;
}
"""

GR_LUT = 256  # Kaiser–Bessel window table entries over r² ∈ [0, cutoff²]
#: How peaked gridding's samples are (``kspace_samples``' power: density ∝ r^-0.5). Each work-item loops
#: over every sample of its 27 neighbouring bins, so the centre's grid points run the longest serial loops:
#: at the GPU size, binning's power 2 would give the central points over 10⁴ times the mean point's
#: samples — one work-item's loop far longer than the whole run is sized for — while 0.4 gives about 12×.
GR_POWER = 0.4


def kaiser_bessel_lut(beta: float = 13.9) -> np.ndarray:
    """The gridding window I0(β·sqrt(1 − r²/c²)) / I0(β) at GR_LUT + 1 evenly spaced r²/c²."""
    u = np.arange(GR_LUT + 1) / GR_LUT
    return (np.i0(beta * np.sqrt(np.clip(1 - u, 0, 1))) / np.i0(beta)).astype(np.float32)


def _gridding(rng, grid: int, samples: int, reps: int) -> Problem:
    s = kspace_samples(rng, samples, grid, 4.0, GR_POWER)
    nb = grid // 2
    b = (s[:, 2:5] * 0.5).astype(np.int32)
    bins = (b[:, 2] * nb + b[:, 1]) * nb + b[:, 0]
    order = np.argsort(bins)
    s, bins = s[order], bins[order]
    start = np.searchsorted(bins, np.arange(nb ** 3 + 1)).astype(np.int32)
    lut = kaiser_bessel_lut()
    cutoff2 = 4.0
    pts = grid ** 3

    def ref():
        zz, yy, xx = np.meshgrid(np.arange(grid), np.arange(grid), np.arange(grid), indexing="ij")
        p = np.stack([xx.ravel(), yy.ravel(), zz.ravel()], axis=1).astype(np.float64)
        k = s[:, 2:5].astype(np.float64)
        re, im = np.zeros(pts), np.zeros(pts)
        for c in range(0, pts, 1024):
            d = p[c:c + 1024, None, :] - k[None, :, :]
            r2 = (d * d).sum(axis=2)
            u = np.where(r2 < cutoff2, r2, 0) * (GR_LUT / cutoff2)
            i = np.minimum(u.astype(np.int64), GR_LUT - 1)
            w = np.where(r2 < cutoff2, lut[i] + (u - i) * (lut[i + 1].astype(np.float64) - lut[i]), 0)
            re[c:c + 1024], im[c:c + 1024] = w @ s[:, 0], w @ s[:, 1]
        return {"gridR": re * reps, "gridI": im * reps}
    return Problem(pts // 256, ("sample", "binStart", "lut", f32(GR_LUT / cutoff2), "gridR", "gridI", i32(grid),
                                f32(cutoff2), i32(reps)),
                   {"sample": s.reshape(-1), "binStart": start, "lut": lut},
                   {"gridR": Out(np.float32, pts), "gridI": Out(np.float32, pts)}, ref, rtol=1e-3, atol=1e-3)


def _gridding_cost(grid: int, samples: int, reps: int) -> Cost:
    # every sample lies ≥ 2 bins inside the grid, so 6³ = 216 grid points visit it; 8 operations per
    # visit, 7 more for the 15.5 % within the cutoff (the window's interpolation and two sums)
    visits = 216.0 * samples * reps
    inside = 4.0 / 3.0 * np.pi * 8 / 216
    pts = grid ** 3
    return Cost(visits * (8 + 7 * inside), 24.0 * samples + 8.0 * pts, pts // 256,
                24 * samples + 4 * ((grid // 2) ** 3 + 1) + 4 * (GR_LUT + 1) + 8 * pts)


# ---- lbm -----------------------------------------------------------------------------------------------

LBM = r"""
#define LB_Q 19
KERNEL void parboil_lbm(GLOBAL const float* src, GLOBAL float* dst, GLOBAL const int* flags, int nx, int ny, int nz,
                        int zcells, float omega, int reps) {
  const int cx[LB_Q] = {0, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 1, -1, 1, -1, 0, 0, 0, 0};
  const int cy[LB_Q] = {0, 0, 0, 1, -1, 0, 0, 1, 1, -1, -1, 0, 0, 0, 0, 1, -1, 1, -1};
  const int cz[LB_Q] = {0, 0, 0, 0, 0, 1, -1, 0, 0, 0, 0, 1, 1, -1, -1, 1, 1, -1, -1};
  const int op[LB_Q] = {0, 2, 1, 4, 3, 6, 5, 10, 9, 8, 7, 14, 13, 12, 11, 18, 17, 16, 15};
  int px = nx + 2, sxy = (nx + 2) * (ny + 2), cells = sxy * (nz + 2);
  int tiles = nx / LSIZE;
  int g = GROUP;
  int x = 1 + (g % tiles) * LSIZE + LID; g /= tiles;
  int y = 1 + g % ny; g /= ny;
  int z0 = 1 + g * zcells;
  for (int r = 0; r < reps; ++r)
    for (int z = z0; z < z0 + zcells; ++z) {
      int c = x + px * y + sxy * z;
      float f[LB_Q];
#pragma unroll
      for (int i = 0; i < LB_Q; ++i) f[i] = src[i * cells + c - cx[i] - px * cy[i] - sxy * cz[i]];
      if (flags[c]) {
#pragma unroll
        for (int i = 0; i < LB_Q; ++i) dst[i * cells + c] = f[op[i]];
      } else {
        float rho = 0.0f, ux = 0.0f, uy = 0.0f, uz = 0.0f;
#pragma unroll
        for (int i = 0; i < LB_Q; ++i) { rho += f[i]; ux += cx[i] * f[i]; uy += cy[i] * f[i]; uz += cz[i] * f[i]; }
        ux /= rho; uy /= rho; uz /= rho;
        float u2 = 1.5f * (ux * ux + uy * uy + uz * uz);
#pragma unroll
        for (int i = 0; i < LB_Q; ++i) {
          float w = i == 0 ? 1.0f / 3.0f : (i < 7 ? 1.0f / 18.0f : 1.0f / 36.0f);
          float cu = cx[i] * ux + cy[i] * uy + cz[i] * uz;
          float feq = w * rho * (1.0f + 3.0f * cu + 4.5f * cu * cu - u2);
          dst[i * cells + c] = f[i] + omega * (feq - f[i]);
        }
      }
    }
}
"""

LB_C = np.array([[0, 0, 0], [1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1], [1, 1, 0], [-1, 1, 0],
                 [1, -1, 0], [-1, -1, 0], [1, 0, 1], [-1, 0, 1], [1, 0, -1], [-1, 0, -1], [0, 1, 1], [0, -1, 1],
                 [0, 1, -1], [0, -1, -1]])
LB_W = np.array([1 / 3] + [1 / 18] * 6 + [1 / 36] * 12)
LB_OP = [0, 2, 1, 4, 3, 6, 5, 10, 9, 8, 7, 14, 13, 12, 11, 18, 17, 16, 15]


def _lbm(rng, nx: int, ny: int, nz: int, zcells: int, reps: int) -> Problem:
    shape = (nz + 2, ny + 2, nx + 2)
    cells = int(np.prod(shape))
    src = tiled(rng, 19 * cells, lambda r, m: uniform(r, m, 0.9, 1.1)).reshape(19, cells)
    src *= LB_W.astype(np.float32)[:, None]
    flags = (tiled(rng, cells, lambda r, m: r.random(m, dtype=np.float32)) < 0.1).astype(np.int32)
    omega = 1.2

    def ref():
        f3 = src.astype(np.float64).reshape(19, *shape)
        inner = (slice(1, -1),) * 3
        f = np.stack([f3[i][1 - c[2]:shape[0] - 1 - c[2], 1 - c[1]:shape[1] - 1 - c[1], 1 - c[0]:shape[2] - 1 - c[0]]
                      for i, c in enumerate(LB_C)])
        rho = f.sum(axis=0)
        u = np.tensordot(LB_C.T.astype(np.float64), f, axes=1) / rho
        cu = np.tensordot(LB_C.astype(np.float64), u, axes=1)
        feq = LB_W[:, None, None, None] * rho * (1 + 3 * cu + 4.5 * cu ** 2 - 1.5 * (u ** 2).sum(axis=0))
        new = np.where(flags.reshape(shape)[inner][None] != 0, f[LB_OP], f + omega * (feq - f))
        out = np.full((19, *shape), np.nan)
        out[(slice(None),) + inner] = new
        return {"dst": out.reshape(-1)}
    groups = nx // 128 * ny * (nz // zcells)
    return Problem(groups, ("src", "dst", "flags", i32(nx), i32(ny), i32(nz), i32(zcells), f32(omega), i32(reps)),
                   {"src": src.reshape(-1), "flags": flags}, {"dst": Out(np.float32, 19 * cells)}, ref,
                   rtol=1e-4, atol=1e-6)


def _lbm_cost(nx: int, ny: int, nz: int, zcells: int, reps: int) -> Cost:
    inner, cells = nx * ny * nz, (nx + 2) * (ny + 2) * (nz + 2)
    # per fluid cell: the moments (76), three divisions, u² (6), 19 equilibria and relaxations of 11
    return Cost(inner * reps * 290.0, inner * reps * 156.0, nx // 128 * ny * (nz // zcells), 4 * cells * (2 * 19 + 1))


# ---- sad -----------------------------------------------------------------------------------------------

SAD = r"""
#define SD_R 16
KERNEL void parboil_sad(GLOBAL const unsigned short* cur, GLOBAL const unsigned short* ref, GLOBAL unsigned int* best,
                        GLOBAL int* bestpos, int width, int height, int reps) {
  int blocks_x = width / 4;
  int b = GID;
  int bx = (b % blocks_x) * 4, by = (b / blocks_x) * 4;
  for (int r = 0; r < reps; ++r) {
    unsigned int bsad = 0xffffffffu;
    int bpos = 0;
    for (int dy = -SD_R; dy <= SD_R; ++dy)
      for (int dx = -SD_R; dx <= SD_R; ++dx) {
        unsigned int sad = 0u;
        for (int y = 0; y < 4; ++y) {
          int ry = min(max(by + y + dy, 0), height - 1);
          for (int x = 0; x < 4; ++x) {
            int rx = min(max(bx + x + dx, 0), width - 1);
            int d = (int)cur[(by + y) * width + bx + x] - (int)ref[ry * width + rx];
            sad += (unsigned int)(d < 0 ? -d : d);
          }
        }
        if (sad < bsad) { bsad = sad; bpos = (dy + SD_R) * (2 * SD_R + 1) + dx + SD_R; }
      }
    best[b] = bsad;
    bestpos[b] = bpos;
  }
}
"""


def _frames(rng: np.random.Generator, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """A smooth random frame and the next one: the same scene shifted by a few pixels, plus noise."""
    base = rng.integers(0, 4096, (height // 8 + 2, width // 8 + 2)).astype(np.uint16)
    img = np.repeat(np.repeat(base, 8, axis=0), 8, axis=1)[:height + 8, :width + 8]
    noise = tiled(rng, 2 * height * width, lambda r, m: r.integers(0, 16, m, dtype=np.uint16)).reshape(2, height, width)
    cur = img[4:4 + height, 4:4 + width] + noise[0]
    ref = img[1:1 + height, 6:6 + width] + noise[1]
    return cur.reshape(-1), ref.reshape(-1)


def _sad(rng, width: int, height: int, reps: int) -> Problem:
    cur, ref_ = _frames(rng, width, height)
    nblocks = width * height // 16

    def ref():
        c = cur.reshape(height, width).astype(np.int64)
        pad = np.pad(ref_.reshape(height, width).astype(np.int64), 16, mode="edge")
        cb = c.reshape(height // 4, 4, width // 4, 4).transpose(0, 2, 1, 3)
        sads = []
        for dy in range(-16, 17):
            for dx in range(-16, 17):
                win = pad[16 + dy:16 + dy + height, 16 + dx:16 + dx + width]
                wb = win.reshape(height // 4, 4, width // 4, 4).transpose(0, 2, 1, 3)
                sads.append(np.abs(cb - wb).sum(axis=(2, 3)).reshape(-1))
        sads = np.stack(sads)
        return {"best": sads.min(axis=0), "bestpos": sads.argmin(axis=0)}
    return Problem(nblocks // 64, ("cur", "ref", "best", "bestpos", i32(width), i32(height), i32(reps)),
                   {"cur": cur, "ref": ref_}, {"best": Out(np.uint32, nblocks), "bestpos": Out(np.int32, nblocks)},
                   ref, atol=0)


def _sad_cost(width: int, height: int, reps: int) -> Cost:
    nblocks = width * height // 16
    # per block and position: 16 × (two clamps, a subtraction, an absolute value, a sum) and the minimum
    return Cost(nblocks * reps * 1089.0 * (16 * 5 + 3), 4.0 * width * height + 8.0 * nblocks, nblocks // 64,
                4 * width * height + 8 * nblocks)


KERNELS: tuple[AppKernel, ...] = (
    AppKernel("parboil_sgemm", Origin(PB, "sgemm", "mysgemmNT (register-tiled, opencl_nvidia)"),
              "the 2-D NDRange of 16×8 work-items is linearised into 1-D groups of 128; C is read from one buffer "
              "and written to another (the original updates it in place); inputs generated",
              ("compute", "local", "regular", "warm-up"), SGEMM, 128, _sgemm, _sgemm_cost,
              gpu=dict(m=16384, n=16384, k=12288), tiny=dict(m=512, n=64, k=24)),
    AppKernel("parboil_spmv", Origin(PB, "spmv", "spmv_jds"),
              "the matrix of a generated finite-element mesh instead of Parboil's files, whose medium and large "
              "matrices (bcsstk18, Dubcova3) are finite-element ones (a 3-D mesh of three unknowns per node at the "
              "GPU size, as in a structural stiffness matrix; a plane of one unknown per node at the tiny size): a "
              "row couples its node's unknowns with those of the 3×3×3 (3×3) nodes around it, fewer on the mesh's "
              "boundary, so the row lengths vary little, as in Parboil's datasets; the columns drawn at random (a "
              "mesh's lie near the diagonal) and the rows in random order; the row pointer and slice counts read "
              "from global instead of constant memory; `reps` passes accumulate into the sum. Not `imbalanced`: "
              "the JDS order still puts the longest rows first, but they are the mesh's interior, within 3 % of "
              "the mean row",
              ("memory", "irregular", "warm-up"), SPMV, 256, _spmv, _spmv_cost,
              gpu=dict(nx=128, ny=128, nz=135, dofs=3, reps=24), tiny=dict(nx=64, ny=52, nz=1, dofs=1, reps=2),
              far_from_bound=("each non-zero gathers x through a random column index, loads that run far below "
                              "DRAM bandwidth")),
    AppKernel("parboil_stencil", Origin(PB, "stencil", "block2D_reg_tiling (7-point, coarsened along z)"),
              "each work-item walks a chunk of z (not the whole column) so that there are many groups; the "
              "original's time steps ping-pong two grids from the host, here `reps` passes recompute one step",
              ("memory", "regular"), STENCIL, 128, _stencil, _stencil_cost,
              gpu=dict(nx=1026, ny=1026, nz=514, zchunk=64, reps=80), tiny=dict(nx=130, ny=6, nz=10, zchunk=4, reps=2)),
    AppKernel("parboil_histo", Origin(PB, "histo", "histo_main_kernel (with histo_final folded in)"),
              "one kernel instead of the original's four: a local-memory sub-histogram per group merged into the "
              "global one with atomics, 32-bit counts without the 8-bit saturation; a generated peaked image; "
              "`reps` passes over each group's chunk",
              ("atomics", "local", "memory"), HISTO, 256, _histo, _histo_cost,
              gpu=dict(groups=32768, chunk=32768, reps=80), tiny=dict(groups=16, chunk=2048, reps=2)),
    AppKernel("parboil_tpacf", Origin(PB, "tpacf", "gen_hists"),
              "one correlation (data × random) per launch, a group per 128 points × one chunk of the other set, "
              "per-group histograms written out (summed on the host, as the original's per-block histograms are); "
              "points generated uniformly on the sphere, 21 bins from 0.5° to 150°",
              ("compute", "local", "atomics", "warm-up"), TPACF, 128, _tpacf, _tpacf_cost,
              gpu=dict(n_i=1 << 19, n_j=1 << 19, jchunk=4096), tiny=dict(n_i=256, n_j=512, jchunk=128)),
    AppKernel("parboil_cutcp", Origin(PB, "cutcp", "cuda_cutoff_potential_lattice6overlap (CUDA version)"),
              "one group per cell of 8×8×8 lattice points staging the 27 neighbour cells' atoms (32 slots per "
              "cell, a quarter empty) in local memory; each work-item computes 4 points along z; generated atoms",
              ("compute", "local", "regular", "warm-up"), CUTCP, 128, _cutcp, _cutcp_cost,
              gpu=dict(ncx=128, ncy=128, ncz=120), tiny=dict(ncx=3, ncy=3, ncz=2)),
    AppKernel("parboil_mriq", Origin(PB, "mri-q", "ComputeQ_GPU"),
              "all k-space samples in one launch from global memory (the original streams chunks through "
              "constant memory); phiMag given (ComputePhiMag not ported); generated trajectory and voxels",
              ("compute", "regular", "warm-up"), MRIQ, 256, _mriq, _mriq_cost,
              gpu=dict(groups=32768, numk=24576), tiny=dict(groups=8, numk=512)),
    AppKernel("parboil_binning", Origin(PB, "mri-gridding", "binning_kernel"),
              "no bin capacity (the original undoes an increment past a bin's size, which repeated timed launches "
              "would make the only path); each group bins a chunk of samples `reps` times; generated samples "
              "dense at the centre of k-space",
              ("atomics", "memory"), BINNING, 256, _binning, _binning_cost,
              gpu=dict(groups=32768, per_group=4096, grid=128, reps=120), tiny=dict(groups=16, per_group=512, grid=16, reps=2),
              scatters=True),
    AppKernel("parboil_gridding", Origin(PB, "mri-gridding", "gridding_GPU"),
              "one work-item per output point gathering the samples of the 27 neighbouring bins (bins of 2 grid "
              "points, window radius 2), the Kaiser–Bessel table interpolated linearly; the samples sorted by bin "
              "on the host (the original's sort and reorder kernels not ported); generated samples whose density "
              "falls as r^-0.5 from the centre of k-space (a radial trajectory's r^-2 would leave the central "
              "points' work-items looping over most samples); `reps` passes accumulate",
              ("irregular", "imbalanced", "warm-up"), GRIDDING, 256, _gridding, _gridding_cost,
              gpu=dict(grid=256, samples=1 << 25, reps=12), tiny=dict(grid=16, samples=1000, reps=2),
              far_from_bound=("each work-item gathers every sample of its 27 neighbouring bins, data-dependent "
                              "loads of a peaked density")),
    AppKernel("parboil_lbm", Origin(PB, "lbm", "performStreamCollide_kernel (D3Q19 BGK)"),
              "pull instead of push streaming (each cell reads its upstream neighbours and writes itself), "
              "random obstacle cells bouncing back instead of the channel geometry, no accelerated cells; each "
              "work-item does 4 cells along z; `reps` passes recompute one step",
              ("memory", "regular"), LBM, 128, _lbm, _lbm_cost,
              gpu=dict(nx=256, ny=256, nz=288, zcells=4, reps=110), tiny=dict(nx=128, ny=4, nz=8, zcells=4, reps=2)),
    AppKernel("parboil_sad", Origin(PB, "sad", "mb_sad_calc"),
              "one work-item per 4×4 block searching ±16 pixels for the least SAD (the original writes every "
              "position's SAD of every block size, which calc_8/calc_16 then combine); generated frames; `reps` "
              "repeated searches",
              ("compute", "regular"), SAD, 64, _sad, _sad_cost,
              gpu=dict(width=16384, height=8192, reps=8), tiny=dict(width=256, height=32, reps=2)),
)
