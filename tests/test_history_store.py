"""The history store as people use it: real SQLite and PostgreSQL, 4 writer processes at once,
the legacy JSONL under concurrent writers, damaged files and bad targets refused early."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pytest_gpuperf.history.backends import check, read_runs, record_run

from pytest_gpuperf.history.target import HistoryTargetError
from pytest_gpuperf.history import records, schema
from pytest_gpuperf.history.store import open_store
from pytest_gpuperf.util import jsonio
from history_support import check_complete, run_writers


def test_sqlite_four_concurrent_writers_lose_nothing_and_tear_nothing(tmp_path):
    db = str(tmp_path / "h.db")
    run_writers(db)
    runs = read_runs(db)
    check_complete(runs)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == schema.LATEST


def test_jsonl_four_concurrent_writers_lose_nothing(tmp_path):
    path = str(tmp_path / "h.jsonl")
    run_writers(path)
    check_complete(read_runs(path))
    lines = (tmp_path / "h.jsonl").read_text().splitlines()
    assert len(lines) == 400 and all(json.loads(x)["key"] == "dev-key" for x in lines)


def test_postgresql_four_concurrent_writers_lose_nothing_and_tear_nothing(postgres_url):
    run_writers(postgres_url)  # the four also race to create the schema on the empty database
    check_complete(read_runs(postgres_url))
    with open_store(postgres_url) as store:
        assert store.version() == schema.LATEST
        assert store.count() == (400, 400 * 12)


def test_postgresql_unreachable_is_one_clear_line(postgres_url):
    bad = postgres_url.replace("/history?", "/nosuchdb?")
    with pytest.raises(HistoryTargetError, match=r"cannot reach history database .*nosuchdb.*start the server or fix"):
        check(bad)


def _run(commit: str = "c1") -> records.RunRecord:
    return records.RunRecord(date="2026-01-01T00:00:00+00:00", commit=commit, device_key="k", backend="opencl",
                             metrics=[records.TrendMetric(name="a.b", test="t", value=1.0, unit="us", better="lower")])


def test_same_run_twice_is_stored_once(tmp_path):
    db = str(tmp_path / "h.db")
    assert record_run(db, _run()) is True
    assert record_run(db, _run()) is False
    assert len(read_runs(db)) == 1


def test_newer_schema_is_refused_not_written(tmp_path):
    db = tmp_path / "h.db"
    open_store(str(db)).close()
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO schema_version VALUES (?, 'future', 'now')", (schema.LATEST + 1,))
    with pytest.raises(HistoryTargetError, match="newer than this pytest-gpuperf knows"):
        record_run(str(db), _run())


@pytest.mark.parametrize("content", [b"garbage\xff\n", b'{"date": "x"}\nnot json\n', b'{"date": "x"}'])
def test_jsonl_with_garbage_or_torn_line_is_refused(tmp_path, content):
    path = tmp_path / "h.jsonl"
    path.write_bytes(content)
    with pytest.raises(HistoryTargetError, match="h.jsonl"):
        record_run(str(path), _run())
    assert path.read_bytes() == content  # untouched


def test_bad_targets_are_named_with_the_fix(tmp_path):
    with pytest.raises(HistoryTargetError, match="is a directory; name a file in it"):
        check(str(tmp_path))
    with pytest.raises(HistoryTargetError, match="unknown scheme 'ftp'"):
        check("ftp://host/h.db")
    (tmp_path / "file").write_text("x")
    with pytest.raises(HistoryTargetError, match="is not a directory; choose a path"):
        check(str(tmp_path / "file" / "h.db"))
    with pytest.raises(HistoryTargetError, match="not a (usable )?SQLite database"):
        check(str(tmp_path / "file"))


# ---- one run, however it reached the store ------------------------------------------------------------------
ROOT = Path(__file__).resolve().parents[1]
POCL_RUN = ROOT / "results/pocl-pthread-skylake-avx512-amd-epyc/suites-opencl.json"


def _target(kind: str, tmp_path, request) -> str:
    """A new, empty database of ``kind``: a SQLite file, or a database of its own on the real PostgreSQL
    server (the module's shared one holds the schema other tests migrated)."""
    if kind == "sqlite":
        return str(tmp_path / "h.db")
    import psycopg

    url = request.getfixturevalue("postgres_url")
    name = f"fresh_{abs(hash(request.node.nodeid)) % 10**9}"
    with psycopg.connect(url.replace("/history?", "/postgres?"), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return url.replace("/history?", f"/{name}?")


def _store_at_schema(version: int, target: str, monkeypatch, runs: list[records.RunRecord]) -> None:
    """A history database as the plugin wrote it at schema ``version`` (3: before run keys, 4: before kernel
    digests), holding ``runs`` as it wrote them (no run key before 4, no source_digest before 5)."""
    from pytest_gpuperf.history.store import METRIC_COLUMNS, RUN_COLUMNS, _metric_row

    assert RUN_COLUMNS[-1] == "run_key" and METRIC_COLUMNS[-1] == "source_digest"
    cols = RUN_COLUMNS if version >= schema.RUN_KEYS else RUN_COLUMNS[:-1]
    mcols = METRIC_COLUMNS[:-1]
    with monkeypatch.context() as m:
        m.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:version])
        m.setattr(schema, "LATEST", version)
        with open_store(target) as store:
            assert store.version() == version
            for run in runs:
                values = (run.uid, run.date, run.commit, json.dumps(run.argv), json.dumps(run.options),
                          run.device_key, run.backend, run.device_name, run.driver, run.runtime, run.toolkit,
                          run.clock_mhz, run.mem_clock_mhz, run.host, json.dumps(run.device), run.source,
                          len(run.metrics), run.run_key)[:len(cols)]
                store._begin()
                row = store.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES "
                                    f"({', '.join('?' for _ in cols)}) RETURNING id", values).fetchone()
                store.conn.cursor().executemany(
                    store._q(f"INSERT INTO metrics ({', '.join(mcols)}) VALUES "
                             f"({', '.join('?' for _ in mcols)})"),
                    [_metric_row(row[0], m)[:len(mcols)] for m in run.metrics])
                store._commit()


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_run_stored_twice_before_run_keys_is_stored_once_after_the_migration(kind, tmp_path, request, monkeypatch):
    """The double count as it happened: the live record (its uid hashed a session nonce) and the import of
    its results file, which has no run id. Opening the database migrates it: one copy is left, the other
    run stays, and importing the file again adds nothing."""
    target = _target(kind, tmp_path, request)
    doc = records.read_results(jsonio.read_json(jsonio.saved(POCL_RUN)), str(POCL_RUN))
    imported = records.from_results(doc, source=str(POCL_RUN))
    live = records.from_results(doc, source="pytest")
    live.options["session"] = "0123456789abcdef"
    other = records.from_results(doc, source="other")
    other.metrics[0].value = (other.metrics[0].value or 0) + 1  # another run: one value differs
    other.options["session"] = "fedcba9876543210"
    assert len({imported.uid, live.uid, other.uid}) == 3 and imported.run_key == live.run_key != other.run_key
    _store_at_schema(3, target, monkeypatch, [live, imported, other])
    with open_store(target) as store:
        assert store.version() == schema.LATEST
        assert store.count() == (2, 2 * len(live.metrics))
    assert sorted(r.source for r in read_runs(target)) == ["other", "pytest"]  # the first copy is kept
    assert record_run(target, imported) is False and len(read_runs(target)) == 2


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_database_from_before_kernel_digests_is_upgraded_and_reads_them_as_unknown(kind, tmp_path, request,
                                                                                     monkeypatch):
    """A database at schema 4 (no ``source_digest`` column) holding a run: opening it adds the column; the run
    reads as before with every digest unknown, a run recorded after it keeps its digests, and the first digest
    after the unknown ones is no kernel change."""
    from pytest_gpuperf.history.detect import detect_all

    target = _target(kind, tmp_path, request)
    doc = records.read_results(jsonio.read_json(jsonio.saved(POCL_RUN)), str(POCL_RUN))
    old = records.from_results(doc, source=str(POCL_RUN))
    _store_at_schema(4, target, monkeypatch, [old])
    [before] = read_runs(target)  # opening it migrates it
    with open_store(target) as store:
        assert store.version() == schema.LATEST
    assert [(m.name, m.value, m.source_digest) for m in before.metrics] == [(m.name, m.value, None)
                                                                            for m in old.metrics]
    new = records.from_results(doc, source="pytest")
    new.options[records.RUN_ID] = "a-later-run"
    new.date = "2099-01-01T00:00:00"
    new.commit = "later"
    for m in new.metrics:
        m.source_digest = "0123456789abcdef"
    assert record_run(target, new) is True
    runs = read_runs(target)
    assert [{m.source_digest for m in r.metrics} for r in runs] == [{None}, {"0123456789abcdef"}]
    assert detect_all(runs).kernel_changes == []


