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
