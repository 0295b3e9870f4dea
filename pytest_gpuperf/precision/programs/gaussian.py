"""Gaussian elimination, Rodinia's GE (thesis §5.1): ``fan1`` computes the multipliers of column t,
``fan2`` eliminates them from the rows below and from b; the host launches both n − 1 times and
back-substitutes (in double, as Rodinia does on the CPU). Output: the solution x.

Inputs as in the thesis: A from (1e-2, 1e-1), b from (1e1, 1e2); Rodinia's GE does not pivot, so
n·0.1 is added to A's diagonal (diagonal dominance) — without it the unpivoted elimination's growth,
not the precision, would decide the error.
"""

from __future__ import annotations

import numpy as np

from ...devices import ndrange
from ..cost import EPS32, Threshold
from .program import Program, Setup

TEMPLATE = r"""
__kernel void ge_fan1(__global const double* a, __global double* m, int n, int t) {
  int i = get_global_id(0);
  if (i >= n - 1 - t) return;
  int r = i + t + 1;
  T_mult mult = (T_mult)a[r * n + t] / (T_mult)a[t * n + t];
  m[r * n + t] = mult;
}

__kernel void ge_fan2(__global double* a, __global double* b, __global const double* m, int n, int t) {
  int x = get_global_id(0);
  int y = get_global_id(1);
  if (x >= n - 1 - t || y >= n - t) return;
  int r = x + 1 + t;
  int c = y + t;
  T_prod prod = (T_prod)m[r * n + t] * (T_prod)a[t * n + c];
  T_elim elim = (T_elim)a[r * n + c] - (T_elim)prod;
  a[r * n + c] = elim;
  if (y == 0) {
    T_bprod bprod = (T_bprod)m[r * n + t] * (T_bprod)b[t];
    T_belim belim = (T_belim)b[r] - (T_belim)bprod;
    b[r] = belim;
  }
}
"""


def back_substitute(u: np.ndarray, b: np.ndarray) -> np.ndarray:
    n = b.size
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - u[i, i + 1:] @ x[i + 1:]) / u[i, i]
    return x


def setup(rng: np.random.Generator, is_cpu: bool) -> Setup:
    n = 64 if is_cpu else 512
    a = rng.uniform(1e-2, 1e-1, (n, n)) + np.eye(n) * n * 0.1
    b = rng.uniform(1e1, 1e2, n)

    def launch(dev, ks, bufs):
        events = []
        for t in range(n - 1):
            events.append(dev.launch(ks["ge_fan1"], ndrange((n - 1 - t,), (64,)), (64,),
                                     [bufs["a"], bufs["m"], np.int32(n), np.int32(t)]))
            events.append(dev.launch(ks["ge_fan2"], ndrange((n - 1 - t, n - t), (8, 8)), (8, 8),
                                     [bufs["a"], bufs["b"], bufs["m"], np.int32(n), np.int32(t)]))
        return events

    def result(read):
        return back_substitute(read("a").reshape(n, n), read("b"))

    return Setup({"a": a.ravel(), "b": b, "m": np.zeros(n * n)}, ("a", "b", "m"), launch, result, {"n": n})


PROGRAM = Program("gaussian", "Gaussian elimination (Rodinia GE, thesis §5.1), solution x", TEMPLATE,
                  Threshold("rel", EPS32), setup)
