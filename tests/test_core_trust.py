"""The trust rules of the verdicts: significance from both runs' samples, metric identity,
ratio-safe bands and impossible values (issue: an unchanged system never fails the gate, a real
regression always does)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.baselines import classes, compare, make_entry, validity
from pytest_gpuperf.baselines.verdicts import band, edges, identity_problem
from pytest_gpuperf.timing.difference import ALPHA, difference, usable
from pytest_gpuperf.timing.stats import Stats
from suite_support import WORK_HEAD
from suite_support import baseline_folder


def noisy(median: float, rel_sigma: float, n: int, seed: int) -> np.ndarray:
    """Timing-like samples: normal noise around ``median`` plus a few one-sided outliers."""
    rng = np.random.default_rng(seed)
    xs = median * (1 + rel_sigma * rng.standard_normal(n))
    xs[rng.choice(n, n // 20, replace=False)] *= 1.3  # a context switch now and then
    return xs


# ---- the statistics on synthetic samples with known answers --------------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_no_difference_is_not_significant(seed):
    a, b = noisy(100.0, 0.01, 60, seed), noisy(100.0, 0.01, 60, seed + 100)
    d = difference(a, b)
    assert not d.significant, d
    assert d.ci_low <= 1.0 <= d.ci_high


@pytest.mark.parametrize("shift,expect_ratio", [(0.03, 1.03), (0.10, 1.10)])
def test_known_shifts_are_significant_and_sized(shift, expect_ratio):
    a, b = noisy(100.0, 0.01, 60, 1), noisy(100.0 * (1 + shift), 0.01, 60, 2)
    d = difference(a, b)
    assert d.significant and d.p_value < ALPHA
    assert d.ci_low <= expect_ratio <= d.ci_high
    assert abs(d.ratio - expect_ratio) < 0.01


def test_a_3_percent_shift_inside_heavy_noise_is_not_significant():
    a, b = noisy(100.0, 0.20, 8, 3), noisy(103.0, 0.20, 8, 4)
    assert not difference(a, b).significant


def test_difference_is_deterministic_and_rejects_unusable_samples():
    a, b = noisy(10.0, 0.02, 30, 5), noisy(10.5, 0.02, 30, 6)
    assert difference(a, b) == difference(a, b)
    assert not usable([1.0, 2.0]) and not usable(None) and not usable([0.0] * 10)
    with pytest.raises(ValueError, match="at least"):
        difference([1.0, 2.0], b)


# ---- verdicts with samples: a band exit must also be significant -----------------------------------
def entry_with_samples(samples, better="lower", rel=0.03):
    return make_entry(value=float(np.median(samples)), worst=float(np.max(samples)), unit="us", better=better,
                      test="t", info={}, tolerance=None, spread=0.0, k=6.0, floor_rel=rel, provenance={},
                      samples=samples)


def test_band_exit_without_significance_passes():
    # 5 quantised launch samples (what the H100 gives for a 3 µs launch): +6.5 % but not significant
    base = [2.976, 3.168, 2.976, 3.2, 2.976, 3.168, 2.976, 2.976]
    run = [3.2, 3.168, 2.976, 3.168, 3.168]
    c = compare(float(np.median(run)), "lower", entry_with_samples(base), samples=run)
    assert c.verdict == "pass" and "not significant" in (c.reason or "")


def test_planted_5_percent_slowdown_is_caught_with_samples():
    base = noisy(100.0, 0.005, 40, 7)
    run = noisy(105.0, 0.005, 40, 8)
    c = compare(float(np.median(run)), "lower", entry_with_samples(base), samples=run)
    assert c.verdict == "regressed" and c.difference is not None and c.difference.significant
    assert "p=" in c.line("x", float(np.median(run)), "us", "lower")


def test_baseline_keeps_a_bounded_sample_summary():
    e = entry_with_samples(list(np.linspace(1, 2, 1000)))
    assert len(e["samples"]) == 64 and e["samples"] == sorted(e["samples"])
    assert e["identity"] == {}


# ---- identity ------------------------------------------------------------------------------------------
def test_another_way_of_measuring_is_incomparable_never_regressed():
    e = {"value": 71837.0, "better": "lower", "tolerance": {"rel": 0.5}, "identity": {"scale": 4}}
    c = compare(797077.0, "lower", e, identity={"scale": 8})
    assert c.verdict == "incomparable"
    assert "scale: baseline 4, this run 8" in c.reason
    assert compare(71837.0, "lower", e, identity={"scale": 4}).verdict == "pass"
    assert identity_problem({}, {"inputs": "exhaustive"}) is not None
    assert identity_problem(None, {}) is None


# ---- ratio-safe edges ------------------------------------------------------------------------------------
def test_wide_cpu_band_keeps_an_edge_for_higher_is_better():
    # a CPU floor of 200 % used to put the lower edge at −100 GB/s: a bandwidth could never regress
    low, high = edges(100.0, 200.0, "higher")
    assert low == pytest.approx(100.0 / 3.0) and high == 300.0
    e = {"value": 100.0, "better": "higher", "tolerance": {"rel": 2.0}}
    assert compare(30.0, "higher", e).verdict == "regressed"
    assert compare(40.0, "higher", e).verdict == "pass"


def test_class_floors():
    assert classes.floor("us", is_cpu=False) == 0.01  # with its runs' spread known, the gate resolves 2 % on GPUs
    assert classes.floor("us", is_cpu=False, spread_known=False) == 0.03  # one run: 5 % still
    assert classes.floor("GB/s", is_cpu=True) == classes.FLOORS["cpu"]["rate"]
    assert classes.floor("us", is_cpu=True, override=(0.1, 0.7)) == 0.7
    assert classes.metric_class("ops/clk/SM") == "throughput" and classes.metric_class("ratio") == "other"


# ---- impossible values ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,value,unit,kw,needle", [
    ("latency.x", -3.0, "cycles", {}, "negative"),
    ("launch.overhead.slope_ns_per_kthread", -5572.0, "ns/kthread", {}, "negative"),
    ("accuracy.fp32.sin.max_ulp", -1.0, "ulp", {}, "negative"),
    ("memory.copy.bandwidth.1GiB", 4000.0, "GB/s", {"peak_bandwidth_gbs": 3352.3}, "theoretical peak"),
    ("model.x.fraction", 1.5, "fraction", {"valid": (0.0, 1.0)}, "physical range"),
    ("t", float("inf"), "us", {}, "infinite"),
])
def test_each_validity_check_fires(name, value, unit, kw, needle):
    problem = validity.problem(name, value, unit, **kw)
    assert problem is not None and needle in problem and name in problem


def test_possible_values_pass_validity():
    assert validity.problem("memory.copy.bandwidth.1GiB", 3011.0, "GB/s", peak_bandwidth_gbs=3352.3) is None
    assert validity.problem("latency.x", 4.0, "cycles") is None
    assert validity.problem("model.delta", -0.2, "ratio") is None  # signed figures stay signed
    assert validity.problem("x", float("nan"), "us") is None  # NaN stays a regressed verdict


def test_samples_follow_unit_changes():
    s = Stats.of([1e-6, 2e-6, 4e-6])
    assert s.scaled(1e6).samples == pytest.approx((1.0, 2.0, 4.0))
    assert s.reciprocal(8e-6).samples == pytest.approx((8.0, 4.0, 2.0))
    assert Stats.from_json(s.to_json()).samples == pytest.approx(s.samples)
    assert "samples" not in s.to_json(samples=False)


# ---- end to end on the real OpenCL device ------------------------------------------------------------
IDENTITY_SUITE = WORK_HEAD + '''
def test_work(gpu_device, gpu_kernel, gpu_measure, gpuperf_record):
    scale = int(os.environ.get("SCALE", "1"))
    k = gpu_kernel.compile(SRC, "work")
    buf = gpu_kernel.to_device(np.ones(64, np.float32))
    m = gpu_measure(k, (64,), (64,), [buf, np.int32(20000 * scale)])
    ms = m.stats.scaled(1e3)
    gpuperf_record("kernel.work.ms", ms.median, "ms", better="lower", stats=ms, identity={"scale": scale})
    if os.environ.get("NEGATIVE"):
        gpuperf_record("kernel.fit.slope", -float(os.environ["NEGATIVE"]), "ns/kthread", better="lower")
'''


def _pocl():
    from pytest_gpuperf.devices import discover
    return any(d.backend == "opencl" for d in discover().devices)


@pytest.mark.skipif(not _pocl(), reason="no OpenCL device (install pocl-opencl-icd)")
def test_run_with_another_scale_is_incomparable_not_regressed(pytester, monkeypatch):
    pytester.makepyfile(IDENTITY_SUITE)
    args = ("--gpuperf-device=opencl:0", "--gpuperf-budget=0.2", f"--gpuperf-baseline-dir={baseline_folder(pytester.path, 'bl')}")
    pytester.runpytest(*args, "--gpuperf-update-baselines").assert_outcomes(passed=1)
    monkeypatch.setenv("SCALE", "8")  # 8x the work: far outside any band, but measured another way
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*kernel.work.ms*incomparable*"])
    assert "REGRESSED" not in result.stdout.str() and "1 incomparable" in result.stdout.str()


@pytest.mark.skipif(not _pocl(), reason="no OpenCL device (install pocl-opencl-icd)")
def test_impossible_value_fails_the_test_naming_metric_and_value(pytester, monkeypatch):
    pytester.makepyfile(IDENTITY_SUITE)
    monkeypatch.setenv("NEGATIVE", "5572")
    result = pytester.runpytest("--gpuperf-device=opencl:0", "--gpuperf-budget=0.2",
                                f"--gpuperf-baseline-dir={baseline_folder(pytester.path, 'bl')}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*impossible value: kernel.fit.slope = -5572 ns/kthread is negative*"])


def test_results_file_survives_non_finite_values_anywhere(tmp_path):
    """A NaN deep in some test's info once cost an H100 run its whole results file."""
    import json

    from pytest_gpuperf.report import results

    doc = {"metrics": [{"value": float("nan"), "info": {"worst": {"y": [float("inf"), 1.0]}}}]}
    results.write(str(tmp_path / "r.json"), doc)
    back = json.loads((tmp_path / "r.json").read_text())
    assert back["metrics"][0]["value"] == "nan" and back["metrics"][0]["info"]["worst"]["y"] == ["inf", 1.0]


