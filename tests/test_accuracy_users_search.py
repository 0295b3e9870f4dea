"""The user-library worst-case search is kept across runs and spot-checked: a later run evaluates the stored
worst inputs through the library again and reuses the search only when every output bit is the same."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.accuracy import fp_formats, functions, usermath_check
from pytest_gpuperf.devices.usermath import UserMath, user_math


@pytest.fixture
def store(monkeypatch, tmp_path):
    monkeypatch.setenv("GPUPERF_CACHE", str(tmp_path))
    return tmp_path


def _search(device, um):
    fmt, f = fp_formats.get("fp32"), functions.FUNCTIONS["sin"]
    expr = f.expr(device.info.backend, "fp32", ["x0"])
    return usermath_check._search(device, um, "sin", fmt, f, expr, f.metric(device.info.backend, "fp32"),
                                  np.random.default_rng(3))


def test_a_second_run_reuses_the_search_after_its_spot_check(cl_device, store):
    um = user_math(cl_device, "pyopencl")
    first, max1 = _search(cl_device, um)
    again, max2 = _search(cl_device, um)
    assert first["stored"]["cached"] is False and again["stored"]["cached"] is True
    assert again["stored"]["spot_checked"] > 0 and max2 == max1 and again["worst"] == first["worst"]


def test_a_library_whose_outputs_moved_is_searched_again(cl_device, store):
    um = user_math(cl_device, "pyopencl")
    _search(cl_device, um)

    def one_ulp_up(fn, args, dtype, expr):  # the same library key, other output bits: a new build behaves so
        y = np.asarray(um.evaluate(fn, args, dtype, expr), dtype)
        return np.nextafter(y, np.inf, dtype=dtype)

    moved = UserMath(um.library, um.build, um.options, um.flushes_subnormals, um.spelling, one_ulp_up)
    found, _ = _search(cl_device, moved)
    assert found["stored"]["cached"] is False


ALL_CASES = [(lib, fn, fmt) for lib in ("pyopencl", *usermath_check.AHEAD_LIBRARIES) for fn in usermath_check.FNS
             for fmt in ("fp32", "fp64")]


def test_building_ahead_builds_nothing_off_cuda_and_notes_no_source(cl_device):
    before = set(cl_device.source_digests)
    assert usermath_check.compile_ahead(cl_device, ALL_CASES) == 0
    assert set(cl_device.source_digests) == before


def test_building_ahead_on_cuda_builds_each_selected_cupy_kernel_into_cupy_s_cache(tmp_path, monkeypatch):
    pytest.importorskip("cupy", reason="CuPy is not installed on this machine (the cuda extra)")
    from pytest_gpuperf.devices import discover, open_device

    cuda = [d for d in discover().devices if d.backend == "cuda"]
    if not cuda:
        pytest.skip("no CUDA device on this machine: the build ahead runs on CUDA only")
    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path / "cupy"))  # empty: every kernel is compiled here
    dev = open_device(cuda[0])
    try:
        cases = [("cupy", "sin", "fp32"), ("cupy_elementwise", "sin", "fp32"), ("cupy_raw", "sin", "fp32"),
                 ("cupy_raw", "pow", "fp64"), ("cupy", "exp10", "fp32"), ("pyopencl", "sin", "fp32")]
        before = set(dev.source_digests)
        # CuPy has no exp10 ufunc and PyOpenCL is not this device's: four kernels
        assert usermath_check.compile_ahead(dev, cases + cases) == 4
        assert set(dev.source_digests) == before
        assert len(list((tmp_path / "cupy").rglob("*.cubin"))) >= 4
    finally:
        dev.close()
