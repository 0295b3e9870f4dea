"""Bad options and paths (issue 12): each is one usage line before any test runs, and an end-of-run
write that fails costs neither the other writes nor the summary.

A marker test writes a file when it runs, so "before any test runs" is checked, not assumed.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pytest_gpuperf.devices import discover
from suite_support import baseline_folder

ROOT = Path(__file__).resolve().parents[1]
HAS_CL = any(d.backend == "opencl" for d in discover().devices)

MARKER = """
import os
def test_marker():
    open(os.environ["GPUPERF_MARKER"], "w").close()
"""


def _usage_error(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    """Run pytest with ``args``; assert a usage error in exactly one stderr line and that no test ran."""
    marker = pytester.path / "ran"
    monkeypatch.setenv("GPUPERF_MARKER", str(marker))
    pytester.makepyfile(test_marker=MARKER)
    result = pytester.runpytest(*args)
    lines = [line for line in result.stderr.lines if line.strip()]
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    assert len(lines) == 1 and lines[0].startswith("ERROR: "), lines
    assert "Traceback" not in result.stdout.str()
    assert not marker.exists(), "a test ran before the usage error"
    return lines[0]


@pytest.mark.parametrize("args,message", [
    (["--gpuperf-timeout=0"], "--gpuperf-timeout=0.0: must be a positive number of seconds"),
    (["--gpuperf-timeout=-1"], "--gpuperf-timeout=-1.0: must be a positive"),
    (["--gpuperf-timeout=nan"], "--gpuperf-timeout=nan: must be a finite number"),
    (["--gpuperf-budget=-5"], "--gpuperf-budget=-5.0: must be a positive"),
    (["--gpuperf-tolerance-k=nan"], "--gpuperf-tolerance-k=nan: must be a finite number"),
    (["--gpuperf-tolerance-k=-2"], "--gpuperf-tolerance-k=-2.0: must be a non-negative"),
    (["--gpuperf-floor", "-1", "-1"], "--gpuperf-floor=-1.0: must be a non-negative fraction"),
    (["--gpuperf-floor", "0.1", "0.2", "0.3"], "--gpuperf-floor takes exactly two numbers (GPU CPU); '0.3'"),
    (["--gpuperf-accuracy-scale=0"], "--gpuperf-accuracy-scale=0.0: must be a positive"),
    (["--gpuperf-tuning-budget=-1"], "--gpuperf-tuning-budget=-1.0: must be a non-negative"),
    (["--gpuperf-json=/proc/x.json"], "--gpuperf-json=/proc/x.json: cannot create files in /proc"),
    (["--gpuperf-json=r/{run}.json"], "unknown placeholder {run}; use {key}, {backend}, {index}, {device}, {commit}, {date}, {n}"),
    (["--gpuperf-json=r/{key.json"], "expected '}' before end of string"),
    (["--gpuperf-history=/proc/h.db"], "--gpuperf-history: history target /proc/h.db"),
])
def test_bad_option_is_one_usage_line_before_any_test(pytester, monkeypatch, args, message):
    line = _usage_error(pytester, monkeypatch, *args)
    assert message in line, line


def test_results_or_history_path_that_is_a_directory(pytester, monkeypatch):
    folder = pytester.mkdir("out")
    assert "is a directory; name a file in it" in _usage_error(pytester, monkeypatch, f"--gpuperf-json={folder}")
    assert "is a directory; name a file in it" in _usage_error(pytester, monkeypatch, f"--gpuperf-history={folder}")


def test_damaged_history_file_is_refused_before_the_run(pytester, monkeypatch):
    history = pytester.path / "h.jsonl"
    history.write_bytes(b'{"date": "x"}\ngarbage\xff\n')
    line = _usage_error(pytester, monkeypatch, f"--gpuperf-history={history}")
    assert "line 2 is not a JSON record" in line
    assert history.read_bytes() == b'{"date": "x"}\ngarbage\xff\n'


def test_baseline_dir_that_cannot_be_written_is_refused_when_updating(pytester, monkeypatch):
    (pytester.path / "bl").write_text("a file, not a directory")
    line = _usage_error(pytester, monkeypatch, "--gpuperf-update-baselines",
                        f"--gpuperf-baseline-dir={pytester.path / 'bl'}")
    assert "--gpuperf-baseline-dir" in line and "not a directory" in line


def test_valid_options_run(pytester, monkeypatch):
    monkeypatch.setenv("GPUPERF_MARKER", str(pytester.path / "ran"))
    pytester.makepyfile(test_marker=MARKER)
    result = pytester.runpytest("--gpuperf-timeout=0.5", "--gpuperf-budget=1", "--gpuperf-tolerance-k=0",
                                "--gpuperf-floor", "0", "0.2", f"--gpuperf-json={pytester.path}/r/{{key}}.json")
    result.assert_outcomes(passed=1)


RECORD = """
import shutil
from pathlib import Path

def test_record(gpu_device, gpuperf_record):
    gpuperf_record("demo.count", 3, "items", better="exact")
    shutil.rmtree("r")
    Path("r").write_text("the results folder replaced by a file mid-run")
"""


@pytest.mark.skipif(not HAS_CL, reason="no OpenCL device (install pocl-opencl-icd)")
def test_a_failed_results_write_keeps_the_history_line_and_the_summary(pytester, monkeypatch):
    """The results folder turns into a file during the run: the results write fails at the end, and
    still the history run is recorded and the summary says what failed, in one line."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the subprocess must import this checkout's plugin
    pytester.makepyfile(test_record=RECORD)
    pytester.mkdir("r")
    db = pytester.path / "h.db"
    result = pytester.runpytest_subprocess("--gpuperf-device=opencl:0", f"--gpuperf-baseline-dir={baseline_folder(pytester.path, 'bl')}",
                                           "--gpuperf-json=r/{key}.json", f"--gpuperf-history={db}")
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    assert "Traceback" not in out and "1 passed" in out
    result.stdout.fnmatch_lines(["gpuperf error: results not written: r/*.json: *"])
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM metrics WHERE name = 'demo.count'").fetchone()[0] == 1


@pytest.mark.skipif(not HAS_CL, reason="no OpenCL device (install pocl-opencl-icd)")
def test_results_are_written_when_tests_fail(pytester):
    pytester.makepyfile(test_two="""
        def test_ok(gpu_device, gpuperf_record):
            gpuperf_record("demo.ok", 1, "items", better="exact")
        def test_broken(gpu_device):
            raise AssertionError("a failing test")
    """)
    out = pytester.path / "r.json"
    result = pytester.runpytest("--gpuperf-device=opencl:0", f"--gpuperf-baseline-dir={baseline_folder(pytester.path, 'bl')}",
                                f"--gpuperf-json={out}")
    result.assert_outcomes(passed=1, failed=1)
    assert [m["name"] for m in json.loads(Path(out).read_text())["metrics"]] == ["demo.ok"]
