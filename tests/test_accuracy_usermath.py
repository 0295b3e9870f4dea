"""devices.usermath: which device can run which user library, and why not (pure Python, stub devices)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_gpuperf.devices import usermath
from pytest_gpuperf.errors import BackendUnavailableError


def _stub(backend: str):
    info = SimpleNamespace(backend=backend, spec=f"{backend}:0", name="stub")
    return SimpleNamespace(info=info)


def test_cupy_libraries_need_a_cuda_device_and_say_so():
    for lib in ("cupy", "cupy_elementwise", "cupy_raw"):
        with pytest.raises(BackendUnavailableError, match="needs a CUDA device; opencl:0 is opencl"):
            usermath.user_math(_stub("opencl"), lib)


def test_pyopencl_needs_an_opencl_context():
    with pytest.raises(BackendUnavailableError, match="not an OpenCL device"):
        usermath.user_math(_stub("cuda"), "pyopencl")
    with pytest.raises(BackendUnavailableError, match="no pyopencl context"):
        usermath.user_math(_stub("opencl"), "pyopencl")  # an OpenCL device object without context/queue


def test_unknown_library_is_a_usage_error():
    with pytest.raises(ValueError, match="known: pyopencl"):
        usermath.user_math(_stub("opencl"), "numba")


def test_cupy_options_carry_ftz():
    # CuPy adds -ftz=true to every NVRTC compile (cupy/cuda/compiler.py); the suite relies on this flag
    assert "-ftz=true" in usermath.CUPY_OPTIONS
