"""``gpuperf history`` on the project's real results, and the plugin writing history in a real run."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_gpuperf.cli import main
from pytest_gpuperf.devices import discover
from pytest_gpuperf.history import read_runs
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


def test_plugin_refuses_a_bad_history_target_before_any_test(pytester):
    pytester.makepyfile("def test_x(): raise AssertionError('must not run')")
    result = pytester.runpytest(f"--gpuperf-history={pytester.path}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.errlines if "--gpuperf-history" in line]
    assert len(errors) == 1 and "is a directory" in errors[0], result.errlines
    assert "must not run" not in result.stdout.str()
