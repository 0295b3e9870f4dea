"""Tune the work-group size of your own kernel: python examples/tune_workgroup.py [device]"""
import sys

import numpy as np

from pytest_gpuperf import api

SRC = """__kernel void scale_add(__global const float* x, __global float* y, float a, int n) {
    int i = get_global_id(0);
    if (i < n) y[i] = a * x[i] + 1.0f;
}"""
n = 1 << 20
x = np.random.default_rng(0).random(n, dtype=np.float32)
ok = lambda arrays: np.allclose(arrays[1], 2.0 * x + 1.0, rtol=1e-6)  # noqa: E731 - arrays = [x, y] after a launch
best = api.tune(SRC, "scale_add", [x, np.zeros(n, np.float32), np.float32(2.0), np.int32(n)], (n,), check=ok,
                dev=sys.argv[1] if len(sys.argv) > 1 else "0")
print(f"tuned work-group {best.local}: {best.time_s * 1e6:.1f} us, {best.evaluations} of {best.space} sizes timed, "
      f"output checked: {best.checked}")
