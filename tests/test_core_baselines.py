"""Verdict logic, baseline file validation and atomic updates."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from pytest_gpuperf import BASELINE_SCHEMA
from pytest_gpuperf.baselines import band, compare, load, noise_tolerance, update
from pytest_gpuperf.errors import BaselineFileError
from pytest_gpuperf.history import jsonl
from suite_support import kill_mid_write


def entry(value, better, **tol):
    return {"value": value, "better": better, "tolerance": tol}


@pytest.mark.parametrize("measured,better,verdict", [
    (100, "lower", "pass"), (109, "lower", "pass"), (111, "lower", "regressed"), (89, "lower", "improved"),
    (100, "higher", "pass"), (89, "higher", "regressed"), (111, "higher", "improved"),
    (99, "bound", "pass"), (110, "bound", "pass"), (110.5, "bound", "regressed"), (0, "bound", "pass"),
    (100, "exact", "pass"), (110, "exact", "pass"), (111, "exact", "regressed"), (89, "exact", "regressed"),
])
def test_verdicts_for_every_direction(measured, better, verdict):
    assert compare(measured, better, entry(100, better, rel=0.1)).verdict == verdict


def test_new_and_nan():
    assert compare(5, "lower", None).verdict == "new"
    assert compare(float("nan"), "lower", entry(1, "lower", rel=0.5)).verdict == "regressed"


def test_band_is_widest_term():
    assert band(100, {"rel": 0.01, "abs": 3, "k": 2, "spread": 1}) == 3
    assert band(100, {"rel": 0.05, "abs": 3, "k": 2, "spread": 1}) == 5
    assert band(100, {"k": 6, "spread": 1}) == 6
    assert band(100, {}) == 0
    assert noise_tolerance(100, 1.5, 6, 0.05) == {"k": 6.0, "spread": 1.5, "rel": 0.05}


def test_regression_line_is_readable():
    c = compare(200.0, "lower", entry(100.0, "lower", rel=0.05))
    line = c.line("launch.empty.device_us", 200.0, "us", "lower")
    assert "REGRESSED" in line and "expected 100 us" in line and "measured 200 us" in line and "+100.0%" in line


def write(tmp_path, data):
    p = tmp_path / "dev.json"
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return p


GOOD = {"schema": BASELINE_SCHEMA, "device": {"key": "dev"},
        "backends": {"opencl": {"provenance": {"driver": "1"}, "metrics": {"a.b": entry(1.0, "lower", rel=0.1)}}}}


@pytest.mark.parametrize("mutate,problem", [
    (lambda d: "{not json", "invalid JSON at line 1"),
    (lambda d: [], "top level must be a JSON object"),
    (lambda d: {**d, "schema": "v0"}, "'schema' must be"),
    (lambda d: {**d, "backends": []}, "'backends' must be an object"),
    (lambda d: _set(d, "value", "fast"), "value must be a finite number"),
    (lambda d: _set(d, "better", "smaller"), "better must be one of"),
    (lambda d: _set(d, "tolerance", {"pct": 5}), "unknown keys ['pct']"),
    (lambda d: _set(d, "tolerance", {"rel": -1}), "tolerance.rel must be a non-negative number"),
    (lambda d: _set(d, "tolerance", {"k": 3}), "needs both 'k' and 'spread'"),
])
def test_malformed_files_name_file_and_problem(tmp_path, mutate, problem):
    p = write(tmp_path, mutate(json.loads(json.dumps(GOOD))))
    with pytest.raises(BaselineFileError) as err:
        load(tmp_path, "dev")
    assert str(p) in str(err.value) and problem in str(err.value)


def _set(d, key, value):
    d["backends"]["opencl"]["metrics"]["a.b"][key] = value
    return d


def test_absent_file_is_empty_baseline(tmp_path):
    b = load(tmp_path, "nothing-here")
    assert b.metrics("opencl") == {} and not b.path.exists()


def test_update_keeps_unrelated_entries_and_notes(tmp_path):
    data = json.loads(json.dumps(GOOD))
    data["backends"]["opencl"]["metrics"]["a.b"]["note"] = "reviewed by X"
    data["backends"]["cuda"] = {"provenance": {"driver": "9"}, "metrics": {"c.d": entry(2.0, "higher")}}
    write(tmp_path, data)
    b = load(tmp_path, "dev")
    update(b, "opencl", {"key": "dev", "name": "Dev"}, {"driver": "2"},
           {"a.b": {"value": 1.5, "better": "lower", "tolerance": {"rel": 0.2}}, "new.one": entry(3.0, "exact")})
    again = load(tmp_path, "dev")
    assert again.metrics("opencl")["a.b"]["value"] == 1.5
    assert again.metrics("opencl")["a.b"]["note"] == "reviewed by X"
    assert again.metrics("opencl")["new.one"]["value"] == 3.0
    assert again.metrics("cuda")["c.d"]["value"] == 2.0 and again.provenance("cuda") == {"driver": "9"}
    assert again.provenance("opencl") == {"driver": "2"}


KILLER = textwrap.dedent("""
    import sys, time
    from pytest_gpuperf.util.atomic import atomic_write_chunks
    def chunks():
        yield b'{"partial": ' + b'1' * 100000
        open(sys.argv[2], 'w').close()   # tell the parent we are mid-write
        time.sleep(60)
        yield b'}'
    atomic_write_chunks(sys.argv[1], chunks())
