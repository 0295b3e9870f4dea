"""The history schema and its versioned migrations, shared by SQLite and PostgreSQL.

Each migration is a list of statements; ``{pk}``, ``{float}`` and ``{json}`` are filled per dialect.
A database records the versions applied in ``schema_version``; opening it applies the missing ones in
one transaction (serialised across processes: SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's advisory
lock), and a database newer than this code is refused rather than written with a schema it lacks.
Add a migration by appending to :data:`MIGRATIONS`; never edit one that has shipped.
"""

from __future__ import annotations

DIALECTS = {
    "sqlite": {"pk": "INTEGER PRIMARY KEY AUTOINCREMENT", "float": "REAL", "json": "TEXT", "bigint": "INTEGER"},
    "postgresql": {"pk": "BIGSERIAL PRIMARY KEY", "float": "DOUBLE PRECISION", "json": "TEXT", "bigint": "BIGINT"},
}

MIGRATIONS: list[tuple[int, str, list[str]]] = [
    (1, "runs and metrics", [
        """CREATE TABLE runs (
            id {pk},
            uid TEXT NOT NULL UNIQUE,
            date TEXT NOT NULL,
            commit_sha TEXT NOT NULL DEFAULT '',
            argv {json} NOT NULL DEFAULT '[]',
            options {json} NOT NULL DEFAULT '{{}}',
            device_key TEXT NOT NULL,
            backend TEXT NOT NULL DEFAULT '',
            device_name TEXT NOT NULL DEFAULT '',
            driver TEXT NOT NULL DEFAULT '',
            runtime TEXT NOT NULL DEFAULT '',
            toolkit TEXT NOT NULL DEFAULT '',
            clock_mhz {float},
            mem_clock_mhz {float},
            host TEXT NOT NULL DEFAULT '',
            device {json} NOT NULL DEFAULT '{{}}',
            source TEXT NOT NULL DEFAULT '',
            n_metrics INTEGER NOT NULL
        )""",
        """CREATE TABLE metrics (
            id {pk},
            run_id {bigint} NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            test TEXT NOT NULL DEFAULT '',
            value {float},
            unit TEXT NOT NULL DEFAULT '',
            better TEXT NOT NULL DEFAULT 'lower',
            median {float}, mad {float}, min {float}, max {float}, n INTEGER,
            samples {json},
            verdict TEXT NOT NULL DEFAULT 'new',
            baseline_value {float},
            band {float},
            identity {json} NOT NULL DEFAULT '{{}}',
            UNIQUE (run_id, name)
        )""",
        "CREATE INDEX runs_device_date ON runs (device_key, backend, date)",
        "CREATE INDEX metrics_name ON metrics (name)",
    ]),
    (2, "what decides a metric's gate: the test's own tolerance and the gating keys of its info", [
        "ALTER TABLE metrics ADD COLUMN tolerance {json}",
        "ALTER TABLE metrics ADD COLUMN info {json}",
    ]),
    (3, "each test's duration: the suite's own cost", [
        """CREATE TABLE tests (
            id {pk},
            run_id {bigint} NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            test TEXT NOT NULL,
            duration_s {float} NOT NULL,
            outcome TEXT NOT NULL DEFAULT '',
            UNIQUE (run_id, test)
        )""",
    ]),
    (4, "each run's stable identity (run id, else a digest of device, commit, start and values): a run recorded "
        "live and its results file imported later are one run; later copies of a run already stored are removed", [
        "ALTER TABLE runs ADD COLUMN run_key TEXT",
        # filled for the rows already there (store.Store.fill_run_keys) before the index is built
    ]),
    (5, "the digest of the kernels each metric's test compiled: a change of kernel splits its series; NULL (rows "
        "written before, figures of the host alone) is unknown, never a change", [
        "ALTER TABLE metrics ADD COLUMN source_digest TEXT",
    ]),
]

#: the migration after whose statements the store computes every row's run key and indexes it
RUN_KEYS = 4

LATEST = MIGRATIONS[-1][0]


def statements(dialect: str, migration: list[str]) -> list[str]:
    return [s.format(**DIALECTS[dialect]) for s in migration]
