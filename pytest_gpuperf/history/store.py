"""The history database: SQLite (stdlib) or PostgreSQL (psycopg 3), one schema, each run whole or absent.

Concurrency: several pytest sessions (CI shards, two GPUs of one host) may finish at once. SQLite runs
in WAL mode with a busy timeout and takes the write lock up front (``BEGIN IMMEDIATE``), so a writer
waits instead of failing; PostgreSQL's transactions do the same. A run and its metrics are committed
together or not at all (an import commits a few runs at a time: :meth:`Store.record_runs`), so a reader
never sees a torn run.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from . import schema
from .records import TrendMetric, RunRecord, finite, run_key
from ..util.redaction import redact
from .target import HistoryTargetError, Target, disk_full, full_error, parse

RUN_COLUMNS = ("uid", "date", "commit_sha", "argv", "options", "device_key", "backend", "device_name", "driver",
               "runtime", "toolkit", "clock_mhz", "mem_clock_mhz", "host", "device", "source", "n_metrics",
               "run_key")
METRIC_COLUMNS = ("run_id", "name", "test", "value", "unit", "better", "median", "mad", "min", "max", "n",
                  "samples", "verdict", "baseline_value", "band", "identity", "tolerance", "info", "source_digest")
_ADVISORY_LOCK = 0x67707066  # "gpf": serialises schema migrations across PostgreSQL clients
BUSY_TIMEOUT_S = 120.0
#: the most metric rows one transaction of :meth:`Store.record_runs` writes (a run larger than this is written
#: alone): a fraction of a second of the write lock, that other writers wait out
BATCH_ROWS = 20_000


class Store:
    """An open history database. Use :func:`open_store`; close it (or use ``with``)."""

    def __init__(self, conn: Any, dialect: str, where: str) -> None:
        self.conn = conn
        self.dialect = dialect
        self.where = where
        self.ph = "?" if dialect == "sqlite" else "%s"

    # ---- plumbing ------------------------------------------------------------------------------
    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    def _begin(self) -> None:
        if self.dialect == "sqlite":
            self.conn.execute("BEGIN IMMEDIATE")  # take the write lock now: no deadlock on upgrade later

    def _commit(self) -> None:
        self.conn.commit() if self.dialect == "postgresql" else self.conn.execute("COMMIT")

    def _rollback(self) -> None:
        try:
            self.conn.rollback() if self.dialect == "postgresql" else self.conn.execute("ROLLBACK")
        except Exception:  # noqa: BLE001 - the original error is what matters
            pass

    def _q(self, sql: str) -> str:
        return sql.replace("?", self.ph)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        cur = self.conn.cursor()
        cur.execute(self._q(sql), tuple(params))
        return cur

    # ---- schema ----------------------------------------------------------------------------------
    def version(self) -> int:
        try:
            row = self.execute("SELECT MAX(version) FROM schema_version").fetchone()
        except Exception:  # noqa: BLE001 - no table yet
            self._rollback()
            return 0
        return int(row[0] or 0)

    def migrate(self) -> None:
        """Apply the migrations this database lacks, in one transaction, serialised across processes."""
        self._begin()
        try:
            if self.dialect == "postgresql":
                self.execute("SELECT pg_advisory_xact_lock(?)", (_ADVISORY_LOCK,))
            self.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
                         "description TEXT NOT NULL, applied TEXT NOT NULL)")
            row = self.execute("SELECT MAX(version) FROM schema_version").fetchone()
            current = int(row[0] or 0)
            if current > schema.LATEST:
                raise HistoryTargetError(
                    f"history database {self.where} has schema version {current}, newer than this "
                    f"pytest-gpuperf knows ({schema.LATEST}); upgrade pytest-gpuperf to write to it")
            for version, description, stmts in schema.MIGRATIONS:
                if version > current:
                    for stmt in schema.statements(self.dialect, stmts):
                        self.execute(stmt)
                    if version == schema.RUN_KEYS:
                        self.fill_run_keys()
                    self.execute("INSERT INTO schema_version (version, description, applied) VALUES (?, ?, ?)",
                                 (version, description, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
            self._commit()
        except BaseException:
            self._rollback()
            raise

    def fill_run_keys(self) -> int:
        """Give every stored run its run key (:func:`.records.run_key`), inside the migration's transaction,
        then index the keys as unique. A run stored twice before keys existed — recorded live and its
        results file imported — keeps its first row; the later copies are deleted (with their metrics), so
        no trend counts it twice. Returns how many copies were removed."""
        rows = self.execute("SELECT id, date, commit_sha, options, device_key, backend, host, device FROM runs "
                            "ORDER BY date, id").fetchall()
        values: dict[Any, list[tuple[str, float | None]]] = {}
        for run_id, name, value in self.execute("SELECT run_id, name, value FROM metrics").fetchall():
            values.setdefault(run_id, []).append((name, value))
        seen: set[str] = set()
        copies = []
        for rid, date, commit, options, key, backend, host, device in rows:
            k = run_key(key, backend, _loads(device), _loads(options), host, commit, date, values.get(rid, []))
            if k in seen:
                copies.append(rid)
                continue
            seen.add(k)
            self.execute("UPDATE runs SET run_key = ? WHERE id = ?", (k, rid))
        for rid in copies:
            self.execute("DELETE FROM metrics WHERE run_id = ?", (rid,))
            self.execute("DELETE FROM tests WHERE run_id = ?", (rid,))
            self.execute("DELETE FROM runs WHERE id = ?", (rid,))
        self.execute("CREATE UNIQUE INDEX runs_run_key ON runs (run_key)")
        return len(copies)

    # ---- writing ---------------------------------------------------------------------------------
    def record_run(self, run: RunRecord) -> bool:
        """Write one run and all its metrics in one transaction; False if this run is stored already: the
        same uid, or the same run key (the run recorded live and its results file imported)."""
        return self._write([run])[0]

    def record_runs(self, runs: Sequence[RunRecord]) -> list[bool]:
        """:meth:`record_run` of each run, in order; per run, whether it was new. Consecutive runs share a
        transaction of up to :data:`BATCH_ROWS` metric rows — an import of hundreds of runs commits a few
        times, not once per run — and each run is still whole or absent. A batch that fails is rolled
        back and written again one run per transaction, so the runs before the failing one are kept and
        the error raised is the one :meth:`record_run` raises (a full disk, a locked database)."""
        out: list[bool] = []
        start = 0
        while start < len(runs):
            end, rows = start + 1, len(runs[start].metrics)
            while end < len(runs) and rows + len(runs[end].metrics) <= BATCH_ROWS:
                rows += len(runs[end].metrics)
                end += 1
            batch = runs[start:end]
            try:
                out += self._write(batch)
            except Exception:  # noqa: BLE001 - replayed run by run, which raises it again where it belongs
                if len(batch) == 1:
                    raise
                out += [self.record_run(run) for run in batch]
            start = end
        return out

    def _write(self, runs: Sequence[RunRecord]) -> list[bool]:
        """Write ``runs`` in one transaction (all or none); per run, whether it was new."""
        cols = ", ".join(RUN_COLUMNS)
        marks = ", ".join("?" for _ in RUN_COLUMNS)
        mcols = ", ".join(METRIC_COLUMNS)
        mmarks = ", ".join("?" for _ in METRIC_COLUMNS)
        fresh: list[bool] = []
        self._begin()
        try:
            cur = self.conn.cursor()
            for run in runs:
                values = (run.uid, run.date, run.commit, _PLAIN.encode(run.argv), _json(_PLAIN_STR, run.options),
                          run.device_key, run.backend, run.device_name, run.driver, run.runtime, run.toolkit,
                          run.clock_mhz, run.mem_clock_mhz, run.host, _json(_PLAIN_STR, run.device), run.source,
                          len(run.metrics), run.run_key)
                row = self.execute(f"INSERT INTO runs ({cols}) VALUES ({marks}) ON CONFLICT DO NOTHING "
                                   f"RETURNING id", values).fetchone()
                fresh.append(row is not None)
                if row is None:
                    continue
                run_id = row[0]
                cur.executemany(self._q(f"INSERT INTO metrics ({mcols}) VALUES ({mmarks})"),
                                [_metric_row(run_id, m) for m in _unique(run.metrics)])
                tests = {t["test"]: t for t in run.tests}  # one row per test id (a malformed file's last one)
                if tests:
                    cur.executemany(self._q("INSERT INTO tests (run_id, test, duration_s, outcome) VALUES (?, ?, ?, ?)"),
                                    [(run_id, t["test"], t["duration_s"], t["outcome"]) for t in tests.values()])
            self._commit()
            return fresh
        except BaseException as exc:
            self._rollback()
            if self.known(exc):
                raise self.problem(exc) from None
            raise

    def known(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the database's own error (said in one line by :meth:`problem`)."""
        if isinstance(exc, (sqlite3.Error, OSError)):
            return True
        return type(exc).__module__.split(".")[0] == "psycopg"

    def problem(self, exc: BaseException) -> HistoryTargetError:
        """One line for a database error: a full disk as a full disk, never as a damaged database."""
        if disk_full(exc, self.where if self.dialect == "sqlite" else None):
            return full_error(self.where, exc)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return HistoryTargetError(f"history database {self.where}: {redact(first)}")

    # ---- reading ---------------------------------------------------------------------------------
    def runs(self, device_key: str | None = None, skipped: list[str] | None = None) -> list[RunRecord]:
        """Every run (oldest first) with its metrics; optionally of one device key only. A row whose JSON
        columns do not parse (edited by hand, written by a broken tool) is left out, and ``skipped`` gets
        one line naming it: one bad row must not stop every ``history list`` and ``report``."""
        bad = skipped if skipped is not None else []
        where, params = ("WHERE device_key = ?", (device_key,)) if device_key else ("", ())
        if self.dialect == "sqlite":
            self.conn.execute("BEGIN")  # one snapshot for runs and metrics
        rows = self.execute(f"SELECT id, {', '.join(RUN_COLUMNS)} FROM runs {where} ORDER BY date, id",
                            params).fetchall()
        by_id: dict[Any, RunRecord] = {}
        for row in rows:
            d = dict(zip(("id", *RUN_COLUMNS), row))
            try:
                parsed = {k: json.loads(d[k]) for k in ("argv", "options", "device")}
                if not isinstance(parsed["options"], dict) or not isinstance(parsed["device"], dict):
                    raise ValueError("options and device must be JSON objects")
            except (TypeError, ValueError) as exc:
                bad.append(f"history run row {d['id']} ({d['date']}, {d['device_key']}, {d['source']}): bad JSON "
                           f"in its columns ({type(exc).__name__}: {str(exc)[:80]}); left out")
                continue
            by_id[d["id"]] = RunRecord(
                date=d["date"], commit=d["commit_sha"], device_key=d["device_key"], backend=d["backend"],
                device_name=d["device_name"], driver=d["driver"], runtime=d["runtime"], toolkit=d["toolkit"],
                clock_mhz=d["clock_mhz"], mem_clock_mhz=d["mem_clock_mhz"], host=d["host"],
                argv=parsed["argv"], options=parsed["options"], device=parsed["device"],
                source=d["source"], metrics=[])
            by_id[d["id"]].options["_n_metrics"] = d["n_metrics"]
        mcols = METRIC_COLUMNS[1:]
        sql = f"SELECT run_id, {', '.join(mcols)} FROM metrics"
        if device_key:
            sql += " WHERE run_id IN (SELECT id FROM runs WHERE device_key = ?)"
        for row in self.execute(sql + " ORDER BY run_id, id", params).fetchall():
            run = by_id.get(row[0])
            if run is None:
                continue  # committed after the runs query: not part of this snapshot
            d = dict(zip(mcols, row[1:]))
            try:
                d["samples"] = json.loads(d["samples"]) if d["samples"] else None
                d["identity"] = json.loads(d["identity"]) if d["identity"] else {}
                d["tolerance"] = json.loads(d["tolerance"]) if d["tolerance"] else None
                d["info"] = json.loads(d["info"]) if d["info"] else {}
            except (TypeError, ValueError) as exc:
                bad.append(f"history metric row {d.get('name')!r} of run {row[0]} ({run.date}, {run.device_key}): "
                           f"bad JSON ({type(exc).__name__}: {str(exc)[:80]}); left out")
                continue
            run.metrics.append(TrendMetric(**d))
        sql = "SELECT run_id, test, duration_s, outcome FROM tests"
        if device_key:
            sql += " WHERE run_id IN (SELECT id FROM runs WHERE device_key = ?)"
        for run_id, test, duration_s, outcome in self.execute(sql + " ORDER BY run_id, id", params).fetchall():
            if run_id in by_id:
                by_id[run_id].tests.append({"test": test, "duration_s": duration_s, "outcome": outcome})
        if self.dialect == "sqlite":
            self.conn.execute("COMMIT")
        else:
            self.conn.rollback()
        return list(by_id.values())

    def count(self) -> tuple[int, int]:
        """(runs, metric rows)."""
        runs = self.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        metrics = self.execute("SELECT COUNT(*) FROM metrics").fetchone()[0]
        if self.dialect == "postgresql":
            self.conn.rollback()
        return int(runs), int(metrics)


