"""LavaMD (Rodinia; thesis §5.3): particles in boxes, each interacting with the particles of its own and
the neighbouring boxes (a 1-D chain of boxes here) through ``exp(−α²r²)`` potentials; one work-group
per box, one work-item per particle. Per interaction, as Rodinia: r² = vᵢ + vⱼ − rᵢ·rⱼ, u² = a2·r²,
vij = exp(−u²), fs = 2·vij, d = rᵢ − rⱼ, f += q·(vij, fs·d). Output: the four force components.

Inputs: positions and charges from (0, 1), the thesis' wider input interval.
"""

from __future__ import annotations

import numpy as np

from ..cost import EPS32, Threshold
from .program import Program, Setup

TEMPLATE = r"""
__kernel void lavamd(__global const double* rv, __global const double* qv, __global double* fv,
                     int per_box, int nbox, double a2) {
  int box = get_group_id(0);
  int i = box * per_box + get_local_id(0);
  T_fvv fvv = (T_fvv)0;
  T_fxx fxx = (T_fxx)0;
  T_fyy fyy = (T_fyy)0;
  T_fzz fzz = (T_fzz)0;
  for (int nb = box - 1; nb <= box + 1; ++nb) {
    if (nb < 0 || nb >= nbox) continue;
    for (int jj = 0; jj < per_box; ++jj) {
      int j = nb * per_box + jj;
      T_dot dot = (T_dot)rv[4 * i + 1] * (T_dot)rv[4 * j + 1] + (T_dot)rv[4 * i + 2] * (T_dot)rv[4 * j + 2]
                + (T_dot)rv[4 * i + 3] * (T_dot)rv[4 * j + 3];
      T_r2 r2 = (T_r2)rv[4 * i] + (T_r2)rv[4 * j] - (T_r2)dot;
      T_u2 u2 = (T_u2)a2 * (T_u2)r2;
      T_vij vij = exp(-(T_vij)u2);
      T_fs fs = (T_fs)2 * (T_fs)vij;
      T_dx dx = (T_dx)rv[4 * i + 1] - (T_dx)rv[4 * j + 1];
      T_dy dy = (T_dy)rv[4 * i + 2] - (T_dy)rv[4 * j + 2];
      T_dz dz = (T_dz)rv[4 * i + 3] - (T_dz)rv[4 * j + 3];
      T_fxij fxij = (T_fxij)fs * (T_fxij)dx;
      T_fyij fyij = (T_fyij)fs * (T_fyij)dy;
      T_fzij fzij = (T_fzij)fs * (T_fzij)dz;
      fvv += (T_fvv)qv[j] * (T_fvv)vij;
      fxx += (T_fxx)qv[j] * (T_fxx)fxij;
      fyy += (T_fyy)qv[j] * (T_fyy)fyij;
      fzz += (T_fzz)qv[j] * (T_fzz)fzij;
    }
  }
  fv[4 * i] = fvv;
  fv[4 * i + 1] = fxx;
  fv[4 * i + 2] = fyy;
  fv[4 * i + 3] = fzz;
}
"""


def setup(rng: np.random.Generator, is_cpu: bool) -> Setup:
    per_box = 64 if is_cpu else 128
    nbox = 16 if is_cpu else 512
    n = per_box * nbox
    rv = rng.uniform(0.0, 1.0, (n, 4))
    rv[:, 0] = (rv[:, 1:] ** 2).sum(axis=1)  # v = |r|², as Rodinia's box layout keeps it
    qv = rng.uniform(0.0, 1.0, n)
    alpha = 0.5

    def launch(dev, ks, bufs):
        return [dev.launch(ks["lavamd"], (n,), (per_box,),
                           [bufs["rv"], bufs["qv"], bufs["fv"], np.int32(per_box), np.int32(nbox),
                            np.float64(2 * alpha * alpha)])]

    return Setup({"rv": rv.ravel(), "qv": qv, "fv": np.zeros(4 * n)}, ("fv",), launch, lambda read: read("fv"),
                 {"particles": n, "per_box": per_box})


PROGRAM = Program("lavamd", "LavaMD particle potentials and forces (Rodinia, thesis §5.3)", TEMPLATE,
                  Threshold("rel", EPS32), setup)
