"""Options and fixtures of the accuracy suites (registered by plugin.py as a sub-plugin)."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gpuperf")
    group.addoption("--gpuperf-exhaustive", action="store_true", default=False,
                    help="accuracy: sweep all 2^32 binary32 inputs of the sweep function on the device "
                         "(default: a strided subset of 2^22 inputs on GPUs, 2^18 on CPU devices)")
    group.addoption("--gpuperf-accuracy-scale", type=float, default=None, metavar="F",
                    help="accuracy: multiply sample counts by F (default 1 on CPU devices, 8 on GPUs)")


@pytest.fixture
def accuracy_scale(request: pytest.FixtureRequest, gpu_device) -> float:
    """Sample-count multiplier: small on CPU devices (CI time share), larger on GPUs."""
    opt = request.config.getoption("--gpuperf-accuracy-scale")
    if opt is not None:
        return float(opt)
    return 1.0 if gpu_device.info.is_cpu else 8.0


@pytest.fixture
def accuracy_rng(request: pytest.FixtureRequest):
    """A generator seeded from the test id, so a failing sample is reproducible run to run."""
    import zlib

    import numpy as np
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
