"""LU decomposition (thesis §5.2), Doolittle in place: for each k, ``lu_row`` computes row k of U and
``lu_col`` column k of L, each element a dot product over the earlier columns (a loop-carried
accumulation: a recurrence in the data-flow graph). Output: the packed L\\U factors.

Inputs from (1e-2, 1e-1) as in the thesis, plus n·0.1 on the diagonal (no pivoting: see ``gaussian``).
"""

from __future__ import annotations

import numpy as np

from ...devices import ndrange
from ..cost import EPS32, Threshold
from .program import Program, Setup

TEMPLATE = r"""
__kernel void lu_row(__global double* a, int n, int k) {
  int j = k + get_global_id(0);
  if (j >= n) return;
  T_usum usum = (T_usum)0;
  for (int p = 0; p < k; ++p) {
    T_uprod uprod = (T_uprod)a[k * n + p] * (T_uprod)a[p * n + j];
    usum += (T_usum)uprod;
  }
  T_uval uval = (T_uval)a[k * n + j] - (T_uval)usum;
  a[k * n + j] = uval;
}

__kernel void lu_col(__global double* a, int n, int k) {
  int i = k + 1 + get_global_id(0);
  if (i >= n) return;
  T_lsum lsum = (T_lsum)0;
  for (int p = 0; p < k; ++p) {
    T_lprod lprod = (T_lprod)a[i * n + p] * (T_lprod)a[p * n + k];
    lsum += (T_lsum)lprod;
  }
  T_ldiff ldiff = (T_ldiff)a[i * n + k] - (T_ldiff)lsum;
  T_lval lval = (T_lval)ldiff / (T_lval)a[k * n + k];
  a[i * n + k] = lval;
}
"""


def setup(rng: np.random.Generator, is_cpu: bool) -> Setup:
    n = 64 if is_cpu else 512
    a = rng.uniform(1e-2, 1e-1, (n, n)) + np.eye(n) * n * 0.1

    def launch(dev, ks, bufs):
        events = []
        for k in range(n):
            events.append(dev.launch(ks["lu_row"], ndrange((n - k,), (64,)), (64,),
                                     [bufs["a"], np.int32(n), np.int32(k)]))
            if k < n - 1:
                events.append(dev.launch(ks["lu_col"], ndrange((n - k - 1,), (64,)), (64,),
                                         [bufs["a"], np.int32(n), np.int32(k)]))
        return events

    return Setup({"a": a.ravel()}, ("a",), launch, lambda read: read("a"), {"n": n})


PROGRAM = Program("lu", "LU decomposition (Doolittle, thesis §5.2), packed L\\U", TEMPLATE,
                  Threshold("rel", EPS32), setup)
