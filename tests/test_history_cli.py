"""``gpuperf history`` on the project's real results, and the plugin writing history in a real run."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from pytest_gpuperf.util import jsonio

from pytest_gpuperf.cli import main
from pytest_gpuperf.devices import discover
from pytest_gpuperf.history.backends import read_runs, record_runs
from suite_support import baseline_folder

ROOT = Path(__file__).resolve().parents[1]
POCL = ROOT / "results/pocl-pthread-skylake-avx512-amd-epyc"


def test_backfill_real_results_is_idempotent(tmp_path, capsys):
    db = str(tmp_path / "h.db")
    files = [str(POCL / "suites-opencl.json"), str(POCL / "suites-r2-opencl.json")]
    assert main(["history", "import", "--db", db, *files]) == 0
    assert "imported 2 new run(s)" in capsys.readouterr().out
    assert main(["history", "import", "--db", db, *files]) == 0
    assert "imported 0 new run(s) of 2" in capsys.readouterr().out
    runs = read_runs(db)
    assert [r.device_key for r in runs] == ["pocl-pthread-skylake-avx512-amd-epyc"] * 2
    assert len(runs[0].metrics) == 1281 and runs[0].driver and runs[0].commit.startswith("cb1c4862")
    assert main(["history", "list", "--db", db]) == 0
    assert "2 run(s)" in capsys.readouterr().out
    assert main(["history", "show", "latency.fp32", "--db", db]) == 0
    assert "latency.fp32" in capsys.readouterr().out
    assert main(["history", "show", "no.such.metric", "--db", db]) == 1


def test_list_and_show_are_machine_readable_and_list_names_a_long_toolkit_once(tmp_path, capsys):
    db = str(tmp_path / "h.db")
    files = [str(POCL / "suites-opencl.json"), str(POCL / "suites-r2-opencl.json")]
    assert main(["history", "import", "--db", db, *files]) == 0
    capsys.readouterr()
    runs = read_runs(db)
    toolkit = runs[0].toolkit
    assert len(toolkit) > 60  # PoCL's runtime string: the one that was repeated on every row
    assert main(["history", "list", "--db", db]) == 0
    text = capsys.readouterr().out
    assert text.count(toolkit) == 1 and f"driver/toolkit [1] = {toolkit}" in text
    assert all(len(line) < 200 for line in text.splitlines())
    assert main(["history", "list", "--db", db, "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(r["commit"], r["toolkit"], r["metrics"]) for r in listed] == \
        [(r.commit, r.toolkit, len(r.metrics)) for r in runs]
    assert main(["history", "list", "--db", db, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["date"], r["toolkit"], int(r["metrics"])) for r in rows] == \
        [(r.date, r.toolkit, len(r.metrics)) for r in runs]
    assert [r["left_out"] for r in rows] == ["", ""]  # both measure the system as it is: in the trends
    assert main(["history", "show", "latency.fp32", "--db", db, "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    want = sorted((m.name, r.date, m.value) for r in runs for m in r.metrics if "latency.fp32" in m.name)
    assert len(want) >= 2 and sorted((x["metric"], x["date"], x["value"]) for x in shown) == want
    assert main(["history", "show", "latency.fp32", "--db", db, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert sorted((x["metric"], x["date"], float(x["value"])) for x in rows) == want
    assert set(rows[0]) == {"metric", "device", "backend", "date", "commit", "value", "unit", "mad", "baseline",
                            "band", "verdict", "test", "source_digest", "kernel_changed"}


def test_legacy_jsonl_imports(tmp_path):
    old = tmp_path / "old.jsonl"
    old.write_text('{"date":"2026-01-01T00:00:00+00:00","key":"k","backend":"opencl","driver":"1","commit":"abc",'
                   '"metrics":{"a.b":1.5,"a.c":2}}\n')
    db = str(tmp_path / "h.db")
    assert main(["history", "import", str(old), "--db", db]) == 0
    (run,) = read_runs(db)
    assert {m.name: m.value for m in run.metrics} == {"a.b": 1.5, "a.c": 2.0}


HAS_CL = any(d.backend == "opencl" for d in discover().devices)
WORK = '''
def test_work(gpu_device, gpuperf_record):
    gpuperf_record("area.work.us", 12.5, "us", better="lower")
    gpuperf_record("area.count", 3, "items", better="exact")
'''


@pytest.mark.skipif(not HAS_CL, reason="no OpenCL device (install pocl-opencl-icd)")
def test_plugin_records_each_run_in_the_history(pytester):
    pytester.makepyfile(WORK)
    db = pytester.path / "h.db"
    for _ in range(2):
        pytester.runpytest("--gpuperf-device=opencl:0", f"--gpuperf-baseline-dir={baseline_folder(pytester.path, 'bl')}",
                           f"--gpuperf-history={db}").assert_outcomes(passed=1)
    runs = read_runs(str(db))
    assert len(runs) == 2 and runs[0].backend == "opencl" and runs[0].device_key
    assert {m.name for m in runs[1].metrics} == {"area.work.us", "area.count"}
    assert runs[1].options.get("device") == "opencl:0"


@pytest.mark.skipif(not HAS_CL, reason="no OpenCL device (install pocl-opencl-icd)")
@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "jsonl"])
def test_a_run_recorded_live_and_imported_from_its_results_file_is_one_run(pytester, capsys, request, kind):
    """The backfill docs/history.md presents, after a run that also recorded itself: the import says the
    run is recorded already and adds nothing; a second session is a new run."""
    pytester.makepyfile(WORK)
    db = {"sqlite": str(pytester.path / "h.db"), "jsonl": str(pytester.path / "h.jsonl")}.get(kind) or \
        request.getfixturevalue("postgres_url")
    for n in (1, 2):
        pytester.runpytest("--gpuperf-device=opencl:0", f"--gpuperf-baseline-dir={baseline_folder(pytester.path, 'bl')}",
                           f"--gpuperf-history={db}", f"--gpuperf-json=results/r{n}.json").assert_outcomes(passed=1)
    first = jsonio.read_json(pytester.path / "results/r1.json")
    assert isinstance(first["run"]["id"], str) and len(first["run"]["id"]) == 32
    assert main(["history", "import", str(pytester.path / "results"), "--db", db]) == 0
    out, err = capsys.readouterr()
    assert "imported 0 new run(s) of 2" in out and "2 already recorded" in out, out
    assert err.count("already recorded: ") == 2 and "r1.json" in err and "nothing added" in err
    runs = read_runs(db)
    assert len(runs) == 2 and all(r.source == "pytest" for r in runs)
    assert len({r.options["run_id"] for r in runs}) == 2


def test_plugin_refuses_a_bad_history_target_before_any_test(pytester):
    pytester.makepyfile("def test_x(): raise AssertionError('must not run')")
    result = pytester.runpytest(f"--gpuperf-history={pytester.path}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.errlines if "--gpuperf-history" in line]
    assert len(errors) == 1 and "is a directory" in errors[0], result.errlines
    assert "must not run" not in result.stdout.str()


# ---- import: the repository's own results folder holds JSON that is not a results document -------------
H100 = ROOT / "results/nvidia-h100-80gb-hbm3"
COMPARE = Path("upgrade/compare-aa-h100.json")  # made in each test by `gpuperf compare` of two saved H100 runs
NOT_RESULTS = {  # real files of results/ that are not results documents, and the reason given for each
    H100 / "ncu-dwarfs-cuda.json": "metrics[0] is a str, not a metric object",
    H100 / "gatecheck.json": "schema 'pytest-gpuperf-gatecheck/1', not a results document",
    ROOT / "results/nvidia-h200/l2-placement-cuda.json.xz": "no device.key",
    COMPARE: "schema 'pytest-gpuperf-compare/1'",
}


def compare_report(dest: Path) -> None:
    """A real compare report (JSON of another kind than results), of two saved H100 runs."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    a, b = (str(jsonio.saved(H100 / name)) for name in ("memory-cuda.json", "memory-r2-cuda.json"))
    assert main(["compare", a, "--against", b, "--format", "json", "-o", str(dest)]) == 0


