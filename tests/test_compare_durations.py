"""``gpuperf compare`` shows each test's duration on both sides (results ``tests``): A, B and Δ, the costliest
first, in every format — text and Markdown list the costliest (``--all``: every one), HTML folds them away,
JSON (valid against the compare schema) and CSV carry them all — and never judges them."""

from __future__ import annotations

import csv
import io

from compare_support import metric, results, side_of
from pytest_gpuperf.compare import engine, formats
from pytest_gpuperf.schemas import validate


def _doc(tests: dict[str, float]):
    doc = results([metric("latency.fma.cycles", 4.0, "cycles")])
    doc["tests"] = [{"test": t, "duration_s": s, "outcome": "passed"} for t, s in tests.items()]
    return doc


def _report(n_extra: int = 0) -> engine.Report:
    a = {"suites/test_a.py::test_slow": 10.0, "suites/test_a.py::test_only_a": 1.0}
    b = {"suites/test_a.py::test_slow": 7.5, "suites/test_a.py::test_only_b": 2.0}
    extra = {f"suites/test_b.py::test_tiny[{i}]": 0.01 for i in range(n_extra)}
    runs_a = [_doc({**a, **extra}), _doc({**a, "suites/test_a.py::test_slow": 12.0, **extra}),
              _doc({**a, "suites/test_a.py::test_slow": 11.0, **extra})]
    return engine.compare_sides(side_of("A", runs_a, ["a1.json", "a2.json", "a3.json"]),
                                side_of("B", [_doc({**b, **extra})], ["b.json"]))


def test_durations_pair_the_sides_costliest_first_with_the_median_of_a_sides_runs():
    ds = _report().durations
    assert [d.test for d in ds] == ["suites/test_a.py::test_slow", "suites/test_a.py::test_only_b",
                                    "suites/test_a.py::test_only_a"]
    slow = ds[0]
    assert (slow.a, slow.b, slow.delta) == (11.0, 7.5, -3.5)  # A: the median of 10, 12 and 11
    assert ds[1].a is None and ds[1].delta is None and ds[2].b is None
    assert _report().exit_code == 0  # shown, never judged


def test_every_format_carries_the_durations():
    rep = _report()
    text = formats.text(rep)
    section = text.split("== test durations (3 tests): A 12.0 s, B 9.5 s")[1].split("environment:")[0]
    assert "suites/test_a.py::test_slow" in section and "-3.50" in section and "-31.8%" in section
    assert section.index("test_slow") < section.index("test_only_b") < section.index("test_only_a")
    md = formats.markdown(rep)
    assert "## Test durations (3 tests): A 12.0 s, B 9.5 s" in md
    assert "| `suites/test_a.py::test_slow` | 11.00 | 7.50 | -3.50 | -31.8% |" in md
    doc = formats.to_json(rep)
    validate(doc)
    assert doc["durations"][0] == {"test": "suites/test_a.py::test_slow", "a_s": 11.0, "b_s": 7.5, "delta_s": -3.5}
    assert doc["durations"][2]["b_s"] is None
    rows = [r for r in csv.DictReader(io.StringIO(formats.csv_text(rep))) if r["area"] == "durations"]
    assert [r["metric"] for r in rows][0] == "suites/test_a.py::test_slow"
    assert rows[0]["a"] == "11.0" and rows[0]["b"] == "7.5" and rows[0]["verdict"] == "duration"  # not a verdict: apart from the metrics' counts
    assert (rows[0]["runs_a"], rows[0]["runs_b"]) == ("3", "1")
    page = formats.html_page(rep)
    assert 'id="durations"' in page and "suites/test_a.py::test_only_b" in page


def test_text_lists_the_costliest_and_all_lists_every_test():
    rep = _report(n_extra=formats.DURATIONS_LISTED + 5)
    total = len(rep.durations)
    text = formats.text(rep)
    assert f"{total - formats.DURATIONS_LISTED} more not listed (--all lists them)" in text
    assert all(f"test_tiny[{i}]" in formats.text(rep, all_rows=True) for i in range(formats.DURATIONS_LISTED + 5))


def test_runs_without_durations_leave_the_section_out():
    a, b = results([metric("latency.fma.cycles", 4.0, "cycles")]), results([metric("latency.fma.cycles", 4.0, "cycles")])
    rep = engine.compare_sides(side_of("A", [a], ["a.json"]), side_of("B", [b], ["b.json"]))
    assert rep.durations == [] and "test durations" not in formats.text(rep)
    assert formats.to_json(rep)["durations"] == [] and 'id="durations"' not in formats.html_page(rep)