def _loads(text: Any) -> Any:
    """A JSON column's value, or {} where it does not parse (a row edited by hand keeps its digest key)."""
    try:
        return json.loads(text) if isinstance(text, str) else {}
    except ValueError:
        return {}


def _unique(metrics: Iterable[TrendMetric]) -> Iterator[TrendMetric]:
    """Names are unique per run (the plugin enforces it); keep the last of a malformed import's duplicates."""
    return iter({m.name: m for m in metrics}.values())


#: the encoders of the JSON columns (made once: ``json.dumps`` makes one per call), strict as :func:`.records.dumps`
_PLAIN = json.JSONEncoder(allow_nan=False)
_PLAIN_STR = json.JSONEncoder(allow_nan=False, default=str)
_SORTED_STR = json.JSONEncoder(allow_nan=False, sort_keys=True, default=str)


def _json(encoder: json.JSONEncoder, obj: Any) -> str:
    """``encoder``'s text of ``finite(obj)`` (:func:`.records.finite`): ``obj`` is encoded as it is, and walked
    for NaN and infinities only where the strict encoder meets one — the same text, without a Python pass
    over every value of the many that hold none."""
    if type(obj) is dict and not obj:
        return "{}"
    try:
        return encoder.encode(obj)
    except ValueError:
        return encoder.encode(finite(obj))


