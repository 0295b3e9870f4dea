"""Alavani's protocol for the static PTX model (thesis ch. 4, Table 4.9) as a study (``studies.ptx_model.ptx_study``):
21 kernels of the eight dwarfs — the twelve dwarf kernels the Hopper variant was shaped on and the nine
held out from it (``corpora.heldout``) — over 108 launch configurations (``studies.ptx_model.ptx_sweep``: block and
problem sizes), each predicted from its PTX by the thesis' model and the Hopper variants and measured.

* ``model.ptx.study.<variant>.<kernel>.error`` — a kernel's MAPE over its configurations (every launch in
  ``info``); ``….dwarf.<dwarf>.mape`` — a dwarf's, beside Table 4.9; ``….held_out.dwarf.<dwarf>.mape``,
  ``….held_out.mape`` — the held-out kernels alone; ``….design.mape``, ``….mape`` — the design kernels, all.

A study: only ``--gpuperf-profile=study`` runs it (``timing.suite_profiles.STUDIES``). CUDA only: the model
reads PTX from NVRTC. A held-out kernel whose results on the device differ from its NumPy reference is left
out of the figures and the test fails naming it, after the others' figures are recorded.
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.studies.ptx_model import ptx_study
from pytest_gpuperf.studies.ptx_model.ptx_sweep import launches


@pytest.mark.gpuperf(requires=["cuda"])
def test_ptx_model_study(gpu_device, gpu_kernel, gpu_measure, gpuperf_record, gpuperf_recorded, gpuperf_baseline_dir,
                         request):
    """Every launch of the sweep predicted by every variant and measured, pooled per dwarf and held out apart."""
    res = ptx_study.run(gpu_device, gpu_kernel, gpu_measure, request.config.rootpath, gpuperf_baseline_dir,
                        gpuperf_recorded)
    for r in ptx_study.records(res) if res.runs else ():
        gpuperf_record(**r)
    assert not res.problems, "\n".join(res.problems)
    assert len(res.runs) == len(launches()) and all(np.isfinite(r.error(v)) for r in res.runs for v in ("thesis", "hopper"))