def _folder(tmp_path: Path, files: list[Path], capsys: pytest.CaptureFixture[str]) -> Path:
    """A results folder like the repository's: copies of real files (and the compare report made here)."""
    folder = tmp_path / "results"
    for f in map(jsonio.saved, files):  # committed results are stored compressed; the copies too
        dest = folder / f.parent.name / f.name
        if f == COMPARE:
            compare_report(dest)
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        if f.name.endswith(".json.xz"):  # a whole copy: the committed run may be a delta of the device's anchor
            jsonio.write_xz(dest, jsonio.read_bytes(f))
        else:
            shutil.copyfile(f, dest)
    capsys.readouterr()  # compare's one line is not the import's output
    return folder


def test_import_skips_what_is_not_a_results_document_with_one_line_each_and_imports_the_rest(tmp_path, capsys):
    folder = _folder(tmp_path, [H100 / "memory-cuda.json", H100 / "memory-r2-cuda.json", *NOT_RESULTS], capsys)
    (folder / "torn.json").write_text('{"schema": "pytest-gpuperf/1", "metrics": [')
    (folder / "list.json").write_text("[1, 2]")
    db = str(tmp_path / "h.db")
    assert main(["history", "import", str(folder), "--db", db]) == 1  # the torn file is broken, not another kind
    out, err = capsys.readouterr()
    assert "imported 2 new run(s) of 2" in out and "skipped 5 file(s) of another kind" in out
    assert "1 broken file(s) NOT imported" in out
    lines = err.splitlines()
    assert len(lines) == 6 and sum(line.startswith("skipped ") for line in lines) == 5, err
    for f, why in NOT_RESULTS.items():
        (line,) = [x for x in lines if f"/{f.parent.name}/{jsonio.saved(f).name}:" in x]
        assert line.startswith("skipped ") and why in line, line
    assert any(x.startswith("error: ") and "torn.json: not valid JSON" in x for x in lines)
    assert any("list.json: a JSON list, not a results document" in x for x in lines)
    assert len(read_runs(db)) == 2


