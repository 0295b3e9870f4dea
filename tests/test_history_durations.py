"""The history store keeps each test's duration (results ``tests``), so the suite's own cost has a trend:
``gpuperf history import`` carries them from a results file into SQLite and PostgreSQL (migration 3) and
they read back with their run; the legacy JSONL keeps them too; a run that recorded none has none; the
run's suite profile is kept in its options."""

from __future__ import annotations

import json
import sqlite3


from pytest_gpuperf.cli import main
from pytest_gpuperf.history.backends import read_runs, record_run
from pytest_gpuperf.history.records import from_results, read_results
from pytest_gpuperf.history.store import open_store

TESTS = [{"test": "suites/test_memory.py::test_copy_bandwidth[1GiB]", "duration_s": 5.19, "outcome": "passed"},
         {"test": "suites/test_memory.py::test_launch_overhead", "duration_s": 0.25, "outcome": "failed"}]


def _doc(tests=TESTS, profile="quick"):
    return {"schema": "pytest-gpuperf/1",
            "device": {"backend": "opencl", "index": 0, "name": "PoCL", "vendor": "pocl", "key": "pocl-test"},
            "environment": {"commit": "abc1234", "driver": "3.1"},
            "run": {"started": "2026-01-01T00:00:00+00:00", "finished": "2026-01-01T00:01:00+00:00",
                    "argv": ["--gpuperf-device=0"], "profile": profile},
            "metrics": [{"test": "suites/test_memory.py::test_launch_overhead", "name": "launch.empty.device_us",
                         "value": 5.0, "unit": "us", "better": "lower", "verdict": "new"}],
            **({"tests": tests} if tests is not None else {})}


def test_import_carries_the_durations_into_sqlite_and_they_read_back(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_doc()))
    db = tmp_path / "h.db"
    assert main(["history", "import", str(path), "--db", str(db)]) == 0
    (run,) = read_runs(str(db))
    assert run.tests == TESTS and run.options["profile"] == "quick"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM tests").fetchone()[0] == 2


def test_a_run_without_durations_has_none_and_malformed_entries_are_left_out(tmp_path):
    assert from_results(read_results(_doc(tests=None))).tests == []
    bad = [{"test": "t.py::a", "duration_s": "nan", "outcome": "passed"}, {"duration_s": 1.0}, "x", TESTS[0]]
    assert from_results(read_results(_doc(tests=bad))).tests == [TESTS[0]]


def test_the_legacy_jsonl_keeps_the_durations(tmp_path):
    target = str(tmp_path / "h.jsonl")
    record_run(target, from_results(read_results(_doc())))
    (run,) = read_runs(target)
    assert run.tests == TESTS


def test_postgresql_keeps_the_durations(postgres_url):
    run = from_results(read_results(_doc()))
    assert record_run(postgres_url, run)
    (back,) = [r for r in read_runs(postgres_url) if r.device_key == "pocl-test"]
    assert back.tests == TESTS


def test_a_database_of_an_older_schema_gets_the_durations_table(tmp_path):
    """Migration 3 on a database written before it: the old runs read back without durations, new ones with."""
    from pytest_gpuperf.history import schema

    db = tmp_path / "old.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, description TEXT NOT NULL, "
                     "applied TEXT NOT NULL)")
        for version, description, stmts in schema.MIGRATIONS[:2]:
            for stmt in schema.statements("sqlite", stmts):
                conn.execute(stmt)
            conn.execute("INSERT INTO schema_version VALUES (?, ?, 'then')", (version, description))
    with open_store(str(db)) as store:
        assert store.version() == schema.LATEST >= 3
    record_run(str(db), from_results(read_results(_doc())))
    assert read_runs(str(db))[0].tests == TESTS
