"""The accuracy rows of baselines/catalog.py: every accuracy metric family finds the row meant for it (or
none, where its band depends on the case), so ``gpuperf_record`` neither refuses it nor gives it another
family's band."""

from __future__ import annotations

import pytest

from pytest_gpuperf.baselines import catalog

EXACT = {"abs": 1e-6}


@pytest.mark.parametrize("name", ["accuracy.fp32.sin.max_ulp", "accuracy.fp64.lgamma.mean_ulp",
                                  "accuracy.fp32.fastmath.sin.max_ulp", "accuracy.fp32.__expf.mean_ulp",
                                  "accuracy.pyopencl.fp32.cbrt.max_ulp", "accuracy.cupy.ufunc.fp32.log.mean_ulp",
                                  "accuracy.cupy.elementwise.fp32.exp.max_ulp", "accuracy.cupy.raw.fp64.tan.max_ulp",
                                  "accuracy.fp32.exp.max_ulp_fractional", "accuracy.fp32.__expf.max_ulp_fractional"])
def test_deterministic_ulp_statistics_get_the_exact_band_on_every_device(name):
    fam = catalog.family(name)
    assert fam is not None and (fam.unit, fam.better) == ("ulp", "lower")
    assert catalog.tolerance(name, is_cpu=True) == catalog.tolerance(name, is_cpu=False) == EXACT


@pytest.mark.parametrize("name", ["accuracy.fp64.lgamma.mean_ulp", "accuracy.pyopencl.fp64.log.mean_ulp",
                                  "accuracy.cupy.ufunc.fp64.log.mean_ulp", "accuracy.cupy.raw.fp64.tan.mean_ulp"])
def test_binary64_means_are_exact_in_a_file_and_take_the_host_band_across_hosts(name):
    fam = catalog.family(name)
    assert fam is not None and (fam.unit, fam.better) == ("ulp", "lower")
    assert catalog.tolerance(name, is_cpu=True) == catalog.tolerance(name, is_cpu=False) == EXACT
    entry = {"value": 0.15, "tolerance": dict(EXACT)}
    assert catalog.across_hosts(name, entry)["tolerance"] == catalog.LD_REFERENCE_MEAN
    assert catalog.across_hosts("accuracy.fp32.exp.mean_ulp", entry)["tolerance"] == EXACT  # binary32: the reference is 40 bits finer


@pytest.mark.parametrize("name", ["accuracy.fp32.add.rn.max_ulp", "accuracy.fp16.fma.rd.max_ulp",
                                  "accuracy.fp64.sqrt.rz.max_ulp", "accuracy.fp32.div.ru.max_ulp",
                                  "accuracy.fp32.div.rn.default.max_ulp"])
def test_basic_operations_stay_bound_gated_and_out_of_the_math_rows(name):
    fam = catalog.family(name)
    assert fam is not None and (fam.unit, fam.better) == ("ulp", "bound")
    assert catalog.tolerance(name, is_cpu=True) is None and catalog.tolerance(name, is_cpu=False) is None


@pytest.mark.parametrize("name", ["accuracy.fuzz.fp32.sin.huge.max_ulp",
                                  "accuracy.fuzz.fp64.exp.overflow_edge.max_ulp",
                                  "accuracy.sweep.fp32.exp.checked_over_reference"])
def test_families_whose_direction_depends_on_the_case_have_no_row(name):
    # a row would refuse one of the cases (bound where documented / exhaustive, lower elsewhere)
    assert catalog.family(name) is None


BOUND_ONLY = [("accuracy.fp32.__expf.max_ulp_over_bound", "ulp"), ("accuracy.fp32.__sinf.max_abs", "1"),
              ("accuracy.search.fp32.tgamma.max_ulp", "ulp"), ("accuracy.sweep.fp32.exp.max_ulp", "ulp"),
              ("accuracy.sweep.fp32.exp.exhaustive_s", "s")]


@pytest.mark.parametrize("name,unit", BOUND_ONLY)
def test_bound_gated_families_get_no_band(name, unit):
    fam = catalog.family(name)
    assert fam is None or ((fam.unit, fam.better) == (unit, "bound") and fam.tolerance(True) is None
                           and fam.tolerance(False) is None)


def test_summation_and_sweep_timing_bands_are_for_cpu_devices_only():
    t = "accuracy.sum.float.kahan.parallel.n20.time_us"
    assert (catalog.family(t).unit, catalog.family(t).better) == ("us", "lower")
    assert catalog.tolerance(t, is_cpu=True) == {"rel": 3.0, "abs": 50.0} and catalog.tolerance(t, is_cpu=False) is None
    r = "accuracy.sweep.fp32.sin.checked_per_s"
    assert (catalog.family(r).unit, catalog.family(r).better) == ("1/s", "higher")
    assert catalog.tolerance(r, is_cpu=True) == {"rel": 2.0} and catalog.tolerance(r, is_cpu=False) is None


def test_summation_error_band_is_the_same_on_every_device():
    e = "accuracy.sum.double2.serial.n16.abs_err"
    assert (catalog.family(e).unit, catalog.family(e).better) == ("1", "lower")
    assert catalog.tolerance(e, is_cpu=True) == catalog.tolerance(e, is_cpu=False) == {"rel": 0.1, "abs": 1e-30}
