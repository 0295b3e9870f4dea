"""Input the gate and ``gpuperf compare`` must not trust: a baseline in another unit or direction, duplicate
metric entries, a value its own samples contradict, all-NaN samples, a very large comparison."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from compare_support import metric, noisy, results, scaled_results, write
from pytest_gpuperf.baselines import catalog, make_entry
from pytest_gpuperf.baselines.verdicts import compare, kind_problem
from pytest_gpuperf.cli import main
from pytest_gpuperf.compare import engine
from pytest_gpuperf.compare.load import CompareInputError, side_from_docs
from pytest_gpuperf.timing.difference import _row_medians


def _entry(value: float, unit: str, better: str) -> dict:
    return make_entry(value=value, worst=value, unit=unit, better=better, test="t", info={}, tolerance=None,
                      spread=0.0, k=6.0, floor_rel=0.01, provenance={})


# ---- the baseline gate: unit and direction, as gpuperf compare checks them -------------------------------
def test_a_baseline_in_microseconds_does_not_judge_a_figure_in_milliseconds():
    cmp = compare(1.5, "lower", _entry(1000.0, "us", "lower"), name="latency.chain.x", unit="ms")
    assert cmp.verdict == "incomparable"  # not 'improved' (1.5 < 1000)
    assert "us" in cmp.reason and "ms" in cmp.reason


def test_a_flipped_direction_does_not_turn_a_regression_into_an_improvement():
    entry = _entry(10.0, "us", "higher")  # the baseline says higher is better
    cmp = compare(1000.0, "lower", entry, name="latency.chain.x", unit="us")  # +9,900 %
    assert cmp.verdict == "incomparable"
    assert "higher is better" in cmp.reason and "lower is better" in cmp.reason


def test_a_matching_unit_and_direction_still_gates():
    assert compare(2000.0, "lower", _entry(1000.0, "us", "lower"), unit="us").verdict == "regressed"


def test_the_gate_and_compare_share_one_unit_and_direction_rule():
    a = metric("k.t", 1000.0, unit="us")
    b = metric("k.t", 1.5, unit="ms")
    docs = [side_from_docs(s, [results([m])], [f"{s}.json"]) for s, m in (("A", a), ("B", b))]
    row = engine.compare_sides(*docs).rows[0]
    assert row.verdict == "incomparable"
    assert row.reason == kind_problem("us", "lower", "ms", "lower", "A", "B")
    flipped = engine.compare_sides(*[side_from_docs(s, [results([m])], [f"{s}.json"]) for s, m in
                                     (("A", a), ("B", metric("k.t", 1000.0, better="higher")))]).rows[0]
    assert flipped.verdict == "incomparable" and flipped.ratio is None  # opposite directions: never compared


def test_a_shipped_metric_in_the_wrong_direction_is_refused():
    fam = next(f for f in catalog.FAMILIES if f.is_family and f.better in ("lower", "higher") and f.unit)
    name = fam.pattern.replace("*", "x")
    assert catalog.policy(name, fam.unit, fam.better, None, False) == fam.tolerance(False)
    flipped = "higher" if fam.better == "lower" else "lower"
    with pytest.raises(ValueError, match="better="):
        catalog.policy(name, fam.unit, flipped, None, False)


# ---- gpuperf compare: what a results file may not pass off as a measurement ------------------------------
def test_duplicate_metric_entries_in_one_file_are_refused_not_pooled_as_two_runs():
    doc = results([metric("k.t", 100.0, samples=noisy(100, 0.01, 50, 1)),
                   metric("k.t", 55.0, samples=noisy(55, 0.01, 50, 2))])
    with pytest.raises(CompareInputError, match="appears twice in one run"):
        side_from_docs("A", [doc], ["a.json"])


def _row(ma: dict, mb: dict) -> engine.Row:
    sides = [side_from_docs(s, [results([m])], [f"{s}.json"]) for s, m in (("A", ma), ("B", mb))]
    return engine.compare_sides(*sides).rows[0]


def test_a_value_its_own_samples_contradict_is_an_error_not_same():
    samples = noisy(900, 0.01, 50, 3)
    row = _row(metric("mem.bw", 900.0, unit="GB/s", better="higher", samples=samples),
               metric("mem.bw", 0.0, unit="GB/s", better="higher", samples=noisy(900, 0.01, 50, 4)))
    assert row.verdict == "error" and row.fails
    assert "outside its own samples" in row.reason


def test_all_nan_samples_are_an_error_not_a_silent_pass():
    nan = [math.nan] * 20
    row = _row(metric("k.t", 100.0, samples=noisy(100, 0.01, 50, 5)), metric("k.t", 100.0, samples=nan))
    assert row.verdict == "error" and "finite" in row.reason


def test_a_negative_bandwidth_is_an_error_in_compare():
    row = _row(metric("mem.bw", 900.0, unit="GB/s", better="higher"),
               metric("mem.bw", -900.0, unit="GB/s", better="higher"))
    assert row.verdict == "error" and "negative" in row.reason


def test_values_within_their_rounded_samples_stay_comparable():
    xs = noisy(100, 0.01, 50, 6)
    row = _row(metric("k.t", float(np.median(xs)), samples=xs), metric("k.t", float(xs.max()) * 1.0001, samples=xs))
    assert row.verdict == "same"


@pytest.mark.parametrize("n", [5, 6, 63, 64])
def test_the_bootstrap_medians_are_numpys_bit_for_bit(n):
    m = np.random.default_rng(n).normal(100, 3, (500, n))
    assert np.array_equal(_row_medians(m), np.median(m, axis=1))


def test_a_large_comparison_reports_progress_on_stderr(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(engine, "PROGRESS_EVERY", 100)
    a = write(tmp_path / "a.json", scaled_results(250))
    b = write(tmp_path / "b.json", scaled_results(250))
    assert main(["compare", a, b, "--format", "json", "--output", str(tmp_path / "o.json"),
                 "--no-annotations"]) == 0
    err = capsys.readouterr().err
    assert "judged 100 of 250 metrics" in err and "judged 250 of 250 metrics" in err
    assert len(json.loads((tmp_path / "o.json").read_text())["rows"]) == 250
