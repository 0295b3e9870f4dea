"""A kernel with more to tune than its work-group: a three-point blur whose ``__local`` tile is sized by the
work-group and a tile factor, tuned over both through Kernel Tuner (:func:`.ktparams.tune`, which ``api.tune``
with ``tune_params`` calls), every configuration's output checked against NumPy. It is the shipped suites' case
of the Kernel Tuner path docs/tuning.md shows users, so every device that runs the suites tunes it.
"""

from __future__ import annotations

import numpy as np

from ..devices.base import Device
from . import ktparams

SOURCE = r"""
__kernel void blur(__global const float* x, __global float* y, int n) {
    __local float tile[block_size_x * TILE + 2];
    int first = get_group_id(0) * block_size_x * TILE, l = get_local_id(0);
    for (int k = 0; k < TILE; k++) {
        int i = first + k * block_size_x + l;
        tile[k * block_size_x + l + 1] = i < n ? x[i] : 0.0f;
    }
    if (l == 0) {
        int last = first + block_size_x * TILE;
        tile[0] = first > 0 ? x[first - 1] : 0.0f;
        tile[block_size_x * TILE + 1] = last < n ? x[last] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; k++) {
        int j = k * block_size_x + l;
        if (first + j < n) y[first + j] = (tile[j] + tile[j + 1] + tile[j + 2]) / 3.0f;
    }
}"""

#: the tuned parameters: work-group size and tile factor (every pair a compile-time define)
PARAMS = {"block_size_x": [64, 128, 256], "TILE": [1, 2, 4]}
N = 1 << 20  # points: 1,024 to 16,384 work-groups, enough to fill a GPU


def tune(device: Device) -> ktparams.ParamsTuned:
    """Tune the blur's work-group size and tile factor with Kernel Tuner's brute force on ``device``; every
    configuration's output must match NumPy's three-point mean within 1e-5."""
    x = np.random.default_rng(0).random(N, dtype=np.float32)
    reference = np.convolve(np.pad(x, 1), np.full(3, 1 / 3), "valid").astype(np.float32)
    return ktparams.tune(device, SOURCE, "blur", [x, np.zeros_like(x), np.int32(N)], (N,), PARAMS,
                         grid_div=[["block_size_x", "TILE"]], answer=[None, reference, None], atol=1e-5,
                         strategy="brute_force")
