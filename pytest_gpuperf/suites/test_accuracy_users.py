"""The math as users call it: PyOpenCL's array math (``pyopencl.clmath`` on ``pyopencl.array``) and
CuPy's ufuncs, ``ElementwiseKernel`` and ``RawKernel`` with their default build options, through the
same checks as the project's own builds (``suites/test_accuracy_math.py``): the seeded input sets of
:mod:`~pytest_gpuperf.accuracy.inputs`, long double references with MPFR confirmation of every maximum
and near-boundary case (:func:`~pytest_gpuperf.accuracy.check.score`), the documented bounds, and — for
unary binary32 functions — a budgeted worst-case search (:mod:`~pytest_gpuperf.accuracy.search`).

Per library, format and function:

* ``accuracy.<lib>.<fmt>.<fn>.max_ulp`` / ``.mean_ulp`` — ``<lib>`` is ``pyopencl``, ``cupy.ufunc``,
  ``cupy.elementwise`` or ``cupy.raw``. ``info`` puts the project's own build beside it on the same
  inputs (``project_max_ulp``, ``project_mean_ulp``) and counts the inputs where the two results differ
  bit for bit (``differs_from_project``, with an example), names the library's build options and the
  search's maximum and worst input.

Libraries a device cannot run skip with the reason (:func:`pytest_gpuperf.devices.usermath.user_math`:
CuPy needs a CUDA device, PyOpenCL an OpenCL one). CuPy compiles everything with ``-ftz=true``: where a
library flushes binary32 subnormals, inputs whose argument or correctly rounded result is subnormal are
left out of the bound check and counted (``ftz_excluded``; the maximum including them is in ``info``).
"""

from __future__ import annotations

import pytest

from pytest_gpuperf.accuracy import findings, usermath_check
from pytest_gpuperf.devices import usermath
from pytest_gpuperf.errors import BackendUnavailableError


@pytest.mark.parametrize("fmt_name", ["fp32", "fp64"])
@pytest.mark.parametrize("fn", usermath_check.FNS)
@pytest.mark.parametrize("library", list(usermath.LIBRARIES))
def test_user_math(gpu_device, gpuperf_record, accuracy_seed, accuracy_rng, library, fn, fmt_name):
    info = gpu_device.info
    try:
        um = usermath.user_math(gpu_device, library)
    except BackendUnavailableError as exc:
        pytest.skip(f"{library}: {exc.reason}")
    if um.spelling(fn) is None:
        pytest.skip(f"{library} has no {fn}")
    if fmt_name == "fp64" and not info.fp64:
        pytest.skip(f"{info.name} has no binary64 support")
    out = usermath_check.check_user_math(gpu_device, um, library, fn, fmt_name, accuracy_rng, accuracy_seed)
    for r in out.records:
        gpuperf_record(**r)
    findings.check(info, out.key, out.problem)
