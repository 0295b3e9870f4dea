"""Predict a kernel's time from two short samples: python examples/predict_time.py [device]"""
import sys

import numpy as np

from pytest_gpuperf import api

SRC = """__kernel void triad(__global const float* a, __global const float* b, __global float* c, int n) {
    int i = get_global_id(0);
    if (i < n) c[i] = a[i] + 3.0f * b[i];
}"""
local, groups = 64, 8192
n = local * groups
a, b = np.ones(n, np.float32), np.full(n, 2.0, np.float32)
p = api.predict(SRC, "triad", [a, b, np.empty(n, np.float32), np.int32(n)], groups, local, measure_full=True,
                dev=sys.argv[1] if len(sys.argv) > 1 else "0")
print(f"P_sat {p.p_sat} ({p.limit}); sampled {p.sample_groups} of {p.n_groups} groups")
print(f"predicted {p.predicted_s * 1e6:.1f} us, measured {p.measured_s * 1e6:.1f} us, error {p.error_rel:.1%}")
