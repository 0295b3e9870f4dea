"""Application corpus, Rodinia (Che et al., 2009; the maintained successor of the suites' application
kernels, used by Dao's ch. 3): hotspot, srad, nw, pathfinder, lud, kmeans, backprop, bfs, gaussian, nn and
particlefilter, each ported as one OpenCL C kernel (``app_kernel``)."""

from __future__ import annotations

import numpy as np

from .app_kernel import (AppKernel, Cost, Origin, Out, Problem, binomial_pmf, f32, i32, quantile_lengths,
                         quantile_total, tiled, uniform)
from .srad_reference import srad_coefficients

RD = "Rodinia"


def _values(rng, n, lo=0.0, hi=1.0):
    return tiled(rng, n, lambda r, m: uniform(r, m, lo, hi))


# ---- hotspot -------------------------------------------------------------------------------------------

HOTSPOT = r"""
KERNEL void rodinia_hotspot(GLOBAL const float* power, GLOBAL const float* temp, GLOBAL float* dst, int cols, int rows,
                            int rows_per_group, float step_div_cap, float Rx_1, float Ry_1, float Rz_1, float amb,
                            int reps) {
  int tiles = cols / LSIZE;
  int x = (GROUP % tiles) * LSIZE + LID;
  int y0 = (GROUP / tiles) * rows_per_group;
  int xw = max(x - 1, 0), xe = min(x + 1, cols - 1);
  for (int r = 0; r < reps; ++r) {
    float n = temp[max(y0 - 1, 0) * cols + x], c = temp[y0 * cols + x];
    for (int y = y0; y < y0 + rows_per_group; ++y) {
      float s = temp[min(y + 1, rows - 1) * cols + x];
      int i = y * cols + x;
      dst[i] = c + step_div_cap * (power[i] + (s + n - 2.0f * c) * Ry_1
                                   + (temp[y * cols + xe] + temp[y * cols + xw] - 2.0f * c) * Rx_1 + (amb - c) * Rz_1);
      n = c;
      c = s;
    }
  }
}
"""

HS_CONST = dict(step_div_cap=0.35, Rx_1=0.25, Ry_1=0.3, Rz_1=0.01, amb=80.0)


def _hotspot(rng, tiles: int, tile_rows: int, rows_per_group: int, reps: int) -> Problem:
    cols, rows = tiles * 256, tile_rows * rows_per_group
    power, temp = _values(rng, cols * rows, 0, 1), _values(rng, cols * rows, 320, 340)
    k = HS_CONST

    def ref():
        t = np.pad(temp.reshape(rows, cols).astype(np.float64), 1, mode="edge")
        c = t[1:-1, 1:-1]
        out = c + k["step_div_cap"] * (power.reshape(rows, cols) + (t[2:, 1:-1] + t[:-2, 1:-1] - 2 * c) * k["Ry_1"]
                                       + (t[1:-1, 2:] + t[1:-1, :-2] - 2 * c) * k["Rx_1"] + (k["amb"] - c) * k["Rz_1"])
        return {"dst": out.reshape(-1)}
    return Problem(tiles * tile_rows, ("power", "temp", "dst", i32(cols), i32(rows), i32(rows_per_group),
                                       *(f32(v) for v in k.values()), i32(reps)),
                   {"power": power, "temp": temp}, {"dst": Out(np.float32, cols * rows)}, ref)


def _hotspot_cost(tiles: int, tile_rows: int, rows_per_group: int, reps: int) -> Cost:
    n = tiles * 256 * tile_rows * rows_per_group
    return Cost(15.0 * n * reps, 12.0 * n * reps, tiles * tile_rows, 12 * n)


# ---- srad ----------------------------------------------------------------------------------------------

SRAD = r"""
KERNEL void rodinia_srad(GLOBAL const float* J, GLOBAL float* dN, GLOBAL float* dS, GLOBAL float* dW, GLOBAL float* dE,
                         GLOBAL float* C, int cols, int rows, int rows_per_group, float q0sqr, int reps) {
  int tiles = cols / LSIZE;
  int x = (GROUP % tiles) * LSIZE + LID;
  int y0 = (GROUP / tiles) * rows_per_group;
  int xw = max(x - 1, 0), xe = min(x + 1, cols - 1);
  for (int r = 0; r < reps; ++r)
    for (int y = y0; y < y0 + rows_per_group; ++y) {
      int k = y * cols + x;
      float Jc = J[k];
      float n = J[max(y - 1, 0) * cols + x] - Jc, s = J[min(y + 1, rows - 1) * cols + x] - Jc;
      float w = J[y * cols + xw] - Jc, e = J[y * cols + xe] - Jc;
      float G2 = (n * n + s * s + w * w + e * e) / (Jc * Jc);
      float L = (n + s + w + e) / Jc;
      float num = (0.5f * G2) - ((1.0f / 16.0f) * (L * L));
      float den = 1.0f + 0.25f * L;
      float qsqr = num / (den * den);
      den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
      float c = 1.0f / (1.0f + den);
      dN[k] = n; dS[k] = s; dW[k] = w; dE[k] = e;
      C[k] = c < 0.0f ? 0.0f : (c > 1.0f ? 1.0f : c);
    }
}
"""


