"""Dao's sampled-kernel model on the application corpus (``models.sampled_apps``): 40 kernels ported from
Parboil, SHOC, Rodinia and PolyBench/GPU, each of hundreds of work-groups and ≥ 0.1 s (estimated) on an
H100, sampled at Dao's 2nd and 3rd saturation points.

* ``model.sampled_apps.<kernel>.error`` / ``.overhead`` — the linear model's |t_linear − t_full| / t_full
  and (t_P1 + t_P2) / t_full; ``model.sampled_apps.mean_{error,overhead}`` (Dao's figures in ``info``).
* ``model.svr_apps.mean_error`` — the SVR, leave-one-kernel-out (each kernel's error in its ``info``).

Every figure's identity names the corpus version (``models.app_kernels.CORPUS_VERSION``), the size, the
cache state and its run's length in waves (``sampled_apps.identity``), and each mean's its kernel set. A
study: only ``--gpuperf-profile=study`` runs it (``timing.suite_profiles.STUDIES``). A kernel whose full run
is predicted or measured over ``sampled_apps.RUN_BUDGET_S`` is left out of the figures or reported, and the
test fails naming it, its time and the fix, after the other kernels' figures are recorded. A CPU device
runs the corpus at its PoCL size, warm (``sampled_apps.CPU_NOTE``): the procedure end to end in seconds.
"""

from __future__ import annotations

import numpy as np

from pytest_gpuperf.models import sampled_apps, svr
from pytest_gpuperf.models.app_kernels import APP_KERNELS
from pytest_gpuperf.timing.profiles import profile


def test_sampled_app_models(gpu_device, gpu_kernel, sampled_kernel, gpuperf_record):
    """Every kernel of the corpus measured by Dao's protocol; the figures recorded as their own family."""
    info = gpu_device.info
    res = sampled_apps.measure(gpu_device, sampled_kernel, profile("sampled_apps", info.is_cpu), compile=gpu_kernel.compile,
                               size=sampled_apps.size_for(info), cold=not info.is_cpu)
    for m in sampled_apps.records(res) if res.runs.main else ():
        gpuperf_record(**m)
    problems = sampled_apps.problems(res)
    assert not problems, "\n".join(problems)
    assert set(res.runs.main) | set(sampled_apps.left_out(res)) == {k.name for k in APP_KERNELS}
    svr_errors = res.runs.svr_errors() if len(res.runs.main) >= svr.MIN_KERNELS else {}
    assert all(np.isfinite(res.runs.errors)) and all(np.isfinite(e[0]) for e in svr_errors.values())
