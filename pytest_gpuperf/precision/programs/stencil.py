"""A 2-D five-point Jacobi stencil, ``sweeps`` sweeps ping-ponging between two grids:
v = c0·u + c1·(north + south + east + west). Output: the final grid.

Inputs from (0, 1); c0 = 0.6, c1 = 0.1 (a diffusion step).
"""

from __future__ import annotations

import numpy as np

from ...devices import ndrange
from ..cost import EPS32, Threshold
from .program import Program, Setup

TEMPLATE = r"""
__kernel void stencil5(__global const double* u, __global double* v, int n, double c0, double c1) {
  int i = get_global_id(0);
  int j = get_global_id(1);
  if (i < 1 || j < 1 || i >= n - 1 || j >= n - 1) return;
  T_ns ns = (T_ns)u[(i - 1) * n + j] + (T_ns)u[(i + 1) * n + j];
  T_ew ew = (T_ew)u[i * n + j - 1] + (T_ew)u[i * n + j + 1];
  T_nb nb = (T_nb)ns + (T_nb)ew;
  T_tc tc = (T_tc)c0 * (T_tc)u[i * n + j];
  T_tn tn = (T_tn)c1 * (T_tn)nb;
  T_out out = (T_out)tc + (T_out)tn;
  v[i * n + j] = out;
}
"""


def setup(rng: np.random.Generator, is_cpu: bool) -> Setup:
    n = 256 if is_cpu else 4096
    sweeps = 8
    u = rng.uniform(0.0, 1.0, n * n)

    def launch(dev, ks, bufs):
        events = []
        for s in range(sweeps):
            src, dst = (bufs["u"], bufs["v"]) if s % 2 == 0 else (bufs["v"], bufs["u"])
            events.append(dev.launch(ks["stencil5"], ndrange((n, n), (16, 16)), (16, 16),
                                     [src, dst, np.int32(n), np.float64(0.6), np.float64(0.1)]))
        return events

    last = "u" if sweeps % 2 == 0 else "v"
    return Setup({"u": u, "v": u.copy()}, ("u", "v"), launch, lambda read: read(last), {"n": n, "sweeps": sweeps})


PROGRAM = Program("stencil", "2-D five-point Jacobi stencil, 8 sweeps", TEMPLATE, Threshold("rel", EPS32), setup)
