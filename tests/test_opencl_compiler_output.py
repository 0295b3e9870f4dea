"""A kernel whose build writes compiler output (here a ``#warning``) raises no PyOpenCL ``CompilerWarning``: the
output stays in its build log, where the device hands it on; ``PYOPENCL_COMPILER_OUTPUT=1`` brings PyOpenCL's
warning back. On the real PoCL device."""

from __future__ import annotations

import warnings

import pytest

from pytest_gpuperf.devices import discover, open_device

CL = [d for d in discover().devices if d.backend == "opencl"]
pytestmark = pytest.mark.skipif(not CL, reason="no OpenCL device (install pocl-opencl-icd)")


def _build(note: str):
    dev = open_device(CL[0])
    src = f'#warning "{note}"\n__kernel void noted(__global float* x) {{ x[get_global_id(0)] = 1.0f; }}'
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        kernel = dev.compile(src, "noted", ())
    return dev, kernel, [w for w in seen if w.category.__name__ == "CompilerWarning"]


def test_compiler_output_stays_in_the_build_log(monkeypatch):
    monkeypatch.delenv("PYOPENCL_COMPILER_OUTPUT", raising=False)
    dev, kernel, raised = _build("kept in the log")
    assert raised == []
    assert "kept in the log" in dev.build_log(kernel)


def test_pyopencls_own_switch_shows_it_again(monkeypatch):
    monkeypatch.setenv("PYOPENCL_COMPILER_OUTPUT", "1")
    _, _, raised = _build("shown on request")
    assert raised and "non-empty" in str(raised[0].message)


def test_a_library_s_builds_are_kept_quiet_through_the_backend_record(monkeypatch):
    """Builds another library makes (Kernel Tuner's, through ``tuning.ktparams``) run inside the backend's
    ``build_output_kept``: a PyOpenCL program built there raises no warning either; CUDA needs none."""
    import pyopencl as cl

    from pytest_gpuperf.devices.backend_registry import backend

    monkeypatch.delenv("PYOPENCL_COMPILER_OUTPUT", raising=False)
    ctx = open_device(CL[0]).context
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with backend("opencl").build_output_kept():
            cl.Program(ctx, '#warning "a library build"\n__kernel void k(__global float* x) { x[0] = 1.0f; }').build()
    assert not [w for w in seen if w.category.__name__ == "CompilerWarning"]
    with backend("cuda").build_output_kept():
        pass