def _metric_row(run_id: Any, m: TrendMetric) -> tuple[Any, ...]:
    return (run_id, m.name, m.test, m.value, m.unit, m.better, m.median, m.mad, m.min, m.max, m.n,
            None if m.samples is None else _json(_PLAIN, m.samples), m.verdict, m.baseline_value, m.band,
            _json(_SORTED_STR, m.identity), None if m.tolerance is None else _json(_PLAIN, m.tolerance),
            _json(_PLAIN_STR, m.info), m.source_digest)


def _missing(where: str) -> HistoryTargetError:
    return HistoryTargetError(f"history database {where} does not exist; check the path (--db, $GPUPERF_HISTORY) — "
                              f"reading never creates a database. Record runs into it first: gpuperf run "
                              f"--gpuperf-history={where} …, or gpuperf history import results/ --db {where}")


def _wal(conn: sqlite3.Connection) -> None:
    """Put the database in WAL mode (readers never block the writer, nor it them). Switching needs the file to
    itself, and SQLite answers "database is locked" at once, without its busy handler, while another process
    is creating or writing the same new file: retried until the busy timeout, as any locked write is."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _open_sqlite(path: str, create: bool = True) -> Store:
    file = Path(path)
    if not create and not file.is_file():
        raise (HistoryTargetError(f"history database {path} is a directory; name the .db file in it")
               if file.is_dir() else _missing(path))
    if file.is_file() and file.stat().st_size:
        with open(file, "rb") as fh:
            head = fh.read(16)
        if head != b"SQLite format 3\x00":  # sqlite3 would take a short foreign file as empty and write over it
            raise HistoryTargetError(f"history target {path} exists and is not a SQLite database; move it away "
                                     f"or choose another path (a .jsonl name selects the legacy format)")
    try:
        if create:
            file.parent.mkdir(parents=True, exist_ok=True)
        # a reader opens in mode=rw: SQLite itself then refuses to create a file that vanished meanwhile
        conn = (sqlite3.connect(str(file), timeout=BUSY_TIMEOUT_S, isolation_level=None) if create else
                sqlite3.connect(file.resolve().as_uri() + "?mode=rw", uri=True, timeout=BUSY_TIMEOUT_S,
                                isolation_level=None))
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        if create:
            _wal(conn)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")  # durable at checkpoints; WAL keeps commits atomic
    except (sqlite3.DatabaseError, OSError) as exc:
        raise _sqlite_problem(path, exc) from None
    return Store(conn, "sqlite", path)


def _sqlite_problem(path: str, exc: BaseException) -> HistoryTargetError:
    """What went wrong opening a SQLite history, in one line: a full disk, a locked or unwritable file,
    or (only when SQLite says so) a file that is not a database."""
    if disk_full(exc, path):
        return full_error(path, exc)
    if isinstance(exc, OSError):
        return HistoryTargetError(f"history target {path} cannot be created ({exc.strerror or exc}); choose a "
                                  f"writable path")
    text = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and not any(w in text for w in ("not a database", "malformed")):
        return HistoryTargetError(f"history target {path}: {text}; check that the file and its folder can be "
                                  f"written and that no other program holds it")
    return HistoryTargetError(f"history target {path} is not a usable SQLite database ({text}); move it away or "
                              f"choose another path")


def _open_postgresql(url: str) -> Store:
    try:
        import psycopg
    except ImportError:
        raise HistoryTargetError(f"history target {redact(url)} needs psycopg 3; pip install "
                                 f"'psycopg[binary]' (or pytest-gpuperf[history])") from None
    try:
        conn = psycopg.connect(url, connect_timeout=10, autocommit=False)
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise HistoryTargetError(f"cannot reach history database {redact(url)}: {redact(first)}; start the server "
                                 f"or fix the URL") from None
    return Store(conn, "postgresql", redact(url))


def open_store(target: Target | str, create: bool = True) -> Store:
    """Open the database a target names, creating it and its schema (``create``: writers) or refusing one
    that does not exist or holds no history (readers: a mistyped path must not read as an empty history).
    Either way a database with an older schema is migrated, and a newer one refused."""
    target = parse(target) if isinstance(target, str) else target
    if target.kind == "jsonl":
        raise HistoryTargetError(f"{target} is a legacy JSONL history, not a database; import it with "
                                 f"'gpuperf history import {target} --db history.db'")
    store = (_open_postgresql(target.location) if target.kind == "postgresql"
             else _open_sqlite(target.location, create))
    try:
        version = store.version() if not create else None
        if version == 0:
            raise HistoryTargetError(f"history database {store.where} holds no pytest-gpuperf history (no "
                                     f"schema_version table); check the path (--db, $GPUPERF_HISTORY), or record "
                                     f"runs into it first")
        if version != schema.LATEST:  # a reader of a current schema takes no write lock
            store.migrate()
    except sqlite3.DatabaseError as exc:
        store.close()
        raise _sqlite_problem(str(target), exc) from None
    except BaseException as exc:
        store.close()
        if store.known(exc) and not isinstance(exc, HistoryTargetError):
            raise store.problem(exc) from None
        raise
    return store