def _srad(rng, tiles: int, tile_rows: int, rows_per_group: int, reps: int) -> Problem:
    cols, rows = tiles * 256, tile_rows * rows_per_group
    img = np.exp(_values(rng, cols * rows, 0, 1)).astype(np.float32)  # SRAD works on exp(image)
    q0 = 0.05

    def ref():
        return srad_coefficients(img.reshape(rows, cols), q0)
    outs = {k: Out(np.float32, cols * rows) for k in ("dN", "dS", "dW", "dE", "C")}
    return Problem(tiles * tile_rows, ("J", "dN", "dS", "dW", "dE", "C", i32(cols), i32(rows), i32(rows_per_group),
                                       f32(q0), i32(reps)), {"J": img}, outs, ref, rtol=1e-4, atol=1e-5)


def _srad_cost(tiles: int, tile_rows: int, rows_per_group: int, reps: int) -> Cost:
    n = tiles * 256 * tile_rows * rows_per_group
    return Cost(30.0 * n * reps, 24.0 * n * reps, tiles * tile_rows, 24 * n)


# ---- nw (Needleman-Wunsch) -----------------------------------------------------------------------------

NW = r"""
#define NW_Q 128
#define NW_A 24
KERNEL void rodinia_nw(GLOBAL const unsigned char* queries, GLOBAL const unsigned char* db, GLOBAL const int* blosum,
                       GLOBAL int* last_col, int nq, int len, int penalty) {
  LOCAL_MEM int D[3][NW_Q + 1];
  LOCAL_MEM int sub[NW_A * NW_A];
  int r = LID;
  int q = GROUP % nq, d = GROUP / nq;
  for (int i = r; i < NW_A * NW_A; i += LSIZE) sub[i] = blosum[i];
  int qa = queries[q * NW_Q + r];
  GLOBAL const unsigned char* seq = db + d * len;
  BARRIER;
  for (int s = 0; s < NW_Q + len - 1; ++s) {
    int c = s - r;
    if (c >= 0 && c < len) {
      int up = r == 0 ? -(c + 1) * penalty : D[(s + 2) % 3][r];
      int left = c == 0 ? -(r + 1) * penalty : D[(s + 2) % 3][r + 1];
      int diag = r == 0 ? -c * penalty : (c == 0 ? -r * penalty : D[(s + 1) % 3][r]);
      int v = max(diag + sub[qa * NW_A + seq[c]], max(up - penalty, left - penalty));
      D[s % 3][r + 1] = v;
      if (c == len - 1) last_col[GROUP * NW_Q + r] = v;
    }
    BARRIER;
  }
}
"""


def substitution_matrix(rng: np.random.Generator) -> np.ndarray:
    """A symmetric 24×24 score table shaped like BLOSUM62: matches +4…+11, mismatches −4…+1."""
    off = rng.integers(-4, 2, (24, 24))
    m = np.triu(off, 1)
    m = m + m.T
    np.fill_diagonal(m, rng.integers(4, 12, 24))
    return m.astype(np.int32)


def nw_last_column(queries: np.ndarray, seqs: np.ndarray, sub: np.ndarray, penalty: int) -> np.ndarray:
    """The Needleman-Wunsch scores of the last database position for every query row, every pair
    (vectorised over pairs and anti-diagonals)."""
    pairs, rows = queries.shape
    cols = seqs.shape[1]
    score = np.zeros((pairs, rows + 1, cols + 1), np.int64)
    score[:, 0, :] = -np.arange(cols + 1) * penalty
    score[:, :, 0] = -np.arange(rows + 1) * penalty
    for s in range(rows + cols - 1):
        r = np.arange(max(0, s - cols + 1), min(rows, s + 1))
        c = s - r
        m = sub[queries[:, r], seqs[:, c]]
        score[:, r + 1, c + 1] = np.maximum(score[:, r, c] + m,
                                            np.maximum(score[:, r, c + 1], score[:, r + 1, c]) - penalty)
    return score[:, 1:, cols]


