"""``gpuperf compare`` and ``--gpuperf-compare`` follow each metric's noise model
(``baselines/noise.py``): a figure derived from timings is judged only with a spread on both sides, and
pooled runs are tested with the run as the unit, never by pooling their samples into one population."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from compare_support import H100, device, metric, noisy, record, results, side_of
from pytest_gpuperf.baselines.noise import MIN_REPEATS
from pytest_gpuperf.compare import engine, formats, gate
from pytest_gpuperf.compare.load import CompareInputError, load_side
from pytest_gpuperf.schemas import validate
from pytest_gpuperf.timing.difference import ALPHA, difference, run_difference


def compare(runs_a: list[dict], runs_b: list[dict], opts: engine.Options = engine.Options()) -> engine.Report:
    """The report of one metric recorded by each run of each side (one metric dict per run)."""
    a = side_of("A", [results([m]) for m in runs_a], [f"a{i}.json" for i in range(len(runs_a))])
    b = side_of("B", [results([m]) for m in runs_b], [f"b{i}.json" for i in range(len(runs_b))])
    return engine.compare_sides(a, b, opts)


def only_row(rep: engine.Report) -> engine.Row:
    (row,) = rep.rows
    return row


def timed_run(name: str, median: float, seed: int, n: int = 80, rel: float = 0.002, unit: str = "cycles") -> dict:
    """One run of a timing whose samples are tight around its own median (the run's placement)."""
    xs = noisy(median, rel, n, seed)
    return metric(name, float(np.median(xs)), unit, samples=xs)


# ---- repeated figures: a verdict needs a spread on both sides -----------------------------------------------
@pytest.mark.parametrize("name,a,b", [
    ("precision.tuner.lavamd.speedup", 1.18, 0.82),
    ("precision.tuner.lavamd.fp32_fraction", 0.73, 0.47),
    ("model.ptx.dwarf.vadd.error", 0.011, 0.060),
])
def test_a_derived_figure_that_moves_by_half_between_two_runs_does_not_fail(name, a, b):
    rep = compare([metric(name, a, "ratio", "higher")], [metric(name, b, "ratio", "higher")])
    r = only_row(rep)
    assert r.noise == "repeated" and r.verdict == "informational" and not r.fails and rep.exit_code == 0
    assert r.reason.startswith(f"repeated figure: 1 value(s) on side A and 1 value(s) on side B, needs {MIN_REPEATS}")
    assert r.ratio == pytest.approx(b / a)  # still shown


@pytest.mark.parametrize("name,a,b", [
    ("model.classify.mlp.unseen_agreement", 0.67, 0.33),  # one unseen kernel of three classified otherwise
    ("model.sampled.vadd.error", 0.011, 0.060),
])
def test_a_figure_its_catalog_row_declares_informational_is_never_judged_however_many_runs(name, a, b):
    """Their spread between machines is too wide for an affordable baseline to gate them within 25 %."""
    rep = compare([metric(name, a * f, "ratio", "higher") for f in (1.0, 1.01, 0.99)],
                  [metric(name, b * f, "ratio", "higher") for f in (1.0, 1.01, 0.99)])
    r = only_row(rep)
    assert r.noise == "informational" and r.verdict == "informational" and not r.fails and rep.exit_code == 0
    assert r.reason.startswith("informational: ") and "scripts/derived_spread.py" in r.reason


def test_two_runs_a_side_are_still_too_few_for_a_repeated_figure():
    name = "precision.tuner.lavamd.speedup"
    rep = compare([metric(name, v, "ratio", "higher") for v in (1.18, 1.17, 1.19)],
                  [metric(name, v, "ratio", "higher") for v in (0.82, 0.83)])
    r = only_row(rep)
    assert r.verdict == "informational" and rep.exit_code == 0
    assert r.reason.startswith("repeated figure: 2 value(s) on side B, needs 3")


def test_three_runs_a_side_with_a_real_twenty_percent_shift_are_worse():
    name = "tuning.stencil.quality"
    rep = compare([metric(name, v, "ratio", "higher") for v in (0.90, 0.92, 0.91)],
                  [metric(name, v, "ratio", "higher") for v in (0.73, 0.74, 0.72)])
    r = only_row(rep)
    assert r.verdict == "worse" and r.fails and rep.exit_code == 1
    assert (r.basis, r.extra["stat_test"], r.extra["n"]) == ("runs", "welch", [3, 3]) and r.significant
    assert r.ratio == pytest.approx(0.73 / 0.91, rel=1e-3)


def test_three_unchanged_runs_a_side_that_scatter_are_same():
    """Runs that scatter by ±10 % each side: the band (k × A's run-to-run σ) and the test agree — same."""
    name = "tuning.stencil.quality"
    rep = compare([metric(name, v, "ratio", "higher") for v in (0.82, 0.99, 0.90)],
                  [metric(name, v, "ratio", "higher") for v in (0.80, 0.95, 0.88)])
    assert only_row(rep).verdict == "same" and rep.exit_code == 0


def test_a_figures_own_repeats_give_one_run_its_spread():
    """``info["repeats"]``: the within-run repeats of a derived figure stand in for runs."""
    name = "precision.tuner.lavamd.speedup"
    a = metric(name, 1.20, "ratio", "higher", info={"repeats": [1.20, 1.22, 1.19, 1.21]})
    b = metric(name, 0.96, "ratio", "higher", info={"repeats": [0.96, 0.95, 0.97]})
    r = only_row(compare([a], [b]))
    assert r.verdict == "worse" and r.basis == "repeats" and r.extra["n"] == [4, 3]
    short = metric(name, 0.96, "ratio", "higher", info={"repeats": [0.96, 0.95]})
    r = only_row(compare([a], [short]))
    assert r.verdict == "informational" and "2 value(s) on side B" in r.reason


def test_a_nan_or_a_documented_bound_exceeded_is_worse_whatever_the_model():
    """Neither is noise: a NaN is a broken measurement, an input past a documented bound a finding."""
    r = only_row(compare([metric("model.x.error", 0.1, "ratio")], [metric("model.x.error", float("nan"), "ratio")]))
    assert r.verdict == "worse" and "NaN" in r.reason
    info = {"bound": 4.0}
    name = "accuracy.search.fp32.tan.max_ulp"  # a time-budgeted search: repeated
    r = only_row(compare([metric(name, 3.0, "ulp", "bound", info=info)], [metric(name, 5.0, "ulp", "bound", info=info)]))
    assert r.noise == "repeated" and r.verdict == "worse" and "exceeds the documented bound 4" in r.reason
    r = only_row(compare([metric(name, 3.0, "ulp", "bound", info=info)], [metric(name, 1.0, "ulp", "bound", info=info)]))
    assert r.verdict == "informational"  # a move within the bound: one value a side


def test_a_declared_informational_figure_is_shown_never_judged():
    info = {"noise": "informational", "why": "the host's scheduler decides it"}
    r = only_row(compare([metric("launch.x.host_us", 10.0, "us", info=info, samples=noisy(10, 0.01, 50, 1))],
                         [metric("launch.x.host_us", 90.0, "us", info=info, samples=noisy(90, 0.01, 50, 2))]))
    assert r.verdict == "informational" and r.noise == "informational" and not r.fails
    assert r.reason == "informational: the host's scheduler decides it" and r.ratio == pytest.approx(9.0, rel=0.05)


# ---- sampled figures: pooled runs are tested with the run as the unit --------------------------------------
def test_one_run_a_side_keeps_the_test_on_its_samples():
    r = only_row(compare([timed_run("memory.l2.latency.cycles", 290.9, 1)], [timed_run("memory.l2.latency.cycles", 277.7, 2)]))
    assert r.basis == "samples" and r.extra["stat_test"] == "mann-whitney" and r.extra["n"] == [80, 80]
    assert r.verdict == "better" and r.significant


def test_pooled_runs_whose_medians_scatter_are_not_significant():
    """Within each run the samples are tight (±0.2 %); the runs land 277–291 cycles, as an L2 latency does
    between unchanged H100 runs. Side A's three runs happen to agree, so its band is the 3 % floor, and
    side B's median run reads −4.5 %: the samples pooled into one population call that significant far
    below α, the runs as the unit do not."""
    name = "memory.l2.latency.cycles"
    runs_a = [timed_run(name, m, s) for s, m in enumerate((290.4, 291.1, 290.9))]
    runs_b = [timed_run(name, m, s + 10) for s, m in enumerate((277.7, 291.0, 276.5))]
    rep = compare(runs_a, runs_b)
    r = only_row(rep)
    assert r.b == pytest.approx(277.7, abs=0.5) and r.extra["band"] < abs(r.a - r.b)  # outside the band ...
    assert r.verdict == "same" and r.basis == "runs" and r.extra["stat_test"] == "welch" and not r.significant
    assert "not significant over runs" in r.reason and rep.exit_code == 0
    pooled = difference([x for m in runs_a for x in m["stats"]["samples"]],
                        [x for m in runs_b for x in m["stats"]["samples"]])
    assert pooled.significant and pooled.p_value < 1e-6  # ... what pooling the samples would have read


def test_pooled_runs_with_a_real_shift_beyond_their_spread_are_worse():
    name = "memory.l2.latency.cycles"
    placements = (283.4, 290.9, 277.7, 284.2)
    runs_a = [timed_run(name, m, s) for s, m in enumerate(placements)]
    runs_b = [timed_run(name, 1.2 * m, s + 10) for s, m in enumerate(reversed(placements))]
    r = only_row(compare(runs_a, runs_b))
    assert r.verdict == "worse" and r.significant and r.basis == "runs" and r.extra["n"] == [4, 4]
    assert r.ratio == pytest.approx(1.2, rel=0.01) and r.ci[0] > 1.0


def test_one_new_run_against_pooled_reference_runs_is_the_prediction_test():
    """Several reference runs against one new run (``--gpuperf-compare`` with several files): Student's t
    with the reference runs' spread standing for both sides. Within that spread: same; well beyond: worse."""
    name = "memory.l2.latency.cycles"
    runs_a = [timed_run(name, m, s) for s, m in enumerate((283.4, 290.9, 277.7, 284.2, 290.4))]
    same = only_row(compare(runs_a, [timed_run(name, 276.0, 20)]))  # −3 % of A's median run: its spread holds it
    assert same.verdict == "same" and same.extra["stat_test"] == "student" and same.extra["n"] == [5, 1]
    worse = only_row(compare(runs_a, [timed_run(name, 340.0, 21)]))
    assert worse.verdict == "worse" and worse.significant
    three = only_row(compare(runs_a[:3], [timed_run(name, 340.0, 21)]))  # two degrees of freedom: t must pass 31.6
    assert three.verdict == "same" and "not significant over runs" in three.reason


# ---- sides that cannot be pooled -----------------------------------------------------------------------------
def test_runs_of_one_side_measured_another_way_are_incomparable():
    runs_a = [metric("accuracy.f.max_ulp", 1.0, "ulp", identity={"n": n}) for n in (4096, 8192)]
    rep = compare(runs_a, [metric("accuracy.f.max_ulp", 9.0, "ulp", identity={"n": 4096})])
    r = only_row(rep)
    assert r.verdict == "incomparable" and "runs measured it with different options" in r.reason and not r.fails


def test_a_side_mixing_devices_is_refused():
    other = device(key="other-gpu", name="Other GPU")
    with pytest.raises(CompareInputError, match="mixes devices or backends"):
        side_of("A", [results([metric("x.t", 1.0)]), results([metric("x.t", 1.0)], other)], ["a1", "a2"])


# ---- the statistics over runs ----------------------------------------------------------------------------
def test_run_difference_is_welchs_t_test_and_its_interval():
    a, b = [0.90, 0.92, 0.91, 0.93], [0.73, 0.74, 0.72]
    d = run_difference(a, b, alpha=0.01)
    ref = sps.ttest_ind(b, a, equal_var=False)
    assert d.test == "welch" and d.p_value == pytest.approx(ref.pvalue)
    lo, hi = ref.confidence_interval(0.99)
    assert (d.ci_low, d.ci_high) == pytest.approx((1 + lo / np.mean(a), 1 + hi / np.mean(a)))
    assert d.ratio == pytest.approx(np.mean(b) / np.mean(a)) and d.significant


def test_run_difference_of_one_value_against_several_is_students_prediction_test():
    a, b = [290.4, 291.1, 290.9], [277.7]
    d = run_difference(a, b)
    s = np.std(a, ddof=1) * math.sqrt(1 + 1 / len(a))
    t = (b[0] - np.mean(a)) / s
    assert d.test == "student" and d.p_value == pytest.approx(2 * sps.t.sf(abs(t), len(a) - 1))
    with pytest.raises(ValueError):
        run_difference([1.0], [2.0])  # no spread on either side


@pytest.mark.parametrize("seed", range(2))
def test_run_difference_is_scipy_s_ttest_ind_bit_for_bit(seed):
    """The t-test the gate computes by scipy's formulas (``ttest_ind`` itself costs milliseconds a call) gives
    exactly ``ttest_ind``'s p and interval: Welch's and Student's, one value on a side, ties, a flat side."""
    import warnings

    rng = np.random.default_rng(seed)
    for _ in range(100):
        na, nb = (int(n) for n in rng.integers(1, 10, 2))
        if na + nb < 3:
            continue
        scale = 10 ** rng.uniform(-6, 6)
        a = np.round(rng.normal(1.0, rng.uniform(0.001, 0.3), na), int(rng.integers(1, 6))) * scale
        b = np.round(rng.normal(rng.uniform(0.5, 1.5), rng.uniform(0.001, 0.3), nb), int(rng.integers(1, 6))) * scale
        if rng.random() < 0.2:
            b = np.full(nb, b[0])
        if (na < 2 or np.ptp(a) == 0) and (nb < 2 or np.ptp(b) == 0):
            continue
        alpha = float(rng.choice([ALPHA, 0.01, 0.05]))
        d = run_difference(a, b, alpha=alpha)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            ref = sps.ttest_ind(b, a, equal_var=min(na, nb) < 2)
            ci = ref.confidence_interval(1.0 - alpha)
        ma = abs(float(np.mean(a)))
        assert d.test == ("student" if min(na, nb) < 2 else "welch")
        assert (d.p_value, d.ci_low, d.ci_high) == (float(ref.pvalue), 1.0 + float(ci.low) / ma,
                                                    1.0 + float(ci.high) / ma), (a, b, alpha)


def test_the_smallest_u_test_p_of_many_samples_is_no_overflow():
    """One run of a few hundred samples a side: the binomial is beyond any float, the bound is 0."""
    assert engine.smallest_p(600, 600) == 0.0 and engine.smallest_p(5, 5) == pytest.approx(2 / 252)


def test_run_difference_without_any_spread():
    assert run_difference([1.0, 1.0, 1.0], [1.0, 1.0, 1.0]).p_value == 1.0
    d = run_difference([1.0, 1.0, 1.0], [2.0, 2.0, 2.0])
    assert d.p_value == 0.0 and d.significant and d.ratio == 2.0
    assert not run_difference([1.0, 1.0, 1.0], [1.0, 1.0, 1.0]).significant
    assert run_difference([1.0, 2.0], [1.5]).alpha == ALPHA


# ---- the pytest gate agrees --------------------------------------------------------------------------------
def test_the_gate_follows_the_same_rules():
    name = "precision.tuner.lavamd.speedup"
    one = side_of("A", [results([metric(name, 1.18, "ratio", "higher")])], ["ref.json"])
    verdict, doc, line = gate.judge_metric(one, record(metric(name, 0.82, "ratio", "higher")), device())
    assert verdict == "ungated" and doc["compare"]["verdict"] == "informational" and "INFORMATIONAL" in line
    three = side_of("A", [results([metric(name, v, "ratio", "higher")]) for v in (1.18, 1.20, 1.19)],
                           ["r1.json", "r2.json", "r3.json"])
    shifted = metric(name, 0.95, "ratio", "higher", info={"repeats": [0.95, 0.96, 0.94]})
    verdict, doc, _ = gate.judge_metric(three, record(shifted), device())
    assert verdict == "regressed" and doc["compare"]["basis"] == "runs" and doc["compare"]["stat_test"] == "welch"
    b = side_of("B", [results([shifted])], ["this.json"])
    assert only_row(engine.compare_sides(three, b)).verdict == doc["compare"]["verdict"] == "worse"


# ---- the report ---------------------------------------------------------------------------------------------
def test_informational_rows_are_counted_in_every_format_and_fit_the_schema():
    a = results([metric("tuning.k.quality", 0.9, "ratio", "higher"),
                 metric("memory.copy.bw", 3000, "GB/s", "higher", samples=noisy(3000, 0.005, 100, 1))])
    b = results([metric("tuning.k.quality", 0.5, "ratio", "higher"),
                 metric("memory.copy.bw", 3001, "GB/s", "higher", samples=noisy(3001, 0.005, 100, 2))])
    rep = engine.compare_sides(side_of("A", [a], ["a.json"]), side_of("B", [b], ["b.json"]))
    assert rep.counts()["informational"] == 1 and rep.exit_code == 0
    doc = formats.to_json(rep)
    validate(doc, "pytest-gpuperf-compare/1")
    row = next(r for r in doc["rows"] if r["name"] == "tuning.k.quality")
    assert (row["verdict"], row["noise"], row["basis"], row["fails"]) == ("informational", "repeated", "none", False)
    assert "1 informational" in formats.text(rep) and "1 informational" in formats.markdown(rep)
    assert "tuning.k.quality" in formats.text(rep, all_rows=True) and "tuning.k.quality" not in formats.text(rep)


def test_h100_planted_ab_against_one_baseline_run_still_flags_the_plants():
    """planted-ab's plants touched the copy bandwidths (−5 %) and fp32 sin's ulp; each unchanged run of the
    plant's measuring code against it flags them. Beside them, one run against one can only flag the
    pairwise-summation timings, which move between two modes from one unchanged run to the next."""
    from pytest_gpuperf.compare.load import load_side

    plants = {"accuracy.fp32.sin.max_ulp", "accuracy.fp32.sin.mean_ulp", "memory.copy.bandwidth.16MiB",
              "memory.copy.bandwidth.1GiB", "memory.copy.bandwidth.256MiB"}
    b = load_side("B", [H100 / "planted-ab-cuda.json"])
    for ref in ("aa-2", "aa-3", "aa-4"):
        rep = engine.compare_sides(load_side("A", [H100 / "gatecheck" / f"{ref}.json"]), b)
        failing = {r.name for r in rep.rows if r.fails}
        assert plants <= failing and rep.exit_code == 1
        assert all(n.startswith("accuracy.sum.") and ".pairwise." in n for n in failing - plants), ref


def test_a_figure_measured_on_a_shared_card_is_shown_not_judged():
    """``gpuperf compare`` treats a GPU figure whose windows stayed shared with another process as the
    gate does: contended, never worse."""
    from compare_support import metric, results
    from pytest_gpuperf.compare import engine

    shared = {"tenants": {"contended": True, "processes": [{"pid": 4242, "name": "gemm"}]}}
    a = side_of("A", [results([metric("memory.copy.bandwidth.1MiB", 2000.0, unit="GB/s", better="higher",
                                             samples=[1990, 2000, 2010] * 6)])], ["a.json"])
    b = side_of("B", [results([metric("memory.copy.bandwidth.1MiB", 1670.0, unit="GB/s", better="higher",
                                             samples=[1660, 1670, 1680] * 6, info=shared)])], ["b.json"])
    (row,) = engine.compare_sides(a, b, engine.Options()).rows
    assert not row.gated and "another process the card" in row.reason


# ---- one run a side: the card's known spread between runs -------------------------------------------------
def test_one_run_a_side_within_the_cards_known_spread_between_runs_is_uncertain():
    """The samples of one run each differ beyond doubt (−4.5 %), but unchanged runs of this card move the figure
    ±6 % (its baseline's band from its runs): ``uncertain``, which fails nothing; a change beyond that stays
    ``better``/``worse``, and without a known spread the samples decide as before."""
    name = "memory.l2.latency.cycles"
    a, b = [timed_run(name, 290.9, 1)], [timed_run(name, 277.7, 2)]
    known = {name: (0.06, "the reviewed baseline of test-gpu-80gb: ±6.0% from 5 runs")}
    r = only_row(rep := compare(a, b, engine.Options(run_spread=known)))
    assert r.verdict == "uncertain" and r.extra["uncertain_of"] == "better" and r.significant
    assert "±6.0% from 5 runs" in r.reason and f"give each side {MIN_REPEATS} runs" in r.reason
    assert rep.exit_code == 0 and "1 uncertain" in formats.status(rep)
    from pytest_gpuperf.compare.cli import findings_from_rows
    (note,) = findings_from_rows(rep.rows)  # under GitHub Actions: a warning, never an error
    assert note.level == "warning" and note.title == f"gpuperf uncertain: {name}"
    validate(formats.to_json(rep), "pytest-gpuperf-compare/1")
    assert only_row(compare(a, b, engine.Options(run_spread={name: (0.02, "x")}))).verdict == "better"
    assert only_row(compare(a, b)).verdict == "better"
    worse = only_row(compare(b, a, engine.Options(run_spread={name: (0.01, "x")})))
    assert worse.verdict == "worse" and worse.reason.startswith("beyond the band and significant (mann-whitney, p=")


def test_the_reviewed_baseline_gives_the_spread_of_runs_it_was_made_from():
    metrics = {"a.time_us": {"value": 20.0, "unit": "us", "better": "lower", "tolerance": {"rel": 0.3},
                             "run_values": [20.0, 22.8, 21.0]},
               "b.time_us": {"value": 20.0, "unit": "us", "better": "lower", "tolerance": {"rel": 0.3},
                             "run_values": [20.0]},
               "c.count": {"value": 3, "unit": "items", "better": "exact", "tolerance": {},
                           "run_values": [3, 3, 3]}}
    spread = engine.run_spread(metrics, "src")
    assert list(spread) == ["a.time_us"] and spread["a.time_us"] == (pytest.approx(0.3), "src: ±30.0% from 3 runs")


def test_two_saved_h200_runs_whose_sums_sit_in_two_modes_read_uncertain_not_worse(tmp_path, capsys):
    """Two real H200 runs on one machine (0dbf204, then 65861d7): the pairwise sums' timings sit in another of their
    two modes (21.0 and 23.2 µs at n12, both seen at one commit), significant by the runs' samples; the reviewed
    H200 baseline's runs show that spread, so the compare reads them ``uncertain`` and exits 0."""
    from pytest_gpuperf.cli import main

    h200 = H100.parent / "nvidia-h200"
    code = main(["compare", str(h200 / "before-0dbf204-cuda.json.xz"), str(h200 / "gatecheck-65861d7" / "aa-1.json.xz"),
                 "--baseline-dir", str(tmp_path), "--format", "json", "-o", str(tmp_path / "r.json")])
    import json
    doc = json.loads((tmp_path / "r.json").read_text())
    unsure = {r["name"] for r in doc["rows"] if r["verdict"] == "uncertain"}
    assert code == 0 and doc["counts"]["worse"] == 0, doc["counts"]
    assert "accuracy.sum.double.pairwise.n12.time_us" in unsure
    assert all("the reviewed baseline of nvidia-h200" in r["reason"] for r in doc["rows"] if r["verdict"] == "uncertain")
    assert all(r["reason"] for r in doc["rows"])  # every row says why, a 'same' one too


def test_a_planted_run_is_named_so_on_its_side(tmp_path):
    """A gate check's planted run compared with an unchanged one: the report says which side was planted, and
    with what, in every format (the JSON side carries it)."""
    from pytest_gpuperf.cli import main
    import json

    gc = H100.parent / "nvidia-h200" / "gatecheck-04e740c"
    assert main(["compare", str(gc / "aa-1.json.xz"), str(gc / "plant-memory-1.json.xz"), "--format", "json",
                 "-o", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    validate(doc, "pytest-gpuperf-compare/1")
    assert doc["a"]["planted"] == [] and doc["b"]["planted"] == ["memory=0.02"] and doc["b"]["interrupted"] == 0
    rep = engine.compare_sides(load_side("A", [str(gc / "aa-1.json.xz")]), load_side("B", [str(gc / "plant-memory-1.json.xz")]))
    assert "PLANTED (--gpuperf-plant memory=0.02)" in formats.render(rep, "text").splitlines()[2]