""")


def test_kill_mid_write_leaves_old_file_intact(tmp_path):
    target = tmp_path / "baseline.json"
    target.write_text('{"old": true}\n')
    flag = tmp_path / "mid-write"
    proc = subprocess.Popen([sys.executable, "-c", KILLER, str(target), str(flag)])
    kill_mid_write(proc, flag)
    assert target.read_text() == '{"old": true}\n'
    assert any(p.name.endswith(".tmp") for p in tmp_path.iterdir()), "the torn data went to a temp file"


def test_failed_write_removes_temp_and_keeps_old(tmp_path):
    from pytest_gpuperf.util.atomic import atomic_write_chunks

    target = tmp_path / "f.json"
    target.write_text("old")

    def chunks():
        yield b"new"
        raise RuntimeError("crash mid-write")

    with pytest.raises(RuntimeError):
        atomic_write_chunks(target, chunks())
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["f.json"]


def test_history_appends_atomically(tmp_path):
    path = tmp_path / "h.jsonl"
    jsonl.append_record(path, {"run": 1})
    jsonl.append_record(path, {"run": 2})
    assert [r["run"] for r in jsonl.records(path)] == [1, 2]


def test_from_results_uses_run_to_run_noise(tmp_path, capsys):
    from pytest_gpuperf.cli import main

    def doc(value, mad):
        return {"schema": "pytest-gpuperf/1",
                "device": {"key": "dev", "name": "Dev", "backend": "opencl", "is_cpu": False},
                "environment": {"driver": "1", "runtime": "r", "toolkit": "t", "commit": "abc"},
                "run": {"finished": "now"},
                "metrics": [{"test": "t.py::f", "name": "bw", "value": value, "unit": "GB/s", "better": "higher",
                             "stats": {"median": value, "mad": mad, "min": value, "max": value, "n": 10},
                             "info": {}, "tolerance": None},
                            {"test": "t.py::g", "name": "ulp", "value": 1.0, "unit": "ulp", "better": "bound",
                             "stats": None, "info": {"bound": 2.0, "citation": "spec"}, "tolerance": {}}]}

    paths = []
    for i, v in enumerate([100.0, 110.0, 90.0]):
        p = tmp_path / f"r{i}.json"
        p.write_text(json.dumps(doc(v, 0.1)))
        paths.append(str(p))
    assert main(["baseline", "from-results", "--dir", str(tmp_path / "bl"), *paths]) == 0
    assert "note:" not in capsys.readouterr().out  # three runs: nothing left unjudged for want of runs
    b = load(tmp_path / "bl", "dev")
    bw = b.metrics("opencl")["bw"]
    assert bw["value"] == 100.0 and bw["runs"] == 3
    # between-run noise dominates; three runs: their sample standard deviation (timing.stats.between_run_sigma)
    assert bw["tolerance"]["spread"] == pytest.approx(10.0)
    ulp = b.metrics("opencl")["ulp"]
    assert ulp["value"] == 2.0 and ulp["measured"] == 1.0 and ulp["citation"] == "spec"
    assert main(["baseline", "check", str(tmp_path / "bl")]) == 0


def test_from_results_widens_a_test_tolerance_the_runs_already_exceed(tmp_path, capsys):
    """A model error with its own abs tolerance of 0.02 that two runs put 0.026 apart must not make a
    flaky gate: the rebuilt entry keeps the test's terms and adds k × the between-run σ."""
    from pytest_gpuperf.cli import main
    from pytest_gpuperf.baselines.verdicts import compare

    def doc(err):
        return {"schema": "pytest-gpuperf/1",
                "device": {"key": "dev", "name": "Dev", "backend": "cuda", "is_cpu": False},
                "environment": {"driver": "1", "commit": "abc"}, "run": {"finished": "now"},
                "metrics": [{"test": "t.py::m", "name": "model.err", "value": err, "unit": "ratio", "better": "lower",
                             "stats": None, "info": {}, "tolerance": {"abs": 0.02, "rel": 0.5}},
                            {"test": "t.py::s", "name": "size", "value": 4096.0, "unit": "B", "better": "exact",
                             "stats": None, "info": {}, "tolerance": {"abs": 0.0}}]}

    paths = []
    for i, err in enumerate([0.0014, 0.0267]):
        p = tmp_path / f"r{i}.json"
        p.write_text(json.dumps(doc(err)))
        paths.append(str(p))
    assert main(["baseline", "from-results", "--dir", str(tmp_path / "bl"), *paths]) == 0
    # two runs: said at once that the model error (no samples of its own) is not judged until there are three
    said = capsys.readouterr().out
    assert "note: 1 of them (tuner picks and costs, model errors" in said and "add 1 more results files" in said
    entries = load(tmp_path / "bl", "dev").metrics("cuda")
    tol = entries["model.err"]["tolerance"]
    assert tol["abs"] == 0.02 and tol["rel"] == 0.5 and tol["k"] == 6.0
    assert tol["spread"] == pytest.approx((0.0267 - 0.0014) / 2 ** 0.5)  # two runs: their sample σ
    assert compare(0.0267, "lower", entries["model.err"]).verdict == "pass"      # both observed runs pass
    assert compare(0.30, "lower", entries["model.err"]).verdict == "regressed"   # a real model regression fails
    assert entries["size"]["tolerance"] == {"abs": 0.0}                 # identical runs: nothing widened
