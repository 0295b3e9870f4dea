"""Input the gate and ``gpuperf compare`` must not trust: a baseline in another unit or direction, duplicate
metric entries, a value its own samples contradict, all-NaN samples, a very large comparison."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from compare_support import metric, noisy, results, scaled_results, side_of, write
from pytest_gpuperf.baselines import catalog, make_entry
from pytest_gpuperf.baselines.verdicts import compare
from pytest_gpuperf.cli import main
from pytest_gpuperf.compare import engine
from pytest_gpuperf.compare.load import CompareInputError, side_from_docs
from pytest_gpuperf.schemas.results_doc import ResultsDocument


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
    from pytest_gpuperf.baselines.verdicts import kind_problem

    a = metric("k.t", 1000.0, unit="us")
    b = metric("k.t", 1.5, unit="ms")
    docs = [side_of(s, [results([m])], [f"{s}.json"]) for s, m in (("A", a), ("B", b))]
    row = engine.compare_sides(*docs).rows[0]
    assert row.verdict == "incomparable"
    assert row.reason == kind_problem("us", "lower", "ms", "lower", "A", "B")
    flipped = engine.compare_sides(*[side_of(s, [results([m])], [f"{s}.json"]) for s, m in
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
        side_of("A", [doc], ["a.json"])


def _row(ma: dict, mb: dict) -> engine.Row:
    sides = [side_of(s, [results([m])], [f"{s}.json"]) for s, m in (("A", ma), ("B", mb))]
    return engine.compare_sides(*sides).rows[0]


def test_a_value_its_own_samples_contradict_is_an_error_not_same():
    samples = noisy(900, 0.01, 50, 3)
    row = _row(metric("mem.bw", 900.0, unit="GB/s", better="higher", samples=samples),
               metric("mem.bw", 0.0, unit="GB/s", better="higher", samples=noisy(900, 0.01, 50, 4)))
    assert row.verdict == "error" and row.fails
    assert "outside its own samples" in row.reason


def test_all_nan_samples_are_an_error_not_a_silent_pass():
    """A results file cannot carry NaN samples (its schema refuses them, and so does ``gpuperf compare``); a
    live run's metric can (``--gpuperf-compare``: read as its typed record, with no file schema between)."""
    nan = [math.nan] * 20
    a = side_of("A", [results([metric("k.t", 100.0, samples=noisy(100, 0.01, 50, 5))])], ["A.json"])
    live = ResultsDocument.from_json(results([metric("k.t", 100.0, samples=nan)]), "this run")
    row = engine.compare_sides(a, side_from_docs("B", [live], ["this run"])).rows[0]
    assert row.verdict == "error" and "finite" in row.reason
    with pytest.raises(CompareInputError, match="does not follow schema"):
        side_of("B", [results([metric("k.t", 100.0, samples=nan)])], ["B.json"])


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
    from pytest_gpuperf.timing.difference import _medians

    m = np.random.default_rng(n).normal(100, 3, (500, n))
    assert np.array_equal(_medians(m), np.median(m, axis=1))


