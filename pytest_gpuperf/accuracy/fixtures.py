"""Options and fixtures of the accuracy suites (registered by plugin.py as a sub-plugin)."""

from __future__ import annotations

import pytest

from ..util.clock import mark_session_start, session_elapsed


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gpuperf")
    group.addoption("--gpuperf-exhaustive", action="store_true", default=False,
                    help="accuracy: sweep all 2^32 binary32 inputs of the sweep function on the device "
                         "(default: a strided subset of 2^22 inputs on GPUs, 2^18 on CPU devices)")
    group.addoption("--gpuperf-accuracy-budget", type=float, default=None, metavar="S",
                    help="accuracy: skip accuracy tests that would start more than S seconds after the session "
                         "began, so a time-boxed run (GPU sessions) still ends normally and writes its results")
    group.addoption("--gpuperf-accuracy-scale", type=float, default=None, metavar="F",
                    help="accuracy: multiply sample counts by F (default 1 on CPU devices, 8 on GPUs)")


def pytest_sessionstart(session: pytest.Session) -> None:
    """The accuracy budget counts from the session's start, not from when this module was imported."""
    mark_session_start(session.config)


@pytest.fixture(autouse=True)
def _accuracy_budget(request: pytest.FixtureRequest) -> None:
    """Skip (with the reason) accuracy tests once ``--gpuperf-accuracy-budget`` seconds have passed."""
    budget = request.config.getoption("--gpuperf-accuracy-budget")
    if budget is None or not request.node.path.name.startswith("test_accuracy"):
        return
    spent = session_elapsed(request.config)
    if spent > budget:
        pytest.skip(f"--gpuperf-accuracy-budget={budget:g} s spent ({spent:.0f} s): not started")


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
