"""The benchmark kernels: one OpenCL C text each (CUDA through :func:`..devices.dialect.portable`), covering the thesis'
categories (Dao, ch. 3, Table 3.2): reductions whose work grows with the group size, matrix-vector
products, 2-D stencils, naive/tiled transpose, naive/tiled SGEMM, histogram, n-body, an irregular
BFS step and a barrier-heavy tiled 1-D stencil.

Every benchmark knows its problem (full size on GPUs, reduced on CPU devices), builds fresh random
inputs, launches for any work-group size — padding the NDRange where the problem is not divisible —
and checks its output against a NumPy reference. Kernels whose local arrays are sized by the
work-group receive ``-D WG=`` (1-D) or ``-D LX= -D LY=`` (2-D) at compile time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..devices.base import Buffer, Device, ndrange

Local = tuple[int, ...]

# --------------------------------------------------------------------------------------------- sources
#: the work-group tree reduction both reductions end with: each work-item's ``acc`` summed into ``s[0]``
#: for any work-group size (not only powers of two), ``s`` a ``__local float[WG]`` array
GROUP_SUM = r"""
    s[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t p = 1;
    while (p < lsz) p <<= 1;
    for (size_t step = p / 2; step > 0; step >>= 1) {
        if (lid < step && lid + step < lsz) s[lid] += s[lid + step];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
"""

REDUCE = r"""
__kernel void reduce_sum(__global const float* x, __global float* partial, int n) {
    __local float s[WG];
    size_t lid = get_local_id(0);
    size_t lsz = get_local_size(0);
    float acc = 0.0f;
    for (size_t i = get_global_id(0); i < (size_t)n; i += get_global_size(0)) acc += x[i];
""" + GROUP_SUM[1:] + r"""    if (lid == 0) partial[get_group_id(0)] = s[0];
}
"""

MATVEC_ROW = r"""
__kernel void matvec_row(__global const float* A, __global const float* x, __global float* y, int m, int n) {
    size_t row = get_global_id(0);
    if (row < (size_t)m) {
        float acc = 0.0f;
        for (int j = 0; j < n; ++j) acc += A[row * n + j] * x[j];
        y[row] = acc;
    }
}
"""

MATVEC_WG = r"""
__kernel void matvec_wg(__global const float* A, __global const float* x, __global float* y, int m, int n) {
    __local float s[WG];
    size_t lid = get_local_id(0);
    size_t lsz = get_local_size(0);
    size_t row = get_group_id(0);
    float acc = 0.0f;
    if (row < (size_t)m)
        for (size_t j = lid; j < (size_t)n; j += lsz) acc += A[row * n + j] * x[j];
""" + GROUP_SUM[1:] + r"""    if (lid == 0 && row < (size_t)m) y[row] = s[0];
}
"""

STENCIL2D = r"""
__kernel void stencil2d(__global const float* in, __global float* out, int w, int h) {
    int gx = get_global_id(0);
    int gy = get_global_id(1);
    if (gx < w && gy < h) {
        if (gx > 0 && gy > 0 && gx < w - 1 && gy < h - 1)
            out[gy * w + gx] = 0.5f * in[gy * w + gx] + 0.125f * (in[gy * w + gx - 1] + in[gy * w + gx + 1]
                               + in[(gy - 1) * w + gx] + in[(gy + 1) * w + gx]);
        else
            out[gy * w + gx] = in[gy * w + gx];
    }
}
"""

TRANSPOSE_NAIVE = r"""
__kernel void transpose_naive(__global const float* in, __global float* out, int w, int h) {
    int gx = get_global_id(0);
    int gy = get_global_id(1);
    if (gx < w && gy < h) out[gx * h + gy] = in[gy * w + gx];
}
"""

TRANSPOSE_TILED = r"""
__kernel void transpose_tiled(__global const float* in, __global float* out, int w, int h) {
    __local float tile[LY][LX + 1];
    int tx = get_local_id(0);
    int ty = get_local_id(1);
    int bx = get_group_id(0) * LX;
    int by = get_group_id(1) * LY;
    if (bx + tx < w && by + ty < h) tile[ty][tx] = in[(by + ty) * w + bx + tx];
    barrier(CLK_LOCAL_MEM_FENCE);
    int t = ty * LX + tx;
    int r = t / LY;
    int c = t % LY;
    if (bx + r < w && by + c < h) out[(bx + r) * h + by + c] = tile[c][r];
}
"""

SGEMM_NAIVE = r"""
__kernel void sgemm_naive(__global const float* A, __global const float* B, __global float* C, int M, int N, int K) {
    int col = get_global_id(0);
    int row = get_global_id(1);
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
"""

SGEMM_TILED = r"""
__kernel void sgemm_tiled(__global const float* A, __global const float* B, __global float* C, int M, int N, int K) {
    __local float As[LY][LX];
    __local float Bs[LX][LX];
    int tx = get_local_id(0);
    int ty = get_local_id(1);
    int col = get_global_id(0);
    int row = get_global_id(1);
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += LX) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
        for (int r = ty; r < LX; r += LY) Bs[r][tx] = (k0 + r < K && col < N) ? B[(k0 + r) * N + col] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < LX; ++k) acc += As[ty][k] * Bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < M && col < N) C[row * N + col] = acc;
}
"""

HISTOGRAM = r"""
__kernel void histogram256(__global const uint* data, __global uint* hist, int n) {
    __local uint h[256];
    for (size_t i = get_local_id(0); i < 256; i += get_local_size(0)) h[i] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t i = get_global_id(0); i < (size_t)n; i += get_global_size(0)) atomic_inc(&h[data[i] & 255u]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t i = get_local_id(0); i < 256; i += get_local_size(0))
        if (h[i] != 0) atomic_add(&hist[i], h[i]);
}
"""

NBODY = r"""
__kernel void nbody_acc(__global const float* px, __global const float* py, __global const float* pz,
                        __global const float* pm, __global float* ax, __global float* ay, __global float* az,
                        int n, float eps2) {
    __local float sx[WG];
    __local float sy[WG];
    __local float sz[WG];
    __local float sm[WG];
    size_t i = get_global_id(0);
    size_t lid = get_local_id(0);
    size_t lsz = get_local_size(0);
    float xi = i < (size_t)n ? px[i] : 0.0f;
    float yi = i < (size_t)n ? py[i] : 0.0f;
    float zi = i < (size_t)n ? pz[i] : 0.0f;
    float fx = 0.0f, fy = 0.0f, fz = 0.0f;
    for (size_t base = 0; base < (size_t)n; base += lsz) {
        size_t j = base + lid;
        sx[lid] = j < (size_t)n ? px[j] : 0.0f;
        sy[lid] = j < (size_t)n ? py[j] : 0.0f;
        sz[lid] = j < (size_t)n ? pz[j] : 0.0f;
        sm[lid] = j < (size_t)n ? pm[j] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (size_t k = 0; k < lsz; ++k) {
            float dx = sx[k] - xi, dy = sy[k] - yi, dz = sz[k] - zi;
            float inv = rsqrt(dx * dx + dy * dy + dz * dz + eps2);
            float s = sm[k] * inv * inv * inv;
            fx += dx * s; fy += dy * s; fz += dz * s;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (i < (size_t)n) { ax[i] = fx; ay[i] = fy; az[i] = fz; }
}
"""

BFS_STEP = r"""
__kernel void bfs_step(__global const int* row_ptr, __global const int* cols, __global const int* level_in,
                       __global int* level_out, int n, int cur) {
    size_t v = get_global_id(0);
    if (v < (size_t)n && level_in[v] == cur) {
        for (int e = row_ptr[v]; e < row_ptr[v + 1]; ++e) {
            int u = cols[e];
            if (level_in[u] < 0) level_out[u] = cur + 1;
        }
    }
}
"""

BLUR1D = r"""
#define R 8
__kernel void blur1d_local(__global const float* in, __global float* out, int n) {
    __local float s[WG + 2 * R];
    size_t lid = get_local_id(0);
    size_t lsz = get_local_size(0);
    long base = (long)get_group_id(0) * (long)lsz - R;
    for (size_t k = lid; k < lsz + 2 * R; k += lsz) {
        long g = base + (long)k;
        s[k] = (g >= 0 && g < n) ? in[g] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t i = get_global_id(0);
    if (i < (size_t)n) {
        float acc = 0.0f;
        for (int d = 0; d <= 2 * R; ++d) acc += s[lid + d];
        out[i] = acc * (1.0f / (2 * R + 1));
    }
}
"""


# ------------------------------------------------------------------------------------------ benchmarks
@dataclass
class Prepared:
    """Inputs on the device plus what the check needs; ``args`` maps a launch to its argument list."""

    args: Callable[[], list[Any]]
    outputs: dict[str, Buffer]
    host: dict[str, Any]


@dataclass(frozen=True)
class Benchmark:
    """One tunable kernel. ``groups`` (fixed work-group count) is set for kernels whose total number of
    work-items grows with the work-group size — the thesis' second cause of workload variation."""

    name: str
    kernel: str
    source: str
    dims: int
    category: str
    prepare: Callable[[Device, np.random.Generator, dict[str, int]], Prepared]
    check: Callable[[Device, Prepared, Local], None]
    sizes_gpu: dict[str, int]
    sizes_cpu: dict[str, int]
    extent: Callable[[dict[str, int]], tuple[int, ...]]  # the problem's index space (work-items)
    groups: Callable[[dict[str, int], Device], int] | None = None
    bytes_moved: Callable[[dict[str, int]], float] = lambda s: 0.0  # compulsory DRAM traffic
    local_defines: bool = False  # -D WG= / -D LX= -D LY=
    max_dim: int = 0  # kernel limit per dimension (tiled kernels), 0 = none
    pow2_only: bool = False  # tiled kernels need power-of-two tiles
    scalars: Callable[[dict[str, int]], dict[str, int]] = lambda s: dict(s)
    extra_options: tuple[str, ...] = field(default_factory=tuple)

    def sizes(self, device: Device) -> dict[str, int]:
        return dict(self.sizes_cpu if device.info.is_cpu else self.sizes_gpu)

    def default_local(self) -> Local:
        """The work-group of an untuned launch (the power suite's energy per element): 256 work-items in 1-D,
        16 × 16 in 2-D."""
        return (256,) if self.dims == 1 else (16, 16)

    def options(self, local: Local) -> tuple[str, ...]:
        """Compile options for this work-group shape (only kernels with group-sized local arrays)."""
        if not self.local_defines:
            return self.extra_options
        if self.dims == 1:
            return self.extra_options + (f"-DWG={int(local[0])}",)
        return self.extra_options + (f"-DLX={int(local[0])}", f"-DLY={int(local[1])}")

    def ndrange(self, sizes: dict[str, int], local: Local, device: Device) -> tuple[int, ...]:
        """Global size for ``local``: fixed work-group count, or the padded problem extent."""
        if self.groups is not None:
            return (self.groups(sizes, device) * int(local[0]),)
        return ndrange(self.extent(sizes), local)


def _f32(rng: np.random.Generator, n: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return rng.uniform(lo, hi, n).astype(np.float32)


def _close(got: np.ndarray, want: np.ndarray, what: str, rtol: float = 1e-4, atol: float = 1e-5) -> None:
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        bad = int(np.argmax(np.abs(got - want)))
        raise AssertionError(f"{what}: output differs from NumPy at index {bad}: {got.flat[bad]!r} vs "
                             f"{want.flat[bad]!r} (max abs error {float(np.max(np.abs(got - want))):.3g})")


# reduce ------------------------------------------------------------------------------------------
def _reduce_prepare(dev: Device, rng: np.random.Generator, s: dict[str, int]) -> Prepared:
    x = _f32(rng, s["n"], 0.0, 1.0)
    xb, pb = dev.to_device(x), dev.empty(4 * 64 * s["groups"])
    return Prepared(lambda: [xb, pb, np.int32(s["n"])], {"partial": pb}, {"x": x, "s": s})


def _reduce_check(dev: Device, p: Prepared, local: Local) -> None:
    groups = p.host.get("launched_groups", p.host["s"]["groups"])
    got = float(dev.to_host(p.outputs["partial"], np.float32, groups).astype(np.float64).sum())
    want = float(p.host["x"].astype(np.float64).sum())
    _close(np.array([got]), np.array([want]), "reduce_sum", rtol=1e-4, atol=0.0)


# matvec ------------------------------------------------------------------------------------------
def _matvec_prepare(dev: Device, rng: np.random.Generator, s: dict[str, int]) -> Prepared:
    A = _f32(rng, s["m"] * s["n"]).reshape(s["m"], s["n"])
    x = _f32(rng, s["n"])
    Ab, xb, yb = dev.to_device(A), dev.to_device(x), dev.empty(4 * s["m"])
    return Prepared(lambda: [Ab, xb, yb, np.int32(s["m"]), np.int32(s["n"])], {"y": yb}, {"A": A, "x": x, "s": s})


def _matvec_check(dev: Device, p: Prepared, local: Local) -> None:
    want = p.host["A"].astype(np.float64) @ p.host["x"].astype(np.float64)
    _close(dev.to_host(p.outputs["y"], np.float32, p.host["s"]["m"]), want, "matvec", rtol=1e-3, atol=1e-3)


# stencil / transpose -----------------------------------------------------------------------------
def _grid_prepare(dev: Device, rng: np.random.Generator, s: dict[str, int]) -> Prepared:
    a = _f32(rng, s["w"] * s["h"]).reshape(s["h"], s["w"])
    ib, ob = dev.to_device(a), dev.empty(4 * s["w"] * s["h"])
    return Prepared(lambda: [ib, ob, np.int32(s["w"]), np.int32(s["h"])], {"out": ob}, {"a": a, "s": s})


def _stencil_check(dev: Device, p: Prepared, local: Local) -> None:
    a = p.host["a"].astype(np.float64)
    want = a.copy()
    want[1:-1, 1:-1] = 0.5 * a[1:-1, 1:-1] + 0.125 * (a[1:-1, :-2] + a[1:-1, 2:] + a[:-2, 1:-1] + a[2:, 1:-1])
    _close(dev.to_host(p.outputs["out"], np.float32).reshape(a.shape), want, "stencil2d")


def _transpose_check(dev: Device, p: Prepared, local: Local) -> None:
    a = p.host["a"]
    got = dev.to_host(p.outputs["out"], np.float32).reshape(a.shape[1], a.shape[0])
    if not np.array_equal(got, a.T):
        raise AssertionError("transpose: output is not the NumPy transpose of the input")


# sgemm -------------------------------------------------------------------------------------------
def _sgemm_prepare(dev: Device, rng: np.random.Generator, s: dict[str, int]) -> Prepared:
    A = _f32(rng, s["M"] * s["K"]).reshape(s["M"], s["K"])
    B = _f32(rng, s["K"] * s["N"]).reshape(s["K"], s["N"])
    Ab, Bb, Cb = dev.to_device(A), dev.to_device(B), dev.empty(4 * s["M"] * s["N"])
    return Prepared(lambda: [Ab, Bb, Cb, np.int32(s["M"]), np.int32(s["N"]), np.int32(s["K"])], {"C": Cb},
                    {"A": A, "B": B, "s": s})


def _sgemm_check(dev: Device, p: Prepared, local: Local) -> None:
    want = p.host["A"].astype(np.float64) @ p.host["B"].astype(np.float64)
    got = dev.to_host(p.outputs["C"], np.float32).reshape(want.shape)
    _close(got, want, "sgemm", rtol=1e-3, atol=1e-3)


# histogram ---------------------------------------------------------------------------------------
def _hist_prepare(dev: Device, rng: np.random.Generator, s: dict[str, int]) -> Prepared:
    data = rng.integers(0, 2**32, s["n"], dtype=np.uint32)
    db, hb = dev.to_device(data), dev.to_device(np.zeros(256, np.uint32))
    return Prepared(lambda: [db, hb, np.int32(s["n"])], {"hist": hb}, {"data": data, "s": s})


def _hist_check(dev: Device, p: Prepared, local: Local) -> None:
    want = np.bincount(p.host["data"] & 255, minlength=256).astype(np.uint32)
    got = dev.to_host(p.outputs["hist"], np.uint32)
    if not np.array_equal(got, want):
        raise AssertionError(f"histogram256: {int(np.sum(got != want))} bins differ from np.bincount")


# n-body ------------------------------------------------------------------------------------------
def _nbody_prepare(dev: Device, rng: np.random.Generator, s: dict[str, int]) -> Prepared:
    n = s["n"]
    pos = [_f32(rng, n) for _ in range(3)]
    m = _f32(rng, n, 0.1, 1.0)
    ins = [dev.to_device(a) for a in (*pos, m)]
    outs = [dev.empty(4 * n) for _ in range(3)]
    eps2 = np.float32(1e-2)
    return Prepared(lambda: [*ins, *outs, np.int32(n), eps2], dict(zip(("ax", "ay", "az"), outs)),
                    {"pos": pos, "m": m, "eps2": eps2, "s": s})


def _nbody_check(dev: Device, p: Prepared, local: Local) -> None:
    pos = np.stack([a.astype(np.float64) for a in p.host["pos"]], axis=1)
    rows = min(256 if len(pos) <= 16384 else 32, len(pos))  # O(rows·n) float64 reference
    d = pos[None, :, :] - pos[:rows, None, :]
    inv = 1.0 / np.sqrt((d**2).sum(-1) + float(p.host["eps2"])) ** 3
    want = (d * (p.host["m"].astype(np.float64)[None, :] * inv)[:, :, None]).sum(1)
    got = np.stack([dev.to_host(p.outputs[k], np.float32, rows) for k in ("ax", "ay", "az")], axis=1)
    _close(got, want, "nbody_acc", rtol=2e-3, atol=2e-3)


# BFS step ----------------------------------------------------------------------------------------
def _bfs_prepare(dev: Device, rng: np.random.Generator, s: dict[str, int]) -> Prepared:
    n = s["n"]
    deg = np.minimum(rng.zipf(1.8, n), 256).astype(np.int64)  # heavy-tailed degrees: irregular work
    row_ptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int32)
    cols = rng.integers(0, n, int(row_ptr[-1]), dtype=np.int32)
    level = np.full(n, -1, np.int32)
    level[rng.random(n) < 0.2] = 0
    bufs = [dev.to_device(a) for a in (row_ptr, cols, level)]
    out = dev.to_device(level.copy())
    return Prepared(lambda: [*bufs, out, np.int32(n), np.int32(0)], {"level": out},
                    {"row_ptr": row_ptr, "cols": cols, "level": level, "s": s})


def _bfs_check(dev: Device, p: Prepared, local: Local) -> None:
    h = p.host
    level = h["level"]
    want = level.copy()
    frontier = np.flatnonzero(level == 0)
    starts, ends = h["row_ptr"][frontier], h["row_ptr"][frontier + 1]
    lengths = ends - starts
    idx = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))
    nbrs = h["cols"][idx]
    nbrs = nbrs[level[nbrs] < 0]
    want[nbrs] = 1
    got = dev.to_host(p.outputs["level"], np.int32)
    if not np.array_equal(got, want):
        raise AssertionError(f"bfs_step: {int(np.sum(got != want))} node levels differ from the NumPy step")


# blur --------------------------------------------------------------------------------------------
def _blur_prepare(dev: Device, rng: np.random.Generator, s: dict[str, int]) -> Prepared:
    x = _f32(rng, s["n"])
    xb, ob = dev.to_device(x), dev.empty(4 * s["n"])
    return Prepared(lambda: [xb, ob, np.int32(s["n"])], {"out": ob}, {"x": x, "s": s})


def _blur_check(dev: Device, p: Prepared, local: Local) -> None:
    x = p.host["x"].astype(np.float64)
    want = np.convolve(np.pad(x, 8), np.ones(17) / 17.0, mode="valid")
    _close(dev.to_host(p.outputs["out"], np.float32), want, "blur1d_local")


def _groups_fixed(s: dict[str, int], dev: Device) -> int:
    return s["groups"]


def _groups_rows(s: dict[str, int], dev: Device) -> int:
    return s["m"]


BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark("reduce", "reduce_sum", REDUCE, 1, "workload", _reduce_prepare, _reduce_check,
              {"n": 1 << 24, "groups": 16384}, {"n": 1 << 16, "groups": 64}, lambda s: (s["n"],),
              groups=_groups_fixed, bytes_moved=lambda s: 4.0 * s["n"], local_defines=True),
    # one row per work-item: enough rows that 1024-wide groups still fill the 132 SMs of an H100
    Benchmark("matvec_row", "matvec_row", MATVEC_ROW, 1, "1d", _matvec_prepare, _matvec_check,
              {"m": 262143, "n": 128}, {"m": 300, "n": 256}, lambda s: (s["m"],),
              bytes_moved=lambda s: 4.0 * s["m"] * s["n"]),
    Benchmark("matvec_wg", "matvec_wg", MATVEC_WG, 1, "workload", _matvec_prepare, _matvec_check,
              {"m": 8191, "n": 2048}, {"m": 300, "n": 256}, lambda s: (s["m"],),
              groups=_groups_rows, bytes_moved=lambda s: 4.0 * s["m"] * s["n"], local_defines=True),
    Benchmark("stencil2d", "stencil2d", STENCIL2D, 2, "2d", _grid_prepare, _stencil_check,
              {"w": 4000, "h": 4000}, {"w": 250, "h": 200}, lambda s: (s["w"], s["h"]),
              bytes_moved=lambda s: 8.0 * s["w"] * s["h"]),
    Benchmark("transpose_naive", "transpose_naive", TRANSPOSE_NAIVE, 2, "2d", _grid_prepare, _transpose_check,
              {"w": 4000, "h": 3000}, {"w": 250, "h": 200}, lambda s: (s["w"], s["h"]),
              bytes_moved=lambda s: 8.0 * s["w"] * s["h"]),
    Benchmark("transpose_tiled", "transpose_tiled", TRANSPOSE_TILED, 2, "2d", _grid_prepare, _transpose_check,
              {"w": 4000, "h": 3000}, {"w": 250, "h": 200}, lambda s: (s["w"], s["h"]),
              bytes_moved=lambda s: 8.0 * s["w"] * s["h"], local_defines=True, max_dim=64, pow2_only=True),
    Benchmark("sgemm_naive", "sgemm_naive", SGEMM_NAIVE, 2, "2d", _sgemm_prepare, _sgemm_check,
              {"M": 1000, "N": 1000, "K": 1000}, {"M": 72, "N": 72, "K": 64}, lambda s: (s["N"], s["M"]),
              bytes_moved=lambda s: 4.0 * (s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"])),
    Benchmark("sgemm_tiled", "sgemm_tiled", SGEMM_TILED, 2, "2d", _sgemm_prepare, _sgemm_check,
              {"M": 1000, "N": 1000, "K": 1000}, {"M": 72, "N": 72, "K": 64}, lambda s: (s["N"], s["M"]),
              bytes_moved=lambda s: 4.0 * (s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"]),
              local_defines=True, max_dim=64, pow2_only=True),
    Benchmark("histogram", "histogram256", HISTOGRAM, 1, "workload", _hist_prepare, _hist_check,
              {"n": 1 << 24, "groups": 4096}, {"n": 1 << 16, "groups": 32}, lambda s: (s["n"],),
              groups=_groups_fixed, bytes_moved=lambda s: 4.0 * s["n"]),
    Benchmark("nbody", "nbody_acc", NBODY, 1, "1d", _nbody_prepare, _nbody_check,
              {"n": 65536}, {"n": 512}, lambda s: (s["n"],),  # 64 groups of 1024 bodies
              bytes_moved=lambda s: 28.0 * s["n"], local_defines=True),
    Benchmark("bfs_step", "bfs_step", BFS_STEP, 1, "irregular", _bfs_prepare, _bfs_check,
              {"n": 1 << 21}, {"n": 1 << 13}, lambda s: (s["n"],),
              bytes_moved=lambda s: 16.0 * s["n"]),
    Benchmark("blur1d", "blur1d_local", BLUR1D, 1, "barrier", _blur_prepare, _blur_check,
              {"n": 1 << 24}, {"n": 1 << 15}, lambda s: (s["n"],),
              bytes_moved=lambda s: 8.0 * s["n"], local_defines=True),
)


def by_name(name: str) -> Benchmark:
    for b in BENCHMARKS:
        if b.name == name:
            return b
    raise KeyError(f"no benchmark kernel {name!r}; known: {', '.join(b.name for b in BENCHMARKS)}")
