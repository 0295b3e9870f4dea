"""Docs generated from runs (``python3 -m tools.evidence``): a marked table is made from the results files its marker
names, ``check`` names the doc, table and differing cells where the doc says something else, ``write``
puts the made table in place, and bad input (a missing file, an unknown table, a broken marker, no marked
table at all) is an error naming the problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_gpuperf.util.jsonio import write_gz
from tools.evidence import docsync, markers, mdcells
from tools.evidence.cli import main as evidence
from tools.evidence.registry import tables
from tools.evidence.runfile import EvidenceError

ROOT = Path(__file__).resolve().parents[1]
RUN = "results/dev-x/run-1-cuda.json.gz"


def _run(root: Path, rel: str, value: float, commit: str = "abc1234def") -> None:
    doc = {"schema": "pytest-gpuperf/1", "device": {"backend": "cuda", "key": "dev-x", "name": "X"},
           "environment": {"commit": commit}, "run": {"started": "2026-11-25T10:00:00+00:00"},
           "metrics": [{"name": "memory.l2.latency.cycles", "value": value, "unit": "cycles"}]}
    write_gz(root / rel, json.dumps(doc).encode())


def _repo(tmp_path: Path, body: str = "") -> Path:
    _run(tmp_path, RUN, 290.4)
    _run(tmp_path, "results/dev-x/run-2-cuda.json.gz", 275.6, "fedcba9")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(
        "# A\n\n<!-- gpuperf:table metric-runs runs=" + RUN + ",results/dev-x/run-2-cuda.json.gz "
        "metrics=memory.l2.latency.cycles digits=1 -->\n" + body + "<!-- /gpuperf:table -->\n\ntext after\n")
    return tmp_path


def test_write_makes_the_table_and_names_every_run_it_came_from(tmp_path):
    root = _repo(tmp_path)
    assert docsync.write(root) == (1, ["docs/a.md"])
    text = (root / "docs" / "a.md").read_text()
    assert "| `run-1-cuda` | abc1234 | 2026-11-25 | 290.4 |" in text and "| **range** | | | 275.6 – 290.4 |" in text
    assert f"`{RUN}` (commit abc1234, 2026-11-25)" in text and text.endswith("text after\n")
    assert docsync.check(root) == (1, [])


def test_check_names_the_doc_the_table_and_the_differing_cell(tmp_path):
    root = _repo(tmp_path)
    docsync.write(root)
    doc = root / "docs" / "a.md"
    doc.write_text(doc.read_text().replace("| 290.4 |", "| 283.4 |"))
    count, problems = docsync.check(root)
    assert count == 1 and len(problems) == 1
    assert "docs/a.md:3 table 'metric-runs'" in problems[0]
    assert "row '`run-1-cuda`', column '`memory.l2.latency.cycles`': doc has '283.4', results give '290.4'" in problems[0]
    assert evidence(["check", "--root", str(root)]) == 1
    assert evidence(["write", "--root", str(root)]) == 0 and evidence(["check", "--root", str(root)]) == 0


def test_a_changed_results_file_makes_the_doc_stale(tmp_path):
    root = _repo(tmp_path)
    docsync.write(root)
    _run(root, RUN, 291.1)
    assert "results give '291.1'" in docsync.check(root)[1][0]


@pytest.mark.parametrize("marker, problem", [
    ("<!-- gpuperf:table metric-runs runs=results/dev-x/none.json.gz metrics=a -->", "does not exist"),
    ("<!-- gpuperf:table no-such-table runs=" + RUN + " -->", "no such table; known: "),
    ("<!-- gpuperf:table metric-runs runs=docs/a.md metrics=a -->", "outside results/"),
    ("<!-- gpuperf:table metric-runs metrics=a -->", "names no results file"),
    ("<!-- gpuperf:table metric-runs runs=" + RUN + "," + RUN + " metrics=a -->", "more than once"),
    ("<!-- gpuperf:table runs=" + RUN + " -->", "must name its table first"),
])
def test_bad_markers_are_errors_naming_the_problem(tmp_path, marker, problem, capsys):
    _run(tmp_path, RUN, 1.0)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(marker + "\n<!-- /gpuperf:table -->\n")
    with pytest.raises(EvidenceError, match=problem):
        docsync.check(tmp_path)
    assert evidence(["check", "--root", str(tmp_path)]) == 2
    assert problem.split(";")[0] in capsys.readouterr().err


@pytest.mark.parametrize("text, problem", [
    ("<!-- gpuperf:table metric-runs runs=" + RUN + " -->\n", "never closed"),
    ("<!-- /gpuperf:table -->\n", "without its opening marker"),
    ("no marked table here\n", "nothing would be checked"),
])
def test_unbalanced_markers_and_docs_without_tables_are_errors(tmp_path, text, problem):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(text)
    with pytest.raises(EvidenceError, match=problem):
        docsync.check(tmp_path)


def test_no_docs_folder_is_an_error(tmp_path):
    with pytest.raises(EvidenceError, match="no docs/"):
        docsync.check(tmp_path)


def test_cell_differences_are_reported_per_row_and_column():
    old = "| k | a | b |\n|---|---|---|\n| x | 1 | 2 |\n| y | 3 | 4 |\n"
    new = "| k | a | b |\n|---|---|---|\n| x | 1 | 5 |\n| y | 3 | 4 |\n| z | 6 | 7 |\n"
    diffs = mdcells.differences(old, new)
    assert "row 'x', column 'b': doc has '2', results give '5'" in diffs
    assert any(d.startswith("missing line") and "| z |" in d for d in diffs)


def test_every_marked_table_of_the_docs_names_a_known_table_and_saved_runs():
    """The whole check runs in CI (scripts/run_tests.sh: ``python3 -m tools.evidence check``); this is its fast half: every marker of
    every doc parses, names a generator that exists and results files that are saved."""
    known = tables()
    blocks = [b for p in docsync.doc_paths(ROOT) for b in markers.parse(p.name, p.read_text(encoding="utf-8"))]
    assert len(blocks) > 50
    loaded: dict[str, str] = {}  # each saved run read once: the tables name the same runs again and again
    for b in blocks:
        assert b.name in known, b.where
        for rel in b.sources():
            if rel not in loaded:
                loaded[rel] = docsync.runfile.load(ROOT, rel).path
            assert loaded[rel] == rel, b.where


def test_a_marker_quoted_in_inline_code_is_text_not_a_table():
    text = ("Write `<!-- gpuperf:table NAME sources=results/… -->` … `<!-- /gpuperf:table -->`.\n"
            "<!-- gpuperf:table metric-runs runs=" + RUN + " metrics=a -->\nold\n<!-- /gpuperf:table -->\n")
    blocks = markers.parse("a.md", text)
    assert [b.name for b in blocks] == ["metric-runs"] and blocks[0].body == "\nold\n"


def _states_repo(tmp_path: Path) -> Path:
    """The two-run table where run 1 was interrupted and one of its metrics saw host contention."""
    root = _repo(tmp_path)
    doc = {"schema": "pytest-gpuperf/1", "device": {"backend": "cuda", "key": "dev-x", "name": "X"},
           "environment": {"commit": "abc1234def"},
           "run": {"started": "2026-11-25T10:00:00+00:00", "interrupted": True},
           "metrics": [{"name": "memory.l2.latency.cycles", "value": 290.4, "unit": "cycles",
                        "info": {"host": {"windows": 10, "contended": 2}}}]}
    write_gz(root / RUN, json.dumps(doc).encode())
    return root


def test_a_table_citing_an_interrupted_contended_run_must_say_so(tmp_path):
    root = _states_repo(tmp_path)
    docsync.write(root)
    doc = root / "docs" / "a.md"
    made = doc.read_text()
    assert "interrupted before every test ran; host contended in 1 of 1 metrics" in made
    assert docsync.check(root) == (1, [])
    # a doc written before the run's state was known: the table says nothing about it
    doc.write_text(made.replace("; interrupted before every test ran; host contended in 1 of 1 metrics", ""))
    problems = docsync.check(root)[1]
    said = [p for p in problems if "without saying their state" in p]
    assert len(said) == 1 and f"{RUN} (interrupted, contended)" in said[0] and "docs/a.md:3" in said[0]
    assert evidence(["check", "--root", str(root)]) == 1
    # saying so in the caption above the marker answers it (the Runs line still differs from the made one)
    doc.write_text(doc.read_text().replace("# A\n\n", "# A\n\nRun 1 was interrupted, and its host contended.\n"))
    assert not [p for p in docsync.check(root)[1] if "without saying their state" in p]
    # a complete run needs no word
    assert docsync.runfile.unsaid([docsync.Maker(root).run("results/dev-x/run-2-cuda.json.gz")], "") == []


def test_run_states_read_the_results_document_fields():
    from tools.evidence.runfile import Run, _metrics

    doc = {"run": {"interrupted": False},
           "metrics": [{"name": "a", "value": 1.0, "info": {"power": {"throttled": True, "throttled_windows": 4}}},
                       {"name": "b", "value": 1.0, "info": {"power": {"throttled": False}, "host": {"contended": 0}}}]}
    run = Run("results/x/r.json.gz", doc, _metrics(doc))
    assert run.states() == {"throttled": "throttled in 1 of 2 metrics"}
    assert docsync.runfile.unsaid([run], "a table whose caption says the card throttled") == []
    assert docsync.runfile.unsaid([run], "a quiet caption") == ["results/x/r.json.gz (throttled)"]
    assert Run("results/x/c.json.gz", {"run": {}}, {}).states() == {}  # complete: nothing to say