def _nw(rng, nq: int, nd: int, length: int) -> Problem:
    queries = rng.integers(0, 24, (nq, 128)).astype(np.uint8)
    db = rng.integers(0, 24, (nd, length)).astype(np.uint8)
    sub = substitution_matrix(rng)
    pen = 10

    def ref():
        g = np.arange(nq * nd)
        return {"last_col": nw_last_column(queries[g % nq], db[g // nq], sub, pen).reshape(-1)}
    return Problem(nq * nd, ("queries", "db", "blosum", "last_col", i32(nq), i32(length), i32(pen)),
                   {"queries": queries.reshape(-1), "db": db.reshape(-1), "blosum": sub.reshape(-1)},
                   {"last_col": Out(np.int32, nq * nd * 128)}, ref, atol=0)


def _nw_cost(nq: int, nd: int, length: int) -> Cost:
    # per cell: the score lookup (3), three candidates and two maxima (5)
    return Cost(8.0 * nq * nd * 128 * length, 1.0 * nd * length + 512.0 * nq * nd, nq * nd,
                128 * nq + nd * length + 4 * 576 + 512 * nq * nd)


# ---- pathfinder ----------------------------------------------------------------------------------------

PATHFINDER = r"""
#define PF_IN_RANGE(x, lo, hi) ((x) >= (lo) && (x) <= (hi))
KERNEL void rodinia_pathfinder(int iteration, GLOBAL const int* gpuWall, GLOBAL const int* gpuSrc, GLOBAL int* gpuResults,
                               int cols, int startStep, int border, int reps) {
  LOCAL_MEM int prev[256];
  LOCAL_MEM int result[256];
  int BLOCK_SIZE = LSIZE;
  int bx = GROUP, tx = LID;
  int small_block_cols = BLOCK_SIZE - iteration * 2;
  int blkX = small_block_cols * bx - border;
  int blkXmax = blkX + BLOCK_SIZE - 1;
  int xidx = blkX + tx;
  int validXmin = (blkX < 0) ? -blkX : 0;
  int validXmax = (blkXmax > cols - 1) ? BLOCK_SIZE - 1 - (blkXmax - cols + 1) : BLOCK_SIZE - 1;
  int W = tx - 1 < validXmin ? validXmin : tx - 1;
  int E = tx + 1 > validXmax ? validXmax : tx + 1;
  int isValid = PF_IN_RANGE(tx, validXmin, validXmax);
  for (int r = 0; r < reps; ++r) {
    if (PF_IN_RANGE(xidx, 0, cols - 1)) prev[tx] = gpuSrc[xidx];
    BARRIER;
    int computed = 0;
    for (int i = 0; i < iteration; i++) {
      computed = 0;
      if (PF_IN_RANGE(tx, i + 1, BLOCK_SIZE - i - 2) && isValid) {
        computed = 1;
        int shortest = min(min(prev[W], prev[tx]), prev[E]);
        result[tx] = shortest + gpuWall[cols * (startStep + i) + xidx];
      }
      BARRIER;
      if (i == iteration - 1) break;
      if (computed) prev[tx] = result[tx];
      BARRIER;
    }
    if (computed) gpuResults[xidx] = result[tx];
    BARRIER;
  }
}
"""


def _pathfinder(rng, groups: int, iteration: int, reps: int) -> Problem:
    small = 256 - 2 * iteration
    cols = groups * small
    wall = tiled(rng, iteration * cols, lambda r, m: r.integers(0, 10, m, dtype=np.int32))
    src = rng.integers(0, 10, cols, dtype=np.int32)

    def ref():
        w = wall.reshape(iteration, cols).astype(np.int64)
        p = src.astype(np.int64)
        for i in range(iteration):
            left, right = np.concatenate([p[:1], p[:-1]]), np.concatenate([p[1:], p[-1:]])
            p = np.minimum(np.minimum(left, p), right) + w[i]
        return {"gpuResults": p}
    return Problem(groups, (i32(iteration), "gpuWall", "gpuSrc", "gpuResults", i32(cols), i32(0), i32(iteration), i32(reps)),
                   {"gpuWall": wall, "gpuSrc": src}, {"gpuResults": Out(np.int32, cols)}, ref, atol=0)


def _pathfinder_cost(groups: int, iteration: int, reps: int) -> Cost:
    cols = groups * (256 - 2 * iteration)
    return Cost(4.0 * groups * 256 * iteration * reps, 4.0 * cols * (iteration + 2) * reps, groups,
                4 * cols * (iteration + 2))


# ---- lud (internal blocks) -----------------------------------------------------------------------------

LUD = r"""
#define LU_B 16
KERNEL void rodinia_lud(GLOBAL const float* m, GLOBAL float* out, int matrix_dim, int offset, int strip, int reps) {
  LOCAL_MEM float peri_row[LU_B * LU_B];
  LOCAL_MEM float peri_col[LU_B * LU_B];
  int tx = LID % LU_B, ty = LID / LU_B;
  int strips = (matrix_dim - offset - LU_B) / (LU_B * strip);
  int by = GROUP / strips, sx = GROUP % strips;
  int global_row_id = offset + (by + 1) * LU_B;
  for (int r = 0; r < reps; ++r) {
    peri_col[ty * LU_B + tx] = m[(global_row_id + ty) * matrix_dim + offset + tx];
    for (int b = 0; b < strip; ++b) {
      int global_col_id = offset + (sx * strip + b + 1) * LU_B;
      peri_row[ty * LU_B + tx] = m[(offset + ty) * matrix_dim + global_col_id + tx];
      BARRIER;
      float sum = 0.0f;
      for (int i = 0; i < LU_B; i++) sum += peri_col[ty * LU_B + i] * peri_row[i * LU_B + tx];
      int k = (global_row_id + ty) * matrix_dim + global_col_id + tx;
      out[k] = m[k] - sum;
      BARRIER;
    }
  }
}
"""


def _lud(rng, nblocks: int, strip: int, reps: int) -> Problem:
    n = 16 * (nblocks + 1)
    a = _values(rng, n * n, -1, 1)

    def ref():
        m = a.reshape(n, n).astype(np.float64)
        out = np.full((n, n), np.nan)
        out[16:, 16:] = m[16:, 16:] - m[16:, :16] @ m[:16, 16:]
        return {"out": out.reshape(-1)}
    return Problem(nblocks * (nblocks // strip), ("m", "out", i32(n), i32(0), i32(strip), i32(reps)), {"m": a},
                   {"out": Out(np.float32, n * n)}, ref, rtol=1e-4, atol=1e-5)


def _lud_cost(nblocks: int, strip: int, reps: int) -> Cost:
    n = 16 * (nblocks + 1)
    inner = (n - 16) ** 2
    return Cost(32.0 * inner * reps, (8.0 * inner + 8.0 * 16 * n) * reps, nblocks * (nblocks // strip), 8 * n * n)


# ---- kmeans --------------------------------------------------------------------------------------------

KMEANS = r"""
KERNEL void rodinia_kmeans(GLOBAL const float* feature, GLOBAL const float* clusters, GLOBAL int* membership, int npoints,
                           int nclusters, int nfeatures, int reps) {
  int point_id = GID;
  for (int r = 0; r < reps; ++r) {
    int index = 0;
    float min_dist = 3.0e38f;
    for (int i = 0; i < nclusters; i++) {
      float ans = 0.0f;
      for (int l = 0; l < nfeatures; l++) {
        float d = feature[l * npoints + point_id] - clusters[i * nfeatures + l];
        ans += d * d;
      }
      if (ans < min_dist) { min_dist = ans; index = i; }
    }
    membership[point_id] = index;
  }
}
"""


def _kmeans(rng, groups: int, nclusters: int, nfeatures: int, reps: int) -> Problem:
    npoints = groups * 256
    centers = rng.random((nclusters, nfeatures)).astype(np.float32)
    assign = tiled(rng, npoints, lambda r, m: r.integers(0, nclusters, m))
    noise = tiled(rng, npoints * nfeatures, lambda r, m: uniform(r, m, -0.05, 0.05)).reshape(nfeatures, npoints)
    feature = (centers[assign].T + noise).astype(np.float32)  # feature-major, as the original transposes it

    def ref():
        f = feature.astype(np.float64)
        d = ((f.T[:, None, :] - centers[None, :, :].astype(np.float64)) ** 2).sum(axis=2)
        return {"membership": d.argmin(axis=1)}
    return Problem(groups, ("feature", "clusters", "membership", i32(npoints), i32(nclusters), i32(nfeatures), i32(reps)),
                   {"feature": feature.reshape(-1), "clusters": centers.reshape(-1)},
                   {"membership": Out(np.int32, npoints)}, ref, atol=0)


def _kmeans_cost(groups: int, nclusters: int, nfeatures: int, reps: int) -> Cost:
    npoints = groups * 256
    return Cost(3.0 * npoints * nclusters * nfeatures * reps, 4.0 * npoints * (nfeatures + 1),
                groups, 4 * (npoints * (nfeatures + 1) + nclusters * nfeatures))


# ---- backprop (forward layer) --------------------------------------------------------------------------

BACKPROP = r"""
#define BP_W 16
KERNEL void rodinia_backprop(GLOBAL const float* input, GLOBAL const float* weights, GLOBAL float* partial_sum,
                             int hid, int tiles_per_group, int reps) {
  LOCAL_MEM float input_node[BP_W];
  LOCAL_MEM float weight_matrix[BP_W * BP_W];
  int tx = LID % BP_W, ty = LID / BP_W;
  int hblocks = hid / BP_W;
  int hb = GROUP % hblocks, ib = GROUP / hblocks;
  for (int r = 0; r < reps; ++r)
    for (int t = 0; t < tiles_per_group; ++t) {
      int by = ib * tiles_per_group + t;
      if (tx == 0) input_node[ty] = input[BP_W * by + ty];
      BARRIER;
      weight_matrix[ty * BP_W + tx] = weights[(BP_W * by + ty) * hid + hb * BP_W + tx] * input_node[ty];
      BARRIER;
      for (int p = 2; p <= BP_W; p *= 2) {
        if (ty % p == 0) weight_matrix[ty * BP_W + tx] += weight_matrix[(ty + p / 2) * BP_W + tx];
        BARRIER;
      }
      if (ty == 0) partial_sum[by * hid + hb * BP_W + tx] = weight_matrix[tx];
      BARRIER;
    }
}
"""


def _backprop(rng, hblocks: int, iblocks: int, tiles: int, reps: int) -> Problem:
    hid, n_in = 16 * hblocks, 16 * tiles * iblocks
    x, w = _values(rng, n_in), _values(rng, n_in * hid, -0.5, 0.5)

    def ref():
        prod = w.reshape(n_in // 16, 16, hid).astype(np.float64) * x.reshape(n_in // 16, 16, 1)
        return {"partial_sum": prod.sum(axis=1).reshape(-1)}
    return Problem(hblocks * iblocks, ("input", "weights", "partial_sum", i32(hid), i32(tiles), i32(reps)),
                   {"input": x, "weights": w}, {"partial_sum": Out(np.float32, n_in // 16 * hid)}, ref, rtol=1e-5)


def _backprop_cost(hblocks: int, iblocks: int, tiles: int, reps: int) -> Cost:
    hid, n_in = 16 * hblocks, 16 * tiles * iblocks
    return Cost(2.0 * n_in * hid * reps, (4.0 * n_in * hid + 4.0 * n_in // 16 * hid) * reps, hblocks * iblocks,
                4 * (n_in + n_in * hid + n_in // 16 * hid))


# ---- bfs -----------------------------------------------------------------------------------------------

BFS = r"""
KERNEL void rodinia_bfs(GLOBAL const int* g_graph_nodes, GLOBAL const int* g_graph_edges, GLOBAL const unsigned char* g_graph_mask,
                        GLOBAL unsigned char* g_updating_graph_mask, GLOBAL const unsigned char* g_graph_visited,
                        GLOBAL int* g_cost, int per_group, int reps) {
  int base = GROUP * per_group;
  for (int r = 0; r < reps; ++r)
    for (int e = LID; e < per_group; e += LSIZE) {
      int tid = base + e;
      if (g_graph_mask[tid]) {
        int start = g_graph_nodes[2 * tid], end = start + g_graph_nodes[2 * tid + 1];
        for (int i = start; i < end; i++) {
          int id = g_graph_edges[i];
          if (!g_graph_visited[id]) {
            g_cost[id] = g_cost[tid] + 1;
            g_updating_graph_mask[id] = 1;
          }
        }
      }
    }
}
"""

BFS_LEVEL = 5  # the frontier's depth: frontier nodes cost 5, earlier visited nodes less, the rest −1
#: The share of the nodes in the level's frontier, each node in it by an independent draw
BFS_FRONTIER = 0.25


def degree_pmf(nodes: int, degree: int) -> np.ndarray:
    """The distribution of a node's degree in a graph made as Rodinia's ``graphgen`` makes its BFS inputs:
    every node links to ``degree − 1`` to ``degree + 1`` random nodes (2 to 4 in Rodinia: ``degree`` 3), each
    link stored at both ends, so a node's degree is its own links plus a binomial count of the others'
    (mean ``2·degree``)."""
    if degree < 2:
        raise ValueError(f"rodinia_bfs: degree {degree} would leave nodes without links of their own (at least 2)")
    own = np.zeros(degree + 2)
    own[degree - 1:] = 1.0 / 3.0
    return np.convolve(own, binomial_pmf(nodes * degree, 1.0 / nodes))


def bfs_frontier(rng: np.random.Generator, nodes: int, degree: int) -> tuple[np.ndarray, np.ndarray]:
    """The nodes' degrees (:func:`degree_pmf`'s quantiles in random order) and the frontier mask (each node
    in it with probability :data:`BFS_FRONTIER`, whatever its id, as a level of Rodinia's BFS on its random
    graphs finds it): the first draws of a problem's generator, so that a group's work (its frontier nodes'
    edges) can be rebuilt from the kernel's seed without the edges."""
    deg = quantile_lengths(rng, degree_pmf(nodes, degree), nodes)
    frontier = tiled(rng, nodes, lambda r, m: r.random(m, dtype=np.float32)) < BFS_FRONTIER
    return deg, frontier


def bfs_state(rng: np.random.Generator, nodes: int, degree: int) -> dict[str, np.ndarray]:
    """A graph of Rodinia's degrees (:func:`degree_pmf`) with random targets and one BFS level's state: the
    frontier spread at random over the node ids (:func:`bfs_frontier`), some earlier levels visited."""
    deg, frontier = bfs_frontier(rng, nodes, degree)
    visited = frontier | (tiled(rng, nodes, lambda r, m: r.random(m, dtype=np.float32)) < 0.3)
    start = np.concatenate([[0], np.cumsum(deg, dtype=np.int64)[:-1]]).astype(np.int32)
    edges = tiled(rng, int(deg.sum(dtype=np.int64)), lambda r, m: r.integers(0, nodes, m, dtype=np.int32))
    cost = np.where(frontier, BFS_LEVEL, np.where(visited, (np.arange(nodes) % BFS_LEVEL), -1)).astype(np.int32)
    return {"nodes": np.stack([start, deg], axis=1).reshape(-1), "edges": edges, "mask": frontier.astype(np.uint8),
            "visited": visited.astype(np.uint8), "cost": cost}


def _bfs(rng, groups: int, per_group: int, degree: int, reps: int) -> Problem:
    n = groups * per_group
    st = bfs_state(rng, n, degree)

    def ref():
        deg = st["nodes"].reshape(-1, 2)[:, 1]
        src = np.repeat(np.arange(n), deg)
        tgt = st["edges"][st["mask"][src] != 0]
        tgt = tgt[st["visited"][tgt] == 0]
        upd, cost = np.zeros(n, np.uint8), st["cost"].copy()
        upd[tgt], cost[tgt] = 1, BFS_LEVEL + 1
        return {"updating": upd, "cost": cost}
    return Problem(groups, ("nodes", "edges", "mask", "updating", "visited", "cost", i32(per_group), i32(reps)),
                   {"nodes": st["nodes"], "edges": st["edges"], "mask": st["mask"], "updating": np.zeros(n, np.uint8),
                    "visited": st["visited"], "cost": st["cost"]}, {}, ref, atol=0)


def _bfs_cost(groups: int, per_group: int, degree: int, reps: int) -> Cost:
    n = groups * per_group
    edges = quantile_total(degree_pmf(n, degree), n)
    # a quarter of the nodes are in the frontier; each of their edges reads its target's visited byte
    # (a 32-byte sector: random targets); the node records and the frontier mask stream
    return Cost(4.0 * BFS_FRONTIER * edges * reps, (BFS_FRONTIER * edges * 36 + 9.0 * n) * reps, groups,
                4 * edges + 15 * n)


# ---- gaussian (Fan2) -----------------------------------------------------------------------------------

GAUSSIAN = r"""
KERNEL void rodinia_gaussian(GLOBAL const float* m_cl, GLOBAL const float* a_cl, GLOBAL const float* b_cl,
                             GLOBAL float* a_out, GLOBAL float* b_out, int size, int t, int strip, int reps) {
  int lx = LID % 16, ly = LID / 16;
  int col_tiles = (size - t + 15) / 16;
  int strips = (col_tiles + strip - 1) / strip;
  int x = (GROUP / strips) * 16 + lx;
  int sx = GROUP % strips;
  for (int r = 0; r < reps; ++r)
    for (int c = 0; c < strip; ++c) {
      int y = (sx * strip + c) * 16 + ly;
      if (x < size - 1 - t && y < size - t) {
        a_out[size * (x + 1 + t) + (y + t)] = a_cl[size * (x + 1 + t) + (y + t)]
                                              - m_cl[size * (x + 1 + t) + t] * a_cl[size * t + (y + t)];
        if (y == 0) b_out[x + 1 + t] = b_cl[x + 1 + t] - m_cl[size * (x + 1 + t) + (y + t)] * b_cl[t];
      }
    }
}
"""


def _gaussian(rng, row_blocks: int, strip: int, reps: int) -> Problem:
    size = 16 * row_blocks + 1
    a = _values(rng, size * size, -1, 1)
    b = uniform(rng, size, -1, 1)
    m = np.zeros((size, size), np.float32)
    m[1:, 0] = a.reshape(size, size)[1:, 0] / a[0]  # Fan1's multipliers for t = 0
    col_tiles = (size + 15) // 16
    strips = (col_tiles + strip - 1) // strip

    def ref():
        ah = a.reshape(size, size).astype(np.float64)
        out = np.full((size, size), np.nan)
        out[1:, :] = ah[1:, :] - m[1:, :1].astype(np.float64) * ah[0][None, :]
        bo = np.full(size, np.nan)
        bo[1:] = b[1:] - m[1:, 0].astype(np.float64) * b[0]
        return {"a_out": out.reshape(-1), "b_out": bo}
    return Problem(row_blocks * strips, ("m", "a", "b", "a_out", "b_out", i32(size), i32(0), i32(strip), i32(reps)),
                   {"m": m.reshape(-1), "a": a, "b": b},
                   {"a_out": Out(np.float32, size * size), "b_out": Out(np.float32, size)}, ref, rtol=1e-5, atol=1e-5)


def _gaussian_cost(row_blocks: int, strip: int, reps: int) -> Cost:
    size = 16 * row_blocks + 1
    strips = ((size + 15) // 16 + strip - 1) // strip
    n = (size - 1) * size
    return Cost(2.0 * n * reps, 12.0 * n * reps, row_blocks * strips, 4 * (3 * size * size + 2 * size))


# ---- nn (nearest neighbour distances) ------------------------------------------------------------------

NN = r"""
KERNEL void rodinia_nn(GLOBAL const float* d_locations, GLOBAL float* d_distances, int chunk, float lat, float lng,
                       int reps) {
  int base = GROUP * chunk;
  for (int r = 0; r < reps; ++r)
    for (int e = LID; e < chunk; e += LSIZE) {
      int i = base + e;
      float dlat = lat - d_locations[2 * i], dlng = lng - d_locations[2 * i + 1];
      d_distances[i] = sqrtf(dlat * dlat + dlng * dlng);
    }
}
"""


def _nn(rng, groups: int, chunk: int, reps: int) -> Problem:
    n = groups * chunk
    loc = _values(rng, 2 * n, 0, 90)
    lat, lng = 30.0, 45.0

    def ref():
        p = loc.reshape(n, 2).astype(np.float64)
        return {"d_distances": np.sqrt((lat - p[:, 0]) ** 2 + (lng - p[:, 1]) ** 2)}
    return Problem(groups, ("d_locations", "d_distances", i32(chunk), f32(lat), f32(lng), i32(reps)), {"d_locations": loc},
                   {"d_distances": Out(np.float32, n)}, ref)


def _nn_cost(groups: int, chunk: int, reps: int) -> Cost:
    n = groups * chunk
    return Cost(6.0 * n * reps, 12.0 * n * reps, groups, 12 * n)


# ---- particlefilter (find_index) -----------------------------------------------------------------------

PARTICLEFILTER = r"""
KERNEL void rodinia_particlefilter(GLOBAL const float* arrayX, GLOBAL const float* arrayY, GLOBAL const float* CDF,
                                   GLOBAL const float* u, GLOBAL float* xj, GLOBAL float* yj, int ncdf) {
  int i = GID;
  int index = -1;
  for (int x = 0; x < ncdf; x++) {
    if (CDF[x] >= u[i]) { index = x; break; }
  }
  if (index == -1) index = ncdf - 1;
  xj[i] = arrayX[index];
  yj[i] = arrayY[index];
}
"""


def _particlefilter(rng, groups: int, ncdf: int) -> Problem:
    n = groups * 256
    w = rng.random(ncdf)
    cdf = (np.cumsum(w) / w.sum()).astype(np.float32)
    u = ((rng.random() + np.arange(n)) / n).astype(np.float32)  # systematic resampling: u rises with i
    ax, ay = uniform(rng, ncdf, 0, 128), uniform(rng, ncdf, 0, 128)

    def ref():
        idx = np.minimum(np.searchsorted(cdf, u, side="left"), ncdf - 1)
        return {"xj": ax[idx], "yj": ay[idx]}
    return Problem(groups, ("arrayX", "arrayY", "CDF", "u", "xj", "yj", i32(ncdf)),
                   {"arrayX": ax, "arrayY": ay, "CDF": cdf, "u": u}, {"xj": Out(np.float32, n), "yj": Out(np.float32, n)},
                   ref, atol=0, rtol=0)


def _particlefilter_cost(groups: int, ncdf: int) -> Cost:
    n = groups * 256
    # particle i scans i/n of the CDF on average: a load, a compare and the loop's add per entry
    return Cost(3.0 * n * ncdf / 2, 4.0 * (3 * n + 3 * ncdf), groups, 4 * (3 * n + 3 * ncdf))


KERNELS: tuple[AppKernel, ...] = (
    AppKernel("rodinia_hotspot", Origin(RD, "hotspot", "hotspot (calculate_temp in the CUDA version)"),
              "one time step per pass (the original's pyramid of several steps in local memory not kept): each "
              "work-item walks down its column of a 256-wide strip with borders clamped as in the original; "
              "`reps` passes recompute the step; generated power and temperatures",
              ("memory", "regular"), HOTSPOT, 256, _hotspot, _hotspot_cost,
              gpu=dict(tiles=16, tile_rows=2048, rows_per_group=32, reps=100),
              tiny=dict(tiles=2, tile_rows=8, rows_per_group=8, reps=2)),
    AppKernel("rodinia_srad", Origin(RD, "srad (v2, CUDA version)", "srad_cuda_1 (derivatives and diffusion coefficient)"),
              "each work-item walks down its column of a 256-wide strip; `reps` passes recompute the step; a "
              "generated image instead of the ultrasound input",
              ("memory", "regular"), SRAD, 256, _srad, _srad_cost,
              gpu=dict(tiles=16, tile_rows=2048, rows_per_group=16, reps=250),
              tiny=dict(tiles=2, tile_rows=8, rows_per_group=8, reps=2)),
    AppKernel("rodinia_nw", Origin(RD, "nw", "nw_kernel1 (needle_cuda_shared_1 in the CUDA version)"),
              "each group aligns one query of 128 residues (a work-item per row) with one database sequence along "
              "anti-diagonals in local memory, instead of one 16×16 tile of a single large matrix per group and "
              "launch; writes the last column; a generated BLOSUM-like table",
              ("local", "compute", "regular"), NW, 128, _nw, _nw_cost,
              gpu=dict(nq=64, nd=40960, length=2048), tiny=dict(nq=4, nd=4, length=48)),
    AppKernel("rodinia_pathfinder", Origin(RD, "pathfinder", "dynproc_kernel"),
              "as the original (a pyramid of `iteration` rows in local memory with halo), over one pyramid of "
              "rows recomputed `reps` times instead of the host's loop down the wall; generated wall",
              ("local", "memory", "regular"), PATHFINDER, 256, _pathfinder, _pathfinder_cost,
              gpu=dict(groups=65536, iteration=64, reps=150), tiny=dict(groups=16, iteration=8, reps=2)),
    AppKernel("rodinia_lud", Origin(RD, "lud", "lud_internal"),
              "the trailing update of the first step (offset 0) only; a group updates a strip of `strip` 16×16 "
              "blocks of a block row, reusing its column factor (the original, one block per group); written to "
              "a second matrix instead of in place; `reps` passes recompute it",
              ("local", "memory", "regular"), LUD, 256, _lud, _lud_cost,
              gpu=dict(nblocks=1024, strip=32, reps=150), tiny=dict(nblocks=8, strip=4, reps=2)),
    AppKernel("rodinia_kmeans", Origin(RD, "kmeans", "kmeans_kernel_c (kmeansPoint)"),
              "32 clusters of 34 features (the default input has 5 clusters); generated points around the "
              "centres; `reps` passes (the original's host loop until convergence) rewrite the membership",
              ("compute", "regular"), KMEANS, 256, _kmeans, _kmeans_cost,
              gpu=dict(groups=32768, nclusters=32, nfeatures=34, reps=185), tiny=dict(groups=16, nclusters=8, nfeatures=34, reps=2)),
    AppKernel("rodinia_backprop", Origin(RD, "backprop", "bpnn_layerforward_ocl"),
              "a hidden layer of 16·hblocks units (the original fixes 16), no bias row or column, the weights not "
              "overwritten with the products; a group handles a strip of input tiles; `reps` passes",
              ("local", "memory", "regular"), BACKPROP, 256, _backprop, _backprop_cost,
              gpu=dict(hblocks=64, iblocks=512, tiles=64, reps=140), tiny=dict(hblocks=4, iblocks=4, tiles=2, reps=2)),
    AppKernel("rodinia_bfs", Origin(RD, "bfs", "BFS_1 (Kernel)"),
              "the frontier mask is not cleared (so that every timed launch does the same work); one level's "
              "state generated instead of running BFS: degrees as Rodinia's graphgen makes them (each node links "
              "to degree−1..degree+1 random nodes, stored at both ends; the distribution's quantiles in random "
              "order), random edge targets, a quarter of the nodes in the frontier at random ids, as a level of "
              "Rodinia's BFS on its random graphs spreads it; each group walks a chunk of nodes `reps` times. Not "
              "`imbalanced`: a group's work (its frontier nodes' edges) depends on its data, but every chunk is a "
              "random draw of the same mix, so the first groups do a typical share",
              ("irregular", "memory", "warm-up"), BFS, 256, _bfs, _bfs_cost,
              gpu=dict(groups=32768, per_group=1024, degree=8, reps=64), tiny=dict(groups=16, per_group=448, degree=2, reps=2),
              scatters=True),
    AppKernel("rodinia_gaussian", Origin(RD, "gaussian", "Fan2"),
              "the first elimination step only (t = 0, Fan1's multipliers computed on the host); a group updates "
              "a strip of 16×16 tiles with the original's row-fastest (uncoalesced) mapping; written to second "
              "buffers instead of in place; `reps` passes",
              ("memory", "regular"), GAUSSIAN, 256, _gaussian, _gaussian_cost,
              gpu=dict(row_blocks=1024, strip=32, reps=100), tiny=dict(row_blocks=4, strip=2, reps=2)),
    AppKernel("rodinia_nn", Origin(RD, "nn", "NearestNeighbor"),
              "each group owns a chunk of records and rewrites its distances `reps` times; generated records",
              ("memory", "regular"), NN, 256, _nn, _nn_cost,
              gpu=dict(groups=32768, chunk=8192, reps=250), tiny=dict(groups=16, chunk=512, reps=2)),
    AppKernel("rodinia_particlefilter", Origin(RD, "particlefilter (float)", "find_index_kernel"),
              "a CDF of `ncdf` entries, fewer than the particles (the original's equal counts would make the "
              "linear search quadratic in the particles); generated weights and positions",
              ("imbalanced", "compute", "warm-up"), PARTICLEFILTER, 256, _particlefilter, _particlefilter_cost,
              gpu=dict(groups=32768, ncdf=409600), tiny=dict(groups=16, ncdf=1024)),
)
