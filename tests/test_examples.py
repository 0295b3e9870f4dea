"""The user examples run as a user runs them (a subprocess on the test's device) and say sane things;
the API's checks can refuse (a wrong output check fails the tuning call)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pytest_gpuperf import api

ROOT = Path(__file__).resolve().parent.parent
NUM = r"([0-9.e+-]+)"


def run_example(name: str, spec: str) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / name), spec], capture_output=True, text=True,
                          timeout=300, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_tune_example(gpu_device):
    out = run_example("tune_workgroup.py", gpu_device.info.spec)
    m = re.search(rf"tuned work-group \((\d+),\): {NUM} us, (\d+) of (\d+) sizes timed, output checked: True", out)
    assert m, out
    local, us, timed, space = int(m[1]), float(m[2]), int(m[3]), int(m[4])
    assert 1 <= local <= gpu_device.info.max_work_group_size and us > 0 and 1 <= timed <= space


def test_predict_example(gpu_device):
    out = run_example("predict_time.py", gpu_device.info.spec)
    m = re.search(rf"P_sat (\d+) .*sampled \((\d+), (\d+)\) of 8192 groups\npredicted {NUM} us, measured {NUM} us", out)
    assert m, out
    p_sat, p1, p2, predicted, measured = int(m[1]), int(m[2]), int(m[3]), float(m[4]), float(m[5])
    assert p_sat >= 1 and 0 < p1 < p2 < 8192 and 3 * p1 == 2 * p2 and measured > 0 and np.isfinite(predicted)


def test_accuracy_example(gpu_device):
    out = run_example("check_accuracy.py", gpu_device.info.spec)
    found = {m[1]: float(m[2]) for m in re.finditer(rf"^(.+?)\s+vs MPFR exp: max {NUM} ulp", out, re.M)}
    assert set(found) == {"exp(x0)", "native_exp(x0)", "exp2(x0 * 1.44269504f)"}, out
    assert found["exp(x0)"] <= 3.0  # OpenCL C's bound for fp32 exp (full profile)
    assert all(v >= 0 for v in found.values())


def test_a_refusing_check_fails_the_tuning(gpu_device):
    src = "__kernel void twice(__global float* y, int n) { int i = get_global_id(0); if (i < n) y[i] = 2.0f; }"
    n = 4096
    with pytest.raises(AssertionError, match="refused"):
        api.tune(src, "twice", [np.zeros(n, np.float32), np.int32(n)], (n,), dev=gpu_device,
                 check=lambda arrays: np.all(arrays[0] == 3.0), strategy="exhaustive")


def test_check_accuracy_calls_a_function_of_ones_own_and_refuses_a_wrong_arity_or_format(gpu_device):
    """``helpers=``: the caller's own device function, which the expression calls (OpenCL C here); a reference of
    two inputs given one, or binary16 on a device without it, is refused with the reason, not a compile error."""
    if gpu_device.info.backend != "opencl":
        pytest.skip("the helper below is OpenCL C (a CUDA helper is a __device__ function)")
    x = np.linspace(0.5, 8.0, 4001, dtype=np.float32)
    own = api.check_accuracy("my_exp(x0)", "exp", [x], dev=gpu_device,
                             helpers="float my_exp(float v) { return exp2(v * 1.44269504f); }")
    lib = api.check_accuracy("exp(x0)", "exp", [x], dev=gpu_device)
    assert own.n == lib.n == x.size and own.max_ulp > lib.max_ulp  # through exp2 it loses bits: a real difference
    with pytest.raises(ValueError, match=r"pow takes 2 input\(s\) \(x0, x1\); 1 were given"):
        api.check_accuracy("pow(x0, x1)", "pow", [x], dev=gpu_device)
    if "fp16" not in gpu_device.info.features:
        with pytest.raises(ValueError, match="has no binary16 arithmetic"):
            api.check_accuracy("sin(x0)", "sin", [x], fmt="fp16", dev=gpu_device)
