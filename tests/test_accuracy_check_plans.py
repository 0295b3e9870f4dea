"""The accuracy checks' pure choices: the sweep's mode and band, the summation sizes and ordering rule, the
seeded input sets, the fast variants' arguments, the flush filter and the fuzz record's band."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.accuracy import (fastmath_check, fp_formats, functions, inputs, mathfn_check, summation_check,
                                     sweep_check, usermath_check)


def test_exp_sweeps_all_inputs_on_gpus_and_on_request_on_cpu_devices():
    assert sweep_check.plan("exp", is_cpu=False, exhaustive_option=False) == sweep_check.SweepPlan(True, 1, 1 << 32)
    assert sweep_check.plan("exp", is_cpu=True, exhaustive_option=True).exhaustive
    cpu = sweep_check.plan("exp", is_cpu=True, exhaustive_option=False)
    assert (cpu.exhaustive, cpu.count, cpu.mode) == (False, 1 << 18, f"stride{cpu.stride}")
    gpu_sin = sweep_check.plan("sin", is_cpu=False, exhaustive_option=True)  # the option concerns exp alone
    assert not gpu_sin.exhaustive and gpu_sin.count == 1 << 24


@pytest.mark.parametrize("count", [1 << 18, 1 << 24])
def test_strided_sweep_visits_every_exponent_field(count):
    p = sweep_check.plan("log", is_cpu=count == 1 << 18, exhaustive_option=False)
    assert p.stride % 2 == 1
    bits = (np.arange(p.count, dtype=np.uint64) * np.uint64(p.stride)) % np.uint64(1 << 32)
    fields = ((bits >> np.uint64(23)) & np.uint64(0xFF)).astype(np.intp)
    assert np.count_nonzero(np.bincount(fields, minlength=256)) == 256  # distinct fields, counted without a sort


def test_sweep_overhead_band_is_the_bound_in_exhaustive_mode_else_a_relative_band():
    assert sweep_check.overhead_band(True, is_cpu=False) is None
    assert sweep_check.overhead_band(True, is_cpu=True) is None
    assert sweep_check.overhead_band(False, is_cpu=False) == {"rel": 1.0}
    assert sweep_check.overhead_band(False, is_cpu=True) == {"rel": 2.0}


def test_summation_sizes_and_variants_per_layout():
    assert summation_check.sizes("serial", is_cpu=False) == [12, 16]
    assert summation_check.sizes("parallel", is_cpu=False) == [12, 16, 20, 24]
    assert summation_check.sizes("pairwise", is_cpu=True) == [12, 16]
    assert [v[0] for v in summation_check.variants("pairwise")] == ["float", "double"]
    assert len(summation_check.variants("serial")) == 6


def test_summation_ordering_fails_a_compensated_sum_worse_than_the_plain_one_in_serial_only():
    eps32 = float(np.finfo(np.float32).eps)
    ok = {("float", 12): 1e-3, ("float2", 12): 1e-3 + 500 * eps32, ("float.kahan", 12): 0.0}
    assert summation_check.ordering_problem(ok, "serial", [12]) is None
    bad = dict(ok)
    bad["float.kahan", 12] = 1e-3 + 2000 * eps32
    msg = summation_check.ordering_problem(bad, "serial", [12])
    assert msg is not None and msg.startswith("float.kahan sum less accurate than float at n=2^12 (serial)")
    assert summation_check.ordering_problem(bad, "parallel", [12]) is None


def test_function_sample_has_the_suite_sizes_and_leaves_out_the_excluded_interval():
    fmt = fp_formats.FP32
    sin = functions.FUNCTIONS["sin"]
    a = inputs.function_sample(fmt, sin, 1.0, np.random.default_rng(7))
    b = inputs.function_sample(fmt, sin, 1.0, np.random.default_rng(7))
    assert len(a) == 1 and np.array_equal(a[0].view(np.uint32), b[0].view(np.uint32))  # seeded: the same set
    binades = (1 << 8) - 1
    assert a[0].size == binades * 2 * inputs.PER_BINADE["fp32"] + inputs.DENSE["fp32"] + inputs.specials(fmt).size
    lo, hi = functions.EXCLUDE["lgamma"]["fp32"]
    x = inputs.function_sample(fmt, functions.FUNCTIONS["lgamma"], 2.0, np.random.default_rng(7))[0]
    assert not np.any((x > lo) & (x < hi)) and np.any(x < lo)
    hyp = inputs.function_sample(fmt, functions.FUNCTIONS["hypot"], 1.0, np.random.default_rng(7))
    assert len(hyp) == 2 and hyp[0].size == hyp[1].size


def test_mpfr_only_binary64_functions_get_the_unscaled_set_within_the_cap(cl_device):
    erf = functions.FUNCTIONS["erf"]
    assert erf.ref64 is None
    args = mathfn_check.seeded_args(cl_device, erf, "fp64", np.random.default_rng(3))
    full = inputs.function_sample(fp_formats.FP64, erf, 1.0, np.random.default_rng(3))
    assert np.array_equal(args[0], full[0], equal_nan=True) and args[0].size <= mathfn_check.MPFR_ONLY_MAX


@pytest.mark.parametrize("label,arity,call", [("__fdividef", 2, "__fdividef(x0, x1)"), ("fastmath.div", 2, "x0 / x1"),
                                              ("__powf", 2, "__powf(x0, x1)"), ("native_sin", 1, "native_sin(x0)")])
def test_fast_variant_arguments_stay_in_the_documented_domain(label, arity, call):
    v = next(v for v in functions.FAST if v.label == label)
    args, got = fastmath_check.variant_args(v, 500, np.random.default_rng(1))
    assert (len(args), got) == (arity, call) and all(a.dtype == np.float32 and a.size == 500 for a in args)
    divisor_or_arg = args[1] if v.base == "div" else args[0]
    lo, hi = v.domain
    assert np.all((divisor_or_arg >= np.float32(lo)) & (divisor_or_arg <= np.float32(hi)))
    if v.base == "div":
        assert np.any(args[0] < 0) and np.any(args[0] > 0)


def test_subnormal_filter_marks_only_nonzero_values_below_the_smallest_normal():
    fmt = fp_formats.FP32
    x = np.array([0.0, 1e-45, -1e-40, float(fmt.min_normal), 1.0, np.inf, np.nan], np.float32)
    assert usermath_check.subnormal(x, fmt).tolist() == [False, True, True, False, False, False, False]


def test_fuzz_record_is_bound_gated_where_documented_else_baseline_gated_within_one_ulp(cl_device):
    from pytest_gpuperf.accuracy import region_fuzz

    rng = np.random.default_rng(5)
    bounded = region_fuzz.RegionFuzz.start(cl_device, "fp32", "sin", "huge", rng).records()[0]
    assert (bounded["better"], bounded["bound"], bounded["tolerance"]) == ("bound", 4.0, None)
    assert bounded["identity"] == {"inputs": "hypothesis", "seed": bounded["info"]["hypothesis_seed"], "examples": 10}
    # OpenCL documents no bound for lgamma: the maximum is gated against the baseline
    free = region_fuzz.RegionFuzz.start(cl_device, "fp32", "lgamma", "any", rng).records()[0]
    assert (free["better"], free["bound"], free["tolerance"]) == ("lower", None, {"abs": 1.0})
