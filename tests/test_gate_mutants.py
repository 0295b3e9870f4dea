"""Pins of what the gate decides: each test fails when one verdict-deciding behaviour breaks — the kind of
small change a real bug makes (an operator, a constant, a guard). The mutation check
(``scripts/mutation_check.py``) runs the mutants of the verdict modules against this file and the others
its table names."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from compare_support import device, metric, noisy, record, results, side_of
from pytest_gpuperf.accuracy import certificate
from pytest_gpuperf.baselines import classes, compare, lookup, make_entry, noise, validity
from pytest_gpuperf.baselines.merge import merge_runs
from pytest_gpuperf.baselines.verdicts import band, edges, identity_problem, over_runs, shift, stability
from pytest_gpuperf.compare import engine, gate
from pytest_gpuperf.errors import GpuPerfError, ImpossibleValueError
from pytest_gpuperf.fleet import siblings
from pytest_gpuperf.history.detect import detect
from pytest_gpuperf.history.records import TrendMetric, RunRecord
from pytest_gpuperf.schemas.results_doc import ResultsDocument
from pytest_gpuperf.timing import observers
from pytest_gpuperf.timing.difference import ALPHA, MIN_SAMPLES, difference, run_difference, usable
from pytest_gpuperf.timing.measure import MeasureConfig, measure


def _sides(ma, mb, dev_a=None, dev_b=None, runs_a=None):
    docs_a = [results([m], dev_a) for m in (runs_a or [ma])]
    a = side_of("A", docs_a, [f"a{i}.json" for i in range(len(docs_a))])
    b = side_of("B", [results([mb], dev_b)], ["b.json"])
    return a, b


def _row(ma, mb, dev_a=None, dev_b=None):
    a, b = _sides(ma, mb, dev_a, dev_b)
    return engine.compare_sides(a, b).rows[0]


# ---- contended and throttled figures are not the code's ---------------------------------------------------
def _window(contended: int) -> dict:
    return {"steal_cores": 0.0, "foreign_cores": 0.0, "remeasured": 1, "busy": 1, "contended": contended}


def test_one_contended_window_makes_a_cpu_figure_derived_from_them_contended():
    info = {"host": observers.summarize([_window(0), _window(1), _window(0)])}
    assert info["host"]["contended"] == 1 and info["host"]["windows"] == 3
    assert observers.contended_metric(info)
    for verdict in ("regressed", "improved", "pass"):
        assert observers.measured_verdict(verdict, info, is_cpu=True) == "contended"
    for verdict in ("new", "incomparable", "ungated"):
        assert observers.measured_verdict(verdict, info, is_cpu=True) == verdict
    assert observers.measured_verdict("regressed", info, is_cpu=False) == "regressed"  # a GPU is device-timed
    quiet = {"host": observers.summarize([_window(0), _window(0)])}
    assert not observers.contended_metric(quiet)
    assert observers.measured_verdict("regressed", quiet, is_cpu=True) == "regressed"


def test_the_host_load_limits_are_strict_and_short_windows_judged_on_ten_ticks():
    W = observers.Window
    assert not observers.contended(None)
    assert not observers.contended(W(1.0, observers.STEAL_LIMIT_CORES, 0.0))
    assert observers.contended(W(1.0, observers.STEAL_LIMIT_CORES * 1.01, 0.0))
    assert not observers.contended(W(1.0, 0.0, observers.FOREIGN_LIMIT_CORES))
    assert observers.contended(W(1.0, 0.0, observers.FOREIGN_LIMIT_CORES * 1.01))
    short = 2.0 / observers._HZ  # two ticks: judged as if ten, so one stray tick is a fifth, not half a core
    assert not observers.contended(W(short, 0.0, observers.FOREIGN_LIMIT_CORES * 4))
    assert observers.contended(W(short, 0.0, observers.FOREIGN_LIMIT_CORES * 6))
    assert (observers.STEAL_LIMIT_CORES, observers.FOREIGN_LIMIT_CORES) == (0.10, 0.50)
    assert (observers.CONTENDED_RUN_LIMIT, observers.THROTTLED_RUN_LIMIT, observers.RETRIES) == (0.10, 0.10, 2)


def test_throttled_and_shared_verdicts():
    throttled = {"power": {"throttled": True}}
    assert observers.throttled_metric(throttled) and not observers.throttled_metric({"power": {"throttled": False}})
    assert observers.measured_verdict("pass", throttled, is_cpu=False) == "throttled"
    assert observers.measured_verdict("new", throttled, is_cpu=False) == "new"
    shared = {"tenants": {"contended": 1}}
    assert observers.shared_metric(shared) and not observers.shared_metric({"tenants": {"contended": 0}})
    assert observers.measured_verdict("improved", shared, is_cpu=False) == "contended"
    assert observers.measured_verdict("pass", {**shared, **throttled}, is_cpu=False) == "contended"
    summary = observers.summarize_power([
        {"energy_j": 1.0, "wall_s": 1.0, "sm_clock_min_mhz": 1, "sm_clock_max_mhz": 2, "temperature_max_c": 50,
         "throttled": False},
        {"energy_j": 3.0, "wall_s": 1.0, "sm_clock_min_mhz": 0.5, "sm_clock_max_mhz": 3, "temperature_max_c": 70,
         "throttled": True, "throttle_reasons": ["hw_thermal_slowdown"]}])
    assert summary["throttled"] and summary["throttled_windows"] == 1 and summary["avg_power_w"] == 2.0
    assert (summary["sm_clock_min_mhz"], summary["sm_clock_max_mhz"], summary["temperature_max_c"]) == (0.5, 3, 70)
    tenants = observers.summarize_tenants([{"contended": 0, "shared": 1}, {"contended": 1, "shared": 1}])
    assert (tenants["contended"], tenants["shared"], tenants["windows"]) == (1, 2, 2)


@pytest.mark.parametrize("side", ["A", "B"])
@pytest.mark.parametrize("info,cpu", [({"power": {"throttled": True}}, False), ({"host": {"contended": 1}}, True),
                                      ({"tenants": {"contended": 1}}, False)],
                         ids=["throttled", "host-contended-cpu", "shared-card"])
def test_compare_does_not_gate_a_side_the_observers_disown(side, info, cpu):
    dev = device(is_cpu=cpu)
    a = metric("k.t", 100.0, samples=noisy(100, 0.01, 80, 1), info=info if side == "A" else None)
    b = metric("k.t", 300.0, samples=noisy(300, 0.01, 80, 2), info=info if side == "B" else None)  # past CPU floors
    row = _row(a, b, dev, dev)
    assert row.verdict == "worse" and not row.gated and not row.fails
    ref_a, _ = _sides(a, b, dev, dev)
    verdict, _, _ = gate.judge_metric(ref_a, record(b), dev)
    assert verdict in ("throttled", "contended")


def test_a_busy_host_alone_does_not_disown_a_gpu_figure():
    dev = device(is_cpu=False)
    row = _row(metric("k.t", 100.0, samples=noisy(100, 0.01, 80, 1), info={"host": {"contended": 1}}),
               metric("k.t", 150.0, samples=noisy(150, 0.01, 80, 2)), dev, dev)
    assert row.verdict == "worse" and row.gated and row.fails


# ---- what compare and the gate compare at all -----------------------------------------------------------
def test_sides_with_opposite_directions_or_units_are_never_compared():
    from pytest_gpuperf.baselines.verdicts import kind_problem

    assert kind_problem("us", "lower", "us", "lower") is None
    assert kind_problem(None, None, "ms", "higher") is None  # what a side does not state is not held against it
    assert kind_problem("us", "lower", "ms", "lower") and kind_problem("us", "lower", "us", "higher")
    row = _row(metric("k.t", 100.0), metric("k.t", 500.0, better="higher"))
    assert row.verdict == "incomparable" and not row.fails
    entry = make_entry(value=100.0, worst=100.0, unit="us", better="lower", test="t", info={}, tolerance=None,
                       spread=0.0, k=6.0, floor_rel=0.01, provenance={})
    assert compare(500.0, "higher", entry).verdict == "incomparable"
    assert compare(500.0, "lower", entry, unit="ms").verdict == "incomparable"
    assert compare(500.0, "lower", entry, unit="us").verdict == "regressed"


def test_identity_problem_names_each_differing_option():
    assert identity_problem({"n": 1}, {"n": 1}) is None and identity_problem(None, {}) is None
    why = identity_problem({"n": 1, "seed": 7}, {"n": 2, "seed": 7})
    assert "n: baseline 1, this run 2" in why and "seed" not in why


# ---- impossible values ------------------------------------------------------------------------------------
def test_a_negative_bandwidth_is_impossible_and_zero_is_not():
    assert "negative" in validity.problem("m", -1e-9, "GB/s")
    assert validity.problem("m", 0.0, "GB/s") is None and validity.problem("m", -1.0, "x") is None
    assert validity.problem("m", math.nan, "GB/s") is None  # a NaN is a regression of its own
    assert "infinite" in validity.problem("m", math.inf, "us")
    assert "physical range" in validity.problem("m", 1.5, "1", valid=(0.0, 1.0))
    assert validity.problem("m", 1.0, "1", valid=(0.0, 1.0)) is None
    assert validity.problem("m", 0.0, "1", valid=(0.0, 1.0)) is None


def test_samples_problem_edges():
    assert validity.samples_problem("m", 5.0, "us", None) is None and validity.samples_problem("m", 5.0, "us", []) is None
    assert validity.samples_problem("m", 100.0, "us", [99.0, 100.0, 101.0]) is None
    assert validity.samples_problem("m", 101.1, "us", [99.0, 100.0, 101.0]) is None  # within 0.1 % of the range
    assert "outside its own samples" in validity.samples_problem("m", 101.2, "us", [99.0, 100.0, 101.0])
    assert "outside its own samples" in validity.samples_problem("m", 98.8, "us", [99.0, 100.0, 101.0])
    assert validity.samples_problem("m", math.nan, "us", [99.0, 100.0]) is None
    assert "finite" in validity.samples_problem("m", 1.0, "us", [math.nan, math.inf])


def test_a_median_below_the_timer_resolution_is_refused(cl_device, monkeypatch):
    k = cl_device.compile("__kernel void nop(__global int *x) { }", "nop")
    buf = cl_device.to_device(np.zeros(1, np.int32))
    cfg = MeasureConfig(warmup=1, min_repeats=5, max_repeats=5, target_rel_spread=10.0, budget_s=10)
    m = measure(cl_device, lambda: cl_device.launch(k, (1,), (1,), [buf]), cfg)
    coarse = dataclasses.replace(cl_device.info, extra={**cl_device.info.extra,
                                                         "timer_resolution_ns": m.stats.median * 1e9 * 1e3})
    monkeypatch.setattr(cl_device, "info", coarse)
    with pytest.raises(ImpossibleValueError, match="below .*timer resolution"):
        measure(cl_device, lambda: cl_device.launch(k, (1,), (1,), [buf]), cfg)


# ---- the accuracy certificate's MPFR confirmation ---------------------------------------------------------
def test_the_mpfr_confirmation_tolerance_is_a_hundredth_of_an_ulp():
    assert certificate.CONFIRM_TOLERANCE == 0.01
    assert certificate.confirms(3.0, 3.0) and certificate.confirms(3.0099, 3.0) and certificate.confirms(2.9901, 3.0)
    assert not certificate.confirms(3.02, 3.0) and not certificate.confirms(2.98, 3.0)
    assert certificate.confirms(1e6 + 0.9, 1e6)  # plus 1e-6 relative: a million ulp is not exact in binary64
    assert not certificate.confirms(1e6 + 1.5, 1e6)


# ---- merging runs into a baseline -------------------------------------------------------------------------
def _run_doc(value: float, identity: dict | None = None, interrupted: bool = False, samples=None) -> ResultsDocument:
    doc = results([metric("k.t", value, samples=samples, identity=identity)])
    if interrupted:
        doc["run"]["interrupted"] = True
    return ResultsDocument.from_json(doc)


def test_the_baseline_value_is_the_median_of_the_runs_not_the_mean():
    entries = merge_runs([_run_doc(v) for v in (1.0, 2.0, 10.0)], k=6.0)
    assert entries["k.t"]["value"] == 2.0 and entries["k.t"]["run_values"] == [1.0, 2.0, 10.0]
    assert entries["k.t"]["runs"] == 3


def test_runs_made_two_different_ways_do_not_merge():
    with pytest.raises(GpuPerfError, match="different options"):
        merge_runs([_run_doc(1.0, {"n": 1}), _run_doc(1.0, {"n": 2})], k=6.0)


def test_an_interrupted_run_is_not_merged_into_a_baseline():
    with pytest.raises(GpuPerfError, match="interrupted"):
        merge_runs([_run_doc(1.0), _run_doc(1.0, interrupted=True), _run_doc(1.0)], k=6.0)
    assert merge_runs([_run_doc(1.0), _run_doc(1.0)], k=6.0)["k.t"]["runs"] == 2


def test_the_merged_band_keeps_the_spread_between_runs():
    tight = merge_runs([_run_doc(100.0), _run_doc(100.0), _run_doc(100.0)], k=6.0)["k.t"]
    spread = merge_runs([_run_doc(90.0), _run_doc(100.0), _run_doc(110.0)], k=6.0)["k.t"]
    assert band(spread["value"], spread["tolerance"]) > band(tight["value"], tight["tolerance"])
    assert spread["tolerance"]["k"] == 6.0


def test_family_entries_never_overwrite_a_devices_own(tmp_path):
    import json

    def write(key, metrics):
        doc = {"schema": "pytest-gpuperf-baseline/1", "device": {"key": key, "name": key},
               "backends": {"opencl": {"provenance": {}, "metrics": metrics}}}
        (tmp_path / f"{key}.json").write_text(json.dumps(doc))

    own = {"value": 1.0, "unit": "ulp", "better": "lower", "test": "t.py::t", "tolerance": {"abs": 0}}
    write("dev", {"accuracy.fp32.sin.max_ulp": own})
    write("fam", {"accuracy.fp32.sin.max_ulp": {**own, "value": 7.0},
                  "accuracy.fp32.cos.max_ulp": {**own, "value": 2.0}})
    src = lookup.resolve(tmp_path, "dev", "opencl", "fam", reviewed_dir=tmp_path)
    metrics = src.file.metrics("opencl")
    assert metrics["accuracy.fp32.sin.max_ulp"]["value"] == 1.0 and "source" not in metrics["accuracy.fp32.sin.max_ulp"]
    assert metrics["accuracy.fp32.cos.max_ulp"]["value"] == 2.0 and src.family_count == 1


# ---- the statistics -----------------------------------------------------------------------------------
def test_a_nan_run_does_not_enter_the_t_test():
    with pytest.raises(ValueError, match="finite"):
        run_difference([1.0, math.nan, 1.1], [1.0, 1.05, 0.98])
    with pytest.raises(ValueError, match="finite"):
        run_difference([1.0, 1.1, 1.05], [1.0, math.inf])
    with pytest.raises(ValueError):
        run_difference([1.0], [2.0])  # one value a side: no spread to test with
    assert not usable([1.0, 2.0, math.nan, 3.0, 4.0, 5.0]) and usable([1.0, 2.0, 3.0, 4.0, 5.0])
    assert not usable([1.0] * (MIN_SAMPLES - 1)) and not usable([0.0, 0.0, 0.0, 1.0, 1.0])


def test_run_difference_tests_and_ratio():
    d = run_difference([100.0, 101.0, 99.0], [120.0, 121.0, 119.0])
    assert d.significant and d.ratio == pytest.approx(1.2) and d.test == "welch" and d.unit == "runs"
    assert d.ci_low > 1.0 and d.n_a == 3 and d.n_b == 3
    same = run_difference([100.0, 101.0, 99.0], [100.5, 99.5, 100.0])
    assert not same.significant and same.ci_low <= 1.0 <= same.ci_high
    one = run_difference([100.0, 101.0, 99.0], [200.0])
    assert one.test == "student" and one.significant
    flat = run_difference([5.0, 5.0], [5.0, 5.0])
    assert flat.p_value == 1.0 and not flat.significant
    assert run_difference([5.0, 5.0], [6.0, 6.0]).p_value == 0.0


def test_difference_needs_both_the_test_and_the_interval():
    a, b = noisy(100, 0.01, 200, 1), noisy(110, 0.01, 200, 2)
    d = difference(a, b)
    assert d.significant and d.ratio == pytest.approx(1.1, rel=0.01) and d.ci_low > 1.0 and d.p_value < ALPHA
    with pytest.raises(ValueError):
        difference([1.0, 2.0], b)
    assert difference([3.0] * 10, [3.0] * 10).p_value == 1.0
    assert ALPHA == pytest.approx(0.001)


# ---- verdict arithmetic -----------------------------------------------------------------------------------
def test_band_and_edges():
    assert band(100.0, {"rel": 0.1, "abs": 5.0, "k": 2.0, "spread": 3.0}) == pytest.approx(10.0)
    assert band(100.0, {"abs": 12.0, "rel": 0.1}) == 12.0 and band(100.0, {"k": 6.0, "spread": 3.0}) == 18.0
    assert band(100.0, {"k": 6.0}) == 0.0 and band(-100.0, {"rel": 0.1}) == pytest.approx(10.0)
    assert edges(100.0, 300.0, "higher") == (25.0, 400.0)  # ratio-safe: e / (1 + w/e)
    assert edges(100.0, 300.0, "higher", ratio_safe=False) == (-200.0, 400.0)
    assert edges(100.0, 300.0, "exact") == (-200.0, 400.0) and edges(-1.0, 1.0, "lower") == (-2.0, 0.0)


def test_direction_verdicts_at_the_edges():
    e = {"value": 100.0, "better": "lower", "tolerance": {"abs": 10.0}}
    assert compare(110.0, "lower", e).verdict == "pass" and compare(110.01, "lower", e).verdict == "regressed"
    assert compare(90.0, "lower", e).verdict == "pass" and compare(89.99, "lower", e).verdict == "improved"
    h = dict(e, better="higher")
    assert compare(89.99, "higher", h).verdict == "regressed" and compare(110.01, "higher", h).verdict == "improved"
    x = dict(e, better="exact")
    assert compare(110.0, "exact", x).verdict == "pass" and compare(89.9, "exact", x).verdict == "regressed"
    b = dict(e, better="bound")
    assert compare(110.0, "bound", b).verdict == "pass" and compare(110.5, "bound", b).verdict == "regressed"
    assert compare(0.0, "bound", b).verdict == "pass"
    assert compare(math.nan, "lower", e).verdict == "regressed"
    assert compare(1.0, "lower", None).verdict == "new"


def test_samples_decide_only_together_with_the_band():
    e = make_entry(value=100.0, worst=100.0, unit="us", better="lower", test="t", info={}, tolerance=None,
                   spread=0.0, k=6.0, floor_rel=0.01, provenance={}, samples=list(noisy(100, 0.05, 60, 1)))
    noisy_b = list(noisy(103, 0.3, 6, 2))
    cmp = compare(103.0, "lower", e, samples=noisy_b)
    assert cmp.verdict == "pass" and "not significant" in cmp.reason
    clear = list(noisy(150, 0.01, 60, 3))
    assert compare(150.0, "lower", e, samples=clear).verdict == "regressed"


def test_over_runs_keeps_only_significant_verdicts():
    from pytest_gpuperf.baselines.verdicts import Comparison

    out = Comparison("regressed", 100.0, 1.0, 0.1)
    kept = over_runs(out, [100.0, 100.5, 99.5], [120.0, 120.5, 119.5])
    assert kept.verdict == "regressed" and kept.difference is not None
    dropped = over_runs(out, [100.0, 130.0, 70.0], [101.0])
    assert dropped.verdict == "pass" and "not significant" in dropped.reason and "3 and 1 runs" in dropped.reason
    assert over_runs(Comparison("ungated", 1.0, 0.0, 0.0), [1.0, 2.0], [3.0]).verdict == "ungated"


def test_stability_needs_five_agreeing_runs():
    entry = {"value": 100.0, "run_values": [100.0, 100.1, 99.9, 100.0, 100.05], "tolerance": {"rel": 0.01}}
    assert stability(entry)[0]
    assert not stability(dict(entry, run_values=entry["run_values"][:4]))[0]
    assert not stability(dict(entry, run_values=[100.0, 100.0, 100.0, 100.0, 100.6]))[0]  # span > half the band
    assert stability(dict(entry, run_values=[100.0, 100.0, 100.0, 100.0, 100.5]))[0]


def test_noise_model_thresholds():
    assert noise.MIN_REPEATS == 3 and noise.enough_repeats(3) and not noise.enough_repeats(2)
    assert noise.model_of("k.t", "us", "exact") == "deterministic"
    assert noise.model_of("k.t", "us", "lower", True) == "sampled"
    assert noise.model_of("k.t", "us", "lower", info={"noise": "informational"}) == "informational"
    assert classes.floor("us", is_cpu=False) == 0.01


# ---- history ------------------------------------------------------------------------------------------
def _series(values, verdicts=None, commits=None, drivers=None):
    return [RunRecord(date=f"2026-03-01T00:{i:02d}:00+00:00", commit=(commits or [f"c{i:03d}" for i in range(99)])[i],
                      device_key="dev", backend="cuda", driver=(drivers or ["1"] * 99)[i], toolkit="t", argv=[],
                      metrics=[TrendMetric(name="area.metric", test="t", value=v, unit="ulp", better="lower", mad=0.0,
                                            verdict=(verdicts or ["pass"] * 99)[i])])
            for i, v in enumerate(values)]


def test_history_steps_leave_throttled_and_contended_figures_out():
    values = [1.0] * 6 + [3.0] * 6
    assert len(detect(_series(values))) == 1
    assert detect(_series(values, verdicts=["pass"] * 6 + ["throttled"] * 6)) == []
    assert detect(_series(values, verdicts=["pass"] * 6 + ["contended"] * 6)) == []


def test_history_steps_need_a_cause_between_runs():
    values = [1.0] * 6 + [3.0] * 6
    assert detect(_series(values, commits=["same"] * 12)) == []  # one commit, driver and toolkit: noise
    (step,) = detect(_series(values, commits=["same"] * 12, drivers=["1"] * 6 + ["2"] * 6))  # the driver changed
    assert step.direction == "worse"


# ---- siblings -----------------------------------------------------------------------------------------
def _card_doc(index: int, samples, unit: str = "us", better: str = "lower") -> dict:
    dev = device(index=index, spec=f"cuda:{index}", extra={"pci_bus_id": f"0000:{index:02x}:00.0"})
    xs = list(samples)
    return results([metric("k.t", float(np.median(xs)), unit=unit, better=better, samples=xs)], dev)


def _siblings_check(docs: list[dict]) -> dict:
    """The sibling report of ``docs``, each read as a results file is (:class:`ResultsDocument`)."""
    return siblings.check([ResultsDocument.from_json(d, f"r{i}.json") for i, d in enumerate(docs)])


def test_siblings_need_significance_to_call_a_card_better_or_worse():
    rng = np.random.default_rng(4)
    wide = [list(100 * (1 + 0.5 * rng.standard_normal(6))) for _ in range(3)]
    wide[0] = [x * 1.2 for x in wide[0]]  # 20 % slower, but in 50 % noise over six samples
    report = _siblings_check([_card_doc(i, s) for i, s in enumerate(wide)])
    rows = report["groups"][0]["rows"]
    assert all(r["verdict"] == "same" for r in rows), rows
    clear = [noisy(100, 0.01, 60, 1), noisy(100, 0.01, 60, 2), noisy(130, 0.01, 60, 3)]
    report = _siblings_check([_card_doc(i, s) for i, s in enumerate(clear)])
    verdicts = {r["device"]: r["verdict"] for r in report["groups"][0]["rows"]}
    assert verdicts["cuda:2"] == "outlier" and [o["device"] for o in report["outliers"]] == ["cuda:2"]
    faster = [noisy(100, 0.01, 60, 1), noisy(100, 0.01, 60, 2), noisy(70, 0.01, 60, 3)]
    report = _siblings_check([_card_doc(i, s) for i, s in enumerate(faster)])
    assert {r["device"]: r["verdict"] for r in report["groups"][0]["rows"]}["cuda:2"] == "better"


def test_siblings_ratio_edges_follow_the_direction():
    """The sibling check's ratio rule (``verdicts.shift``): the gate's ratio-safe band edges around 1."""
    assert shift(1.03, "lower", 0.02) == "worse"
    assert shift(1.0 / 1.03, "lower", 0.02) == "better"
    assert shift(1.01, "lower", 0.02) == "same"
    assert shift(1.03, "higher", 0.02) == "better"
    assert shift(1.0 / 1.03, "higher", 0.02) == "worse"
    assert shift(1.02, "lower", 0.02) == "same"
    assert shift(1.03, "bound", 0.02) == "worse" and shift(1.0 / 1.03, "bound", 0.02) == "better"
    assert shift(1.5, "exact", 0.02) == "same"  # no direction: the check compares exact figures by value
    assert shift(0.9802, "lower", 0.02) == "better"  # ratio-safe: the edge is 1 / (1 + floor), not 1 - floor


# ---- smaller rules the verdicts lean on ---------------------------------------------------------------
def test_the_noise_model_without_samples_is_the_rows_not_sampled():
    assert noise.model_of("k.t", "us", "lower") == "repeated"
    assert noise.model_of("k.t", "us", "lower", True) == "sampled"
    assert noise.repeats_of({"repeats": [1.0, 2.0, 3.0]}) == [1.0, 2.0, 3.0]
    entry = {"unit": "us", "better": "lower", "stats": {"samples": [1.0] * 5}}
    assert not noise.is_deterministic(entry, "k.t") and noise.is_deterministic(dict(entry, better="exact"), "k.t")


def test_the_peak_bandwidth_rule_is_for_bandwidths_only():
    assert validity.problem("m", 5000.0, "us", peak_bandwidth_gbs=1000.0) is None
    assert validity.problem("m", 5000.0, "GB/s", peak_bandwidth_gbs=None) is None
    assert validity.problem("m", 5000.0, "GB/s", peak_bandwidth_gbs=1000.0) is not None


def test_identities_compare_whatever_their_key_order():
    a = _run_doc(1.0, {"n": 1, "seed": 7})
    b = _run_doc(2.0, {"seed": 7, "n": 1})
    assert merge_runs([a, b], k=6.0)["k.t"]["identity"] == {"n": 1, "seed": 7}


def test_rows_of_one_side_only_and_the_counts():
    a = side_of("A", [results([metric("k.a", 1.0), metric("k.t", 100.0, samples=noisy(100, 0.01, 80, 1))])],
                       ["a.json"])
    b = side_of("B", [results([metric("k.b", 1.0), metric("k.t", 100.0, samples=noisy(100, 0.01, 80, 2))])],
                       ["b.json"])
    rep = engine.compare_sides(a, b)
    rows = {r.name: r for r in rep.rows}
    assert rows["k.a"].runs == (1, 0) and rows["k.b"].runs == (0, 1) and rows["k.b"].extra["only"] == "B"
    counts = rep.counts()
    assert counts["incomparable"] == 2 and counts["same"] == 1 and counts["worse_ungated"] == 0
    assert counts["failing"] == 0 and rep.exit_code == 0


def test_worse_rows_that_do_not_gate_are_counted_apart():
    dev = device(is_cpu=False)
    a, b = _sides(metric("k.t", 100.0, samples=noisy(100, 0.01, 80, 1), info={"power": {"throttled": True}}),
                  metric("k.t", 300.0, samples=noisy(300, 0.01, 80, 2)), dev, dev)
    rep = engine.compare_sides(a, b)
    assert rep.counts()["worse"] == 1 and rep.counts()["worse_ungated"] == 1 and rep.exit_code == 0


def test_environment_fields_come_from_device_environment_and_extra():
    da, db = device(extra={"mem_clock_mhz": 2619, "bus_width": 5120}), device(extra={"mem_clock_mhz": 2000,
                                                                                     "bus_width": 5120})
    a, b = _sides(metric("k.t", 1.0), metric("k.t", 1.0), da, db)
    env = {e["field"]: e for e in engine.environment_difference(a, b)}
    assert env["memory clock MHz"]["changed"] and (env["memory clock MHz"]["a"], env["memory clock MHz"]["b"]) == (
        2619, 2000)
    assert not env["bus width"]["changed"] and not env["device"]["changed"]


def test_durations_and_their_relative_change():
    assert engine.Duration("t", 2.0, 3.0).delta_rel == pytest.approx(0.5)
    assert engine.Duration("t", 0.0, 3.0).delta_rel is None and engine.Duration("t", None, 3.0).delta is None


def test_a_regression_against_a_reference_run_reads_regressed_under_gpuperf_compare():
    ref, b = _sides(metric("k.t", 100.0, samples=noisy(100, 0.01, 80, 1)),
                    metric("k.t", 300.0, samples=noisy(300, 0.01, 80, 2)))
    verdict, doc, line = gate.judge_metric(ref, record(metric("k.t", 300.0, samples=noisy(300, 0.01, 80, 2))), device())
    assert verdict == "regressed" and doc["value"] == pytest.approx(100.0, rel=0.01) and "WORSE" in line
    assert gate.judge_metric(ref, record(metric("k.u", 1.0)), device())[0] == "new"

    class Recorded:
        value, unit, verdict = 300.0, "us", "regressed"
        baseline = {"value": 100.0, "delta_rel": 2.0, "compare": {"verdict": "worse"}, "source": "run a.json"}

    name, text = gate.junit_property("k.t", Recorded(), "opencl:0")
    assert name == "gpuperf.k.t" and '"verdict": "worse"' in text and '"gate": "regressed"' in text


def test_siblings_other_units_exact_figures_and_zero():
    docs = [_card_doc(i, [1.0] * 6, unit="us") for i in range(2)] + [_card_doc(2, [1.0] * 6, unit="ms")]
    rows = _siblings_check(docs)["groups"][0]["rows"]
    assert all(r["verdict"] == "incomparable" for r in rows)
    exact = [_card_doc(i, [v] * 6, better="exact") for i, v in enumerate((4.0, 4.0, 4.0, 5.0))]
    verdicts = {r["device"]: r["verdict"] for r in _siblings_check(exact)["groups"][0]["rows"]}
    assert verdicts == {"cuda:0": "same", "cuda:1": "same", "cuda:2": "same", "cuda:3": "outlier"}
    zero = [_card_doc(i, [v] * 6, unit="ulp") for i, v in enumerate((0.0, 0.0, 0.5))]
    verdicts = {r["device"]: r["verdict"] for r in _siblings_check(zero)["groups"][0]["rows"]}
    assert verdicts["cuda:2"] == "outlier" and verdicts["cuda:0"] == "same"


def test_bit_ranges_cover_both_zeros_and_refuse_a_bad_exclusion():
    assert certificate.bit_ranges((0.0, 1.0)) == ((0, certificate._bits(1.0) + 1),)
    neg = certificate.bit_ranges((-1.0, -0.5))
    assert neg == ((certificate._bits(-0.5), certificate._bits(-1.0) - certificate._bits(-0.5) + 1),)
    both = certificate.bit_ranges((-1.0, 1.0))
    assert both[0][0] == 0 and both[1][0] == certificate._bits(-0.0)
    assert certificate.bit_ranges((0.0, 0.0)) == ((0, 1),)
    with pytest.raises(ValueError):
        certificate.bit_ranges(None, exclude=(-1.0, 1.0))
    with pytest.raises(ValueError):
        certificate.bit_ranges(None, exclude=(2.0, 1.0))
    ranges = certificate.bit_ranges(None, exclude=(1.0, 2.0))
    assert sum(n for _, n in ranges) == (1 << 32) - (certificate._bits(2.0) - certificate._bits(1.0) - 1)


def test_power_window_needs_two_readings():
    from pytest_gpuperf.devices.nvml import Reading

    r0 = Reading(0.0, 1000.0, 100.0, 1500.0, 2600.0, 60.0, 0)
    r1 = Reading(2.0, 5000.0, 300.0, 1400.0, 2600.0, 70.0, 0)
    assert observers.power_window([r0], lambda mask: []) is None
    w = observers.power_window([r0, r1], lambda mask: [])
    assert (w["energy_j"], w["avg_power_w"], w["sm_clock_min_mhz"], w["samples"]) == (4.0, 2.0, 1400.0, 2)


def test_the_history_noise_and_its_relative_threshold():
    from pytest_gpuperf.history.detect import change_points, noise_sigma, relative_shift

    rng = np.random.default_rng(11)
    xs = list(100 + rng.standard_normal(4000))
    assert noise_sigma(xs) == pytest.approx(1.0, rel=0.08)  # successive differences: σ√2, divided back
    assert noise_sigma([5.0] * 10) == pytest.approx(5e-9)  # the floor: a billionth of the level
    assert noise_sigma([1.0, 1.0], mads=[2.0, None]) == pytest.approx(2.0 * 1.4826, rel=1e-3)
    level = np.repeat([100.0, 103.0], 10)  # a 3 % step in 0.05 % noise: past the 2 % relative threshold
    values = list(level * (1 + 0.0005 * rng.standard_normal(level.size)))
    assert change_points(values, noise_sigma(values))[0] == [10]
    shift = relative_shift(0.0, 0.02, 3.0)
    assert shift(np.array([100.0]), np.array([101.0])) == pytest.approx(0.5)  # a 1 % gap is half of 2 %
    assert shift(np.array([100.0]), np.array([100.0])) == 0.0
    assert shift(np.array([0.0]), np.array([1.0])) == math.inf


def test_rows_without_a_ratio_sort_after_rows_that_moved():
    moved = engine.Row("a.x", "us", "lower", 1.0, 1.5, "same", ratio=1.5)
    flat = engine.Row("a.y", "us", "lower", 1.0, None, "same")
    assert sorted([flat, moved], key=engine.Row.sort_key) == [moved, flat]


def test_a_bound_without_tolerance_is_given_the_threshold_as_its_band():
    a, _ = _sides(metric("acc.x", 2.0, unit="ulp", better="bound"), metric("acc.x", 2.0, unit="ulp", better="bound"))
    entry = engine.entry_from_side(a.metrics["acc.x"], a.device, 0.05)
    assert entry["tolerance"]["rel"] == 0.05
    tolerant, _ = _sides(metric("acc.x", 2.0, unit="ulp", better="bound", tolerance={"abs": 1.0}),
                         metric("acc.x", 2.0, unit="ulp", better="bound"))
    assert "rel" not in engine.entry_from_side(tolerant.metrics["acc.x"], tolerant.device, 0.05)["tolerance"]


def test_bandwidth_across_cards_is_compared_as_each_cards_fraction_of_peak():
    da, db = device(key="card-a", peak_bandwidth_gbs=1000.0), device(key="card-b", peak_bandwidth_gbs=2000.0)
    row = _row(metric("mem.bw", 900.0, unit="GB/s", better="higher", samples=noisy(900, 0.01, 60, 1)),
               metric("mem.bw", 1800.0, unit="GB/s", better="higher", samples=noisy(1800, 0.01, 60, 2)), da, db)
    assert row.compared_unit == "fraction of peak" and (row.a, row.b) == pytest.approx((0.9, 0.9))
    assert row.verdict == "same" and row.ratio == pytest.approx(1.0, rel=0.02)
    slower = _row(metric("mem.bw", 900.0, unit="GB/s", better="higher", samples=noisy(900, 0.01, 60, 1)),
                  metric("mem.bw", 900.0, unit="GB/s", better="higher", samples=noisy(900, 0.01, 60, 2)), da, db)
    assert slower.verdict == "worse" and slower.ratio == pytest.approx(0.5, rel=0.02)


def test_the_shortest_series_that_can_step_is_segmented():
    from pytest_gpuperf.history.detect import MIN_SEGMENT, levels, relative_shift

    values = [1.0] * MIN_SEGMENT + [3.0]  # the first level's minimum, then one new run: a candidate
    found = levels(values, 0.01, relative_shift(0.01, 0.02, 3.0))
    assert found.starts == [MIN_SEGMENT] and found.candidate
    assert levels([1.0] * MIN_SEGMENT, 0.01, relative_shift(0.01, 0.02, 3.0)).starts == []


def test_detect_all_keeps_only_the_metrics_named():
    from pytest_gpuperf.history.detect import detect_all

    runs = _series([1.0] * 6 + [3.0] * 6)
    assert len(detect_all(runs, names="area.met").steps) == 1
    assert detect_all(runs, names="other").steps == []
    assert detect_all(runs, device_key="elsewhere").steps == []


def test_a_series_takes_the_latest_runs_unit_direction_and_device():
    from pytest_gpuperf.history.detect import relative_shift, series

    runs = _series([1.0] * 4)
    runs[-1].metrics[0].unit, runs[-1].metrics[0].better, runs[-1].device = "cycles", "higher", {"key": "dev", "n": 2}
    (s,) = series(runs).values()
    assert (s.unit, s.better, s.device) == ("cycles", "higher", {"key": "dev", "n": 2})
    assert relative_shift(0.0, 0.02, 3.0)(np.array([10.0]), np.array([10.1])) == pytest.approx(0.5)


# ---- the session ----------------------------------------------------------------------------------------
def test_a_planted_missing_metric_is_not_recorded(pytester, cl_device):
    import json

    from suite_support import WORK_HEAD, baseline_folder

    pytester.makepyfile(WORK_HEAD + '''
def test_work(gpuperf_record, gpu_device):
    gpuperf_record("kernel.count", 3, "items", better="exact")
    gpuperf_record("kernel.other", 4, "items", better="exact")
''')
    out = pytester.path / "r.json"
    result = pytester.runpytest("--gpuperf-device=opencl:0", f"--gpuperf-baseline-dir={baseline_folder(pytester.path)}",
                                "--gpuperf-plant=missing=kernel.count", f"--gpuperf-json={out}", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    assert [m["name"] for m in json.loads(out.read_text())["metrics"]] == ["kernel.other"]


def test_under_gpuperf_compare_a_metric_of_the_reference_is_judged_against_it(pytester, cl_device):
    import json

    from suite_support import WORK_HEAD, baseline_folder

    pytester.makepyfile(WORK_HEAD + '''
def test_work(gpuperf_record, gpu_device):
    gpuperf_record("kernel.count", 3, "items", better="exact")
''')
    common = ["--gpuperf-device=opencl:0", f"--gpuperf-baseline-dir={baseline_folder(pytester.path)}", "-p",
              "no:cacheprovider"]
    ref, out = pytester.path / "ref.json", pytester.path / "r.json"
    assert pytester.runpytest(*common, f"--gpuperf-json={ref}").ret == 0
    result = pytester.runpytest(*common, f"--gpuperf-compare={ref}", f"--gpuperf-json={out}")
    assert result.ret == 0, result.stdout.str()
    (m,) = json.loads(out.read_text())["metrics"]
    assert m["verdict"] == "pass" and m["baseline"]["source"].startswith("run ")


def _session(tmp_path):
    from pytest_gpuperf.session import GpuPerfSession, Options

    s = GpuPerfSession(Options(device="opencl:0", baseline_dir=str(tmp_path / "bl")), tmp_path)
    return s, s.selected()[0].spec


def test_a_tests_duration_is_the_sum_of_its_phases(tmp_path, cl_device):
    s, spec = _session(tmp_path)
    for when, secs in (("setup", 0.25), ("call", 0.5), ("teardown", 0.125)):
        s.note_test(f"t.py::test_a[{spec}]", spec, when, secs, "passed")
    (doc,) = s.run_for(spec).tests.values()
    assert doc == {"duration_s": 0.875, "outcome": "passed"}


def test_a_documented_bound_gates_before_any_baseline(tmp_path, cl_device):
    s, spec = _session(tmp_path)
    inside = s.record(f"t.py::test_a[{spec}]", spec, "acc.inside", 3.0, "ulp", "bound", bound=5.0)
    past = s.record(f"t.py::test_a[{spec}]", spec, "acc.past", 7.0, "ulp", "bound", bound=5.0)
    assert inside.verdict == "new" and past.verdict == "regressed"
    assert inside.baseline["source"] == "documented bound"


def test_a_host_window_never_reads_more_cores_than_the_host_has():
    import os
    import time

    load = observers.HostLoad()
    load.start()
    end = time.perf_counter() + 0.3
    while time.perf_counter() < end:  # this process's own work: never foreign
        pass
    w = load.stop()
    cores = os.cpu_count() or 1
    assert w is not None and 0.0 <= w.foreign_cores <= cores * 1.5 and 0.0 <= w.steal_cores <= cores * 1.5


def test_a_power_window_keeps_its_first_and_last_readings():
    from pytest_gpuperf.devices.nvml import Reading

    class Sensor:  # the two readings a window takes at its ends (the sampling thread adds none in 10 s)
        def __init__(self):
            self.readings = [Reading(0.0, 1000.0, 100.0, 1500.0, 2600.0, 60.0, 0),
                             Reading(2.0, 5000.0, 300.0, 1400.0, 2600.0, 70.0, 0)]

        def read(self):
            return self.readings.pop(0)

        def reasons(self, mask):
            return []

    watch = observers.PowerWatch(Sensor(), period_s=10.0)
    watch.start()
    w = watch.stop()
    assert w is not None and w["samples"] == 2 and w["energy_j"] == 4.0


def test_siblings_with_one_identity_compare_and_a_higher_figure_over_zero_is_better():
    def doc(i, v, better="lower"):
        d = _card_doc(i, [v] * 6, unit="ulp", better=better)
        d["metrics"][0]["identity"] = {"n": 64}
        return d

    rows = _siblings_check([doc(i, 1.0) for i in range(3)])["groups"][0]["rows"]
    assert all(r["verdict"] == "same" for r in rows)  # the same non-empty identity: comparable
    zero = [doc(i, v, better="higher") for i, v in enumerate((0.0, 0.0, 0.5))]
    verdicts = {r["device"]: r["verdict"] for r in _siblings_check(zero)["groups"][0]["rows"]}
    assert verdicts["cuda:2"] == "better"


def test_a_quiet_test_resets_the_busy_streak(tmp_path, cl_device):
    import json

    s, spec = _session(tmp_path)
    info = s.selected()[0]
    entry = {"value": 1.0, "unit": "items", "better": "exact", "test": "t.py::t", "tolerance": {"abs": 0}}
    (tmp_path / "bl").mkdir()
    (tmp_path / "bl" / f"{info.key}.json").write_text(json.dumps(
        {"schema": "pytest-gpuperf-baseline/1", "device": {"key": info.key, "name": info.name},
         "backends": {info.backend: {"provenance": {}, "metrics": {"k.a": entry, "k.b": entry}}}}))
    shared, quiet = {"tenants": {"contended": 1, "processes": []}}, {"tenants": {"contended": 0, "processes": []}}
    s.record(f"t.py::test_a[{spec}]", spec, "k.a", 1.0, "items", "exact", info=shared)
    assert s.busy_stop(f"t.py::test_a[{spec}]", spec) is None and s.run_for(spec).busy_streak == 1
    s.record(f"t.py::test_b[{spec}]", spec, "k.b", 1.0, "items", "exact", info=quiet)
    assert s.busy_stop(f"t.py::test_b[{spec}]", spec) is None and s.run_for(spec).busy_streak == 0
