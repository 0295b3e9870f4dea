"""Dao's sampled-kernel model on the application corpus (``models.sampled_apps``): 40 kernels ported from
Parboil, SHOC, Rodinia and PolyBench/GPU, each of hundreds of work-groups and ≥ 0.1 s (estimated) on an
H100, sampled at Dao's 2nd and 3rd saturation points.

* ``model.sampled_apps.<kernel>.error`` / ``.overhead`` — the linear model's |t_linear − t_full| / t_full
  and (t_P1 + t_P2) / t_full; ``model.sampled_apps.mean_{error,overhead}`` (Dao's figures in ``info``).
* ``model.svr_apps.<kernel>.error`` — the SVR, leave-one-kernel-out; ``model.svr_apps.mean_error``.

Every figure's identity names the corpus version (``models.app_kernels.CORPUS_VERSION``), and each mean's
its kernel set. A study: only ``--gpuperf-profile=study`` runs it (``timing.suite_profiles.STUDIES``). A kernel
whose full run is predicted or measured over ``sampled_apps.RUN_BUDGET_S`` is left out of the figures or
reported, and the test fails naming it, its time and the fix, after the other kernels' figures are recorded.
GPUs only: on a CPU device the test skips with the reason (``sampled_apps.CPU_SKIP``); the kernels'
correctness is checked on PoCL by ``tests/test_models_app_kernels.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.models import sampled_apps
from pytest_gpuperf.models.app_kernels import APP_KERNELS
from pytest_gpuperf.timing.profiles import profile


def test_sampled_app_models(gpu_device, gpu_kernel, sampled_kernel, gpuperf_record):
    """Every kernel of the corpus measured by Dao's protocol; the figures recorded as their own family."""
    if gpu_device.info.is_cpu:
        pytest.skip(sampled_apps.CPU_SKIP)
    res = sampled_apps.measure(gpu_device, sampled_kernel, profile("sampled_apps", False), compile=gpu_kernel.compile)
    for m in sampled_apps.records(res) if res.runs.main else ():
        gpuperf_record(**m)
    problems = sampled_apps.problems(res)
    assert not problems, "\n".join(problems)
    assert set(res.runs.main) == {k.name for k in APP_KERNELS}
    assert all(np.isfinite(res.runs.errors)) and all(np.isfinite(e[0]) for e in res.runs.svr_errors().values())
