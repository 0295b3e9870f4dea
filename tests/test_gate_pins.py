"""Focused tests of verdict rules that only the committed baselines used to exercise by accident: each
fails when its rule is broken (a sign lost in the fp64 ordering, a unit class dropped, a floor changed,
the impossible-value slack widened, the change-point penalty's scale, a bound without its limit)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.accuracy.fp_formats import FORMATS
from pytest_gpuperf.accuracy.rounding import LD
from pytest_gpuperf.accuracy.ulp import cr_distance, ordered_key, ulp_errors
from pytest_gpuperf.baselines import classes, compare, make_entry, validity
from pytest_gpuperf.history.detect import change_points, noise_sigma

FP64, FP32 = FORMATS["fp64"], FORMATS["fp32"]
TINY64 = np.float64(5e-324)  # 2^-1074, the smallest fp64 subnormal


@pytest.mark.parametrize("fmt", [FP32, FP64], ids=["fp32", "fp64"])
def test_ordering_key_keeps_the_sign(fmt):
    x = np.array([-2.0, -1.0, -0.0, 0.0, 1.0, 2.0], dtype=fmt.dtype)
    keys = ordered_key(x, fmt)
    assert list(keys) == sorted(keys) and keys[0] < 0 < keys[-1]
    assert keys[2] == keys[3] == 0  # −0 and +0 are one value


def test_a_wrong_sign_fp64_result_is_far_from_the_correct_one():
    y, exact = np.array([-1.0]), np.array([1.0], dtype=LD)
    assert ulp_errors(y, exact, FP64).ulp[0] > 1e15
    assert cr_distance(np.array([-TINY64]), np.array([TINY64]), FP64)[0] == 2  # ±2^-1074: two steps apart


def test_ulp_is_its_own_class_with_its_own_cpu_floor():
    assert classes.metric_class("ulp") == "ulp"
    assert classes.floor("ulp", is_cpu=True) == pytest.approx(0.03)  # not the 200 % of 'other'


def test_the_floors_are_the_measured_numbers():
    """The CPU floors are the PoCL gate check's measured sizes, the GPU floor 1 % (3 % for one run): changing any is a
    decision to review, not a refactoring."""
    assert classes.FLOORS["gpu"] == {c: 0.01 for c in ("time", "rate", "throughput", "cycles", "ulp", "other")}
    assert classes.SINGLE_RUN_GPU_FLOOR == 0.03
    assert classes.floor("GB/s", is_cpu=False, spread_known=False) == 0.03  # one run: its spread is unknown
    assert classes.floor("GB/s", is_cpu=True, spread_known=False) == classes.FLOORS["cpu"]["rate"]
    assert classes.FLOORS["cpu"] == {"time": 1.0, "rate": 0.3, "throughput": 1.25, "cycles": 1.0, "ulp": 0.03,
                                     "other": 2.0}
    assert classes.HOST_FLOOR == 1.0


def test_a_cpu_floor_still_leaves_an_edge_a_halved_bandwidth_crosses():
    entry = make_entry(value=20.0, worst=20.0, unit="GB/s", better="higher", test="t", info={}, tolerance=None,
                       spread=0.0, k=6.0, floor_rel=classes.floor("GB/s", is_cpu=True), provenance={})
    assert compare(19.0, "higher", entry).verdict == "pass"
    assert compare(10.0, "higher", entry).verdict == "regressed"


def test_bandwidth_above_peak_is_impossible_within_a_tenth_of_a_percent():
    assert validity.problem("m", 1000.5, "GB/s", peak_bandwidth_gbs=1000.0) is None
    assert "exceeds the device's theoretical peak" in validity.problem("m", 1002.0, "GB/s", peak_bandwidth_gbs=1000.0)


def test_a_bound_without_a_documented_limit_is_held_to_the_worst_run():
    entry = make_entry(value=1.5, worst=2.0, unit="ulp", better="bound", test="t", info={}, tolerance={},
                       spread=0.0, k=6.0, floor_rel=0.0, provenance={})
    assert entry["value"] == 2.0
    assert compare(2.0, "bound", entry).verdict == "pass"
    assert compare(2.5, "bound", entry).verdict == "regressed"


@pytest.mark.parametrize("scale", [1.0, 1e-3, 1e3], ids=["us", "ms", "ns"])
def test_change_points_do_not_depend_on_the_unit(scale):
    """Ten planted 5 % steps in a series with 1 % noise are found whatever unit it is written in: the
    penalty scales with σ² (with σ it would vanish or explode when the unit changes)."""
    rng = np.random.default_rng(7)
    level = np.repeat(100.0 * 1.05 ** np.arange(11), 8)
    values = (level * (1 + 0.01 * rng.standard_normal(level.size))) * scale
    steps, _ = change_points(list(values), noise_sigma(list(values)))
    assert steps == [8 * i for i in range(1, 11)]


def test_significance_needs_both_the_u_test_and_the_bootstrap_interval():
    """A difference is significant only where the Mann–Whitney test *and* the bootstrap interval of the
    ratio agree: either alone is not enough."""
    from pytest_gpuperf.timing.difference import Difference

    assert Difference(1.03, 1.01, 1.05, 1e-9, 50, 50).significant
    assert not Difference(1.03, 0.99, 1.05, 1e-9, 50, 50).significant  # the interval holds 1
    assert not Difference(1.03, 1.01, 1.05, 0.2, 50, 50).significant  # the test does not find it
    # on real samples: a shift the test finds but the median's interval straddles 1 stays not significant
    from pytest_gpuperf.timing.difference import difference

    a = [1.0] * 600 + [1.5] * 400  # the same median; B's upper tail is twice as far
    b = [1.0] * 600 + [3.0] * 400
    d = difference(a, b)
    assert d.p_value < d.alpha and d.ci_low <= 1.0 <= d.ci_high and not d.significant


def test_runs_of_mixed_identity_on_one_side_are_incomparable_never_pooled():
    """``gpuperf compare`` with two runs on side A made with different options: the metric's row is
    ``incomparable`` naming the disagreement, not a verdict on the pooled values."""
    from compare_support import metric, results, side_of
    from pytest_gpuperf.compare import engine

    runs_a = [metric("a.err", 1.0, "ulp", identity={"n": 4096}), metric("a.err", 1.0, "ulp", identity={"n": 8192})]
    a = side_of("A", [results([m]) for m in runs_a], ["a0.json", "a1.json"])
    b = side_of("B", [results([metric("a.err", 9.0, "ulp", identity={"n": 4096})])], ["b0.json"])
    (row,) = engine.compare_sides(a, b, engine.Options()).rows
    assert row.verdict == "incomparable" and "different options" in row.reason and not row.fails


def _reference(*metrics_a):
    from compare_support import results, side_of

    return side_of("A", [results([m]) for m in metrics_a], [f"a{i}.json" for i in range(len(metrics_a))])


def test_under_gpuperf_compare_an_if_stable_figure_without_agreeing_runs_is_ungated():
    """A per-kernel figure marked ``gate: if-stable``: worse than one reference run, but one run says nothing
    of its stability, so the gate reads ``ungated`` — never ``regressed``."""
    from compare_support import device, metric, record
    from pytest_gpuperf.compare.gate import judge_metric

    xs = [10.0 + 0.01 * i for i in range(30)]  # a timing with samples: judged by them, were it not if-stable
    ref = _reference(metric("k.us", 10.0, "us", samples=xs, info={"gate": "if-stable"}))
    verdict, doc, _ = judge_metric(ref, record(metric("k.us", 20.0, "us", samples=[2 * x for x in xs],
                                                      info={"gate": "if-stable"})), device())
    assert verdict == "ungated" and "not gated" in doc["compare"]["reason"]


def test_under_gpuperf_compare_an_impossible_reference_is_incomparable_not_this_run_s_failure():
    from compare_support import device, metric, record
    from pytest_gpuperf.compare.gate import judge_metric

    ref = _reference(metric("lat.x", -3.0, "cycles"))  # a negative latency: the reference is broken
    verdict, doc, _ = judge_metric(ref, record(metric("lat.x", 40.0, "cycles")), device())
    assert verdict == "incomparable" and "impossible" in doc["compare"]["reason"]


def test_under_gpuperf_compare_a_figure_from_a_shared_card_is_contended():
    from compare_support import device, metric, record
    from pytest_gpuperf.compare.gate import judge_metric

    xs = [10.0 + 0.01 * i for i in range(30)]
    ref = _reference(metric("k.ms", 10.0, "ms", samples=xs))
    shared = {"tenants": {"contended": 1, "processes": [{"pid": 7, "name": "x", "used_memory_mib": 1.0}]}}
    verdict, _, _ = judge_metric(ref, record(metric("k.ms", 20.0, "ms", samples=[2 * x for x in xs], info=shared)),
                                   device())
    assert verdict == "contended"
