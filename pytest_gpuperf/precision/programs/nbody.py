"""One all-pairs n-body step: accelerations with Plummer softening, then an explicit Euler update of
velocities and positions. Output: the new positions and velocities.

Inputs: positions from (0, 1)³, velocities from (−0.1, 0.1), masses from (0.5, 1)/n; dt = 1e-3,
softening² = 1e-3.
"""

from __future__ import annotations

import numpy as np

from ...devices import ndrange
from ..cost import EPS32, Threshold
from .program import Program, Setup

TEMPLATE = r"""
__kernel void nbody_step(__global const double* pos, __global const double* vel, __global double* pout,
                         __global double* vout, int n, double dt, double soft) {
  int i = get_global_id(0);
  if (i >= n) return;
  T_ax ax = (T_ax)0;
  T_ay ay = (T_ay)0;
  T_az az = (T_az)0;
  for (int j = 0; j < n; ++j) {
    T_rx rx = (T_rx)pos[4 * j] - (T_rx)pos[4 * i];
    T_ry ry = (T_ry)pos[4 * j + 1] - (T_ry)pos[4 * i + 1];
    T_rz rz = (T_rz)pos[4 * j + 2] - (T_rz)pos[4 * i + 2];
    T_d2 d2 = (T_d2)rx * (T_d2)rx + (T_d2)ry * (T_d2)ry + (T_d2)rz * (T_d2)rz + (T_d2)soft;
    T_inv inv = (T_inv)1 / sqrt((T_inv)d2);
    T_inv3 inv3 = (T_inv3)inv * (T_inv3)inv * (T_inv3)inv;
    T_s s = (T_s)pos[4 * j + 3] * (T_s)inv3;
    ax += (T_ax)rx * (T_ax)s;
    ay += (T_ay)ry * (T_ay)s;
    az += (T_az)rz * (T_az)s;
  }
  T_vx vx = (T_vx)vel[4 * i] + (T_vx)dt * (T_vx)ax;
  T_vy vy = (T_vy)vel[4 * i + 1] + (T_vy)dt * (T_vy)ay;
  T_vz vz = (T_vz)vel[4 * i + 2] + (T_vz)dt * (T_vz)az;
  T_px px = (T_px)pos[4 * i] + (T_px)dt * (T_px)vx;
  T_py py = (T_py)pos[4 * i + 1] + (T_py)dt * (T_py)vy;
  T_pz pz = (T_pz)pos[4 * i + 2] + (T_pz)dt * (T_pz)vz;
  vout[4 * i] = vx;
  vout[4 * i + 1] = vy;
  vout[4 * i + 2] = vz;
  pout[4 * i] = px;
  pout[4 * i + 1] = py;
  pout[4 * i + 2] = pz;
}
"""


def setup(rng: np.random.Generator, is_cpu: bool) -> Setup:
    n = 1024 if is_cpu else 16384
    pos = np.zeros((n, 4))
    pos[:, :3] = rng.uniform(0.0, 1.0, (n, 3))
    pos[:, 3] = rng.uniform(0.5, 1.0, n) / n
    vel = np.zeros((n, 4))
    vel[:, :3] = rng.uniform(-0.1, 0.1, (n, 3))

    def launch(dev, ks, bufs):
        return [dev.launch(ks["nbody_step"], ndrange((n,), (64,)), (64,),
                           [bufs["pos"], bufs["vel"], bufs["pout"], bufs["vout"], np.int32(n), np.float64(1e-3),
                            np.float64(1e-3)])]

    def result(read):
        return np.concatenate([read("pout").reshape(n, 4)[:, :3].ravel(), read("vout").reshape(n, 4)[:, :3].ravel()])

    return Setup({"pos": pos.ravel(), "vel": vel.ravel(), "pout": np.zeros(4 * n), "vout": np.zeros(4 * n)},
                 ("pout", "vout"), launch, result, {"n": n})


PROGRAM = Program("nbody", "all-pairs n-body step (softened gravity, Euler update)", TEMPLATE,
                  Threshold("rel", EPS32), setup)
