"""The Alavani thesis' benchmark kernels (Table 4.7), re-written for CUDA, one or two per dwarf.

Each kernel comes with its launch (grid, block), its arguments and the trip counts of its loops, in
the order the loop headers appear in the PTX — the thesis takes "the number of loop iterations" as
user input (§4.4.1), and so do we. Loops are kept rolled (``#pragma unroll 1``) where the count is a
launch parameter, so one source loop is one PTX loop; fully unrolled constant loops vanish from the
CFG and need no trip count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

#: Dwarf → the thesis' MAPE (%) per GPU, Table 4.9 (Tesla K20, Quadro K4200, Tesla M60, GTX 1050).
THESIS_MAPE: dict[str, tuple[float, float, float, float]] = {
    "Dynamic Programming": (20.6, 4.39, 19.56, 20.93),
    "Dense Linear Algebra": (29.95, 27.92, 51.75, 34.67),
    "Sparse Linear Algebra": (87.38, 76.93, 59.47, 30.41),
    "Backtrack and Branch-and-Bound": (23.15, 10.93, 32.42, 16.86),
    "Graph Traversal": (14.87, 39.64, 43.23, 45.24),
    "Monte Carlo": (4.14, 15.23, 3.43, 0.49),
    "Structured Grid": (25.05, 15.34, 29.88, 16.49),
    "Unstructured Grid": (31.61, 69.82, 87.09, 28.81),
}
THESIS_GPUS = ("Tesla K20", "Quadro K4200", "Tesla M60", "GTX 1050")


@dataclass(frozen=True)
class Launch:
    grid: int
    block: int
    args: list[Any]
    trips: list[float]


@dataclass(frozen=True)
class Dwarf:
    name: str
    dwarf: str
    source: str
    setup: Callable[[Any, int], Launch]  # (device, scale) -> launch; scale ≥ 1 grows the problem


def _f32(dev: Any, n: int, seed: int = 0) -> Any:
    return dev.to_device(np.random.default_rng(seed).random(n, dtype=np.float32))


VECADD = r'''extern "C" __global__ void vectorAdd(const float* A, const float* B, float* C, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) C[i] = A[i] + B[i];
}'''

SAXPY = r'''extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}'''

MATMUL = r'''#define TILE 16
extern "C" __global__ void matrixMulCUDA(float* C, const float* A, const float* B, int wA, int wB) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int tiles_x = wB / TILE;
  int bx = blockIdx.x % tiles_x, by = blockIdx.x / tiles_x;
  int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
  float acc = 0.0f;
#pragma unroll 1
  for (int t = 0; t < wA / TILE; ++t) {
    As[ty][tx] = A[(by * TILE + ty) * wA + t * TILE + tx];
    Bs[ty][tx] = B[(t * TILE + ty) * wB + bx * TILE + tx];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[(by * TILE + ty) * wB + bx * TILE + tx] = acc;
}'''

TRANSPOSE = r'''extern "C" __global__ void transposeNaive(float* odata, const float* idata, int width, int height) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= width * height) return;
  int x = i % width, y = i / width;
  odata[x * height + y] = idata[y * width + x];
}'''

NEEDLE = r'''#define BS 16
extern "C" __global__ void needle_shared(int* score, const int* ref, int cols, int penalty) {
  __shared__ int t[BS + 1][BS + 1];
  __shared__ int r[BS][BS];
  int b = blockIdx.x, tx = threadIdx.x;
  int base = b * (BS + 1) * (BS + 1);
  for (int k = 0; k < BS + 1; ++k) { t[k][0] = score[base + k * (BS + 1)]; }
  t[0][tx + 1] = score[base + tx + 1];
  for (int k = 0; k < BS; ++k) r[k][tx] = ref[b * BS * BS + k * BS + tx];
  __syncthreads();
#pragma unroll 1
  for (int m = 0; m < 2 * BS - 1; ++m) {
    int x = tx + 1, y = m - tx + 1;
    if (y >= 1 && y <= BS) {
      int v = max(t[y - 1][x - 1] + r[y - 1][x - 1], max(t[y][x - 1] - penalty, t[y - 1][x] - penalty));
      t[y][x] = v;
    }
    __syncthreads();
  }
  for (int k = 0; k < BS; ++k) score[base + (k + 1) * (BS + 1) + tx + 1] = t[k + 1][tx + 1];
}'''

SCAN = r'''extern "C" __global__ void scanExclusiveShared(unsigned int* dst, const unsigned int* src, int n) {
  __shared__ unsigned int s[2 * 256];
  int l = threadIdx.x, i = blockIdx.x * blockDim.x + l;
  int pin = 0, pout = 1;
  s[l] = (i < n && l > 0) ? src[i - 1] : 0u;
  __syncthreads();
#pragma unroll 1
  for (int off = 1; off < blockDim.x; off <<= 1) {
    pout = 1 - pout; pin = 1 - pout;
    unsigned int v = s[pin * blockDim.x + l];
    if (l >= off) v += s[pin * blockDim.x + l - off];
    s[pout * blockDim.x + l] = v;
    __syncthreads();
  }
  if (i < n) dst[i] = s[pout * blockDim.x + l];
}'''

MONTECARLO = r'''extern "C" __global__ void sobolGPU_kernel(float* out, const unsigned int* dirs, int per_thread) {
  unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int stride = gridDim.x * blockDim.x;
  float acc = 0.0f;
#pragma unroll 1
  for (int s = 0; s < per_thread; ++s) {
    unsigned int idx = tid + (unsigned int)s * stride, g = idx ^ (idx >> 1), x = 0u;
#pragma unroll
    for (int bit = 0; bit < 16; ++bit) x ^= ((g >> bit) & 1u) * dirs[bit];
    acc += (float)x * 2.3283064e-10f;
  }
  out[tid] = acc;
}'''

HOTSPOT = r'''extern "C" __global__ void calculate_temp(float* out, const float* temp, const float* power, int w, int h,
                                            float cap, float rx, float ry, float rz) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= w * h) return;
  int x = i % w, y = i / w;
  float c = temp[i];
  float n = y > 0 ? temp[i - w] : c, s = y < h - 1 ? temp[i + w] : c;
  float e = x < w - 1 ? temp[i + 1] : c, wv = x > 0 ? temp[i - 1] : c;
  out[i] = c + cap * (power[i] + (s + n - 2.0f * c) * ry + (e + wv - 2.0f * c) * rx + (80.0f - c) * rz);
}'''

CONVROWS = r'''#define R 8
extern "C" __global__ void convolutionRowsKernel(float* dst, const float* src, const float* kern, int w, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = i % w;
  float s = 0.0f;
#pragma unroll 1
  for (int k = -R; k <= R; ++k) { int xx = min(max(x + k, 0), w - 1); s += src[i - x + xx] * kern[R - k]; }
  dst[i] = s;
}'''

BFS = r'''extern "C" __global__ void bfs_kernel1(const int* row, const int* col, const int* frontier, int* cost,
                                         int* next, int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || !frontier[v]) return;
  int c = cost[v] + 1;
#pragma unroll 1
  for (int e = row[v]; e < row[v + 1]; ++e) {
    int u = col[e];
    if (cost[u] < 0) { cost[u] = c; next[u] = 1; }
  }
}'''

CFD = r'''extern "C" __global__ void compute_step_factor(int n, const float* vars, const float* areas, float* step) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float rho = vars[i], mx = vars[i + n], my = vars[i + 2 * n], mz = vars[i + 3 * n], e = vars[i + 4 * n];
  float vx = mx / rho, vy = my / rho, vz = mz / rho;
  float sp2 = vx * vx + vy * vy + vz * vz;
  float p = 0.4f * (e - 0.5f * rho * sp2);
  float c = sqrtf(1.4f * p / rho);
  step[i] = 0.5f / (sqrtf(areas[i]) * (sqrtf(sp2) + c));
}'''

BITONIC = r'''extern "C" __global__ void mergeSortSharedKernel(unsigned int* keys, int n) {
  __shared__ unsigned int s[256];
  int l = threadIdx.x, base = blockIdx.x * 256;
  s[l] = keys[base + l];
  __syncthreads();
#pragma unroll 1
  for (int size = 2; size <= 256; size <<= 1) {
#pragma unroll 1
    for (int stride = size / 2; stride > 0; stride >>= 1) {
      int p = l ^ stride;
      if (p > l) {
        unsigned int a = s[l], b = s[p];
        bool up = (l & size) == 0;
        if ((a > b) == up) { s[l] = b; s[p] = a; }
      }
      __syncthreads();
    }
  }
  keys[base + l] = s[l];
}'''


def _vecadd(dev: Any, scale: int) -> Launch:
    n = (1 << 22) * scale
    return Launch(-(-n // 256), 256, [_f32(dev, n), _f32(dev, n, 1), dev.empty(4 * n), np.int32(n)], [])


def _saxpy(dev: Any, scale: int) -> Launch:
    n = (1 << 22) * scale
    return Launch(-(-n // 256), 256, [np.int32(n), np.float32(2.0), _f32(dev, n), _f32(dev, n, 1)], [])


def _matmul(dev: Any, scale: int) -> Launch:
    w = 512 * scale
    return Launch((w // 16) ** 2, 256, [dev.empty(4 * w * w), _f32(dev, w * w), _f32(dev, w * w, 1),
                                        np.int32(w), np.int32(w)], [w / 16])


def _transpose(dev: Any, scale: int) -> Launch:
    w = 2048 * scale
    return Launch(w * w // 256, 256, [dev.empty(4 * w * w), _f32(dev, w * w), np.int32(w), np.int32(w)], [])


def _needle(dev: Any, scale: int) -> Launch:
    blocks = 4096 * scale
    score = np.random.default_rng(2).integers(-5, 5, blocks * 17 * 17, dtype=np.int32)
    ref = np.random.default_rng(3).integers(-5, 5, blocks * 256, dtype=np.int32)
    return Launch(blocks, 16, [dev.to_device(score), dev.to_device(ref), np.int32(17), np.int32(10)],
                  [2 * 16 - 1])


def _scan(dev: Any, scale: int) -> Launch:
    n = (1 << 22) * scale
    src = np.random.default_rng(4).integers(0, 10, n, dtype=np.uint32)
    return Launch(n // 256, 256, [dev.empty(4 * n), dev.to_device(src), np.int32(n)], [8])


def _montecarlo(dev: Any, scale: int) -> Launch:
    dirs = (np.uint32(1) << (31 - np.arange(16, dtype=np.uint32))).astype(np.uint32)
    grid = 1024
    return Launch(grid, 256, [dev.empty(4 * grid * 256), dev.to_device(dirs), np.int32(64 * scale)], [64 * scale])


def _hotspot(dev: Any, scale: int) -> Launch:
    w = 2048 * scale
    return Launch(w * w // 256, 256, [dev.empty(4 * w * w), _f32(dev, w * w), _f32(dev, w * w, 1), np.int32(w),
                                      np.int32(w), np.float32(0.5), np.float32(0.1), np.float32(0.1),
                                      np.float32(0.01)], [])


def _convrows(dev: Any, scale: int) -> Launch:
    w, h = 2048, 1024 * scale
    return Launch(w * h // 256, 256, [dev.empty(4 * w * h), _f32(dev, w * h), _f32(dev, 17), np.int32(w),
                                      np.int32(w * h)], [17])


def _bfs(dev: Any, scale: int) -> Launch:
    n, deg = (1 << 20) * scale, 8
    rng = np.random.default_rng(5)
    row = (np.arange(n + 1, dtype=np.int32) * deg).astype(np.int32)
    col = rng.integers(0, n, n * deg, dtype=np.int32)
    frontier = np.ones(n, dtype=np.int32)
    cost = np.where(rng.random(n) < 0.5, -1, 0).astype(np.int32)
    return Launch(-(-n // 256), 256, [dev.to_device(row), dev.to_device(col), dev.to_device(frontier),
                                      dev.to_device(cost), dev.empty(4 * n), np.int32(n)], [deg])


def _cfd(dev: Any, scale: int) -> Launch:
    n = (1 << 21) * scale
    v = np.random.default_rng(6).random(5 * n, dtype=np.float32) + 1.0
    v[:n] += 1.0
    v[4 * n:] += 10.0
    return Launch(-(-n // 256), 256, [np.int32(n), dev.to_device(v), _f32(dev, n, 7), dev.empty(4 * n)], [])


def _bitonic(dev: Any, scale: int) -> Launch:
    n = (1 << 21) * scale
    keys = np.random.default_rng(8).integers(0, 1 << 30, n, dtype=np.uint32)
    return Launch(n // 256, 256, [dev.to_device(keys), np.int32(n)], [8, 4.5])


DWARFS: tuple[Dwarf, ...] = (
    Dwarf("vectorAdd", "Dense Linear Algebra", VECADD, _vecadd),
    Dwarf("saxpy", "Dense Linear Algebra", SAXPY, _saxpy),
    Dwarf("matrixMulCUDA", "Dense Linear Algebra", MATMUL, _matmul),
    Dwarf("transposeNaive", "Dense Linear Algebra", TRANSPOSE, _transpose),
    Dwarf("needle_shared", "Dynamic Programming", NEEDLE, _needle),
    Dwarf("scanExclusiveShared", "Sparse Linear Algebra", SCAN, _scan),
    Dwarf("sobolGPU_kernel", "Monte Carlo", MONTECARLO, _montecarlo),
    Dwarf("calculate_temp", "Structured Grid", HOTSPOT, _hotspot),
    Dwarf("convolutionRowsKernel", "Structured Grid", CONVROWS, _convrows),
    Dwarf("bfs_kernel1", "Graph Traversal", BFS, _bfs),
    Dwarf("compute_step_factor", "Unstructured Grid", CFD, _cfd),
    Dwarf("mergeSortSharedKernel", "Backtrack and Branch-and-Bound", BITONIC, _bitonic),
)