def test_a_large_comparison_reports_progress_on_stderr(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(engine, "PROGRESS_EVERY", 100)
    a = write(tmp_path / "a.json", scaled_results(250))
    b = write(tmp_path / "b.json", scaled_results(250))
    assert main(["compare", a, b, "--format", "json", "--output", str(tmp_path / "o.json"),
                 "--no-annotations"]) == 0
    err = capsys.readouterr().err
    assert "judged 100 of 250 metrics" in err and "judged 250 of 250 metrics" in err
    assert len(json.loads((tmp_path / "o.json").read_text())["rows"]) == 250


# ---- pages and logs: no stored text may blank a page or forge a GitHub annotation -----------------------
HOSTILE_UNIT = "<!--<script>"


def _script_data(page: str, element_id: str) -> str:
    """The text of the page's JSON data element, cut where the HTML parser would end it (the first
    ``</script``: after ``<!--<script>`` a browser would not even stop there)."""
    start = page.index(f'<script type="application/json" id="{element_id}">')
    body = page[start:].split(">", 1)[1]
    return body.split("</script")[0]


def test_script_json_reads_back_the_same_data_with_no_markup_left():
    from pytest_gpuperf.report.assets import script_json

    doc = {"unit": HOSTILE_UNIT + "</script>&amp;", "n": [1, 2]}
    text = script_json(json.dumps(doc))
    assert not set("<>&") & set(text) and json.loads(text) == doc


def test_a_unit_that_opens_a_script_does_not_swallow_the_dashboard(tmp_path):
    from test_history_detect import series_runs

    from pytest_gpuperf.history.backends import record_runs

    runs = series_runs([1.0] * 6 + [2.0] * 6)
    for r in runs:
        r.metrics[0].unit = HOSTILE_UNIT
    db = str(tmp_path / "h.db")
    record_runs(db, runs)
    assert main(["history", "report", "--db", db, "--html", str(tmp_path / "html")]) == 0
    page = (tmp_path / "html" / "index.html").read_text()
    data = _script_data(page, "gpuperf-data")
    assert "<" not in data and HOSTILE_UNIT in json.dumps(json.loads(data), ensure_ascii=False)
    assert page.rstrip().endswith("</html>")


def test_a_unit_that_opens_a_script_does_not_swallow_the_compare_page(tmp_path):
    a = metric("k.t", 100.0, unit=HOSTILE_UNIT, samples=noisy(100, 0.01, 60, 1))
    b = metric("k.t", 130.0, unit=HOSTILE_UNIT, samples=noisy(130, 0.01, 60, 2))
    paths = [write(tmp_path / f"{s}.json", results([m])) for s, m in (("a", a), ("b", b))]
    out = tmp_path / "c.html"
    main(["compare", *paths, "--format", "html", "--output", str(out), "--no-annotations"])
    page = out.read_text()
    data = _script_data(page, "compare-data")
    assert "<" not in data and json.loads(data)[0]["unit"] == HOSTILE_UNIT


def test_compare_markdown_copies_no_raw_html_and_breaks_no_table(tmp_path, capsys):
    a = metric("k.t", 100.0, unit="<b>us|x</b>", samples=noisy(100, 0.01, 60, 1))
    b = metric("k.t", 130.0, unit="<b>us|x</b>", samples=noisy(130, 0.01, 60, 2))
    paths = [write(tmp_path / f"{s}<img src=x>.json", results([m])) for s, m in (("a", a), ("b", b))]
    main(["compare", *paths, "--format", "markdown", "--no-annotations"])
    md = capsys.readouterr().out
    assert "<b>" not in md and "<img" not in md and "&lt;b&gt;us\\|x&lt;/b&gt;" in md
    row = next(line for line in md.splitlines() if "k.t" in line)
    assert row.count(" | ") == len(__import__("pytest_gpuperf.compare.formats", fromlist=["HEADER"]).HEADER) - 1


def test_a_commit_holding_a_newline_forges_no_github_annotation(tmp_path, capsys, monkeypatch):
    doc = results([metric("k.t", 100.0)])
    doc["environment"]["commit"] = "\n::error::forged"
    path = write(tmp_path / "r.json", doc)
    db = str(tmp_path / "h.db")
    assert main(["history", "import", path, "--db", db]) == 0
    capsys.readouterr()
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert main(["history", "list", "--db", db]) == 0
    out = capsys.readouterr().out
    assert not any(line.startswith("::") for line in out.splitlines()), out
    assert "\\n::error::" in out  # shown, escaped, on the run's own line


def test_annotations_escape_what_github_reads_as_commands():
    from pytest_gpuperf.report.github import Finding, command

    line = command(Finding("error", "a: b, c", "100%\r\n::error::forged"))
    assert "\n" not in line and "\r" not in line  # one line: what follows '::' inside it is data
    assert line.endswith("100%25%0D%0A::error::forged") and "title=a%3A b%2C c" in line


# ---- smaller: baseline file names, history rows -----------------------------------------------------------
def test_a_baseline_whose_device_key_differs_from_its_file_name_fails_check(tmp_path, capsys):
    from pytest_gpuperf import BASELINE_SCHEMA

    doc = {"schema": BASELINE_SCHEMA, "device": {"key": "nvidia-h100"},
           "backends": {"cuda": {"provenance": {"driver": "1"}, "metrics": {}}}}
    (tmp_path / "nvidia-h200.json").write_text(json.dumps(doc))
    assert main(["baseline", "check", str(tmp_path)]) == 1
    assert "device.key is 'nvidia-h100' but the file is named 'nvidia-h200.json'" in capsys.readouterr().out
    (tmp_path / "nvidia-h200.json").rename(tmp_path / "nvidia-h100.json")
    assert main(["baseline", "check", str(tmp_path)]) == 0


@pytest.mark.parametrize("table,column", [("runs", "options"), ("metrics", "info")])
def test_a_history_row_with_bad_json_is_left_out_with_a_warning(tmp_path, capsys, table, column):
    import sqlite3

    db = tmp_path / "h.db"
    for i, commit in enumerate(("aaa", "bbb")):
        doc = results([metric("k.t", 100.0 + i), metric("k.u", 5.0)])
        doc["environment"]["commit"] = commit
        doc["run"]["started"] = doc["run"]["finished"] = f"2026-01-0{i + 1}T00:00:00+00:00"
        assert main(["history", "import", write(tmp_path / f"r{i}.json", doc), "--db", str(db)]) == 0
    with sqlite3.connect(db) as conn:
        conn.execute(f"UPDATE {table} SET {column} = '{{not json' WHERE id = (SELECT MIN(id) FROM {table})")
    capsys.readouterr()
    assert main(["history", "list", "--db", str(db)]) == 0
    out, err = capsys.readouterr()
    assert "warning: history" in err and "bad JSON" in err and "left out" in err
    assert ("1 run(s)" if table == "runs" else "2 run(s)") in out
    assert main(["history", "report", "--db", str(db), "--html", str(tmp_path / "html")]) == 0


def test_the_bootstrap_draws_what_it_drew_before():
    """The faster resampling draws the very resamples ``rng.choice`` drew: every interval is unchanged."""
    from pytest_gpuperf.timing.difference import difference

    a, b = noisy(100, 0.02, 64, 1), noisy(103, 0.02, 64, 2)
    rng = np.random.default_rng(0x9E3779B9)
    ra = np.median(rng.choice(a, size=(2000, a.size), replace=True), axis=1)
    rb = np.median(rng.choice(b, size=(2000, b.size), replace=True), axis=1)
    lo, hi = np.quantile(rb / ra, [0.0005, 0.9995])
    d = difference(a, b)
    assert (d.ci_low, d.ci_high) == (float(lo), float(hi))
    # the very resamples scipy.stats.bootstrap draws from that generator (unpaired, percentile)
    from scipy import stats as sps

    from pytest_gpuperf.timing.difference import _median_ratio

    boot = sps.bootstrap((a, b), _median_ratio, n_resamples=2000, method="percentile", vectorized=True,
                         paired=False, rng=np.random.default_rng(0x9E3779B9))
    assert np.array_equal(np.quantile(boot.bootstrap_distribution, [0.0005, 0.9995]), [lo, hi])
