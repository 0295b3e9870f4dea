"""The ten kernel classes K1–K10 of paper 004 (Table 1) and its three unseen test kernels (§6.1),
written once for CUDA and OpenCL, as generators over problem size and work-group size.

K1–K6 are SAXPY-like with rising intensity (K4–K6: two elements per work-item with 32-, 64- and
128-bit loads), K7 naive and K8 shared-memory-tiled matrix multiplication, K9/K10 a 5-point stencil
without/with local memory. Unseen: a 9-point stencil (with and without local memory) and CSR SpMV
at 95 % non-zeros; the paper argues the stencils map onto K9/K10 and SpMV is ambiguous (K7/K3/K10).

The optimisation advice follows the paper's design rationale for each class (§3; the strategy
table itself, Table 2, is an image not reproduced in the seed text, so the wording is ours).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..devices.base import ndrange
from ..devices.dialect import portable

CLASSES = ("K1", "K2", "K3", "K4", "K5", "K6", "K7", "K8", "K9", "K10")
UNSEEN = ("stencil9", "stencil9_shared", "spmv")
#: What the paper reports/argues for the unseen kernels (§6.1, Table 5): accepted classes.
UNSEEN_EXPECTED: dict[str, tuple[str, ...]] = {
    "stencil9": ("K9",), "stencil9_shared": ("K10",), "spmv": ("K7", "K3", "K10"),
}
STRATEGY: dict[str, str] = {
    "K1": "memory bound, no reuse: do more work per loaded byte (fuse with neighbouring kernels)",
    "K2": "memory bound; extra arithmetic is free: fuse more arithmetic into the same pass",
    "K3": "arithmetic on special functions: expose ILP (unroll, independent elements per thread)",
    "K4": "ILP exposed with 32-bit loads: widen loads to 64/128 bits to halve memory instructions",
    "K5": "64-bit loads: widen to 128-bit vector loads",
    "K6": "128-bit loads and ILP in place: near the memory roofline; reduce bytes moved",
    "K7": "naive matrix product re-reads DRAM: tile operands in shared/local memory (→ K8)",
    "K8": "tiled in shared memory: tune tile and group size, register blocking",
    "K9": "stencil without reuse: cache the neighbourhood in shared/local memory (→ K10)",
    "K10": "stencil with local-memory reuse: tune group shape, temporal blocking",
}

_SAXPY_SIG = "(GLOBAL const float* RESTRICT x, GLOBAL const float* RESTRICT y, GLOBAL float* RESTRICT z, float k1, float k2, int n)"
_MM_SIG = "(GLOBAL const float* RESTRICT A, GLOBAL const float* RESTRICT B, GLOBAL float* RESTRICT C, int N)"
_ST_SIG = "(GLOBAL const float* RESTRICT u, GLOBAL float* RESTRICT v, int N)"

SOURCES: dict[str, str] = {
    "K1": f"KERNEL void K1{_SAXPY_SIG} {{ int i = GID; if (i < n) z[i] = x[i] + y[i]; }}",
    "K2": f"KERNEL void K2{_SAXPY_SIG} {{ int i = GID; if (i < n) z[i] = k1 * x[i] + k2 * y[i]; }}",
    "K3": f"KERNEL void K3{_SAXPY_SIG} {{ int i = GID; if (i < n) z[i] = sinf(k1 * x[i]) * x[i] + cosf(k2 * y[i]) * y[i]; }}",
    "K4": f"KERNEL void K4{_SAXPY_SIG} {{ int i = GID; if (2 * i + 1 < n) {{\n"
          "  float a0 = x[2 * i], a1 = x[2 * i + 1], b0 = y[2 * i], b1 = y[2 * i + 1];\n"
          "  z[2 * i] = sinf(k1 * a0) * a0 + cosf(k2 * b0) * b0; z[2 * i + 1] = sinf(k1 * a1) * a1 + cosf(k2 * b1) * b1; } }",
    "K5": f"KERNEL void K5{_SAXPY_SIG} {{ int i = GID; if (2 * i + 1 < n) {{\n"
          "  float2 a = ((GLOBAL const float2*)x)[i], b = ((GLOBAL const float2*)y)[i]; float2 r;\n"
          "  r.x = sinf(k1 * a.x) * a.x + cosf(k2 * b.x) * b.x; r.y = sinf(k1 * a.y) * a.y + cosf(k2 * b.y) * b.y;\n"
          "  ((GLOBAL float2*)z)[i] = r; } }",
    "K6": f"KERNEL void K6{_SAXPY_SIG} {{ int i = GID; if (4 * i + 3 < n) {{\n"
          "  float4 a = ((GLOBAL const float4*)x)[i], b = ((GLOBAL const float4*)y)[i]; float4 r;\n"
          "  r.x = sinf(k1 * a.x) * a.x + cosf(k2 * b.x) * b.x; r.y = sinf(k1 * a.y) * a.y + cosf(k2 * b.y) * b.y;\n"
          "  r.z = sinf(k1 * a.z) * a.z + cosf(k2 * b.z) * b.z; r.w = sinf(k1 * a.w) * a.w + cosf(k2 * b.w) * b.w;\n"
          "  ((GLOBAL float4*)z)[i] = r; } }",
    "K7": f"KERNEL void K7{_MM_SIG} {{ int i = GID; if (i >= N * N) return; int r = i / N, c = i % N;\n"
          "  float s = 0.0f; for (int k = 0; k < N; ++k) s += A[r * N + k] * B[k * N + c]; C[i] = s; }",
    "K8": f"KERNEL void K8{_MM_SIG} {{\n  LOCAL_MEM float As[16][16]; LOCAL_MEM float Bs[16][16];\n"
          "  int tiles = N / 16, g = GROUP, l = LID, ty = l / 16, tx = l % 16;\n"
          "  int by = g / tiles, bx = g % tiles; float s = 0.0f;\n"
          "  for (int t = 0; t < tiles; ++t) {\n"
          "    As[ty][tx] = A[(by * 16 + ty) * N + t * 16 + tx]; Bs[ty][tx] = B[(t * 16 + ty) * N + bx * 16 + tx];\n"
          "    BARRIER;\n    for (int k = 0; k < 16; ++k) s += As[ty][k] * Bs[k][tx];\n    BARRIER;\n  }\n"
          "  C[(by * 16 + ty) * N + bx * 16 + tx] = s; }",
    "K9": f"KERNEL void K9{_ST_SIG} {{ int i = GID; if (i >= N * N) return; int r = i / N, c = i % N;\n"
          "  if (r == 0 || c == 0 || r == N - 1 || c == N - 1) {{ v[i] = u[i]; return; }}\n"
          "  v[i] = 0.25f * (u[i - 1] + u[i + 1] + u[i - N] + u[i + N]) - u[i]; }",
    "K10": f"KERNEL void K10{_ST_SIG} {{\n  LOCAL_MEM float s[1026]; int i = GID, l = LID, L = LSIZE;\n"
           "  int r = i / N, c = i % N; bool in = i < N * N;\n"
           "  s[l + 1] = in ? u[i] : 0.0f;\n"
           "  if (l == 0) s[0] = (in && c > 0) ? u[i - 1] : 0.0f;\n"
           "  if (l == L - 1) s[L + 1] = (in && c < N - 1) ? u[i + 1] : 0.0f;\n  BARRIER;\n"
           "  if (!in) return;\n"
           "  if (r == 0 || c == 0 || r == N - 1 || c == N - 1) { v[i] = s[l + 1]; return; }\n"
           "  v[i] = 0.25f * (s[l] + s[l + 2] + u[i - N] + u[i + N]) - s[l + 1]; }",
    "stencil9": f"KERNEL void stencil9{_ST_SIG} {{ int i = GID; if (i >= N * N) return; int r = i / N, c = i % N;\n"
                "  if (r == 0 || c == 0 || r == N - 1 || c == N - 1) {{ v[i] = u[i]; return; }}\n"
                "  v[i] = (4.0f * (u[i - 1] + u[i + 1] + u[i - N] + u[i + N]) + u[i - N - 1] + u[i - N + 1]\n"
                "          + u[i + N - 1] + u[i + N + 1]) * (1.0f / 120.0f); }",
    "stencil9_shared": f"KERNEL void stencil9_shared{_ST_SIG} {{\n  LOCAL_MEM float s[3][1026]; int i = GID, l = LID, L = LSIZE;\n"
                       "  int r = i / N, c = i % N; bool in = i < N * N;\n"
                       "  for (int d = -1; d <= 1; ++d) { int j = i + d * N; bool ok = in && j >= 0 && j < N * N;\n"
                       "    s[d + 1][l + 1] = ok ? u[j] : 0.0f;\n"
                       "    if (l == 0) s[d + 1][0] = (ok && c > 0) ? u[j - 1] : 0.0f;\n"
                       "    if (l == L - 1) s[d + 1][L + 1] = (ok && c < N - 1) ? u[j + 1] : 0.0f; }\n  BARRIER;\n"
                       "  if (!in) return;\n"
                       "  if (r == 0 || c == 0 || r == N - 1 || c == N - 1) { v[i] = s[1][l + 1]; return; }\n"
                       "  v[i] = (4.0f * (s[1][l] + s[1][l + 2] + s[0][l + 1] + s[2][l + 1]) + s[0][l] + s[0][l + 2]\n"
                       "          + s[2][l] + s[2][l + 2]) * (1.0f / 120.0f); }",
    "spmv": "KERNEL void spmv(GLOBAL const int* RESTRICT rows, GLOBAL const int* RESTRICT cols, "
            "GLOBAL const float* RESTRICT vals, GLOBAL const float* RESTRICT x, GLOBAL float* RESTRICT y, int n) {\n"
            "  int i = GID; if (i >= n) return; float s = 0.0f;\n"
            "  for (int e = rows[i]; e < rows[i + 1]; ++e) s += vals[e] * x[cols[e]]; y[i] = s; }",
}


def source(name: str, backend: str) -> str:
    if name not in SOURCES:
        raise KeyError(f"no kernel class {name!r}; known: {', '.join(SOURCES)}")
    return portable(SOURCES[name], backend)


@dataclass
class Instance:
    """One generated launch: ``items`` work-items in groups of ``local``; ``buffer_bytes`` is the size of
    every buffer the kernel reads or writes (what a user knows without counters)."""

    name: str
    size: int  # problem size parameter (elements, or matrix/grid side N)
    local: int
    global_size: int
    args: list[Any]
    buffer_bytes: int
    items: int = 0  # work-items the problem needs (before rounding up to ``local``)

    def __post_init__(self) -> None:
        if not self.items:
            self.items = self.global_size

    def with_local(self, local: int) -> "Instance":
        """The same buffers launched with another work-group size (K8 keeps its 16×16 tile)."""
        if self.name == "K8":
            return self
        return Instance(self.name, self.size, local, ndrange((self.items,), (local,))[0], self.args, self.buffer_bytes,
                        self.items)


def generate(name: str, size: int, local: int, dev: Any, rng: np.random.Generator) -> Instance:
    """Build the buffers and launch of kernel ``name`` at problem ``size`` and group size ``local``.

    SAXPY classes: ``size`` elements (K4/K5: 2, K6: 4 per work-item). K7/K8: ``size`` = N of N×N matrices
    (K8 uses 256-item groups, 16×16 tiles, whatever ``local`` says). Stencils: N×N grid. SpMV: ``size``
    rows of a CSR matrix with 95 % non-zeros over 64 columns per row band.
    """
    f32 = np.float32
    if name in ("K1", "K2", "K3", "K4", "K5", "K6"):
        n = size
        per = {"K4": 2, "K5": 2, "K6": 4}.get(name, 1)
        x, y = (dev.to_device(rng.random(n, dtype=f32)) for _ in range(2))
        return Instance(name, size, local, ndrange((n // per,), (local,))[0], [x, y, dev.empty(4 * n), f32(0.5), f32(1.5),
                                                                      np.int32(n)], 12 * n, n // per)
    if name in ("K7", "K8"):
        n = size - size % 16
        a, b = (dev.to_device(rng.random(n * n, dtype=f32)) for _ in range(2))
        loc = 256 if name == "K8" else local
        return Instance(name, n, loc, ndrange((n * n,), (loc,))[0], [a, b, dev.empty(4 * n * n), np.int32(n)], 12 * n * n, n * n)
    if name in ("K9", "K10", "stencil9", "stencil9_shared"):
        n = size
        u = dev.to_device(rng.random(n * n, dtype=f32))
        return Instance(name, n, local, ndrange((n * n,), (local,))[0], [u, dev.empty(4 * n * n), np.int32(n)], 8 * n * n, n * n)
    if name == "spmv":
        n, band = size, 64
        nnz_row = int(round(0.95 * band))
        pick = np.sort(rng.random((n, band)).argsort(axis=1)[:, :nnz_row], axis=1)
        offs = (np.arange(n) * band) % max(1, n - band)
        cols = (pick + offs[:, None]).ravel().astype(np.int32)
        rows = (np.arange(n + 1) * nnz_row).astype(np.int32)
        vals = rng.random(cols.size, dtype=f32)
        x = rng.random(n, dtype=f32)
        return Instance(name, n, local, ndrange((n,), (local,))[0],
                        [dev.to_device(rows), dev.to_device(cols), dev.to_device(vals), dev.to_device(x),
                         dev.empty(4 * n), np.int32(n)], rows.nbytes + cols.nbytes + vals.nbytes + 8 * n, n)
    raise KeyError(f"no kernel class {name!r}; known: {', '.join(SOURCES)}")


@dataclass(frozen=True)
class Grid:
    """The generator's parameter grid on one device class."""

    vector_sizes: tuple[int, ...]
    matrix_sizes: tuple[int, ...]
    stencil_sizes: tuple[int, ...]
    spmv_sizes: tuple[int, ...]
    locals: tuple[int, ...]

    def sizes(self, name: str) -> tuple[int, ...]:
        if name in ("K7", "K8"):
            return self.matrix_sizes
        if name in ("K9", "K10", "stencil9", "stencil9_shared"):
            return self.stencil_sizes
        if name == "spmv":
            return self.spmv_sizes
        return self.vector_sizes


GPU_GRID = Grid((1 << 22, 1 << 23, 1 << 24), (256, 384, 512), (1024, 2048, 3072), (1 << 16, 1 << 17, 1 << 18),
                (64, 128, 256, 512, 1024))
CPU_GRID = Grid((1 << 16, 1 << 17, 1 << 18), (48, 64, 80), (128, 192, 256), (1 << 11, 1 << 12), (64, 128))


def runs(names: tuple[str, ...], grid: Grid) -> list[tuple[str, int, int]]:
    """Every (kernel, size, local) the dataset measures, in a fixed order."""
    return [(k, s, l) for k in names for s in grid.sizes(k) for l in grid.locals]
