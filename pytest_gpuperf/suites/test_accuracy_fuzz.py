"""Fuzzing the dangerous regions (hypothesis), a budgeted worst-case search, and the exhaustive /
strided binary32 sweep on the device.

* ``test_dangerous_region`` — hypothesis draws batches from the region strategies of
  :mod:`pytest_gpuperf.accuracy.region_strategies`; a batch exceeding the documented bound (or with an inf/nan
  mismatch) fails, shrinks to a minimal input list and the message names the hypothesis seed.
  Metric ``accuracy.fuzz.<fmt>.<fn>.<region>.max_ulp``.
* ``test_worst_case_search`` — random restarts + local search (``search.worst_case_search``) under a
  time budget; ``accuracy.search.fp32.<fn>.max_ulp`` (MPFR-confirmed, bound-gated).
* ``test_sweep`` — binary32 inputs checked on the device against the binary64 function:
  all 2^32 with ``--gpuperf-exhaustive`` (opt-in), else every k-th bit pattern. Records the maximum
  (MPFR-confirmed on the host) and ``accuracy.sweep.fp32.<fn>.checked_per_s`` (device time, one pass),
  plus ``accuracy.sweep.fp32.<fn>.checked_over_reference``: its device time over that of a plain
  one-kernel sweep against the fp64 reference (target: within 2×; bound 2 in exhaustive mode),
  and the evaluate-only sweep's rate.
"""

from __future__ import annotations

import pytest

from pytest_gpuperf.accuracy import findings, search_check, sweep_check

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is needed for the fuzz suite: pip install hypothesis")
from pytest_gpuperf.accuracy import region_fuzz  # noqa: E402

FUZZ = region_fuzz.cases()


@pytest.mark.parametrize("fmt_name,fn,region", FUZZ, ids=[f"{a}-{b}-{c}" for a, b, c in FUZZ])
def test_dangerous_region(gpu_device, gpuperf_record, accuracy_rng, fmt_name, fn, region):
    info = gpu_device.info
    if fmt_name == "fp64" and not info.fp64:
        pytest.skip(f"{info.name} has no binary64 support")
    fuzz = region_fuzz.RegionFuzz.start(gpu_device, fmt_name, fn, region, accuracy_rng)
    try:
        fuzz.run()
    finally:
        for r in fuzz.records():
            gpuperf_record(**r)
    findings.check(info, fuzz.key, fuzz.problem)


@pytest.mark.parametrize("fn", search_check.SEARCHED)
def test_worst_case_search(gpu_device, gpuperf_record, accuracy_seed, accuracy_rng, fn):
    out = search_check.search_function(gpu_device, fn, accuracy_rng, accuracy_seed)
    for r in out.records:
        gpuperf_record(**r)
    findings.check(gpu_device.info, out.key, out.problem)


@pytest.mark.parametrize("fn", sweep_check.SWEPT)
@pytest.mark.gpuperf(requires=["fp64"])
def test_sweep(gpu_device, gpuperf_record, request, fn):
    out = sweep_check.check_sweep(gpu_device, fn, request.config.getoption("--gpuperf-exhaustive"))
    for r in out.records:
        gpuperf_record(**r)
    assert out.problem is None, out.problem
