"""Device discovery, the --gpuperf-device grammar, compile/launch errors and the watchdog, on the real
OpenCL device of this machine (PoCL in CI). CUDA-only checks skip where no CUDA device exists."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.devices import discover, ndrange, open_device, resolve, slugify
from pytest_gpuperf.devices.base import check_ndrange
from pytest_gpuperf.errors import (DeviceAbandonedError, DeviceNotFoundError, KernelCompileError, KernelLaunchError,
                                   ProbeTimeoutError)

INV = discover()
OPENCL = [d for d in INV.devices if d.backend == "opencl"]
needs_opencl = pytest.mark.skipif(not OPENCL, reason=f"no OpenCL device here: {INV.unavailable.get('opencl')}")


def test_slugify_names_baseline_files():
    assert slugify("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3"
    assert slugify("pocl pthread-haswell-AMD EPYC") == "pocl-pthread-haswell-amd-epyc"
    assert slugify("  ") == "unknown-device"


@needs_opencl
def test_grammar_resolves_real_devices():
    first = resolve("0", INV)[0]
    cuda = [d for d in INV.devices if d.backend == "cuda"]
    assert first.backend == ("cuda" if cuda else "opencl")
    assert resolve("opencl:0", INV)[0].spec == "opencl:0"
    assert [d.spec for d in resolve("all", INV)] == [d.spec for d in INV.devices]
    assert resolve("opencl:0,opencl:0", INV) == resolve("opencl:0", INV)


@pytest.mark.parametrize("bad", ["opencl:99", "cuda:x", "gpu", "7", "vulkan:0", ""])
def test_unknown_device_lists_real_ones(bad):
    with pytest.raises(DeviceNotFoundError) as err:
        resolve(bad, INV)
    msg = str(err.value)
    assert "names no device" in msg and "Devices found" in msg
    for d in INV.devices:
        assert d.spec in msg


def test_ndrange_pads_and_checks():
    assert ndrange((1000, 30), (64, 8)) == (1024, 32)
    with pytest.raises(KernelLaunchError, match="not a multiple"):
        check_ndrange((100,), (64,), 1024)
    with pytest.raises(KernelLaunchError, match="exceeds the device limit"):
        check_ndrange((2048,), (2048,), 1024)
    with pytest.raises(KernelLaunchError, match="differ in rank"):
        check_ndrange((64, 64), (64,), 1024)


def test_identity_is_complete(cl_device):
    info = cl_device.info
    assert info.name and info.driver_version and info.key == slugify(info.key)
    assert info.compute_units > 0 and info.max_work_group_size > 0 and info.memory_bytes > 0
    doc = info.to_json()
    assert doc["spec"] == "opencl:0" and doc["key"] == info.key


def test_compile_is_cached_and_runs(cl_device):
    src = "__kernel void axpy(__global float *y, __global const float *x, float a) {" \
          " int i = get_global_id(0); y[i] += a * x[i]; }"
    k1 = cl_device.compile(src, "axpy")
    assert cl_device.compile(src, "axpy") is k1
    assert cl_device.compile(src, "axpy", ("-cl-fast-relaxed-math",)) is not k1
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(256).astype(np.float32), rng.standard_normal(256).astype(np.float32)
    bx, by = cl_device.to_device(x), cl_device.to_device(y)
    secs = cl_device.elapsed(cl_device.timed(lambda: cl_device.launch(k1, (256,), (64,), [by, bx, np.float32(2)])), 10)
    assert secs > 0
    np.testing.assert_allclose(cl_device.to_host(by, np.float32), y + 2 * x, rtol=1e-6)


def test_compile_error_carries_the_compiler_log(cl_device):
    with pytest.raises(KernelCompileError) as err:
        cl_device.compile("__kernel void broken(__global float *a) { a[0] = undefined_name; }", "broken")
    assert "undefined_name" in err.value.log
    assert "broken" in str(err.value) and "language prelude" not in str(err.value)  # the user's own text alone


def test_a_compile_error_in_a_portable_kernel_says_how_far_the_prelude_moves_its_line_numbers(cl_device):
    from pytest_gpuperf.devices.dialect import dialect, portable

    text = "__kernel void broken(__global float *a) {\n  a[0] = undefined_name;\n}\n"
    with pytest.raises(KernelCompileError) as err:
        cl_device.compile(portable(text, "opencl"), "broken")
    n = dialect("opencl").prelude.count("\n")
    assert f"the compiler's line L is your line L − {n}" in str(err.value)
    assert f":{n + 2}:" in err.value.log  # the undefined name sits on the kernel's own line 2


def test_missing_kernel_name_is_a_compile_error(cl_device):
    with pytest.raises(KernelCompileError, match="no kernel named"):
        cl_device.compile("__kernel void a(__global int *x) { x[0] = 1; }", "b")


def test_bad_launch_names_the_sizes(cl_device):
    k = cl_device.compile("__kernel void one(__global int *x) { x[get_global_id(0)] = 1; }", "one")
    buf = cl_device.empty(4096)
    with pytest.raises(KernelLaunchError, match=r"global size \(100,\)"):
        cl_device.launch(k, (100,), (64,), [buf])


def test_watchdog_turns_a_long_kernel_into_a_timeout(cl_device):
    """The watchdog fires, and the device is abandoned: nothing more is queued behind the work that did
    not finish, nor waited for (a blocking read or close() there could hang the process for good).
    A device of its own, so the module's shared one stays usable."""
    dev = open_device(cl_device.info)
    src = """__kernel void spin(__global float *x, int n) {
        float v = x[get_global_id(0)];
        for (int i = 0; i < n; ++i) v = v * 1.0000001f + 1e-7f;
        x[get_global_id(0)] = v; }"""
    k = dev.compile(src, "spin")
    buf = dev.to_device(np.ones(4, np.float32))
    handle = dev.timed(lambda: dev.launch(k, (4,), (1,), [buf, np.int32(400_000_000)]))
    with pytest.raises(ProbeTimeoutError, match="did not finish within"):
        dev.elapsed(handle, 0.01)
    assert dev.abandoned is not None and "did not finish within" in dev.abandoned
    with pytest.raises(DeviceAbandonedError, match="abandoned earlier in this run"):
        dev.to_host(buf, np.float32)
    with pytest.raises(DeviceAbandonedError):
        dev.launch(k, (4,), (1,), [buf, np.int32(1)])
    dev.close()  # returns at once: an abandoned device is never waited for


def test_cuda_backend_reports_why_it_is_unavailable():
    cuda = [d for d in INV.devices if d.backend == "cuda"]
    if cuda:
        pytest.skip("a CUDA device exists here; the unavailable path is not reachable")
    assert "cuda" in INV.unavailable and INV.unavailable["cuda"]
