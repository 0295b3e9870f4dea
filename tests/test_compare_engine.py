"""The run-against-run verdicts: the statistics on samples with known answers, the four directions,
deterministic figures, identity, impossible values, pooling of several runs, the cross-card rules, and
the real H100 runs (A/A pairs and the gate check's planted regressions). The noise models themselves
(repeated figures, runs as the unit) are tested in test_compare_noise.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from compare_support import H100, H100_GC, POCL, device, metric, noisy, results, side_of
from pytest_gpuperf.compare import engine
from pytest_gpuperf.compare.load import load_side
from pytest_gpuperf.timing.difference import ALPHA


def judge(ma, mb, dev_a=None, dev_b=None, opts=engine.Options(), runs_a=None, runs_b=None):
    """One row from metric dicts (or lists of them: several runs per side)."""
    docs_a = [results([m], dev_a) for m in (runs_a or [ma])]
    docs_b = [results([m], dev_b) for m in (runs_b or [mb])]
    a = side_of("A", docs_a, [f"a{i}.json" for i in range(len(docs_a))])
    b = side_of("B", docs_b, [f"b{i}.json" for i in range(len(docs_b))])
    return engine.compare_sides(a, b, opts)


def row_of(report):
    (row,) = report.rows
    return row


# ---- statistics on synthetic samples ------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(3))
def test_no_difference_is_same(seed):
    rep = judge(metric("k.t", 100, samples=noisy(100, 0.02, 200, seed)),
                metric("k.t", 100, samples=noisy(100, 0.02, 200, seed + 100)))
    r = row_of(rep)
    assert r.verdict == "same" and r.basis == "samples" and not r.significant
    assert r.ci[0] <= 1.0 <= r.ci[1] or r.p_value >= ALPHA
    assert rep.exit_code == 0


def test_ten_percent_slower_with_enough_samples_is_worse_and_significant():
    rep = judge(metric("k.t", 100, samples=noisy(100, 0.02, 200, 1)),
                metric("k.t", 110, samples=noisy(110, 0.02, 200, 2)))
    r = row_of(rep)
    assert r.verdict == "worse" and r.significant and r.p_value < ALPHA
    assert r.ratio == pytest.approx(1.10, abs=0.01) and r.ci[0] > 1.0
    assert rep.exit_code == 1


def test_three_percent_within_the_threshold_is_same_even_when_significant():
    rep = judge(metric("k.t", 100, samples=noisy(100, 0.002, 200, 1)),
                metric("k.t", 103, samples=noisy(103, 0.002, 200, 2)), opts=engine.Options(threshold=0.05))
    r = row_of(rep)
    assert r.significant  # the shift is real ...
    assert r.verdict == "same" and rep.exit_code == 0  # ... but smaller than the effect that counts


def test_beyond_the_threshold_but_not_significant_is_same_with_the_reason():
    a = [100, 140, 90, 120, 95, 130, 85]
    b = [110, 150, 95, 135, 100, 145, 90]
    r = row_of(judge(metric("k.t", float(np.median(a)), samples=a), metric("k.t", float(np.median(b)), samples=b),
                     opts=engine.Options(threshold=0.01)))
    assert r.verdict == "same" and "not significant" in r.reason


def test_alpha_option_reaches_the_one_significance_test():
    """5 against 5 fully separated samples: the exact U test's p is 2/C(10,5) = 0.0079 — not significant at
    the default α = 0.001, significant at --alpha 0.05 (same p: one test, another level)."""
    a, b = [100, 101, 102, 103, 104], [110, 111, 112, 113, 114]
    strict = row_of(judge(metric("k.t", 102, samples=a), metric("k.t", 112, samples=b)))
    loose = row_of(judge(metric("k.t", 102, samples=a), metric("k.t", 112, samples=b), opts=engine.Options(alpha=0.05)))
    assert strict.p_value == pytest.approx(loose.p_value) == pytest.approx(2 / 252, rel=0.05)
    assert strict.verdict == "same" and loose.verdict == "worse" and loose.significant


# ---- directions ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("better,a,b,expect", [
    ("lower", 100, 120, "worse"), ("lower", 100, 80, "better"), ("lower", 100, 101, "same"),
    ("higher", 100, 80, "worse"), ("higher", 100, 120, "better"), ("higher", 100, 99, "same"),
])
def test_lower_and_higher(better, a, b, expect):
    r = row_of(judge(metric("m.x", a, "GB/s", better, samples=noisy(a, 0.005, 100, 1)),
                     metric("m.x", b, "GB/s", better, samples=noisy(b, 0.005, 100, 2))))
    assert r.verdict == expect


def test_bound_is_worse_only_past_the_documented_bound():
    info = {"bound": 4.0}
    name = "accuracy.f.max_ulp"
    up = row_of(judge(metric(name, 1, "ulp", "bound", info=info), metric(name, 3, "ulp", "bound", info=info)))
    assert up.verdict == "same" and "within the documented bound 4" in up.reason
    past = row_of(judge(metric(name, 1, "ulp", "bound", info=info), metric(name, 5, "ulp", "bound", info=info)))
    assert past.verdict == "worse" and "exceeds the documented bound 4" in past.reason and past.fails
    down = row_of(judge(metric(name, 3, "ulp", "bound", info=info), metric(name, 1, "ulp", "bound", info=info)))
    assert down.verdict == "better"


def test_exact_changes_are_worse_either_way():
    for b in (31, 33):
        r = row_of(judge(metric("t.space", 32, "configs", "exact", tolerance={"abs": 0}),
                         metric("t.space", b, "configs", "exact", tolerance={"abs": 0})))
        assert r.verdict == "worse" and "exact" in r.reason
    assert row_of(judge(metric("t.space", 32, "configs", "exact", tolerance={"abs": 0}),
                        metric("t.space", 32, "configs", "exact", tolerance={"abs": 0}))).verdict == "same"


def test_a_deterministic_figure_is_compared_within_its_tolerance_and_the_row_says_so():
    r = row_of(judge(metric("accuracy.sin.max_ulp", 1.0, "ulp"), metric("accuracy.sin.max_ulp", 2.0, "ulp")))
    assert r.verdict == "worse" and r.basis == "threshold" and r.p_value is None and r.noise == "deterministic"
    assert "deterministic: seeded or exhaustive inputs" in r.reason
    r = row_of(judge(metric("accuracy.sin.max_ulp", 1.0, "ulp"), metric("accuracy.sin.max_ulp", 1.02, "ulp")))
    assert r.verdict == "same"  # 2 % < the 3 % ulp floor


def test_another_identity_is_incomparable_never_worse():
    r = row_of(judge(metric("a.e", 1.0, "ulp", identity={"n": 4096}), metric("a.e", 9.0, "ulp", identity={"n": 8192})))
    assert r.verdict == "incomparable" and "n: A 4096, B 8192" in r.reason and not r.fails


def test_impossible_values_are_error_rows_not_better():
    r = row_of(judge(metric("lat.x", 40, "cycles"), metric("lat.x", -3, "cycles")))
    assert r.verdict == "error" and "negative" in r.reason and r.fails
    r = row_of(judge(metric("mem.bw", 9000, "GB/s", "higher"), metric("mem.bw", 3000, "GB/s", "higher")))
    assert r.verdict == "error" and r.reason.startswith("A: impossible value") and "peak" in r.reason


def test_nan_in_b_is_worse():
    r = row_of(judge(metric("lat.x", 40, "cycles"), metric("lat.x", float("nan"), "cycles")))
    assert r.verdict == "worse" and "NaN" in r.reason


def test_metrics_only_on_one_side_are_incomparable_and_do_not_fail():
    a = side_of("A", [results([metric("x.a", 1), metric("x.both", 1)])], ["a"])
    b = side_of("B", [results([metric("x.b", 1), metric("x.both", 1)])], ["b"])
    rep = engine.compare_sides(a, b)
    by = {r.name: r for r in rep.rows}
    assert by["x.a"].reason.startswith("only in A") and by["x.b"].reason.startswith("only in B")
    assert rep.exit_code == 0


# ---- several runs per side -------------------------------------------------------------------------------
def test_pooled_runs_are_tested_with_the_run_as_the_unit():
    runs_a = [metric("k.t", float(np.median(x)), samples=x) for x in (noisy(100, 0.01, 6, s) for s in range(3))]
    runs_b = [metric("k.t", float(np.median(x)), samples=x) for x in (noisy(110, 0.01, 6, s + 10) for s in range(3))]
    r = row_of(judge(None, None, runs_a=runs_a, runs_b=runs_b))
    assert r.runs == (3, 3) and r.extra["n"] == [3, 3] and r.basis == "runs" and r.extra["stat_test"] == "welch"
    assert r.verdict == "worse" and r.significant and r.noise == "sampled"


def test_one_run_of_few_samples_says_it_cannot_reach_alpha():
    r = row_of(judge(metric("k.t", 100, samples=noisy(100, 0.01, 5, 1)), metric("k.t", 110, samples=noisy(110, 0.01, 5, 2))))
    assert r.verdict == "same" and "cannot reach p <" in r.reason
    assert engine.smallest_p(5, 5) == pytest.approx(2 / math.comb(10, 5))


def test_per_run_values_of_a_figure_without_samples_are_its_test():
    runs_a = [metric("m.err", v, "ratio") for v in (0.100, 0.101, 0.099, 0.104, 0.102, 0.098, 0.103)]
    runs_b = [metric("m.err", v, "ratio") for v in (0.150, 0.151, 0.149, 0.152, 0.154, 0.148, 0.153)]
    r = row_of(judge(None, None, runs_a=runs_a, runs_b=runs_b))
    assert r.basis == "runs" and r.extra["n"] == [7, 7] and r.verdict == "worse" and r.significant
    assert r.noise == "repeated" and r.extra["stat_test"] == "welch"
    r = row_of(judge(None, None, runs_a=runs_a[:2], runs_b=runs_b[:2]))  # two values a side carry no verdict
    assert r.verdict == "informational" and not r.fails
    assert r.reason.startswith("repeated figure: 2 value(s) on side A and 2 value(s) on side B, needs 3")


def test_per_kernel_component_is_ungated_without_agreeing_runs():
    """Three runs a side judge a per-kernel model error, but the ``if-stable`` mark gates it only from
    five agreeing runs of A (``baselines.verdicts.stability``): the clear worsening is shown, not gated."""
    info, tol = {"gate": "if-stable"}, {"abs": 0.02, "rel": 0.5}
    runs_a = [metric("model.k.error", v, "ratio", info=info, tolerance=tol) for v in (0.01, 0.05, 0.03)]
    runs_b = [metric("model.k.error", v, "ratio", info=info, tolerance=tol) for v in (0.30, 0.31, 0.29)]
    rep = judge(None, None, runs_a=runs_a, runs_b=runs_b)
    r = row_of(rep)
    assert r.verdict == "worse" and not r.gated and "not gated" in r.reason and rep.exit_code == 0


# ---- across two cards ------------------------------------------------------------------------------------
H200 = device(key="test-gpu-141gb", name="Test GPU 141GB", extra={"mem_clock_khz": 3201000, "bus_width": 6144},
              peak_bandwidth_gbs=4917.0)


def test_absolute_figures_are_incomparable_across_cards_unless_raw():
    a, b = metric("launch.us", 3.0, "us", samples=noisy(3.0, 0.01, 50, 1)), metric("launch.us", 2.0, "us", samples=noisy(2.0, 0.01, 50, 2))
    r = row_of(judge(a, b, dev_b=H200))
    assert r.verdict == "incomparable" and "device-specific absolute figure (us)" in r.reason
    raw = row_of(judge(a, b, dev_b=H200, opts=engine.Options(raw=True)))
    assert raw.verdict == "better" and "raw ratio of a device-specific figure" in raw.note
    assert row_of(judge(metric("l.c", 4.0, "cycles"), metric("l.c", 4.0, "cycles"), dev_b=H200,
                        opts=engine.Options(raw=True))).note is None


@pytest.mark.parametrize("unit", ["cycles", "ulp", "ratio", "fraction", "ops/clk/SM"])
def test_normalised_figures_are_compared_across_cards(unit):
    r = row_of(judge(metric("x.y", 4.0, unit, samples=noisy(4.0, 0.005, 50, 1)),
                     metric("x.y", 8.0, unit, samples=noisy(8.0, 0.005, 50, 2)), dev_b=H200))
    assert r.verdict == "worse"


def test_bandwidth_is_compared_as_a_fraction_of_each_cards_own_peak():
    a = metric("memory.copy.bw", 2500, "GB/s", "higher", samples=noisy(2500, 0.005, 100, 1))
    b = metric("memory.copy.bw", 3200, "GB/s", "higher", samples=noisy(3200, 0.005, 100, 2))
    r = row_of(judge(a, b, dev_b=H200))
    # 3200/4917 = 0.65 of its peak against 2500/3352 = 0.75: more GB/s, but a worse use of the card
    assert r.compared_unit == "fraction of peak" and r.a == pytest.approx(2500 / 3352.32)
    assert r.verdict == "worse" and "4917 GB/s" in r.note and "memory clock × bus width" in r.note
    nopeak = dict(H200, peak_bandwidth_gbs=None)
    assert row_of(judge(a, b, dev_b=nopeak)).verdict == "incomparable"


# ---- real runs (results/) --------------------------------------------------------------------------------


def test_h100_aa_pair():
    """default-1 vs default-2 (same card, same commit, minutes apart). Threshold alone once read three
    per-kernel sampled-model errors ``worse`` (0.002 → 0.025 and alike: one value per side, a figure that
    swings between unchanged runs); the catalog records them as informational (their spread between
    machines, scripts/derived_spread.py), and the pair passes. No timed metric (samples on both sides) is worse."""
    rep = engine.compare_sides(load_side("A", [H100 / "default-1-cuda.json"]), load_side("B", [H100 / "default-2-cuda.json"]))
    assert rep.exit_code == 0 and not [r for r in rep.rows if r.verdict == "worse"]
    by = {r.name: r for r in rep.rows}
    for name in ("model.sampled.sqrtdiv.error", "model.sampled.poly32.error", "model.sampled.vadd.error"):
        assert by[name].verdict == "informational" and by[name].reason.startswith(
            "informational: one kernel's error of the sampled model moves by")
    assert rep.counts()["same"] > 600 and rep.counts()["error"] == 0


def test_h100_aa_per_kernel_components_are_not_judged_from_one_run():
    rep = engine.compare_sides(load_side("A", [H100_GC / "aa-4.json"]), load_side("B", [H100_GC / "aa-5.json"]))
    comps = [r for r in rep.rows if r.name.startswith(("model.sampled.", "model.svr."))]
    assert comps and all(r.verdict == "informational" and not r.fails for r in comps)


def test_h100_planted_memory_slowdown_is_flagged():
    rep = engine.compare_sides(load_side("A", [H100 / "default-1-cuda.json"]),
                               load_side("B", [H100_GC / "plant-memory-1.json"]))
    (r,) = [r for r in rep.rows if r.name == "memory.copy.bandwidth.1GiB"]
    assert r.verdict == "worse" and r.significant and r.ratio == pytest.approx(0.952, abs=0.005)
    assert rep.exit_code == 1 and [x.name for x in rep.rows if x.fails] == ["memory.copy.bandwidth.1GiB"]


def test_h100_planted_ulp_is_flagged_without_samples():
    rep = engine.compare_sides(load_side("A", [H100 / "default-1-cuda.json"]),
                               load_side("B", [H100_GC / "plant-ulp-4.json"]))
    failing = {r.name: r for r in rep.rows if r.fails}
    assert set(failing) == {"accuracy.fp32.sin.max_ulp", "accuracy.fp32.sin.mean_ulp"}
    assert failing["accuracy.fp32.sin.max_ulp"].basis == "threshold"


def test_h100_planted_compute_slowdown_is_flagged_against_one_run_and_against_reference_runs():
    """Each latency has 7 samples per run with ties: one run against one reached only p ≈ 0.002 under the
    normal approximation; the exact rank test over the 3,432 arrangements reaches 5.8e-4 where the runs do not
    overlap, and the planted latencies (+5 %) are flagged. Three reference runs of the plant's commit
    (gatecheck/aa-2..4) give the test over runs a spread — one new run against them (Student's t, df = 2) —
    and all seven are flagged there too."""
    b = load_side("B", [H100_GC / "plant-compute-1.json"])
    one = engine.compare_sides(load_side("A", [H100 / "default-1-cuda.json"]), b)
    flagged = [r for r in one.rows if r.fails]
    assert one.exit_code == 1 and sorted(r.name for r in flagged) == sorted(b.metrics)
    assert all(r.ratio > 1.04 and r.p_value == pytest.approx(2 / math.comb(14, 7)) for r in flagged)
    g = H100 / "gatecheck"
    three = engine.compare_sides(load_side("A", [g / "aa-2.json", g / "aa-3.json", g / "aa-4.json"]), b)
    assert sorted(r.name for r in three.rows if r.fails) == sorted(b.metrics)
    assert all(r.ratio > 1.04 and r.basis == "runs" and r.extra["stat_test"] == "student" for r in three.rows if r.fails)


def test_real_cross_card_pocl_against_h100():
    rep = engine.compare_sides(load_side("A", [H100 / "default-1-cuda.json"]), load_side("B", [POCL / "default-1-opencl.json"]))
    assert not rep.same_card
    both = [r for r in rep.rows if "only" not in r.extra]
    for r in both:
        if r.unit in ("us", "s", "GB/s", "1/s", "MHz", "bytes", "ns/kthread") and r.verdict != "error" \
                and not r.reason.startswith("measured another way"):
            assert r.verdict == "incomparable" and "device-specific absolute figure" in r.reason, r.name
    assert any(r.unit == "cycles" and r.verdict in ("same", "better", "worse") for r in both)
    changed = {e["field"] for e in rep.environment if e["changed"]}
    assert {"device", "device key", "backend"} <= changed




def test_pocl_aa_pair_passes():
    """PoCL on 2 shared cores, default-1 vs default-2: the CPU class floors hold the timings; the per-kernel
    model errors (PoCL: one kernel's error 0.05–5.9 between unchanged runs) are repeated figures with one
    value a side, so informational."""
    rep = engine.compare_sides(load_side("A", [POCL / "default-1-opencl.json"]), load_side("B", [POCL / "default-2-opencl.json"]))
    assert rep.exit_code == 0 and not [r for r in rep.rows if r.verdict == "worse"]
    comps = [r for r in rep.rows if r.name.startswith(("model.sampled.", "model.svr.")) and "only" not in r.extra]
    assert comps and all(r.verdict == "informational" for r in comps)


@pytest.mark.parametrize("plant,flagged", [
    ("plant-memory-1", {"memory.copy.bandwidth.256MiB"}),  # the copy slowed to half (memory=1)
    ("plant-ulp-1", {"accuracy.fp32.sin.max_ulp", "accuracy.fp32.sin.mean_ulp"}),
])
def test_pocl_planted_runs_are_flagged(plant, flagged):
    rep = engine.compare_sides(load_side("A", [POCL / "default-1-opencl.json"]),
                               load_side("B", [POCL / "gatecheck-dev" / "gatecheck" / f"{plant}.json"]))
    assert {r.name for r in rep.rows if r.fails} == flagged and rep.exit_code == 1


def test_h100_aa_host_noise_is_informational():
    """aa-4 vs aa-5 (one run each, earlier gate check): launch.empty.host_us 12.0 → 17.3 µs — host wall time
    per launch, which read 10.6, 17.7, 15.2, 12.0 and 17.3 µs over the five unchanged A/A runs: a difference
    made by the host, not the driver or the card. Its catalog row makes it informational (shown with the
    cause, never judged), so the A/A pair passes, one run against one and three against one."""
    g = H100_GC
    one = engine.compare_sides(load_side("A", [g / "aa-4.json"]), load_side("B", [g / "aa-5.json"]))
    (host,) = [r for r in one.rows if r.name == "launch.empty.host_us"]
    assert host.verdict == "informational" and not host.fails and host.noise == "informational"
    assert host.a == pytest.approx(12.04, abs=0.01) and host.b == pytest.approx(17.31, abs=0.01)
    assert not [r.name for r in one.rows if r.fails]
    three = engine.compare_sides(load_side("A", [g / "aa-2.json", g / "aa-3.json", g / "aa-4.json"]),
                                 load_side("B", [g / "aa-5.json"]))
    assert three.exit_code == 0
    (host,) = [r for r in three.rows if r.name == "launch.empty.host_us"]
    assert host.verdict == "informational" and host.runs == (3, 1)


def test_a_tests_own_tolerance_replaces_the_floor_and_threshold_is_a_minimum_on_top():
    tol = {"abs": 1e-6}  # what the accuracy suites record: any change of a seeded ulp figure counts
    name = "accuracy.f.mean_ulp"
    a, b = metric(name, 0.100, "ulp", tolerance=tol), metric(name, 0.102, "ulp", tolerance=tol)
    assert row_of(judge(a, b)).verdict == "worse"  # 2 % — under the 3 % class floor, beyond the test's band
    assert row_of(judge(a, b, opts=engine.Options(threshold=0.05))).verdict == "same"


def test_h100_latest_aa_passes_with_two_reference_runs():
    """The latest H100 A/A runs (gatecheck/aa-1 and aa-2, unchanged measuring code). One against one, one
    row reads worse: accuracy.sum.double.pairwise.n12.time_us +4.6 % (p = 1.4e-4; the same figure read
    26.8 then 24.5 µs in default-1/2) — a movement between runs that one run's samples cannot show.
    model.ptx.global_latency.single_thread.cycles (+4.7 %, no samples) is a repeated figure: informational.
    With default-3 as a second reference run the test is over runs, and nothing is worse."""
    b = load_side("B", [H100 / "gatecheck" / "aa-2.json"])
    one = engine.compare_sides(load_side("A", [H100 / "gatecheck" / "aa-1.json"]), b)
    assert {r.name for r in one.rows if r.fails} == {"accuracy.sum.double.pairwise.n12.time_us"}
    (ptx,) = [r for r in one.rows if r.name == "model.ptx.global_latency.single_thread.cycles"]
    assert ptx.verdict == "informational"
    two = engine.compare_sides(load_side("A", [H100 / "default-3-cuda.json", H100 / "gatecheck" / "aa-1.json"]), b)
    assert two.exit_code == 0 and not [r for r in two.rows if r.verdict == "worse"]


def test_host_timed_figures_take_the_host_class_floor():
    """A host-timed figure (the host's clock around Python-side launches) moves with the host, not the
    device: H100 launch.empty.host_us read 10.6–19.7 µs over 13 unchanged runs. A significant +19 % is
    within its class's floor (same); a device-timed figure with the same samples is worse; a doubling of
    the host-timed figure still is."""
    from pytest_gpuperf.baselines import classes

    assert classes.floor("us", False, host_timed=True) == classes.HOST_FLOOR == 1.0
    assert classes.floor("us", False, spread_known=False) == 0.03 and classes.metric_class("us", host_timed=True) == "host"
    a, b = noisy(10.0, 0.01, 200, 1), noisy(11.9, 0.01, 200, 2)
    host = {"host_timed": True}
    r = row_of(judge(metric("launch.h", 10.0, samples=a, info=host), metric("launch.h", 11.9, samples=b, info=host)))
    assert r.significant and r.verdict == "same"
    r = row_of(judge(metric("launch.d", 10.0, samples=a), metric("launch.d", 11.9, samples=b)))
    assert r.verdict == "worse"
    r = row_of(judge(metric("launch.h", 10.0, samples=a, info=host),
                     metric("launch.h", 25.0, samples=noisy(25.0, 0.01, 200, 3), info=host)))
    assert r.verdict == "worse"
