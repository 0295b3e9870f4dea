"""Prediction error of performance models.

* ``model.sampled.<kernel>.error`` / ``.overhead`` — Dao's sampled linear model (thesis ch. 2) on the
  24-kernel corpus, sampled at his 2nd and 3rd saturation points: |t_linear − t_full| / t_full and
  (t_P1 + t_P2) / t_full; ``model.sampled.mean_*``. ``model.sampled_project.*``: the same at the project's
  own geometry (the 2m-th and 3m-th points), a separate family (``studies.sampled.sampled_corpus``).
* ``model.svr.<kernel>.error`` — Dao's ML model (SVR over the sampled runs' features) evaluated
  leave-one-kernel-out: the kernel's own runs are never in its training set; ``model.svr.mean_error``
  (``model.svr_project.*`` on the project's geometry).
* ``model.ptx.<kernel>.error``, ``model.ptx.dwarf.<dwarf>.mape`` — Alavani's static PTX model
  (thesis ch. 4) on the thesis' dwarfs re-written for CUDA (CUDA only: PTX comes from NVRTC).
* ``model.ptx.global_latency.{r2,rmse_cycles}``, ``….{single_thread,full_device}.cycles`` — the model's
  ``L(gm)``: Alavani's global-latency microbenchmark over (nB, nT_b) and its piecewise-linear fit
  (§3.3.3, Table 3.3/3.4; segments and points in ``info``), which ``test_ptx_model`` uses per launch.
  It lives here, not in the probes suite, because it is the PTX model's dynamic analysis of the device
  under test (like the launch-overhead and throughput fits of ``calibrate``): measured in the same
  session the model is evaluated in, whatever probe results the checkout holds.

Errors are ``better="lower"``: a model or measurement regression shows as a larger error. A figure over
several kernels (the means, a dwarf's MAPE) carries the kernels it was computed over in its identity
(``util.aggregate.over``): a baseline made over another corpus reads ``incomparable``.
The PTX model's calibration is ``studies.ptx_model.ptx_calibration``, its evaluation ``studies.ptx_model.ptx_errors``; the
bands are the "models" rows of ``baselines/catalog.py``.
Kernel classification (paper 004) and CFG similarity (Lim ch. IV) are in ``test_kernel_classes.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.studies.ptx_model import ptx_calibration, ptx_errors
from pytest_gpuperf.studies.sampled import sampled_corpus
from pytest_gpuperf.corpora.corpus import CORPUS
from pytest_gpuperf.probes import global_latency
from pytest_gpuperf.timing.profiles import profile


def test_sampled_models(gpu_device, gpu_kernel, sampled_kernel, gpuperf_record, gpuperf_part):
    """Dao's protocol (the 2nd and 3rd saturation points) and the project's geometry, recorded as separate
    families (``studies.sampled.sampled_corpus``); a suite profile's part measures its kernels only, without the SVR."""
    kernels = {k.name: gpu_kernel.compile(k.source(gpu_device.info.backend), k.name) for k in CORPUS}
    only = None if gpuperf_part is None else gpuperf_part.kernels
    results = sampled_corpus.measure(gpu_device, kernels, sampled_kernel, profile("sampled_model", gpu_device.info.is_cpu),
                                     only=only)
    for res in results:
        for m in sampled_corpus.records(res):
            gpuperf_record(**m)
        assert len(res.main) >= (20 if only is None else len(only))
        assert all(np.isfinite(res.errors)) and (res.part or all(np.isfinite(e[0]) for e in res.svr_errors().values()))


# ---- static PTX model (Alavani ch. 4) --------------------------------------------------------------------


def test_global_latency_model(gpu_device, gpuperf_record):
    """Alavani §3.3.3: the pointer chase of Algorithm 2 over (nB, nT_b), one thread to 16 full waves, and
    its least-squares piecewise-linear model; the fit's quality and the curve's ends are gated."""
    info = gpu_device.info
    if not info.clock_counter:
        pytest.skip(f"{info.spec} ({info.name}): {global_latency.NO_CLOCK}")
    sw = global_latency.measured(gpu_device)
    for r in ptx_calibration.global_latency_records(sw, info):
        gpuperf_record(**r)
    assert len(sw.points) >= 25 and all(p.cycles > 0 for p in sw.points), [p.to_json() for p in sw.points]


@pytest.mark.gpuperf(requires=["cuda"])
def test_ptx_model(gpu_device, gpu_kernel, gpu_measure, gpuperf_record, gpuperf_recorded, gpuperf_baseline_dir,
                   request):
    """Alavani ch. 4: every dwarf kernel predicted from its PTX by the thesis' model and the Hopper variants,
    against its measured time, with latencies and calibration measured on the device in this session."""
    ev = ptx_errors.evaluate(gpu_device, gpu_kernel, gpu_measure, request.config.rootpath, gpuperf_baseline_dir,
                             gpuperf_recorded)
    for r in ptx_errors.records(ev):
        gpuperf_record(**r)
    assert all(np.isfinite(list(ev.errors().values())))
