"""Workload tuner (Dao §3.5.1): detection, and the two-step index-space transformation produces the
same output as the untransformed kernel on fresh random inputs, for every C."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.tuning import workload
from pytest_gpuperf.tuning.evaluate import Config, Evaluator
from pytest_gpuperf.tuning.kernels import by_name
from pytest_gpuperf.tuning.tuner import tuning_config


@pytest.mark.parametrize("name,grows", [("reduce", True), ("matvec_wg", True), ("histogram", False),
                                        ("matvec_row", False), ("nbody", False), ("blur1d", False),
                                        ("bfs_step", False)])
def test_detect(name, grows):
    b = by_name(name)
    sizes = b.sizes_cpu
    v = workload.detect(b.source, lambda loc: b.ndrange(sizes, loc, None), 32, 1024)
    assert v.grows is grows, v.reason


def test_transform_rejects_2d_kernels():
    with pytest.raises(ValueError, match="1-D kernels only"):
        workload.transform(by_name("stencil2d").source, 32, 2)
    with pytest.raises(ValueError, match="C ≥ 1"):
        workload.transform(by_name("reduce").source, 32, 0)


def test_transform_slices_local_arrays_per_virtual_group():
    text = workload.transform(by_name("histogram").source, 32, 4)
    assert "__local uint h__all[__WL_C * (256)];" in text
    assert "LOCAL_PTR(uint) h = h__all + __wl_vgroup() * (256);" in text  # shim: __local uint* (OpenCL), uint* (CUDA)


def test_transformed_launch_pads_virtual_groups():
    glob, loc, launched = workload.transformed_launch(10, 32, 4)
    assert loc == (32, 4) and glob == (32, 12) and launched == 12


def _output(ev: Evaluator, cfg: Config, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    p = ev.bench.prepare(ev.device, rng, ev.sizes)
    k = ev.kernel(cfg)
    glob, loc, groups = ev.geometry(cfg)
    ev.device.launch(k, glob, loc, p.args())
    ev.device.synchronize()
    out = next(iter(p.outputs.values()))
    p.host["launched_groups"] = groups
    ev.bench.check(ev.device, p, cfg.local)  # against NumPy
    if ev.bench.name == "reduce":
        return np.array([ev.device.to_host(out, np.float32, groups).astype(np.float64).sum()])
    return ev.device.to_host(out, np.uint32 if ev.bench.name == "histogram" else np.float32)


@pytest.mark.parametrize("name", ["reduce", "matvec_wg", "histogram"])
def test_transformed_equals_untransformed(gpu_device, name):
    b = by_name(name)
    ev = Evaluator(gpu_device, b, b.sizes(gpu_device), tuning_config(gpu_device))
    warp = ev.warp
    want = _output(ev, Config((warp,)), seed=77)  # original kernel at WARP_SIZE, same fresh inputs
    for c in (1, 2, 3, 5):
        got = _output(ev, Config((warp, c), "wl"), seed=77)
        if b.name == "histogram":
            assert np.array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-5)