def test_a_jsonl_line_from_before_kernel_digests_reads_them_as_unknown(tmp_path):
    """A legacy JSONL history's line written before digests (its metrics lack the key) reads as before."""
    doc = records.read_results(jsonio.read_json(jsonio.saved(POCL_RUN)), str(POCL_RUN))
    run = records.from_results(doc, source=str(POCL_RUN)).to_json()
    for m in run["metrics"]:
        del m["source_digest"]
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps({"date": run["date"], "key": run["device_key"], "backend": run["backend"],
                                "commit": run["commit"], "metrics": {}, "run": run}) + "\n")
    [back] = read_runs(str(path))
    assert back.metrics and {m.source_digest for m in back.metrics} == {None}
    assert [m.value for m in back.metrics] == [m["value"] for m in run["metrics"]]


class _Unwritable:
    """A value whose text cannot be made: the JSON column of a run that holds it fails to encode."""

    def __str__(self) -> str:
        raise ValueError("no text for this value")


def test_a_batch_that_fails_keeps_the_runs_before_the_failing_one(tmp_path):
    """An import writes several runs per transaction; where one fails, the runs before it are kept and the
    ones after it are not written, as when every run had its own transaction."""
    db = str(tmp_path / "h.db")
    runs = [_run(f"c{i}") for i in range(4)]
    runs[2].options["bad"] = _Unwritable()
    with open_store(db) as store, pytest.raises(ValueError, match="no text for this value"):
        store.record_runs(runs)
    assert [r.commit for r in read_runs(db)] == ["c0", "c1"]
    with open_store(db) as store:  # a batch that holds runs stored already and a duplicate within itself
        assert store.record_runs([runs[0], runs[3], _run("c3"), _run("c4")]) == [False, True, False, True]
    assert [r.commit for r in read_runs(db)] == ["c0", "c1", "c3", "c4"]