@pytest.mark.parametrize("case", ["only-not-results", "empty-folder", "missing-path"])
def test_import_with_nothing_importable_is_an_error_and_creates_no_database(tmp_path, capsys, case):
    folder = _folder(tmp_path, list(NOT_RESULTS) if case == "only-not-results" else [], capsys)
    folder.mkdir(exist_ok=True)
    path = folder / "typo" if case == "missing-path" else folder
    db = tmp_path / "h.db"
    assert main(["history", "import", str(path), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    expect = {"only-not-results": "nothing to import from", "empty-folder": "holds no .json, .json.xz, .json.gz or .jsonl file",
              "missing-path": "typo does not exist"}[case]
    assert expect in err and str(path) in err
    if case == "only-not-results":
        assert err.count("skipped ") == len(NOT_RESULTS)
    assert not db.exists()


# ---- readers never create a database -----------------------------------------------------------------------
@pytest.mark.parametrize("command", [["list"], ["show", "latency"], ["detect"], ["detect", "--json"],
                                     ["report", "--html", "site"]])
def test_reading_commands_refuse_a_database_that_does_not_exist(tmp_path, capsys, command):
    typo = tmp_path / "typo.db"
    assert main(["history", *command, "--db", str(typo)]) == 2
    err = capsys.readouterr().err
    assert f"history database {typo} does not exist" in err and "reading never creates" in err
    assert f"--db {typo}" in err  # the fix: record or import into it first
    assert not typo.exists() and not (tmp_path / "site").exists()


def test_reading_refuses_a_missing_jsonl_and_a_sqlite_file_without_history(tmp_path, capsys):
    assert main(["history", "detect", "--db", str(tmp_path / "typo.jsonl")]) == 2
    assert "typo.jsonl does not exist" in capsys.readouterr().err
    assert not (tmp_path / "typo.jsonl").exists()
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    assert main(["history", "list", "--db", str(other)]) == 2
    assert "holds no pytest-gpuperf history" in capsys.readouterr().err
    with sqlite3.connect(other) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["t"]  # not written


def test_detect_names_each_steps_commit_and_date(tmp_path, capsys):
    from test_history_detect import series_runs

    db = str(tmp_path / "h.db")
    record_runs(db, series_runs([1.0] * 6 + [2.0] * 6))
    assert main(["history", "detect", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "commits c005..c006 (2026-03-01T00:05:00+00:00 .. 2026-03-01T00:06:00+00:00)" in out


def test_list_says_which_runs_the_trends_leave_out(tmp_path, capsys):
    """A planted gate-check run and an interrupted one are listed, each saying why the trends leave it out."""
    planted = json.loads(json.dumps(jsonio.read_json(POCL / "suites-opencl.json")))
    planted["run"]["argv"] = [*planted["run"].get("argv", []), "--gpuperf-plant", "memory=0.5"]
    cut = json.loads(json.dumps(jsonio.read_json(POCL / "suites-r2-opencl.json")))
    cut["run"]["interrupted"] = True
    for name, doc in (("p.json", planted), ("c.json", cut)):
        (tmp_path / name).write_text(json.dumps(doc))
    db = str(tmp_path / "h.db")
    assert main(["history", "import", "--db", db, str(tmp_path / "p.json"), str(tmp_path / "c.json")]) == 0
    capsys.readouterr()
    assert main(["history", "list", "--db", db, "--format", "json"]) == 0
    assert sorted(r["left_out"] for r in json.loads(capsys.readouterr().out)) == ["interrupted", "planted regression"]


def test_a_device_or_metric_filter_that_matches_nothing_is_an_error_naming_what_there_is(tmp_path, capsys):
    """A mistyped ``--device`` or ``--metric`` must not read as a history without steps (exit 0 under
    ``--fail-on-step``) or an empty dashboard: exit 2, naming the device keys the history holds."""
    from test_history_detect import series_runs

    db = str(tmp_path / "h.db")
    runs = series_runs([1.0] * 6 + [2.0] * 6)
    record_runs(db, runs)
    key = runs[0].device_key
    assert main(["history", "detect", "--db", db, "--device", key[:-1], "--fail-on-step"]) == 2
    assert f"--device {key[:-1]}: the history holds no run of that device key; it holds {key}" in capsys.readouterr().err
    assert main(["history", "report", "--db", db, "--device", key + "x", "--html", str(tmp_path / "site")]) == 2
    assert not (tmp_path / "site").exists()
    assert main(["history", "detect", "--db", db, "--metric", "no.such"]) == 2
    assert "--metric no.such: no metric name in the history contains it" in capsys.readouterr().err
    assert main(["history", "detect", "--db", db, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["steps"]
    assert main(["history", "detect", "--db", db, "--json"]) == 0  # the older spelling
    assert json.loads(capsys.readouterr().out)["steps"]


@pytest.mark.parametrize("remote, url", [
    ("git@github.com:o/r.git", "https://github.com/o/r/commit/"),
    ("https://github.com/o/r", "https://github.com/o/r/commit/"),
    ("https://user:s3cret-token@github.com/o/r.git", "https://github.com/o/r/commit/"),
    ("ssh://git@gitlab.example.com/group/sub/r.git", "https://gitlab.example.com/group/sub/r/-/commit/"),
    ("/srv/git/r.git", ""),
])
def test_the_commit_url_comes_from_the_origin_remote_without_credentials(tmp_path, remote, url):
    import subprocess

    from pytest_gpuperf.history.dashboard import commit_url_from_remote

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", remote], check=True)
    assert commit_url_from_remote(tmp_path) == url
    assert commit_url_from_remote(tmp_path / "no-such-dir") == ""


def test_a_commit_url_that_is_not_http_is_refused(tmp_path, capsys):
    from test_history_detect import series_runs

    db = str(tmp_path / "h.db")
    record_runs(db, series_runs([1.0] * 4))
    assert main(["history", "report", "--db", db, "--html", str(tmp_path / "site"),
                 "--commit-url", "javascript:alert(1)//"]) == 2
    assert "--commit-url 'javascript:alert(1)//': give an http(s) URL" in capsys.readouterr().err
    assert not (tmp_path / "site").exists()
