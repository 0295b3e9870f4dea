"""A reduction: the dot product x·w, each work-item accumulating a strided share, then a tree in local
memory (a *variable* whose type is a template parameter, ``T_tree``); one partial sum per work-group.
Output: the partial sums.

Inputs: x and w from (0, 1).
"""

from __future__ import annotations

import numpy as np

from ..cost import EPS32, Threshold
from .program import Program, Setup

LOCAL = 256

TEMPLATE = r"""
__kernel void dot_partial(__global const double* x, __global const double* w, __global double* partial, int n) {
  __local T_tree tree[256];
  int lid = get_local_id(0);
  int stride = get_global_size(0);
  T_acc acc = (T_acc)0;
  for (int i = get_global_id(0); i < n; i += stride) {
    T_prod prod = (T_prod)x[i] * (T_prod)w[i];
    acc += (T_acc)prod;
  }
  tree[lid] = (T_tree)acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) tree[lid] = (T_tree)tree[lid] + (T_tree)tree[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) partial[get_group_id(0)] = tree[0];
}
"""


def setup(rng: np.random.Generator, is_cpu: bool) -> Setup:
    n = (1 << 20) if is_cpu else (1 << 26)
    groups = 64 if is_cpu else 1024
    x = rng.uniform(0.0, 1.0, n)
    w = rng.uniform(0.0, 1.0, n)

    def launch(dev, ks, bufs):
        return [dev.launch(ks["dot_partial"], (groups * LOCAL,), (LOCAL,),
                           [bufs["x"], bufs["w"], bufs["partial"], np.int32(n)])]

    return Setup({"x": x, "w": w, "partial": np.zeros(groups)}, ("partial",), launch, lambda read: read("partial"),
                 {"n": n, "groups": groups})


PROGRAM = Program("reduction", "dot-product reduction (strided accumulation + local-memory tree)", TEMPLATE,
                  Threshold("rel", EPS32), setup)
