"""Device LU with partial pivoting and the triangular solves, written once (OpenCL C, ``REAL`` = ``float``
or ``double``) for both backends through :func:`pytest_gpuperf.devices.dialect.portable_fp64`, plus the fp64 pieces of iterative refinement.

Per column k of the row-major n×n matrix: ``lu_pivot`` (one work-group) finds the largest |a[i][k]|,
i ≥ k, swaps rows k and p across the whole row and records the swap in ``perm``; ``lu_scale`` divides
the column below the pivot by it; ``lu_update`` subtracts the rank-1 product from the trailing matrix.
So PA = LU with L unit lower (below the diagonal) and U upper, in place. ``lu_solve`` (one work-group)
solves L y = P b, then U x = y, a row at a time with the dot products reduced in local memory. A simple
right-looking algorithm — memory-bound on a GPU, so what fp32 saves is mostly bytes; a blocked LU (or
cuSOLVER, through cupy.linalg on CUDA) would be faster in absolute terms but would not run on PoCL.

Refinement kernels (double): ``ir_residual`` r = b − A x (a row per work-item), ``ir_demote`` r → float,
``ir_update`` x += d (float correction promoted).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..devices import ndrange
from ..devices.base import Device
from ..devices.dialect import portable_fp64

WG = 256

LU = r"""
__kernel void lu_pivot(__global REAL* a, __global int* perm, int n, int k) {
  __local REAL best[256];
  __local int where[256];
  int lid = get_local_id(0);
  int wg = get_local_size(0);
  REAL bv = (REAL)-1;
  int bi = k;
  for (int i = k + lid; i < n; i += wg) {
    REAL v = fabs(a[i * n + k]);
    if (v > bv) { bv = v; bi = i; }
  }
  best[lid] = bv;
  where[lid] = bi;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = wg / 2; s > 0; s >>= 1) {
    if (lid < s) {
      if (best[lid + s] > best[lid] || (best[lid + s] == best[lid] && where[lid + s] < where[lid])) {
        best[lid] = best[lid + s];
        where[lid] = where[lid + s];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  int p = where[0];
  if (p != k) {
    for (int j = lid; j < n; j += wg) {
      REAL t = a[k * n + j];
      a[k * n + j] = a[p * n + j];
      a[p * n + j] = t;
    }
    if (lid == 0) { int t = perm[k]; perm[k] = perm[p]; perm[p] = t; }
  }
}

__kernel void lu_scale(__global REAL* a, int n, int k) {
  int i = k + 1 + get_global_id(0);
  if (i < n) a[i * n + k] = a[i * n + k] / a[k * n + k];
}

__kernel void lu_update(__global REAL* a, int n, int k) {
  int j = k + 1 + get_global_id(0);
  int i = k + 1 + get_global_id(1);
  if (i < n && j < n) a[i * n + j] = a[i * n + j] - a[i * n + k] * a[k * n + j];
}

__kernel void lu_solve(__global const REAL* a, __global const int* perm, __global const REAL* b,
                       __global REAL* x, int n) {
  __local REAL part[256];
  int lid = get_local_id(0);
  int wg = get_local_size(0);
  for (int i = 0; i < n; ++i) {
    REAL s = (REAL)0;
    for (int j = lid; j < i; j += wg) s += a[i * n + j] * x[j];
    part[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = wg / 2; h > 0; h >>= 1) {
      if (lid < h) part[lid] += part[lid + h];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) x[i] = b[perm[i]] - part[0];
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  }
  for (int i = n - 1; i >= 0; --i) {
    REAL s = (REAL)0;
    for (int j = i + 1 + lid; j < n; j += wg) s += a[i * n + j] * x[j];
    part[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = wg / 2; h > 0; h >>= 1) {
      if (lid < h) part[lid] += part[lid + h];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) x[i] = (x[i] - part[0]) / a[i * n + i];
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  }
}
"""

REFINE = r"""
__kernel void ir_residual(__global const double* a, __global const double* x, __global const double* b,
                          __global double* r, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  double s = 0.0;
  for (int j = 0; j < n; ++j) s += a[i * n + j] * x[j];
  r[i] = b[i] - s;
}

__kernel void ir_demote(__global const double* src, __global float* dst, int count) {
  int i = get_global_id(0);
  if (i < count) dst[i] = (float)src[i];
}

__kernel void ir_update(__global double* x, __global const float* d, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] = x[i] + (double)d[i];
}

__kernel void ir_promote(__global const float* src, __global double* dst, int n) {
  int i = get_global_id(0);
  if (i < n) dst[i] = (double)src[i];
}
"""


class Kernels:
    """The compiled LU kernels of one precision and the refinement kernels, on one device."""

    def __init__(self, dev: Device, real: str) -> None:
        if real not in ("float", "double"):
            raise ValueError(f"REAL must be float or double, not {real!r}")
        self.dev, self.real = dev, real
        src = portable_fp64(f"#define REAL {real}\n" + LU, dev.info.backend)
        self.lu = dev.compile_many(src, ("lu_pivot", "lu_scale", "lu_update", "lu_solve"))
        rsrc = portable_fp64(REFINE, dev.info.backend)
        self.ir = dev.compile_many(rsrc, ("ir_residual", "ir_demote", "ir_update", "ir_promote"))

    def factor(self, a: Any, perm: Any, n: int) -> list[Any]:
        d, ev = self.dev, []
        for k in range(n):
            ev.append(d.launch(self.lu["lu_pivot"], (WG,), (WG,), [a, perm, np.int32(n), np.int32(k)]))
            m = n - k - 1
            if m:
                ev.append(d.launch(self.lu["lu_scale"], ndrange((m,), (64,)), (64,), [a, np.int32(n), np.int32(k)]))
                ev.append(d.launch(self.lu["lu_update"], ndrange((m, m), (16, 16)), (16, 16),
                                   [a, np.int32(n), np.int32(k)]))
        return ev

    def solve(self, lu: Any, perm: Any, b: Any, x: Any, n: int) -> Any:
        return self.dev.launch(self.lu["lu_solve"], (WG,), (WG,), [lu, perm, b, x, np.int32(n)])

    def residual(self, a: Any, x: Any, b: Any, r: Any, n: int) -> Any:
        return self.dev.launch(self.ir["ir_residual"], ndrange((n,), (64,)), (64,), [a, x, b, r, np.int32(n)])

    def demote(self, src: Any, dst: Any, count: int) -> Any:
        return self.dev.launch(self.ir["ir_demote"], ndrange((count,), (256,)), (256,), [src, dst, np.int32(count)])

    def promote(self, src: Any, dst: Any, n: int) -> Any:
        return self.dev.launch(self.ir["ir_promote"], ndrange((n,), (64,)), (64,), [src, dst, np.int32(n)])

    def update(self, x: Any, d: Any, n: int) -> Any:
        return self.dev.launch(self.ir["ir_update"], ndrange((n,), (64,)), (64,), [x, d, np.int32(n)])
