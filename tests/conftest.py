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


@pytest.fixture(scope="session", autouse=True)
def private_cache_dir(tmp_path_factory):
    """The user's cache directory of every test (``$XDG_CACHE_HOME``): the tuning suite's stored exhaustive
    references (``tuning.reference``) of one test must not be replayed by another, nor by the developer's
    own runs."""
    import os

    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if before is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = before
