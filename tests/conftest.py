"""Shared fixtures of the project's own tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_gpuperf.devices import discover, open_device

import numpy.fft  # noqa: F401  (an extension module that cannot be loaded twice: see below)
import scipy.optimize  # noqa: F401

try:  # imported here, before any test: see below
    import pyopencl.cltypes  # noqa: F401
    import pyopencl.tools  # noqa: F401
except ImportError:  # no PyOpenCL: the OpenCL tests skip
    pass
try:  # imported here, before any test: see below
    import psycopg  # noqa: F401
except ImportError:  # no psycopg: the PostgreSQL tests skip
    pass
# pytester's in-process runs (``pytester.runpytest``) drop from ``sys.modules`` every module first imported
# inside them. PyOpenCL's ``tools`` and ``cltypes`` are imported lazily by the device code; dropped and
# imported again they re-register nanobind enumerations of the extension, which aborts the interpreter
# ("refusing to add duplicate key ... program_kind") at the next OpenCL test. Imported once up front, they
# are part of every snapshot and never re-imported. NumPy's FFT and SciPy's optimizers hold extension
# modules that refuse a second load ("cannot load module more than once per process"), so they too are
# imported here rather than first inside a pytester run. psycopg's C extension keeps the exception classes of
# its first import: imported again after a pytester run it raises errors the fresh ``psycopg.Error`` does not
# catch, so it too is imported once up front.


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
def private_tuning_cache(tmp_path_factory):
    """The tuning caches of every test (``$GPUPERF_TUNING_CACHE``): a stored exhaustive reference
    (``tuning.reference``) or pick of one test must not be replayed by another, nor by the developer's own
    runs. (Not ``$XDG_CACHE_HOME``: PoCL keeps its compiled kernels there, and every test would compile
    cold.)"""
    import os

    before = os.environ.get("GPUPERF_TUNING_CACHE")
    os.environ["GPUPERF_TUNING_CACHE"] = str(tmp_path_factory.mktemp("tuning-cache"))
    yield
    if before is None:
        os.environ.pop("GPUPERF_TUNING_CACHE", None)
    else:
        os.environ["GPUPERF_TUNING_CACHE"] = before


@pytest.fixture(scope="module")
def postgres_url():
    """A real PostgreSQL server of its own per test module (an empty database: the writers' race to create
    the schema is part of what is tested); skips, naming the install, where the server or psycopg is absent."""
    from history_support import PostgresServer, pg_bin

    if not (pg_bin("initdb") and pg_bin("pg_ctl")):
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) absent: apt-get install -y postgresql")
    pytest.importorskip("psycopg", reason="psycopg 3 absent: pip install 'psycopg[binary]'")
    server = PostgresServer()
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(scope="session")
def checkout_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin's wheel built from this checkout once per test run (``once_support.built_once``: one build
    for all xdist workers), by the builder ``gpuperf offline bundle`` uses without ``--wheel``; the tests that
    install the plugin (the outsider's journey, the offline bundle) share it: a build costs seconds."""
    from once_support import built_once, shared_root
    from pytest_gpuperf.offline.bundle import _plugin_wheel

    def build(into: Path) -> None:
        _plugin_wheel(into, None)

    folder = built_once(shared_root(tmp_path_factory), "checkout-wheel", build)
    (wheel,) = folder.glob("pytest_gpuperf-*.whl")
    assert wheel.is_file() and wheel.name.startswith("pytest_gpuperf-") and wheel.suffix == ".whl", wheel
    return wheel


@pytest.fixture(scope="session", autouse=True)
def shared_committed_history(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The committed history (``history_support.copy_committed_history``) is imported into the folder every
    xdist worker of the run shares: one worker imports it (seconds of CPU), the others read it."""
    import history_support
    from once_support import shared_root

    history_support.SHARED_ROOT = shared_root(tmp_path_factory)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Every object left at the session's end moved out of the collector's reach (``gc.freeze``): pytest's
    clean-up then runs five full collections for unraisable exceptions, each of which walked every saved run
    and history a worker had cached (seconds apiece); the tests' garbage was collected as they ran."""
    import gc

    gc.freeze()