def test_per_kernel_errors_gate_only_where_baseline_runs_agree():
    """H100, unchanged runs: axpby's sampled error 0.014, 0.014, 0.043, … — not gated; matvec64's
    0.0012, 0.0002, 0.0003, … — gated; three runs are not enough to know (verdicts.STABLE_RUNS = 5: gather's SVR
    error agreed over three and left their band in the fourth)."""
    tol = {"abs": 0.02, "rel": 0.5}

    def entry(values):
        return make_entry(value=float(np.median(values)), worst=max(values), unit="ratio", better="lower", test="t",
                          info={}, tolerance=tol, spread=0.0, k=6.0, floor_rel=0.03, provenance={},
                          run_values=values)

    unstable = entry([0.0135, 0.0139, 0.0428, 0.0140, 0.0136])
    c = compare(0.09, "lower", unstable, gate_if_stable=True)
    assert c.verdict == "ungated" and "runs disagree" in c.reason
    assert compare(0.09, "lower", unstable).verdict == "regressed"  # a metric not marked if-stable still gates
    stable = entry([0.0012, 0.0002, 0.0003, 0.0004, 0.0003])
    assert compare(0.09, "lower", stable, gate_if_stable=True).verdict == "regressed"
    assert compare(0.001, "lower", stable, gate_if_stable=True).verdict == "pass"
    assert compare(0.09, "lower", entry([0.0012, 0.0002, 0.0003]), gate_if_stable=True).verdict == "ungated"
    # the runs are judged against the test's own band, not the one their own σ widened: H100 gather's SVR
    # error over eight runs (0.072–0.120) sat inside its noise-widened ±0.113 but not inside ±0.047
    gather = [0.07547, 0.09034, 0.09284, 0.07379, 0.07205, 0.1008, 0.08763, 0.1195]
    wide = make_entry(value=float(np.median(gather)), worst=max(gather), unit="ratio", better="lower", test="t",
                      info={}, tolerance=tol, spread=0.0, between=0.0186, k=6.0, floor_rel=0.03, provenance={},
                      run_values=gather)
    assert band(wide["value"], wide["tolerance"]) > max(gather) - min(gather)  # its stored band holds them ...
    c = compare(0.2, "lower", wide, gate_if_stable=True)
    assert c.verdict == "ungated" and "runs disagree" in c.reason  # ... yet they are not stable
