"""``gpuperf compare``: each output format, the JSON schema, the exit codes of the console script, and
the GitHub annotations of the CLI (issue 13)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from compare_support import H100, H100_GC, ROOT, device, metric, noisy, results, write
from pytest_gpuperf.compare import engine, formats, github
from pytest_gpuperf.compare.load import side_from_docs
from pytest_gpuperf.schemas import problems, validate


def report(dev_b=None, driver_b="580.1"):
    a = results([metric("memory.copy.bw", 3000, "GB/s", "higher", samples=noisy(3000, 0.005, 100, 1)),
                 metric("latency.fma.cycles", 4.0, "cycles", samples=noisy(4.0, 0.001, 50, 3)),
                 metric("accuracy.sin.max_ulp", 1.0, "ulp"), metric("tuning.only_a", 1.0, "ratio"),
                 metric("launch.host_us", 12.0, "us", samples=noisy(12.0, 0.01, 50, 5))])
    b = results([metric("memory.copy.bw", 2700, "GB/s", "higher", samples=noisy(2700, 0.005, 100, 2)),
                 metric("latency.fma.cycles", 4.0, "cycles", samples=noisy(4.0, 0.001, 50, 4)),
                 metric("accuracy.sin.max_ulp", 2.0, "ulp"), metric("tuning.only_b", 1.0, "ratio"),
                 metric("launch.host_us", 12.0, "us", samples=noisy(12.0, 0.01, 50, 6))], dev_b, driver=driver_b)
    return engine.compare_sides(side_from_docs("A", [a], ["a.json"]), side_from_docs("B", [b], ["b.json"]))


def test_rows_are_grouped_by_area_worst_first_and_environment_comes_first():
    rep = report(driver_b="590.2")
    areas = [a for a, _ in rep.areas()]
    assert areas[:2] in (["accuracy", "memory"], ["memory", "accuracy"])  # the two areas with a worse row
    text = formats.text(rep)
    assert text.index("driver: 580.1 -> 590.2") < text.index("verdicts:") < text.index("== ")
    assert "FAIL: 2 significant regression(s)" in text and "1 only in A" in text


def test_markdown_tables_have_the_header_shape():
    md = formats.markdown(report())
    tables = [ln for ln in md.splitlines() if ln.startswith("| metric |")]
    assert tables and all(t.count("|") == len(formats.HEADER) + 1 for t in tables)
    for line in md.splitlines():
        if line.startswith("| `"):
            assert line.count("|") - line.count("\\|") == len(formats.HEADER) + 1
    assert "| `memory.copy.bw` |" in md and "**worse**" in md and "## Environment" in md


def test_json_validates_against_the_shipped_schema():
    doc = formats.to_json(report())
    validate(doc, "pytest-gpuperf-compare/1")
    assert doc["a"]["device"]["key"] == "test-gpu-80gb" and "environment" in doc["b"]
    assert doc["exit_code"] == 1 and doc["counts"]["worse"] == 2
    bad = dict(doc, rows=[dict(doc["rows"][0], verdict="regressed")])
    assert any("verdict" in p for p in problems(bad, "pytest-gpuperf-compare/1"))


class _Tables(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.cells: list[str] = []
        self._in_td = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag in ("td", "th"):
            self._in_td = True
        for k, v in attrs:
            if k in ("src", "href") and v and not v.startswith("#"):
                raise AssertionError(f"external asset {v}")

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._in_td = False

    def handle_data(self, data):
        if self._in_td:
            self.cells.append(data)


def test_html_is_self_contained_and_holds_the_table():
    page = formats.html_page(report())
    parser = _Tables()
    parser.feed(page)
    assert "table" in parser.tags and "style" in parser.tags and "script" not in parser.tags and "link" not in parser.tags
    assert "memory.copy.bw" in parser.cells and "worse" in parser.cells
    assert page.startswith("<!DOCTYPE html>") and "http" not in page.split("</style>")[0]


def _gpuperf(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """The installed ``gpuperf`` console script (this checkout's package first on the path), or its entry
    point in a fresh interpreter where the script is not installed."""
    import shutil

    e = dict(os.environ, PYTHONPATH=str(ROOT))
    e.pop("GITHUB_ACTIONS", None)
    e.update(env or {})
    script = shutil.which("gpuperf")
    cmd = [script] if script else [sys.executable, "-c", "import sys; from pytest_gpuperf.cli import main; sys.exit(main())"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=e, cwd=ROOT, timeout=300)


def test_console_script_is_the_gpuperf_entry_point():
    import re

    text = (ROOT / "pyproject.toml").read_text()
    scripts = text.split("[project.scripts]", 1)[1].split("\n[", 1)[0]
    assert re.findall(r'^gpuperf = "(.*)"$', scripts, re.M) == ["pytest_gpuperf.cli:main"]  # one entry point
    from pytest_gpuperf.cli import GROUPS

    assert ("compare", "pytest_gpuperf.compare.cli") in GROUPS


def test_exit_codes(tmp_path):
    a = write(tmp_path / "a.json", results([metric("latency.x.cycles", 4.0, "cycles", samples=noisy(4, 0.001, 60, 1))]))
    same = write(tmp_path / "same.json", results([metric("latency.x.cycles", 4.0, "cycles", samples=noisy(4, 0.001, 60, 2))]))
    slow = write(tmp_path / "slow.json", results([metric("latency.x.cycles", 4.4, "cycles", samples=noisy(4.4, 0.001, 60, 3))]))
    ok = _gpuperf("compare", a, same)
    assert ok.returncode == 0, ok.stderr
    assert "PASS" in ok.stdout
    bad = _gpuperf("compare", a, slow)
    assert bad.returncode == 1 and "latency.x.cycles" in bad.stdout and "worse" in bad.stdout
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "baseline.json").write_text(json.dumps({"schema": "pytest-gpuperf-baseline/1"}))
    (tmp_path / "invalid.json").write_text(json.dumps({"schema": "pytest-gpuperf/1", "metrics": []}))
    for other, needle in (("broken.json", "not JSON"), ("baseline.json", "is not a results document"),
                          ("invalid.json", "does not follow schema"), ("missing.json", "no such file")):
        r = _gpuperf("compare", a, str(tmp_path / other))
        assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert _gpuperf("compare", a).returncode == 2  # one file and no --against
    other = write(tmp_path / "other.json", results([metric("latency.y.cycles", 4.0, "cycles")]))
    r = _gpuperf("compare", a, other)
    assert r.returncode == 2 and "no metric in common" in r.stderr
    assert _gpuperf("compare", a, same, "--format", "pdf").returncode == 2  # argparse usage error


def test_each_format_through_the_console_script(tmp_path):
    a = write(tmp_path / "a.json", results([metric("latency.x.cycles", 4.0, "cycles", samples=noisy(4, 0.001, 60, 1))]))
    b = write(tmp_path / "b.json", results([metric("latency.x.cycles", 4.4, "cycles", samples=noisy(4.4, 0.001, 60, 3))]))
    for fmt in formats.FORMATS:
        out = tmp_path / f"r.{fmt}"
        r = _gpuperf("compare", a, b, "--format", fmt, "--output", str(out))
        assert r.returncode == 1 and out.exists() and "latency.x.cycles" in out.read_text()
    validate(json.loads((tmp_path / "r.json").read_text()))
    # several runs per side: positional files are side A, --against names side B
    r = _gpuperf("compare", a, a, "--against", b, b, "--format", "json")
    doc = json.loads(r.stdout)
    assert doc["a"]["runs"] == 2 and doc["rows"][0]["runs"] == [2, 2]


def test_cli_flags_the_planted_h100_run_and_annotates_under_github_actions(tmp_path):
    summary = tmp_path / "summary.md"
    r = _gpuperf("compare", str(H100 / "default-1-cuda.json"), str(H100_GC / "plant-memory-1.json"),
                 env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert r.returncode == 1
    errors = [ln for ln in r.stdout.splitlines() if ln.startswith("::error ")]
    assert len(errors) == 1 and "title=gpuperf worse%3A memory.copy.bandwidth.1GiB::" in errors[0]
    assert "| `memory.copy.bandwidth.1GiB` |" in summary.read_text()
    warnings = [ln for ln in r.stdout.splitlines() if ln.startswith("::warning ")]
    assert len(warnings) == github.MAX_PER_LEVEL + 1  # 1,528 metrics the planted run did not record, capped


def test_workflow_command_escaping():
    f = github.Finding("error", "a: b, c", "100% bad\nline two")
    assert github.command(f) == "::error title=a%3A b%2C c::100%25 bad%0Aline two"


def test_step_summary_is_appended(tmp_path):
    target = tmp_path / "s.md"
    target.write_text("earlier step\n")
    assert github.append_step_summary("| a |", {"GITHUB_STEP_SUMMARY": str(target)}) == str(target)
    assert target.read_text() == "earlier step\n| a |\n"
    assert github.append_step_summary("x", {}) is None


def test_ci_doc_workflows_parse_and_their_compare_commands_are_valid():
    import re
    import shlex

    from pytest_gpuperf.cli import build_parser

    text = (ROOT / "docs" / "ci.md").read_text()
    yaml = pytest.importorskip("yaml")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    assert len(blocks) == 2 and all("jobs" in yaml.safe_load(b) for b in blocks)
    commands = re.findall(r"(gpuperf compare [^|\n]*?)(?:\s*\|\||\s*#|\n)", text)
    assert len(commands) >= 8
    for cmd in commands:
        args = build_parser().parse_args(shlex.split(cmd)[1:])
        assert args.command == "compare" and args.files


def test_real_report_in_every_format():
    from pytest_gpuperf.compare.load import load_side

    rep = engine.compare_sides(load_side("A", [H100 / "default-1-cuda.json"]), load_side("B", [H100 / "default-2-cuda.json"]))
    doc = formats.to_json(rep)
    validate(doc, "pytest-gpuperf-compare/1")
    assert len(doc["rows"]) == 1529 and doc["a"]["environment"]["driver"] == "580.159.04"
    assert "clock MHz at start: 345.0 -> 795.0" in formats.text(rep)
    md = formats.markdown(rep)
    assert md.count("\n## ") == 1 + len(rep.areas())  # Environment + one section per area
    page = formats.html_page(rep)
    parser = _Tables()
    parser.feed(page)
    per_area = [any(r.verdict not in formats.QUIET for r in rows) + sum(any(r.verdict == v for r in rows) for v in formats.QUIET)
                for _, rows in rep.areas()]
    assert parser.tags.count("table") == 1 + sum(per_area)  # environment, then listed and folded rows per area
