"""Dao's sampled-kernel model on the application corpus (``studies.sampled.sampled_apps``): 40 kernels ported from
Parboil, SHOC, Rodinia and PolyBench/GPU, each of hundreds of work-groups and ≥ 0.1 s (estimated) on an
H100, sampled at Dao's 2nd and 3rd saturation points.

* ``model.sampled_apps.<kernel>.error`` / ``.overhead`` — the linear model's |t_linear − t_full| / t_full
  and (t_P1 + t_P2) / t_full; ``model.sampled_apps.mean_{error,overhead}`` (Dao's figures in ``info``).
* ``model.svr_apps.mean_error`` — the SVR, leave-one-kernel-out (each kernel's error in its ``info``).
* ``model.dao_ml_apps.mean_error`` (CUDA with Nsight Compute) — Dao's own ML model: an ε-SVR on the hardware
  counters of the two samples (his Table 2.1 mapped to ncu metrics, ``studies.sampled.dao_counters``), target the
  saturated IPS, t_ML from I_P2 (``studies.sampled.dao_ml``), leave-one-kernel-out; each kernel's error in its ``info``.
  Skips on OpenCL/PoCL devices (no counters: never a made-up one) and where ncu or counter access is missing;
  the profile is bounded by ``--gpuperf-ncu-timeout`` and a timeout fails naming it.

Every figure's identity names the corpus version (``corpora.app_kernels.CORPUS_VERSION``), the size, the
cache state and its run's length in waves (``sampled_apps.identity``), and each mean's its kernel set. A
study: only ``--gpuperf-profile=study`` runs it (``timing.suite_profiles.STUDIES``). A kernel whose full run
is predicted or measured over ``sampled_apps.RUN_BUDGET_S`` is left out of the figures or reported, and the
test fails naming it, its time and the fix, after the other kernels' figures are recorded. A CPU device
runs the corpus at its PoCL size, warm (``sampled_apps.CPU_NOTE``): the procedure end to end in seconds.
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.studies.sampled import dao_counters, dao_ml, sampled_apps, svr
from pytest_gpuperf.counters import ncu
from pytest_gpuperf.corpora.app_kernels import APP_KERNELS
from pytest_gpuperf.timing.profiles import profile

#: the study's measurement per device this session: both tests use one measurement of the corpus
_MEASURED = pytest.StashKey[dict]()


def _study(request, gpu_device, gpu_kernel, sampled_kernel) -> sampled_apps.AppsResult:
    """The corpus measured by Dao's protocol on the test's device, once per session (the second test to
    ask reuses the first's; a test run alone measures it itself)."""
    memo = request.config.stash.setdefault(_MEASURED, {})
    info = gpu_device.info
    if info.spec not in memo:
        memo[info.spec] = sampled_apps.measure(gpu_device, sampled_kernel, profile("sampled_apps", info.is_cpu),
                                               compile=gpu_kernel.compile, size=sampled_apps.size_for(info),
                                               cold=not info.is_cpu)
    return memo[info.spec]


def test_sampled_app_models(gpu_device, gpu_kernel, sampled_kernel, gpuperf_record, request):
    """Every kernel of the corpus measured by Dao's protocol; the figures recorded as their own family."""
    res = _study(request, gpu_device, gpu_kernel, sampled_kernel)
    for m in sampled_apps.records(res) if res.runs.main else ():
        gpuperf_record(**m)
    problems = sampled_apps.problems(res)
    assert not problems, "\n".join(problems)
    assert set(res.runs.main) | set(sampled_apps.left_out(res)) == {k.name for k in APP_KERNELS}
    svr_errors = res.runs.svr_errors() if len(res.runs.main) >= svr.MIN_KERNELS else {}
    assert all(np.isfinite(res.runs.errors)) and all(np.isfinite(e[0]) for e in svr_errors.values())


def test_dao_ml_app_model(gpu_device, gpu_kernel, sampled_kernel, gpuperf_record, request, tmp_path,
                          gpuperf_ncu_timeout):
    """Dao's ML model on hardware counters: the study's two samples of every kernel profiled once by ncu,
    the ε-SVR evaluated leave-one-kernel-out on the study's runs."""
    info = gpu_device.info
    if not info.has_ncu:
        pytest.skip(f"Dao's ML model reads hardware counters, which only CUDA devices expose here (Nsight Compute); "
                    f"{info.spec} ({info.name}) is {info.backend}{', a CPU device' if info.is_cpu else ''}: no "
                    "counter model is run (test_sampled_app_models records the linear model and the SVR on portable "
                    "features)")
    try:
        ncu_path = ncu.require_ncu()
    except ncu.NcuUnavailable as exc:
        pytest.skip(exc.reason)
    res = _study(request, gpu_device, gpu_kernel, sampled_kernel)
    if len(res.runs.main) < svr.MIN_KERNELS:
        pytest.fail(f"the study measured {len(res.runs.main)} kernels; Dao's ML model trains leave-one-kernel-out on "
                    f"{svr.MIN_KERNELS} or more: {'; '.join(sampled_apps.problems(res))}", pytrace=False)
    launches = dao_counters.plan(dao_ml.samples_of(res), res.size)
    try:
        sc = dao_counters.collect(launches, info.index, gpuperf_ncu_timeout, tmp_path / "ncu", ncu_path)
    except ncu.NcuUnavailable as exc:
        pytest.skip(exc.reason)
    except ncu.NcuError as exc:
        pytest.fail(str(exc), pytrace=False)
    for m in dao_ml.records(res, sc):
        gpuperf_record(**m)
