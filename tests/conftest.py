"""Shared fixtures of the project's own tests."""

from __future__ import annotations

import pytest

from pytest_gpuperf.devices import discover, open_device


@pytest.fixture(scope="module")
def cl_device():
    """The first real OpenCL device (PoCL in CI), opened once per module; skips where there is none."""
    cl = [d for d in discover().devices if d.backend == "opencl"]
    if not cl:
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    dev = open_device(cl[0])
    yield dev
    dev.close()
