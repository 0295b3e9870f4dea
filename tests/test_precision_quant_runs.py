"""The quantization and refinement suites' library parts: networks kept per device by a fixture-owned
store (no module state), the figures' identity, and the bands the catalog and refinement give them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pytest_gpuperf.baselines import catalog
from pytest_gpuperf.precision import quant_runs, refine


def test_networks_are_kept_per_device_object(cl_device):
    nets = quant_runs.TrainedNetworks()
    first = nets.on(cl_device)
    assert nets.on(cl_device) is first and first.device is cl_device
    assert quant_runs.TrainedNetworks().on(cl_device) is not first  # a new store starts empty


def test_the_identity_names_the_data_the_target_and_the_method():
    ident = quant_runs.identity({"method": "rand"}, bits=4)
    assert ident["data"] == quant_runs.DATA_ID and ident["bits"] == 4 and ident["method"] == "rand"
    assert ident["seed"] == quant_runs.CFG.seed and quant_runs.identity()["bits"] == 8


@pytest.mark.parametrize("name,unit,better", [("precision.quant.fp32.accuracy", "%", "higher"),
                                              ("precision.quant.ptq_max.accuracy_drop", "pp", "lower"),
                                              ("precision.quant.rand_mix.int4.accuracy_drop", "pp", "lower")])
def test_accuracies_are_gated_to_two_test_images(name, unit, better):
    fam = catalog.family(name)
    assert (fam.unit, fam.better) == (unit, better)
    assert catalog.tolerance(name, is_cpu=False) == catalog.tolerance(name, is_cpu=True) == {"abs": 0.5}


def test_quant_timings_and_the_refinement_figures_keep_the_measured_spread():
    for name in ("precision.quant.gemm.int8.time_us", "precision.quant.gemm.int8_over_fp32",
                 "precision.refine.n128.backward_error"):
        assert catalog.family(name) is None, name


def test_the_refinement_speedup_gates_within_its_written_cause_on_gpus_only():
    """A GPU's refinement speedup takes in part of the host's launching (the solve overfills the launch
    queue behind the CUDA timer's blocking kernel): 30 % there, with the cause in the row; a CPU device keeps
    the band its runs' spread gives."""
    name = "precision.refine.n128.speedup"
    assert catalog.tolerance(name, is_cpu=False) == {"rel": 0.3}
    assert catalog.tolerance(name, is_cpu=True) is None
    assert "launch queue" in catalog.wide_band_cause(name, "ratio")


def test_a_rounding_mismatch_is_never_tolerated():
    assert catalog.tolerance("precision.vprec.rounding_mismatches", is_cpu=True) == {"abs": 0.0}
    assert catalog.tolerance("precision.vprec.rounding_mismatches", is_cpu=False) == {"abs": 0.0}


def test_the_backward_error_is_held_to_ten_percent_as_every_machine_reads_the_same_bits():
    """The band the suite gives the solve's backward error (10 %) stands on the shipped baselines: the H100's
    entry pooled unchanged runs of many machines that read one value, and the H200 reads the same value."""
    from pytest_gpuperf.baselines import baseline_file
    from pytest_gpuperf.paths import REVIEWED_BASELINES

    assert refine.backward_error_tolerance(512) == {"rel": 0.1}
    h100, h200 = (baseline_file.load(REVIEWED_BASELINES, key).metrics("cuda")
                  for key in ("nvidia-h100-80gb-hbm3", "nvidia-h200"))
    for n in (512, 1024, 2048):
        name = f"precision.refine.n{n}.backward_error"
        pooled = h100[name]
        assert pooled["runs"] >= 20 and len(set(pooled["run_values"])) == 1, pooled  # one value over every run
        assert h200[name]["value"] == pytest.approx(pooled["value"], rel=1e-6)
        assert h200[name]["value"] < math.sqrt(n) * float(np.finfo(np.float64).eps) / 20  # far below the stop rule
