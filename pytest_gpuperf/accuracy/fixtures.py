"""Options and fixtures of the accuracy suites (registered by plugin.py as a sub-plugin)."""

from __future__ import annotations

import pytest

from ..util.clock import add_budget_option, mark_session_start, session_elapsed


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gpuperf")
    group.addoption("--gpuperf-exhaustive", action="store_true", default=False,
                    help="accuracy: on CPU devices too, sweep all 2^32 binary32 inputs of the sweep suite's exp "
                         "(GPUs always do; CPU devices default to a strided 2^18; the mode is part of the metric's "
                         "identity)")
    add_budget_option(group, "--gpuperf-accuracy-budget", "accuracy: skip accuracy tests")
    group.addoption("--gpuperf-accuracy-scale", type=float, default=None, metavar="F",
                    help="accuracy: multiply the correctly-rounded-operations suite's sample counts by F (default 1 "
                         "on CPU devices, 8 on GPUs); recorded in those metrics' identity, so a baseline made with "
                         "another scale reads incomparable")


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
def accuracy_seed(gpuperf_test_id: str) -> int:
    """The seed of this test's input set: the CRC of its id *without* the device (the plugin's
    ``gpuperf_test_id``: ``[cuda:0-sin]`` and ``[cuda:1-sin]`` draw the same inputs), so every run and
    every card of a model checks the same set."""
    import zlib

    return zlib.crc32(gpuperf_test_id.encode())


@pytest.fixture
def accuracy_rng(accuracy_seed: int):
    """A generator seeded with :func:`accuracy_seed`, so a failing sample is reproducible run to run."""
    import numpy as np
    return np.random.default_rng(accuracy_seed)

