"""A suite of your own: one kernel of yours, its time gated against your own baseline.

Copy this file into your repository and run, from there::

    gpuperf baseline init --runs 3 -- test_my_kernel.py      # three runs of this file -> baselines/<device-key>.json
    gpuperf run --gpuperf-device=0 test_my_kernel.py          # a run of this file, gated against that baseline
    gpuperf run --gpuperf-device=0 test_my_kernel.py --gpuperf-plant compute=3   # 4x the work: must read regressed

The kernel is OpenCL C; the device's prelude (``gpu_device.info.dialect.prelude``) makes the same text
compile as CUDA. ``gpuperf_plant`` is empty outside a gate check: honouring its ``compute`` size (the
kernel really does 1 + F times the work it is credited with) lets ``--gpuperf-plant`` prove the gate
catches a slowdown of this kernel.
"""

import numpy as np

N = 1 << 12  # work-items
STEPS = 256  # dependent multiply-adds per work-item
SRC = """__kernel void my_kernel(__global float *y, __global const float *x, const int steps) {
    int i = get_global_id(0);
    float v = y[i], a = x[i];
    for (int k = 0; k < steps; ++k) v = v * 0.999f + a;
    y[i] = v;
}"""


def test_my_kernel(gpu_device, gpu_kernel, gpu_measure, gpuperf_record, gpuperf_plant):
    steps = round(STEPS * (1 + float(gpuperf_plant.get("compute", 0))))  # a planted slowdown: more real work
    kernel = gpu_kernel.compile(gpu_device.info.dialect.prelude + SRC, "my_kernel")
    x = gpu_kernel.to_device(np.linspace(0, 1, N, dtype=np.float32))
    y = gpu_kernel.to_device(np.zeros(N, np.float32))
    m = gpu_measure(kernel, (N,), (64,), [y, x, np.int32(steps)])
    us = m.stats.scaled(1e6)
    gpuperf_record("my_kernel.time_us", us.median, "us", better="lower", stats=us, identity={"n": N, "steps": STEPS})
