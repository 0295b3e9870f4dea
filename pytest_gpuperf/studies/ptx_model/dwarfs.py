"""The Alavani thesis' benchmark kernels (Table 4.7), re-written for CUDA, one or two per dwarf.

Each kernel comes with its launch (grid, block), its arguments and the trip counts of its loops, in
the order the loop headers appear in the PTX — the thesis takes "the number of loop iterations" as
user input (§4.4.1), and so do we. Loops are kept rolled (``#pragma unroll 1``) where the count is a
launch parameter, so one source loop is one PTX loop; fully unrolled constant loops vanish from the
CFG and need no trip count.

A dwarf's launch is its :class:`Shape` — grid, block, trip counts, problem sizes and buffer bytes, computed
without a device at a ``scale`` and block size (the model suite's: scale 1, its one block size; the study's
sweep, :mod:`.ptx_sweep`, others) — and its inputs, made on a device for that shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ...corpora.launch_shape import Shape

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
#: the thesis' four GPUs: the short key its figures carry in a metric's ``info``, and the full name
THESIS_GPU_NAMES: dict[str, str] = {"K20": "Tesla K20", "K4200": "Quadro K4200", "M60": "Tesla M60", "GTX1050": "GTX 1050"}
THESIS_GPUS = tuple(THESIS_GPU_NAMES.values())
#: block sizes of a kernel that reads ``blockDim`` and guards its index: multiples of the warp up to 1024
ANY_BLOCK = (32, 64, 128, 192, 256, 384, 512, 768, 1024)


@dataclass(frozen=True)
class Launch:
    grid: int
    block: int
    args: list[Any]
    trips: list[float]


@dataclass(frozen=True)
class Dwarf:
    """One dwarf kernel: its CUDA text, its shape at a scale and block size (``scale`` grows the problem
    from the size the model suite measures, 1; ``blocks``: the block sizes its text allows; ``block``: the
    suite's), and its inputs on a device."""

    name: str
    dwarf: str
    source: str
    sizing: Callable[[float, int], Shape]
    inputs: Callable[[Any, Shape], list[Any]]
    blocks: tuple[int, ...] = ANY_BLOCK
    block: int = 256

    def shape(self, scale: float = 1, block: int | None = None) -> Shape:
        """The launch's shape at ``scale`` with ``block`` threads per block (the suite's by default);
        ValueError for a block size the text does not allow."""
        b = self.block if block is None else block
        if b not in self.blocks:
            raise ValueError(f"{self.name}: a block of {b} threads; its text allows {', '.join(map(str, self.blocks))}")
        return self.sizing(scale, b)

    def setup(self, dev: Any, scale: float = 1, block: int | None = None) -> Launch:
        """The launch at ``scale`` (≥ 1 grows the problem) with ``block`` threads per block."""
        s = self.shape(scale, block)
        return Launch(s.grid, s.block, self.inputs(dev, s), list(s.trips))


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


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _sized(scale: float, base: int, multiple: int = 1) -> int:
    """``base × scale`` elements, a positive multiple of ``multiple`` (ValueError otherwise: a sweep's size
    must be one the kernel can be launched at exactly)."""
    n = base * scale
    if n <= 0 or n != int(n) or int(n) % multiple:
        raise ValueError(f"scale {scale} gives {n} from {base}: not a positive multiple of {multiple}")
    return int(n)


def _vecadd_shape(scale: float, block: int) -> Shape:
    n = _sized(scale, 1 << 22)
    return Shape(_cdiv(n, block), block, (), {"n": n}, 12 * n)


def _vecadd_inputs(dev: Any, s: Shape) -> list[Any]:
    n = s.size["n"]
    return [_f32(dev, n), _f32(dev, n, 1), dev.empty(4 * n), np.int32(n)]


def _saxpy_shape(scale: float, block: int) -> Shape:
    n = _sized(scale, 1 << 22)
    return Shape(_cdiv(n, block), block, (), {"n": n}, 8 * n)


def _saxpy_inputs(dev: Any, s: Shape) -> list[Any]:
    n = s.size["n"]
    return [np.int32(n), np.float32(2.0), _f32(dev, n), _f32(dev, n, 1)]


def _matmul_shape(scale: float, block: int) -> Shape:
    w = _sized(scale, 512, 16)
    return Shape((w // 16) ** 2, 256, (w / 16,), {"w": w}, 12 * w * w)


def _matmul_inputs(dev: Any, s: Shape) -> list[Any]:
    w = s.size["w"]
    return [dev.empty(4 * w * w), _f32(dev, w * w), _f32(dev, w * w, 1), np.int32(w), np.int32(w)]


def _transpose_shape(scale: float, block: int) -> Shape:
    w = _sized(scale, 2048)
    return Shape(_cdiv(w * w, block), block, (), {"w": w}, 8 * w * w)


def _transpose_inputs(dev: Any, s: Shape) -> list[Any]:
    w = s.size["w"]
    return [dev.empty(4 * w * w), _f32(dev, w * w), np.int32(w), np.int32(w)]


def _needle_shape(scale: float, block: int) -> Shape:
    blocks = _sized(scale, 4096)
    return Shape(blocks, 16, (2 * 16 - 1,), {"blocks": blocks}, 4 * blocks * (17 * 17 + 256))


def _needle_inputs(dev: Any, s: Shape) -> list[Any]:
    blocks = s.size["blocks"]
    score = np.random.default_rng(2).integers(-5, 5, blocks * 17 * 17, dtype=np.int32)
    ref = np.random.default_rng(3).integers(-5, 5, blocks * 256, dtype=np.int32)
    return [dev.to_device(score), dev.to_device(ref), np.int32(17), np.int32(10)]


#: block sizes scanExclusiveShared's text allows: powers of two up to its 2 × 256 shared words
SCAN_BLOCKS = (32, 64, 128, 256)


def _scan_shape(scale: float, block: int) -> Shape:
    n = _sized(scale, 1 << 22, block)
    return Shape(n // block, block, (block.bit_length() - 1,), {"n": n}, 8 * n)


def _scan_inputs(dev: Any, s: Shape) -> list[Any]:
    n = s.size["n"]
    src = np.random.default_rng(4).integers(0, 10, n, dtype=np.uint32)
    return [dev.empty(4 * n), dev.to_device(src), np.int32(n)]


def _montecarlo_shape(scale: float, block: int) -> Shape:
    threads = 1024 * 256  # the problem is the number of samples: threads × per_thread, whatever the block
    per_thread = _sized(scale, 64)
    if threads % block:
        raise ValueError(f"sobolGPU_kernel: block of {block} threads does not divide {threads}")
    return Shape(threads // block, block, (per_thread,), {"threads": threads, "per_thread": per_thread},
                 4 * threads + 4 * 16)


def _montecarlo_inputs(dev: Any, s: Shape) -> list[Any]:
    dirs = (np.uint32(1) << (31 - np.arange(16, dtype=np.uint32))).astype(np.uint32)
    return [dev.empty(4 * s.size["threads"]), dev.to_device(dirs), np.int32(s.size["per_thread"])]


def _hotspot_shape(scale: float, block: int) -> Shape:
    w = _sized(scale, 2048)
    return Shape(_cdiv(w * w, block), block, (), {"w": w}, 12 * w * w)


def _hotspot_inputs(dev: Any, s: Shape) -> list[Any]:
    w = s.size["w"]
    return [dev.empty(4 * w * w), _f32(dev, w * w), _f32(dev, w * w, 1), np.int32(w), np.int32(w), np.float32(0.5),
            np.float32(0.1), np.float32(0.1), np.float32(0.01)]


def _convrows_shape(scale: float, block: int) -> Shape:
    w, h = 2048, _sized(scale, 1024)
    return Shape(_cdiv(w * h, block), block, (17,), {"w": w, "h": h}, 8 * w * h + 4 * 17)


def _convrows_inputs(dev: Any, s: Shape) -> list[Any]:
    w, h = s.size["w"], s.size["h"]
    return [dev.empty(4 * w * h), _f32(dev, w * h), _f32(dev, 17), np.int32(w), np.int32(w * h)]


def _bfs_shape(scale: float, block: int) -> Shape:
    n, deg = _sized(scale, 1 << 20), 8
    return Shape(_cdiv(n, block), block, (deg,), {"n": n, "deg": deg}, 4 * (n + 1) + 4 * n * deg + 12 * n)


def _bfs_inputs(dev: Any, s: Shape) -> list[Any]:
    n, deg = s.size["n"], s.size["deg"]
    rng = np.random.default_rng(5)
    row = (np.arange(n + 1, dtype=np.int32) * deg).astype(np.int32)
    col = rng.integers(0, n, n * deg, dtype=np.int32)
    frontier = np.ones(n, dtype=np.int32)
    cost = np.where(rng.random(n) < 0.5, -1, 0).astype(np.int32)
    return [dev.to_device(row), dev.to_device(col), dev.to_device(frontier), dev.to_device(cost), dev.empty(4 * n),
            np.int32(n)]


def _cfd_shape(scale: float, block: int) -> Shape:
    n = _sized(scale, 1 << 21)
    return Shape(_cdiv(n, block), block, (), {"n": n}, 28 * n)


def _cfd_inputs(dev: Any, s: Shape) -> list[Any]:
    n = s.size["n"]
    v = np.random.default_rng(6).random(5 * n, dtype=np.float32) + 1.0
    v[:n] += 1.0
    v[4 * n:] += 10.0
    return [np.int32(n), dev.to_device(v), _f32(dev, n, 7), dev.empty(4 * n)]


def _bitonic_shape(scale: float, block: int) -> Shape:
    n = _sized(scale, 1 << 21, 256)
    return Shape(n // 256, 256, (8, 4.5), {"n": n}, 4 * n)


def _bitonic_inputs(dev: Any, s: Shape) -> list[Any]:
    n = s.size["n"]
    keys = np.random.default_rng(8).integers(0, 1 << 30, n, dtype=np.uint32)
    return [dev.to_device(keys), np.int32(n)]


DWARFS: tuple[Dwarf, ...] = (
    Dwarf("vectorAdd", "Dense Linear Algebra", VECADD, _vecadd_shape, _vecadd_inputs),
    Dwarf("saxpy", "Dense Linear Algebra", SAXPY, _saxpy_shape, _saxpy_inputs),
    Dwarf("matrixMulCUDA", "Dense Linear Algebra", MATMUL, _matmul_shape, _matmul_inputs, (256,)),
    Dwarf("transposeNaive", "Dense Linear Algebra", TRANSPOSE, _transpose_shape, _transpose_inputs),
    Dwarf("needle_shared", "Dynamic Programming", NEEDLE, _needle_shape, _needle_inputs, (16,), 16),
    Dwarf("scanExclusiveShared", "Sparse Linear Algebra", SCAN, _scan_shape, _scan_inputs, SCAN_BLOCKS),
    Dwarf("sobolGPU_kernel", "Monte Carlo", MONTECARLO, _montecarlo_shape, _montecarlo_inputs),
    Dwarf("calculate_temp", "Structured Grid", HOTSPOT, _hotspot_shape, _hotspot_inputs),
    Dwarf("convolutionRowsKernel", "Structured Grid", CONVROWS, _convrows_shape, _convrows_inputs),
    Dwarf("bfs_kernel1", "Graph Traversal", BFS, _bfs_shape, _bfs_inputs),
    Dwarf("compute_step_factor", "Unstructured Grid", CFD, _cfd_shape, _cfd_inputs),
    Dwarf("mergeSortSharedKernel", "Backtrack and Branch-and-Bound", BITONIC, _bitonic_shape, _bitonic_inputs, (256,)),
)
