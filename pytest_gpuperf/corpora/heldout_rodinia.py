"""The held-out kernels of the PTX model ported from Rodinia (:mod:`.heldout_kernels`): lud's
``lud_internal``, gaussian's ``Fan2``, pathfinder's ``dynproc_kernel``, b+tree's ``findK``, srad (v2)'s
``srad_cuda_1`` and cfd's ``cuda_compute_flux``, each with its launch shape, inputs and NumPy reference
(what a port is: :mod:`.heldout_port`)."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .launch_shape import Shape
from .heldout_port import HostProblem, Port, layout, uniform
from .srad_reference import srad_coefficients

# ---- Rodinia lud: lud_internal ---------------------------------------------------------------------------

LUD = r"""
KERNEL void lud_internal(GLOBAL float* m, int matrix_dim, int offset) {
  LOCAL_MEM float peri_row[BLOCK_SIZE][BLOCK_SIZE];
  LOCAL_MEM float peri_col[BLOCK_SIZE][BLOCK_SIZE];
  int i;
  float sum;
  int global_row_id = offset + (BID_Y + 1) * BLOCK_SIZE;
  int global_col_id = offset + (BID_X + 1) * BLOCK_SIZE;
  peri_row[TID_Y][TID_X] = m[(offset + TID_Y) * matrix_dim + global_col_id + TID_X];
  peri_col[TID_Y][TID_X] = m[(global_row_id + TID_Y) * matrix_dim + offset + TID_X];
  BARRIER;
  sum = 0;
  for (i = 0; i < BLOCK_SIZE; i++)
    sum += peri_col[TID_Y][i] * peri_row[i][TID_X];
  m[(global_row_id + TID_Y) * matrix_dim + global_col_id + TID_X] -= sum;
}
"""


def _lud_shape(p: Mapping[str, int]) -> Shape:
    bs, dim, offset = p["bs"], p["dim"], p["offset"]
    if dim % bs or offset % bs or dim - offset < 2 * bs:
        raise ValueError(f"lud_internal: dim {dim} and offset {offset} must be multiples of the block side {bs}, "
                         f"with at least two blocks left")
    g = (dim - offset) // bs - 1
    return layout((g, g), (bs, bs), (), p, 4 * dim * dim, {"BLOCK_SIZE": bs})


def _lud_problem(rng: np.random.Generator, s: Shape) -> HostProblem:
    bs, dim, off = s.size["bs"], s.size["dim"], s.size["offset"]
    m = uniform(rng, dim * dim, -1.0, 1.0)

    def ref() -> dict[str, np.ndarray]:
        a = m.reshape(dim, dim).astype(np.float64)
        out = a.copy()
        r = slice(off + bs, dim)
        out[r, r] = a[r, r] - a[r, off:off + bs] @ a[off:off + bs, r]
        return {"m": out.reshape(-1)}
    return HostProblem(("m", np.int32(dim), np.int32(off)), {"m": m}, ref, rtol=1e-5, atol=1e-5)


# ---- Rodinia gaussian: Fan2 --------------------------------------------------------------------------------

FAN2 = r"""
KERNEL void Fan2(GLOBAL float* m_cuda, GLOBAL float* a_cuda, GLOBAL float* b_cuda, int Size, int j1, int t) {
  if (TID_X + BID_X * BDIM_X >= Size - 1 - t) return;
  if (TID_Y + BID_Y * BDIM_Y >= Size - t) return;
  int xidx = BID_X * BDIM_X + TID_X;
  int yidx = BID_Y * BDIM_Y + TID_Y;
  a_cuda[Size * (xidx + 1 + t) + (yidx + t)] -= m_cuda[Size * (xidx + 1 + t) + t] * a_cuda[Size * t + (yidx + t)];
  if (yidx == 0) {
    b_cuda[xidx + 1 + t] -= m_cuda[Size * (xidx + 1 + t) + (yidx + t)] * b_cuda[t];
  }
}
"""


def gaussian_matrix(size: int) -> np.ndarray:
    """Rodinia gaussian's ``create_matrix``: the Toeplitz matrix ``a[i][j] = 10·e^{-0.01·|i-j|}``."""
    i = np.arange(size)
    return (10.0 * np.exp(-0.01 * np.abs(i[:, None] - i[None, :]))).astype(np.float32)


