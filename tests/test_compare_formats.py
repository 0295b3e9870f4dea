"""``gpuperf compare``: each output format, the JSON schema, the exit codes of the console script, and
the GitHub annotations of the CLI (issue 13)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from compare_support import H100, H100_GC, ROOT, device, metric, noisy, results, side_of, write
from pytest_gpuperf.compare import engine, formats
from pytest_gpuperf.compare.cli import findings_from_rows
from pytest_gpuperf.report import github
from pytest_gpuperf.schemas import problems, validate
from suite_support import gpuperf_in_process


def report(dev_b=None, driver_b="580.1"):
    a = results([metric("memory.copy.bw", 3000, "GB/s", "higher", samples=noisy(3000, 0.005, 100, 1)),
                 metric("latency.fma.cycles", 4.0, "cycles", samples=noisy(4.0, 0.001, 50, 3)),
                 metric("accuracy.sin.max_ulp", 1.0, "ulp"), metric("tuning.only_a", 1.0, "ratio"),
                 metric("launch.host_us", 12.0, "us", samples=noisy(12.0, 0.01, 50, 5))])
    b = results([metric("memory.copy.bw", 2700, "GB/s", "higher", samples=noisy(2700, 0.005, 100, 2)),
                 metric("latency.fma.cycles", 4.0, "cycles", samples=noisy(4.0, 0.001, 50, 4)),
                 metric("accuracy.sin.max_ulp", 2.0, "ulp"), metric("tuning.only_b", 1.0, "ratio"),
                 metric("launch.host_us", 12.0, "us", samples=noisy(12.0, 0.01, 50, 6))], dev_b, driver=driver_b)
    return engine.compare_sides(side_of("A", [a], ["a.json"]), side_of("B", [b], ["b.json"]))


def test_the_news_comes_first_then_the_rest_by_area_then_the_environment_that_differs():
    rep = report(driver_b="590.2")
    areas = [a for a, _ in rep.areas()]
    assert areas[:2] in (["accuracy", "memory"], ["memory", "accuracy"])  # the two areas with a worse row
    text = formats.text(rep)
    assert (text.index("FAIL: 2 significant regression(s)") < text.index("verdicts:") < text.index("== regressions: 2")
            < text.index("memory.copy.bw") < text.index("== tuning") < text.index("environment: 1 of")
            < text.index("driver: 580.1 -> 590.2"))
    assert "1 only in A" in text and "toolkit: 13.0" not in text, "unchanged fields are left out"
    assert "toolkit: 13.0" in formats.text(rep, all_rows=True)
    regressions = text.split("== regressions")[1].split("\n\n")[0]
    assert "memory.copy.bw" in regressions and "accuracy.sin.max_ulp" in regressions and "-10.0%" in regressions
    md = formats.markdown(rep)
    assert md.index("**FAIL: 2") < md.index("## Regressions (2)") < md.index("## Environment (1 of")
    assert "<details><summary>" in md.split("## Environment")[1]


def ungated_report():
    """One gated regression, and one worse row that is not gated (the card throttled while B measured it)."""
    throttled = {"power": {"throttled": True, "throttle_reasons": ["hw_slowdown"]}}
    a = results([metric("memory.copy.bw", 3000, "GB/s", "higher", samples=noisy(3000, 0.005, 100, 1)),
                 metric("latency.fma.cycles", 4.0, "cycles", samples=noisy(4.0, 0.001, 50, 3))])
    b = results([metric("memory.copy.bw", 2700, "GB/s", "higher", samples=noisy(2700, 0.005, 100, 2)),
                 metric("latency.fma.cycles", 4.4, "cycles", samples=noisy(4.4, 0.001, 50, 4), info=throttled)])
    return engine.compare_sides(side_of("A", [a], ["a.json"]), side_of("B", [b], ["b.json"]))


def test_one_count_of_failures_everywhere_and_an_ungated_row_is_not_one():
    rep = ungated_report()
    ungated = next(r for r in rep.rows if r.name == "latency.fma.cycles")
    assert (ungated.verdict, ungated.gated, ungated.fails) == ("worse", False, False)
    assert [r.name for r in rep.failing] == ["memory.copy.bw"] and rep.exit_code == 1
    counts = formats.to_json(rep)["counts"]
    assert (counts["worse"], counts["failing"], counts["worse_ungated"]) == (2, 1, 1)
    for text in (formats.text(rep), formats.markdown(rep)):
        assert "FAIL: 1 significant regression(s)" in text and "1 worse, 1 worse but not gated" in text
    assert "**worse (not gated)**" not in formats.markdown(rep) and "**worse**" in formats.markdown(rep)
    page = formats.html_page(rep)
    assert 'class="worse fail"' in page and 'class="worse ungated"' in page
    assert page.count('class="worse fail"') == 1 == len(findings_from_rows(rep.rows))


def test_csv_has_every_row_failing_first_with_plain_numbers():
    import csv
    import io

    rep = report()
    rows = list(csv.DictReader(io.StringIO(formats.csv_text(rep))))
    assert len(rows) == len(rep.rows) and tuple(rows[0]) == formats.CSV_COLUMNS
    assert [r["metric"] for r in rows[:2]] == [r.name for r in rep.failing]
    bw = next(r for r in rows if r["metric"] == "memory.copy.bw")
    assert float(bw["delta_pct"]) == pytest.approx(-10.0, abs=0.5) and bw["fails"] == "true" and bw["gated"] == "true"
    only = next(r for r in rows if r["metric"] == "tuning.only_a")
    assert only["b"] == "" and only["ratio"] == ""


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


def test_html_is_self_contained_leads_with_the_news_and_plots_the_significant_rows():
    page = formats.html_page(report(driver_b="590.2"))
    parser = _Tables()
    parser.feed(page)  # raises on any external asset
    assert "table" in parser.tags and "style" in parser.tags and "link" not in parser.tags
    assert "memory.copy.bw" in parser.cells and "worse" in parser.cells and "-10.0%" in parser.cells
    assert page.lstrip().startswith("<!DOCTYPE html>") and "http" not in page.split("</style>")[0]
    assert page.index('id="verdict"') < page.index('id="regressions"') < page.index('id="other"') < page.index(
        'id="environment"')
    env = page.split('id="environment"')[1]
    assert env.index("driver") < env.index("<details>") < env.index("toolkit"), "unchanged fields are folded"
    assert page.count('class="strip"') == 2  # the two failing rows: samples (memory.copy.bw), one value a side (ulp)


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


def test_exit_codes(tmp_path, capsys, monkeypatch):
    """0, 1 and 2 as the console script's process exits with them; each reason for a 2 (one line on stderr)
    through the same entry point in this interpreter."""
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
    usage = _gpuperf("compare", a, same, "--format", "pdf")
    assert usage.returncode == 2 and "--format" in usage.stderr  # argparse usage error
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    for other, needle in (("broken.json", "not JSON"), ("baseline.json", "is not a results document"),
                          ("invalid.json", "does not follow schema"), ("missing.json", "no such file")):
        code, _, err = gpuperf_in_process(capsys, "compare", a, str(tmp_path / other))
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    assert gpuperf_in_process(capsys, "compare", a)[0] == 2  # one file and no --against
    other = write(tmp_path / "other.json", results([metric("latency.y.cycles", 4.0, "cycles")]))
    code, _, err = gpuperf_in_process(capsys, "compare", a, other)
    assert code == 2 and "no metric in common" in err


def test_each_format_through_the_console_script(tmp_path, capsys, monkeypatch):
    """Every format written by ``--output`` (the CLI's entry point in this interpreter), and one through the
    console script's process."""
    a = write(tmp_path / "a.json", results([metric("latency.x.cycles", 4.0, "cycles", samples=noisy(4, 0.001, 60, 1))]))
    b = write(tmp_path / "b.json", results([metric("latency.x.cycles", 4.4, "cycles", samples=noisy(4.4, 0.001, 60, 3))]))
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    for fmt in formats.FORMATS:
        out = tmp_path / f"r.{fmt}"
        code, _, err = gpuperf_in_process(capsys, "compare", a, b, "--format", fmt, "--output", str(out))
        assert code == 1 and out.exists() and "latency.x.cycles" in out.read_text(), err
    validate(json.loads((tmp_path / "r.json").read_text()))
    script = tmp_path / "script.html"
    r = _gpuperf("compare", a, b, "--format", "html", "--output", str(script))
    assert r.returncode == 1 and script.read_text() == (tmp_path / "r.html").read_text(), r.stderr
    # several runs per side: positional files are side A, --against names side B
    doc = json.loads(gpuperf_in_process(capsys, "compare", a, a, "--against", b, b, "--format", "json")[1])
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
    docs = [yaml.safe_load(b) for b in blocks]
    workflows = [d for d in docs if isinstance(d, dict) and "jobs" in d]
    steps = [d for d in docs if isinstance(d, list)]  # snippets: steps to add to a job
    assert len(workflows) == 2 and len(workflows) + len(steps) == len(blocks)
    assert all(isinstance(s, dict) and ("uses" in s or "run" in s) for d in steps for s in d)
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
    listed = [area for area, rows, shown in formats.others(rep) if shown or formats._omitted(rows, False)]
    assert md.count("\n## ") == 2 + len(listed)  # Regressions, each area with something to say, Environment
    page = formats.html_page(rep)
    parser = _Tables()
    parser.feed(page)
    assert "clock MHz at start" in parser.cells and "memory.copy.bandwidth.1GiB" in parser.cells


def test_the_planted_ab_page_draws_its_sample_plots_in_chromium(tmp_path):
    """The HTML report of the planted A/B (three A/A runs of the H100 against the run with planted
    regressions) opened in headless Chromium: no script error, one strip plot per plotted row."""
    from history_support import browse, chromium

    if chromium() is None:
        pytest.skip("chromium absent: apt-get install -y chromium")
    page = tmp_path / "planted.html"
    r = _gpuperf("compare", *(str(ROOT / f"results/nvidia-h100-80gb-hbm3/gatecheck/aa-{i}.json.xz") for i in (2, 3, 4)),
                 "--against", str(ROOT / "results/nvidia-h100-80gb-hbm3/planted-ab-cuda.json.xz"), "--format", "html",
                 "-o", str(page))
    assert r.returncode == 1, r.stderr
    dom, console = browse(page, size="1400,1000")
    assert console == [] and "data-js-errors" not in dom and 'data-rendered="yes"' in dom
    strips = dom.count('class="strip"')
    assert strips >= 4 and dom.count('data-drawn="yes"') == strips and f'data-plots="{strips}"' in dom
    assert dom.count("uplot") >= strips
    regressions = dom.split('id="regressions"')[1].split('id="other"')[0]
    assert "memory.copy.bandwidth.1GiB" in regressions and "accuracy.fp32.sin.max_ulp" in regressions
