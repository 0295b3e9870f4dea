"""Skipped tests summed up in one line by what they need (report.skip_reasons): the reasons the marker
and the suites write, read into categories; and the line at the end of a real PoCL run."""

from __future__ import annotations

import pytest

from pytest_gpuperf.devices import discover
from pytest_gpuperf.report import skip_reasons

CL = [d for d in discover().devices if d.backend == "opencl"]


@pytest.mark.parametrize("reason,need", [
    ("opencl:0 (pthread-skylake) lacks cuda", "need CUDA"),
    ("opencl:0 (pthread-skylake) lacks cuda, fp16", "need CUDA"),  # counted once, under what is most fundamental
    ("cupy_raw: cupy_raw needs a CUDA device; opencl:0 is opencl (pthread); CuPy is not installed here", "need CUDA"),
    ("__sinf is a cuda function; this device is opencl", "need CUDA"),
    ("Nsight Compute counters exist only on CUDA devices; opencl:0 (x) is an OpenCL device", "need CUDA"),
    ("pthread-skylake has no SM occupancy model (not an NVIDIA device): λ0 is not defined", "need CUDA"),
    ("pthread-skylake has no binary16 support (cl_khr_fp16)", "need fp16"),
    ("opencl:0 (x) lacks fp16", "need fp16"),
    ("pthread-skylake has no binary64 support", "need fp64"),
    ("opencl:0 (x) lacks clock, fp64", "need fp64"),
    ("opencl:0 (x) has no power sensor: no NVML", "need a power sensor"),
    ("__sinf is a cuda function; this device is opencl", "need CUDA"),
    ("native_sin is an opencl function; this device is cuda", "need an OpenCL device"),
    # a device with a sensor whose folder holds no measured corpus: the line must not say the device lacks one
    ("no power corpus for nvidia-h200 (results/nvidia-h200/power-corpus-cuda.json): collect it with python -m x",
     "found no saved power corpus (results/<key>/power-corpus-<backend>.json)"),
    ("--gpuperf-tuning-budget=60 s spent before reduce; raise it to tune every kernel", "ran out of --gpuperf-tuning-budget"),
    ("opencl:0 abandoned earlier in this run: watchdog fired", "were skipped after their device was abandoned"),
    ("pyopencl has no hypot", skip_reasons.OTHER),
])
def test_reasons_fall_into_what_the_tests_need(reason, need):
    assert skip_reasons.category(reason) == need


def test_one_line_largest_group_first_naming_the_device_that_lacks_it():
    skips = [(f"suites/test_a.py::test_{i}[opencl:0-fp32]", "opencl:0 (x) lacks cuda") for i in range(228)]
    skips += [(f"suites/test_b.py::test_{i}[opencl:0]", "x has no binary16 support (cl_khr_fp16)") for i in range(20)]
    skips += [("suites/test_c.py::test_h[opencl:0]", "pyopencl has no hypot"),
              ("suites/test_c.py::test_i[cuda:0]", "cuda:0 (H200) lacks cpu")]
    line = skip_reasons.summary_line(skips, ["cuda:0", "opencl:0"])
    assert line == ("gpuperf skipped: 228 tests need CUDA, which opencl:0 lacks; 20 need fp16, which opencl:0 lacks; "
                    "1 needs a CPU device, which cuda:0 lacks; 1 skipped for other reasons (-rs lists each)")
    corpus = skip_reasons.summary_line([("suites/test_power.py::test_power_model[cuda:0]",
                                          "no power corpus for nvidia-h200 (results/nvidia-h200/power-corpus-cuda.json)")],
                                        ["cuda:0"])
    assert corpus == ("gpuperf skipped: 1 test found no saved power corpus "
                      "(results/<key>/power-corpus-<backend>.json) (-rs lists each)")
    assert skip_reasons.summary_line([]) is None
    assert skip_reasons.device_of("suites/test_a.py::test_x[opencl:10-fp32]", ["opencl:1", "opencl:10"]) == "opencl:10"


SUITE = '''
import pytest

@pytest.mark.gpuperf(requires=["cuda"])
def test_cuda_only(gpu_device):
    pass

@pytest.mark.gpuperf(requires=["cuda"])
@pytest.mark.parametrize("n", [1, 2])
def test_cuda_only_too(gpu_device, n):
    pass

def test_own_reason(gpu_device):
    pytest.skip("nothing to do here")

def test_runs(gpu_device):
    pass
'''


@pytest.mark.skipif(not CL, reason="no OpenCL device (install pocl-opencl-icd)")
def test_the_line_ends_a_run_on_pocl(pytester):
    pytester.makepyfile(SUITE)
    result = pytester.runpytest_subprocess("--gpuperf-device=opencl:0", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=4)
    assert ("gpuperf skipped: 3 tests need CUDA, which opencl:0 lacks; 1 skipped for other reasons (-rs lists each)"
            in result.stdout.str())