def _fan2_shape(p: Mapping[str, int]) -> Shape:
    bs, size, t = p["bs"], p["size"], p["t"]
    if not 0 <= t < size - 1:
        raise ValueError(f"Fan2: step t = {t} outside 0 … {size - 2}")
    g = -(-size // bs)  # the original's gridSize2d: Size / bs, plus one where it does not divide
    return layout((g, g), (bs, bs), (), p, 4 * (2 * size * size + size))


def _fan2_problem(rng: np.random.Generator, s: Shape) -> HostProblem:
    size, t = s.size["size"], s.size["t"]
    a = gaussian_matrix(size)
    b = np.ones(size, np.float32)
    m = np.zeros((size, size), np.float32)
    m[t + 1:, t] = a[t + 1:, t] / a[t, t]  # Fan1's multipliers of step t

    def ref() -> dict[str, np.ndarray]:
        ah, bh = a.astype(np.float64), b.astype(np.float64)
        ah[t + 1:, t:] -= m[t + 1:, t:t + 1].astype(np.float64) * ah[t, t:][None, :]
        bh[t + 1:] -= m[t + 1:, t].astype(np.float64) * bh[t]
        return {"a": ah.reshape(-1), "b": bh}
    return HostProblem(("m", "a", "b", np.int32(size), np.int32(size - t), np.int32(t)),
                       {"m": m.reshape(-1), "a": a.reshape(-1), "b": b}, ref, rtol=1e-5, atol=1e-4)


# ---- Rodinia pathfinder: dynproc_kernel ----------------------------------------------------------------------

PATHFINDER = r"""
#define HALO 1
#define IN_RANGE(x, min, max) ((x) >= (min) && (x) <= (max))
#define MIN(a, b) ((a) <= (b) ? (a) : (b))
KERNEL void dynproc_kernel(int iteration, GLOBAL int* gpuWall, GLOBAL int* gpuSrc, GLOBAL int* gpuResults, int cols,
                           int rows, int startStep, int border) {
  LOCAL_MEM int prev[BLOCK_SIZE];
  LOCAL_MEM int result[BLOCK_SIZE];
  int bx = BID_X;
  int tx = TID_X;
  int small_block_cols = BLOCK_SIZE - iteration * HALO * 2;
  int blkX = small_block_cols * bx - border;
  int blkXmax = blkX + BLOCK_SIZE - 1;
  int xidx = blkX + tx;
  int validXmin = (blkX < 0) ? -blkX : 0;
  int validXmax = (blkXmax > cols - 1) ? BLOCK_SIZE - 1 - (blkXmax - cols + 1) : BLOCK_SIZE - 1;
  int W = tx - 1;
  int E = tx + 1;
  W = (W < validXmin) ? validXmin : W;
  E = (E > validXmax) ? validXmax : E;
  bool isValid = IN_RANGE(tx, validXmin, validXmax);
  if (IN_RANGE(xidx, 0, cols - 1)) {
    prev[tx] = gpuSrc[xidx];
  }
  BARRIER;
  bool computed;
#pragma unroll 1
  for (int i = 0; i < iteration; i++) {
    computed = false;
    if (IN_RANGE(tx, i + 1, BLOCK_SIZE - i - 2) && isValid) {
      computed = true;
      int left = prev[W];
      int up = prev[tx];
      int right = prev[E];
      int shortest = MIN(left, up);
      shortest = MIN(shortest, right);
      int index = cols * (startStep + i) + xidx;
      result[tx] = shortest + gpuWall[index];
    }
    BARRIER;
    if (i == iteration - 1)
      break;
    if (computed)
      prev[tx] = result[tx];
    BARRIER;
  }
  if (computed) {
    gpuResults[xidx] = result[tx];
  }
}
"""


def _pathfinder_shape(p: Mapping[str, int]) -> Shape:
    bs, height, cols = p["bs"], p["height"], p["cols"]
    small = bs - 2 * height
    if small < 1:
        raise ValueError(f"dynproc_kernel: a pyramid of {height} rows leaves no column of a {bs}-thread block")
    groups = -(-cols // small)  # the original's blockCols
    return layout((groups,), (bs,), (height,), p, 4 * (height * cols + 2 * cols), {"BLOCK_SIZE": bs})


def _pathfinder_problem(rng: np.random.Generator, s: Shape) -> HostProblem:
    height, cols = s.size["height"], s.size["cols"]
    wall = rng.integers(0, 10, height * cols, dtype=np.int32)  # the original's rand() % 10
    src = rng.integers(0, 10, cols, dtype=np.int32)

    def ref() -> dict[str, np.ndarray]:
        w = wall.reshape(height, cols).astype(np.int64)
        p = src.astype(np.int64)
        for i in range(height):
            left, right = np.concatenate([p[:1], p[:-1]]), np.concatenate([p[1:], p[-1:]])
            p = np.minimum(np.minimum(left, p), right) + w[i]
        return {"gpuResults": p}
    return HostProblem((np.int32(height), "gpuWall", "gpuSrc", "gpuResults", np.int32(cols), np.int32(height + 1),
                        np.int32(0), np.int32(height)),
                       {"gpuWall": wall, "gpuSrc": src, "gpuResults": np.full(cols, -1, np.int32)}, ref)


# ---- Rodinia b+tree: findK -------------------------------------------------------------------------------------

FINDK = r"""
#define DEFAULT_ORDER 256
typedef struct knode {
  int location;
  int indices[DEFAULT_ORDER + 1];
  int keys[DEFAULT_ORDER + 1];
  int is_leaf;
  int num_keys;
} knode;
typedef struct record {
  int value;
} record;
KERNEL void findK(i64 height, GLOBAL knode* knodesD, i64 knodes_elem, GLOBAL record* recordsD, GLOBAL i64* currKnodeD,
                  GLOBAL i64* offsetD, GLOBAL int* keysD, GLOBAL record* ansD) {
  int thid = TID_X;
  int bid = BID_X;
  int i;
#pragma unroll 1
  for (i = 0; i < height; i++) {
    if ((knodesD[currKnodeD[bid]].keys[thid]) <= keysD[bid] && (knodesD[currKnodeD[bid]].keys[thid + 1] > keysD[bid])) {
      if (knodesD[offsetD[bid]].indices[thid] < knodes_elem) {
        offsetD[bid] = knodesD[offsetD[bid]].indices[thid];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (thid == 0) {
      currKnodeD[bid] = offsetD[bid];
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  }
  if (knodesD[currKnodeD[bid]].keys[thid] == keysD[bid]) {
    ansD[bid].value = recordsD[knodesD[currKnodeD[bid]].indices[thid]].value;
  }
}
"""
#: Rodinia's node: location, 257 indices, 257 keys, is_leaf, num_keys (``bool is_leaf`` there: the same
#: 2068 bytes and offsets as an ``int``, which OpenCL allows in a buffer's struct)
ORDER = 256
KNODE = np.dtype([("location", np.int32), ("indices", np.int32, ORDER + 1), ("keys", np.int32, ORDER + 1),
                  ("is_leaf", np.int32), ("num_keys", np.int32)])
NO_KEY = np.iinfo(np.int32).max  # an unused key slot: no query reaches it


def btree_levels(records: int, fanout: int) -> list[int]:
    """Nodes per level of the tree over ``records`` keys with ``fanout`` entries per node, leaves first."""
    levels = [-(-records // fanout)]
    while levels[-1] > 1:
        levels.append(-(-levels[-1] // fanout))
    return levels


def btree(keys: np.ndarray, fanout: int) -> np.ndarray:
    """The knode array of a B+ tree over the sorted ``keys`` (records ``0 … n−1`` in order), root first and
    level by level as Rodinia's ``transform_to_cuda`` lays it out: a leaf holds up to ``fanout`` keys and
    their record numbers, an inner node the smallest key and the node number of up to ``fanout`` children;
    unused slots hold :data:`NO_KEY`, so ``keys[i] ≤ k < keys[i+1]`` picks exactly one child."""
    if not 2 <= fanout <= ORDER:
        raise ValueError(f"fanout {fanout} outside 2 … {ORDER}")
    levels = btree_levels(len(keys), fanout)
    starts = [sum(levels[lv + 1:]) for lv in range(len(levels))]  # each level's first node, leaves first
    nodes = np.zeros(sum(levels), KNODE)
    nodes["keys"] = NO_KEY
    nodes["location"] = np.arange(len(nodes))
    entries, mins = np.arange(len(keys)), keys
    for lv, (count, start) in enumerate(zip(levels, starts)):
        node, slot = entries // fanout, entries % fanout
        nodes["keys"][start + node, slot] = mins
        nodes["indices"][start + node, slot] = entries if lv == 0 else starts[lv - 1] + entries
        nodes["is_leaf"][start:start + count] = lv == 0
        nodes["num_keys"][start:start + count] = np.bincount(node, minlength=count)
        entries, mins = np.arange(count), mins[::fanout]
    return nodes


def _findk_shape(p: Mapping[str, int]) -> Shape:
    queries, records, fanout = p["queries"], p["records"], p["fanout"]
    levels = btree_levels(records, fanout)
    if len(levels) < 2:
        raise ValueError(f"findK: {records} records of fanout {fanout} make a tree of one node: no level to walk")
    nbytes = KNODE.itemsize * sum(levels) + 4 * records + queries * (8 + 8 + 4 + 4)
    return layout((queries,), (ORDER,), (len(levels) - 1,), p, nbytes)


def _findk_problem(rng: np.random.Generator, s: Shape) -> HostProblem:
    queries, records, fanout = s.size["queries"], s.size["records"], s.size["fanout"]
    keys = np.sort(rng.choice(np.int64(1) << 30, records, replace=False)).astype(np.int32)
    values = rng.integers(0, 1 << 30, records, dtype=np.int32)
    nodes = btree(keys, fanout)
    pick = rng.integers(0, records, queries)
    levels = btree_levels(records, fanout)

    def ref() -> dict[str, np.ndarray]:
        leaf = sum(levels[1:]) + pick // fanout  # the leaves follow every inner level
        return {"ans": values[pick], "currKnode": leaf.astype(np.int64)}
    return HostProblem((np.int64(len(levels) - 1), "knodes", np.int64(len(nodes)), "records", "currKnode", "offset",
                        "keys", "ans"),
                       {"knodes": nodes.view(np.uint8), "records": values, "currKnode": np.zeros(queries, np.int64),
                        "offset": np.zeros(queries, np.int64), "keys": keys[pick], "ans": np.full(queries, -1, np.int32)},
                       ref, restore=("currKnode", "offset"))


# ---- Rodinia srad (v2): srad_cuda_1 ------------------------------------------------------------------------------

SRAD = r"""
KERNEL void srad_cuda_1(GLOBAL float* E_C, GLOBAL float* W_C, GLOBAL float* N_C, GLOBAL float* S_C,
                        GLOBAL float* J_cuda, GLOBAL float* C_cuda, int cols, int rows, float q0sqr) {
  int bx = BID_X;
  int by = BID_Y;
  int tx = TID_X;
  int ty = TID_Y;
  int index = cols * BLOCK_SIZE * by + BLOCK_SIZE * bx + cols * ty + tx;
  int index_n = cols * BLOCK_SIZE * by + BLOCK_SIZE * bx + tx - cols;
  int index_s = cols * BLOCK_SIZE * by + BLOCK_SIZE * bx + cols * BLOCK_SIZE + tx;
  int index_w = cols * BLOCK_SIZE * by + BLOCK_SIZE * bx + cols * ty - 1;
  int index_e = cols * BLOCK_SIZE * by + BLOCK_SIZE * bx + cols * ty + BLOCK_SIZE;
  float n, w, e, s, jc, g2, l, num, den, qsqr, c;
  LOCAL_MEM float temp[BLOCK_SIZE][BLOCK_SIZE];
  LOCAL_MEM float temp_result[BLOCK_SIZE][BLOCK_SIZE];
  LOCAL_MEM float north[BLOCK_SIZE][BLOCK_SIZE];
  LOCAL_MEM float south[BLOCK_SIZE][BLOCK_SIZE];
  LOCAL_MEM float east[BLOCK_SIZE][BLOCK_SIZE];
  LOCAL_MEM float west[BLOCK_SIZE][BLOCK_SIZE];
  if (by == 0) {
    north[ty][tx] = J_cuda[BLOCK_SIZE * bx + tx];
    south[ty][tx] = J_cuda[index_s];
  } else if (by == GDIM_Y - 1) {
    north[ty][tx] = J_cuda[index_n];
    south[ty][tx] = J_cuda[cols * BLOCK_SIZE * (GDIM_Y - 1) + BLOCK_SIZE * bx + cols * (BLOCK_SIZE - 1) + tx];
  } else {
    north[ty][tx] = J_cuda[index_n];
    south[ty][tx] = J_cuda[index_s];
  }
  BARRIER;
  if (bx == 0) {
    west[ty][tx] = J_cuda[cols * BLOCK_SIZE * by + cols * ty];
    east[ty][tx] = J_cuda[index_e];
  } else if (bx == GDIM_X - 1) {
    west[ty][tx] = J_cuda[index_w];
    east[ty][tx] = J_cuda[cols * BLOCK_SIZE * by + BLOCK_SIZE * (GDIM_X - 1) + cols * ty + BLOCK_SIZE - 1];
  } else {
    west[ty][tx] = J_cuda[index_w];
    east[ty][tx] = J_cuda[index_e];
  }
  BARRIER;
  temp[ty][tx] = J_cuda[index];
  BARRIER;
  jc = temp[ty][tx];
  if (ty == 0 && tx == 0) {
    n = north[ty][tx] - jc; s = temp[ty + 1][tx] - jc; w = west[ty][tx] - jc; e = temp[ty][tx + 1] - jc;
  } else if (ty == 0 && tx == BLOCK_SIZE - 1) {
    n = north[ty][tx] - jc; s = temp[ty + 1][tx] - jc; w = temp[ty][tx - 1] - jc; e = east[ty][tx] - jc;
  } else if (ty == BLOCK_SIZE - 1 && tx == BLOCK_SIZE - 1) {
    n = temp[ty - 1][tx] - jc; s = south[ty][tx] - jc; w = temp[ty][tx - 1] - jc; e = east[ty][tx] - jc;
  } else if (ty == BLOCK_SIZE - 1 && tx == 0) {
    n = temp[ty - 1][tx] - jc; s = south[ty][tx] - jc; w = west[ty][tx] - jc; e = temp[ty][tx + 1] - jc;
  } else if (ty == 0) {
    n = north[ty][tx] - jc; s = temp[ty + 1][tx] - jc; w = temp[ty][tx - 1] - jc; e = temp[ty][tx + 1] - jc;
  } else if (tx == BLOCK_SIZE - 1) {
    n = temp[ty - 1][tx] - jc; s = temp[ty + 1][tx] - jc; w = temp[ty][tx - 1] - jc; e = east[ty][tx] - jc;
  } else if (ty == BLOCK_SIZE - 1) {
    n = temp[ty - 1][tx] - jc; s = south[ty][tx] - jc; w = temp[ty][tx - 1] - jc; e = temp[ty][tx + 1] - jc;
  } else if (tx == 0) {
    n = temp[ty - 1][tx] - jc; s = temp[ty + 1][tx] - jc; w = west[ty][tx] - jc; e = temp[ty][tx + 1] - jc;
  } else {
    n = temp[ty - 1][tx] - jc; s = temp[ty + 1][tx] - jc; w = temp[ty][tx - 1] - jc; e = temp[ty][tx + 1] - jc;
  }
  g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
  l = (n + s + w + e) / jc;
  num = (0.5 * g2) - ((1.0 / 16.0) * (l * l));
  den = 1 + (.25 * l);
  qsqr = num / (den * den);
  den = (qsqr - q0sqr) / (q0sqr * (1 + q0sqr));
  c = 1.0 / (1.0 + den);
  if (c < 0) {
    temp_result[ty][tx] = 0;
  } else if (c > 1) {
    temp_result[ty][tx] = 1;
  } else {
    temp_result[ty][tx] = c;
  }
  BARRIER;
  C_cuda[index] = temp_result[ty][tx];
  E_C[index] = e;
  W_C[index] = w;
  S_C[index] = s;
  N_C[index] = n;
}
"""
SRAD_OUTPUTS = ("E_C", "W_C", "N_C", "S_C", "C_cuda")


def _srad_shape(p: Mapping[str, int]) -> Shape:
    bs, rows, cols = p["bs"], p["rows"], p["cols"]
    if rows % bs or cols % bs or rows < 2 * bs or cols < 2 * bs:
        raise ValueError(f"srad_cuda_1: a {rows} × {cols} image must be at least two {bs}-blocks each way, whole blocks")
    return layout((cols // bs, rows // bs), (bs, bs), (), p, 4 * 6 * rows * cols, {"BLOCK_SIZE": bs})


def srad_q0sqr(image: np.ndarray) -> float:
    """srad's q0² from its default region of interest (rows and columns 0 … 127): variance over squared mean."""
    roi = image[:128, :128].astype(np.float64)
    return float(roi.var() / roi.mean() ** 2)


def _srad_problem(rng: np.random.Generator, s: Shape) -> HostProblem:
    rows, cols = s.size["rows"], s.size["cols"]
    img = np.exp(uniform(rng, rows * cols, 0.0, 1.0)).astype(np.float32)  # srad works on J = exp(I)
    q0 = np.float32(srad_q0sqr(img.reshape(rows, cols)))

    def ref() -> dict[str, np.ndarray]:
        d = srad_coefficients(img.reshape(rows, cols), float(q0))
        return dict(zip(SRAD_OUTPUTS, (d["dE"], d["dW"], d["dN"], d["dS"], d["C"])))
    outs = {k: np.full(rows * cols, -1.0, np.float32) for k in SRAD_OUTPUTS}
    return HostProblem(("E_C", "W_C", "N_C", "S_C", "J", "C_cuda", np.int32(cols), np.int32(rows), q0),
                       {**outs, "J": img}, ref, rtol=1e-4, atol=1e-5)


# ---- Rodinia cfd: cuda_compute_flux -------------------------------------------------------------------------------

GAMMA, FF_MACH, NNB = 1.4, 1.2, 4


def far_field() -> dict[str, tuple[float, ...]]:
    """The solver's far-field state (euler3d.cu's ``main``: Mach 1.2, angle of attack 0, γ 1.4) and its flux
    contributions, in float32 as the host computes them: the values of the ``__constant__`` tables."""
    f = np.float32
    density, pressure = f(1.4), f(1.0)
    sound = np.sqrt(f(GAMMA) * pressure / density)
    speed = f(FF_MACH) * sound
    velocity = (speed * f(np.cos(0.0)), speed * f(np.sin(0.0)), f(0.0))
    momentum = tuple(density * v for v in velocity)
    energy = density * (f(0.5) * (speed * speed)) + (pressure / f(GAMMA - 1.0))
    fc_x = (velocity[0] * momentum[0] + pressure, velocity[0] * momentum[1], velocity[0] * momentum[2])
    fc_y = (fc_x[1], velocity[1] * momentum[1] + pressure, velocity[1] * momentum[2])
    fc_z = (fc_x[2], fc_y[2], velocity[2] * momentum[2] + pressure)
    de_p = energy + pressure
    fc_e = (velocity[0] * de_p, velocity[1] * de_p, velocity[2] * de_p)
    return {"ff_variable": (density, *momentum, energy), "ff_fc_momentum_x": fc_x, "ff_fc_momentum_y": fc_y,
            "ff_fc_momentum_z": fc_z, "ff_fc_density_energy": fc_e}


def _flux_text() -> str:
    tables = "".join(f"CONSTANT_TABLE float {name}[{len(vals)}] = {{{', '.join(f'{float(v)!r}f' for v in vals)}}};\n"
                     for name, vals in far_field().items())
    return r"""
#define GAMMA 1.4f
#define NDIM 3
#define NNB 4
#define VAR_DENSITY 0
#define VAR_MOMENTUM 1
#define VAR_DENSITY_ENERGY (VAR_MOMENTUM + NDIM)
#define NVAR (VAR_DENSITY_ENERGY + 1)
""" + tables + r"""
WL_FN void compute_flux_contribution(float density, float3 momentum, float density_energy, float pressure,
                                     float3 velocity, float3* fc_momentum_x, float3* fc_momentum_y,
                                     float3* fc_momentum_z, float3* fc_density_energy) {
  (*fc_momentum_x).x = velocity.x * momentum.x + pressure;
  (*fc_momentum_x).y = velocity.x * momentum.y;
  (*fc_momentum_x).z = velocity.x * momentum.z;
  (*fc_momentum_y).x = (*fc_momentum_x).y;
  (*fc_momentum_y).y = velocity.y * momentum.y + pressure;
  (*fc_momentum_y).z = velocity.y * momentum.z;
  (*fc_momentum_z).x = (*fc_momentum_x).z;
  (*fc_momentum_z).y = (*fc_momentum_y).z;
  (*fc_momentum_z).z = velocity.z * momentum.z + pressure;
  float de_p = density_energy + pressure;
  (*fc_density_energy).x = velocity.x * de_p;
  (*fc_density_energy).y = velocity.y * de_p;
  (*fc_density_energy).z = velocity.z * de_p;
}
WL_FN void compute_velocity(float density, float3 momentum, float3* velocity) {
  (*velocity).x = momentum.x / density;
  (*velocity).y = momentum.y / density;
  (*velocity).z = momentum.z / density;
}
WL_FN float compute_speed_sqd(float3 velocity) {
  return velocity.x * velocity.x + velocity.y * velocity.y + velocity.z * velocity.z;
}
WL_FN float compute_pressure(float density, float density_energy, float speed_sqd) {
  return ((float)(GAMMA) - (float)(1.0f)) * (density_energy - (float)(0.5f) * density * speed_sqd);
}
WL_FN float compute_speed_of_sound(float density, float pressure) {
  return sqrtf((float)(GAMMA) * pressure / density);
}
KERNEL void cuda_compute_flux(int nelr, GLOBAL int* elements_surrounding_elements, GLOBAL float* normals,
                              GLOBAL float* variables, GLOBAL float* fluxes) {
  const float smoothing_coefficient = (float)(0.2f);
  const int i = (BDIM_X * BID_X + TID_X);
  int j, nb;
  float3 normal;
  float normal_len;
  float factor;
  float density_i = variables[i + VAR_DENSITY * nelr];
  float3 momentum_i;
  momentum_i.x = variables[i + (VAR_MOMENTUM + 0) * nelr];
  momentum_i.y = variables[i + (VAR_MOMENTUM + 1) * nelr];
  momentum_i.z = variables[i + (VAR_MOMENTUM + 2) * nelr];
  float density_energy_i = variables[i + VAR_DENSITY_ENERGY * nelr];
  float3 velocity_i;
  compute_velocity(density_i, momentum_i, &velocity_i);
  float speed_sqd_i = compute_speed_sqd(velocity_i);
  float speed_i = sqrtf(speed_sqd_i);
  float pressure_i = compute_pressure(density_i, density_energy_i, speed_sqd_i);
  float speed_of_sound_i = compute_speed_of_sound(density_i, pressure_i);
  float3 flux_contribution_i_momentum_x, flux_contribution_i_momentum_y, flux_contribution_i_momentum_z;
  float3 flux_contribution_i_density_energy;
  compute_flux_contribution(density_i, momentum_i, density_energy_i, pressure_i, velocity_i,
                            &flux_contribution_i_momentum_x, &flux_contribution_i_momentum_y,
                            &flux_contribution_i_momentum_z, &flux_contribution_i_density_energy);
  float flux_i_density = (float)(0.0f);
  float3 flux_i_momentum;
  flux_i_momentum.x = (float)(0.0f);
  flux_i_momentum.y = (float)(0.0f);
  flux_i_momentum.z = (float)(0.0f);
  float flux_i_density_energy = (float)(0.0f);
  float3 velocity_nb;
  float density_nb, density_energy_nb;
  float3 momentum_nb;
  float3 flux_contribution_nb_momentum_x, flux_contribution_nb_momentum_y, flux_contribution_nb_momentum_z;
  float3 flux_contribution_nb_density_energy;
  float speed_sqd_nb, speed_of_sound_nb, pressure_nb;
#pragma unroll
  for (j = 0; j < NNB; j++) {
    nb = elements_surrounding_elements[i + j * nelr];
    normal.x = normals[i + (j + 0 * NNB) * nelr];
    normal.y = normals[i + (j + 1 * NNB) * nelr];
    normal.z = normals[i + (j + 2 * NNB) * nelr];
    normal_len = sqrtf(normal.x * normal.x + normal.y * normal.y + normal.z * normal.z);
    if (nb >= 0) {
      density_nb = variables[nb + VAR_DENSITY * nelr];
      momentum_nb.x = variables[nb + (VAR_MOMENTUM + 0) * nelr];
      momentum_nb.y = variables[nb + (VAR_MOMENTUM + 1) * nelr];
      momentum_nb.z = variables[nb + (VAR_MOMENTUM + 2) * nelr];
      density_energy_nb = variables[nb + VAR_DENSITY_ENERGY * nelr];
      compute_velocity(density_nb, momentum_nb, &velocity_nb);
      speed_sqd_nb = compute_speed_sqd(velocity_nb);
      pressure_nb = compute_pressure(density_nb, density_energy_nb, speed_sqd_nb);
      speed_of_sound_nb = compute_speed_of_sound(density_nb, pressure_nb);
      compute_flux_contribution(density_nb, momentum_nb, density_energy_nb, pressure_nb, velocity_nb,
                                &flux_contribution_nb_momentum_x, &flux_contribution_nb_momentum_y,
                                &flux_contribution_nb_momentum_z, &flux_contribution_nb_density_energy);
      factor = -normal_len * smoothing_coefficient * (float)(0.5f) * (speed_i + sqrtf(speed_sqd_nb) + speed_of_sound_i
                                                                      + speed_of_sound_nb);
      flux_i_density += factor * (density_i - density_nb);
      flux_i_density_energy += factor * (density_energy_i - density_energy_nb);
      flux_i_momentum.x += factor * (momentum_i.x - momentum_nb.x);
      flux_i_momentum.y += factor * (momentum_i.y - momentum_nb.y);
      flux_i_momentum.z += factor * (momentum_i.z - momentum_nb.z);
      factor = (float)(0.5f) * normal.x;
      flux_i_density += factor * (momentum_nb.x + momentum_i.x);
      flux_i_density_energy += factor * (flux_contribution_nb_density_energy.x + flux_contribution_i_density_energy.x);
      flux_i_momentum.x += factor * (flux_contribution_nb_momentum_x.x + flux_contribution_i_momentum_x.x);
      flux_i_momentum.y += factor * (flux_contribution_nb_momentum_y.x + flux_contribution_i_momentum_y.x);
      flux_i_momentum.z += factor * (flux_contribution_nb_momentum_z.x + flux_contribution_i_momentum_z.x);
      factor = (float)(0.5f) * normal.y;
      flux_i_density += factor * (momentum_nb.y + momentum_i.y);
      flux_i_density_energy += factor * (flux_contribution_nb_density_energy.y + flux_contribution_i_density_energy.y);
      flux_i_momentum.x += factor * (flux_contribution_nb_momentum_x.y + flux_contribution_i_momentum_x.y);
      flux_i_momentum.y += factor * (flux_contribution_nb_momentum_y.y + flux_contribution_i_momentum_y.y);
      flux_i_momentum.z += factor * (flux_contribution_nb_momentum_z.y + flux_contribution_i_momentum_z.y);
      factor = (float)(0.5f) * normal.z;
      flux_i_density += factor * (momentum_nb.z + momentum_i.z);
      flux_i_density_energy += factor * (flux_contribution_nb_density_energy.z + flux_contribution_i_density_energy.z);
      flux_i_momentum.x += factor * (flux_contribution_nb_momentum_x.z + flux_contribution_i_momentum_x.z);
      flux_i_momentum.y += factor * (flux_contribution_nb_momentum_y.z + flux_contribution_i_momentum_y.z);
      flux_i_momentum.z += factor * (flux_contribution_nb_momentum_z.z + flux_contribution_i_momentum_z.z);
    } else if (nb == -1) {
      flux_i_momentum.x += normal.x * pressure_i;
      flux_i_momentum.y += normal.y * pressure_i;
      flux_i_momentum.z += normal.z * pressure_i;
    } else if (nb == -2) {
      factor = (float)(0.5f) * normal.x;
      flux_i_density += factor * (ff_variable[VAR_MOMENTUM + 0] + momentum_i.x);
      flux_i_density_energy += factor * (ff_fc_density_energy[0] + flux_contribution_i_density_energy.x);
      flux_i_momentum.x += factor * (ff_fc_momentum_x[0] + flux_contribution_i_momentum_x.x);
      flux_i_momentum.y += factor * (ff_fc_momentum_y[0] + flux_contribution_i_momentum_y.x);
      flux_i_momentum.z += factor * (ff_fc_momentum_z[0] + flux_contribution_i_momentum_z.x);
      factor = (float)(0.5f) * normal.y;
      flux_i_density += factor * (ff_variable[VAR_MOMENTUM + 1] + momentum_i.y);
      flux_i_density_energy += factor * (ff_fc_density_energy[1] + flux_contribution_i_density_energy.y);
      flux_i_momentum.x += factor * (ff_fc_momentum_x[1] + flux_contribution_i_momentum_x.y);
      flux_i_momentum.y += factor * (ff_fc_momentum_y[1] + flux_contribution_i_momentum_y.y);
      flux_i_momentum.z += factor * (ff_fc_momentum_z[1] + flux_contribution_i_momentum_z.y);
      factor = (float)(0.5f) * normal.z;
      flux_i_density += factor * (ff_variable[VAR_MOMENTUM + 2] + momentum_i.z);
      flux_i_density_energy += factor * (ff_fc_density_energy[2] + flux_contribution_i_density_energy.z);
      flux_i_momentum.x += factor * (ff_fc_momentum_x[2] + flux_contribution_i_momentum_x.z);
      flux_i_momentum.y += factor * (ff_fc_momentum_y[2] + flux_contribution_i_momentum_y.z);
      flux_i_momentum.z += factor * (ff_fc_momentum_z[2] + flux_contribution_i_momentum_z.z);
    }
  }
  fluxes[i + VAR_DENSITY * nelr] = flux_i_density;
  fluxes[i + (VAR_MOMENTUM + 0) * nelr] = flux_i_momentum.x;
  fluxes[i + (VAR_MOMENTUM + 1) * nelr] = flux_i_momentum.y;
  fluxes[i + (VAR_MOMENTUM + 2) * nelr] = flux_i_momentum.z;
  fluxes[i + VAR_DENSITY_ENERGY * nelr] = flux_i_density_energy;
}
"""


def _flux_shape(p: Mapping[str, int]) -> Shape:
    block, elements = p["block"], p["elements"]
    nelr = block * -(-elements // block)  # the solver pads the elements to whole blocks (nelr)
    return layout((nelr // block,), (block,), (), {**p, "nelr": nelr}, 4 * nelr * (NNB + 3 * NNB + 5 + 5))


def _state(rng: np.random.Generator, n: int) -> np.ndarray:
    """Density, momentum and energy of ``n`` elements with a positive pressure (variables[var·n + i])."""
    rho = uniform(rng, n, 1.0, 2.0)
    mom = uniform(rng, 3 * n, -1.0, 1.0).reshape(3, n) * rho
    energy = uniform(rng, n, 4.0, 6.0)
    return np.concatenate([rho, mom.reshape(-1), energy]).astype(np.float32)


def flux_reference(nelr: int, nbs: np.ndarray, normals: np.ndarray, variables: np.ndarray) -> np.ndarray:
    """cuda_compute_flux in NumPy (float64): the five fluxes of every element, ``fluxes[var·nelr + i]``."""
    v = variables.astype(np.float64).reshape(5, nelr)
    ff = {k: np.array(x, np.float64) for k, x in far_field().items()}

    def parts(var: np.ndarray) -> tuple[np.ndarray, ...]:
        rho, mom, e = var[0], var[1:4], var[4]
        vel = mom / rho
        sp2 = (vel * vel).sum(0)
        p = (GAMMA - 1.0) * (e - 0.5 * rho * sp2)
        c = np.sqrt(GAMMA * p / rho)
        fx = np.stack([vel[0] * mom[0] + p, vel[0] * mom[1], vel[0] * mom[2]])
        fy = np.stack([fx[1], vel[1] * mom[1] + p, vel[1] * mom[2]])
        fz = np.stack([fx[2], fy[2], vel[2] * mom[2] + p])
        fe = vel * (e + p)
        return rho, mom, e, p, np.sqrt(sp2), c, fx, fy, fz, fe

    rho_i, mom_i, e_i, p_i, sp_i, c_i, fx_i, fy_i, fz_i, fe_i = parts(v)
    flux = np.zeros((5, nelr))
    nrm = normals.astype(np.float64).reshape(3, NNB, nelr)
    for j in range(NNB):
        nb = nbs.reshape(NNB, nelr)[j]
        n = nrm[:, j]
        nlen = np.sqrt((n * n).sum(0))
        inner, wing, far = nb >= 0, nb == -1, nb == -2
        rho_n, mom_n, e_n, _, sp_n, c_n, fx_n, fy_n, fz_n, fe_n = parts(v[:, np.where(inner, nb, 0)])
        factor = -nlen * 0.2 * 0.5 * (sp_i + sp_n + c_i + c_n)
        add = np.zeros((5, nelr))
        add[0] = factor * (rho_i - rho_n) + 0.5 * (n * (mom_n + mom_i)).sum(0)
        add[4] = factor * (e_i - e_n) + 0.5 * (n * (fe_n + fe_i)).sum(0)
        for k, (fn, fi) in enumerate(((fx_n, fx_i), (fy_n, fy_i), (fz_n, fz_i))):
            add[1 + k] = factor * (mom_i[k] - mom_n[k]) + 0.5 * (n * (fn + fi)).sum(0)
        farf = np.zeros((5, nelr))
        farf[0] = 0.5 * (n * (ff["ff_variable"][1:4, None] + mom_i)).sum(0)
        farf[4] = 0.5 * (n * (ff["ff_fc_density_energy"][:, None] + fe_i)).sum(0)
        for k, (name, fi) in enumerate((("ff_fc_momentum_x", fx_i), ("ff_fc_momentum_y", fy_i),
                                        ("ff_fc_momentum_z", fz_i))):
            farf[1 + k] = 0.5 * (n * (ff[name][:, None] + fi)).sum(0)
        flux += np.where(inner, add, 0.0) + np.where(far, farf, 0.0)
        flux[1:4] += np.where(wing, n * p_i, 0.0)
    return flux.reshape(-1)


def _flux_problem(rng: np.random.Generator, s: Shape) -> HostProblem:
    nelr = s.size["nelr"]
    # a mesh's neighbours are mostly nearby elements; 2 % each wing (−1) and far-field (−2) faces
    near = np.clip(np.arange(nelr)[None, :] + rng.integers(-512, 513, (NNB, nelr)), 0, nelr - 1)
    kind = rng.random((NNB, nelr))
    nbs = np.where(kind < 0.02, -1, np.where(kind < 0.04, -2, near)).astype(np.int32).reshape(-1)
    normals = uniform(rng, 3 * NNB * nelr, -1.0, 1.0)
    variables = _state(rng, nelr)
    return HostProblem((np.int32(nelr), "ese", "normals", "variables", "fluxes"),
                       {"ese": nbs, "normals": normals, "variables": variables,
                        "fluxes": np.full(5 * nelr, -1.0, np.float32)},
                       lambda: {"fluxes": flux_reference(nelr, nbs, normals, variables)}, rtol=1e-3, atol=1e-3)


PORTS: tuple[Port, ...] = (
    Port("lud_internal", LUD,
         "2-D blocks and grid as the original; one launch of the factorisation's loop (its offset a launch "
         "parameter); a generated matrix", _lud_shape, _lud_problem, dict(bs=4, dim=32, offset=0)),
    Port("Fan2", FAN2,
         "as the original at one step t, with Fan1's multipliers of that step computed on the host; the "
         "benchmark's own generated matrix (create_matrix)", _fan2_shape, _fan2_problem, dict(bs=4, size=37, t=3)),
    Port("dynproc_kernel", PATHFINDER,
         "as the original, launched once at the start of the wall (startStep 0); the pyramid loop kept "
         "rolled", _pathfinder_shape, _pathfinder_problem, dict(bs=32, height=4, cols=200)),
    Port("findK", FINDK,
         "a node's `bool is_leaf` stored as an int (the same layout); the tree built directly in its node "
         "array (full nodes of a given fanout) instead of by inserts; generated keys and queries; the node "
         "cursors reset before each timed launch, as the host zeroes them before the original's one launch",
         _findk_shape, _findk_problem, dict(queries=50, records=5000, fanout=16)),
    Port("srad_cuda_1", SRAD,
         "the image's first and last block rows and columns load their clamped neighbour only (the original "
         "also loads, then overwrites, a value outside the image there); a generated image",
         _srad_shape, _srad_problem, dict(bs=8, rows=32, cols=48), fp64=True),
    Port("cuda_compute_flux", _flux_text(),
         "the far-field `__constant__` tables as float arrays (`float3` there), the helpers' references as "
         "pointers; a generated mesh (neighbours near in index, 2 % wing and 2 % far-field faces)",
         _flux_shape, _flux_problem, dict(block=64, elements=300)),
)
