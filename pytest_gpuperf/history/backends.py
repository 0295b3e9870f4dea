"""Which backend serves a history target: the one place that picks the JSON-lines file (:mod:`.jsonl`),
SQLite or PostgreSQL (:mod:`.store`) by the target's kind (:func:`.target.parse`). The backends never
import this module, so the choice stays here: checking a target before any test runs, writing a
session's runs, reading a history back.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from . import jsonl
from .records import RunRecord
from .store import open_store
from .target import HistoryTargetError, Target, disk_full, full_error, parse


def check(value: str) -> Target:
    """Parse and verify that the target can be written (databases: connect and migrate the schema)."""
    target = parse(value)
    if target.kind == "postgresql":
        open_store(target).close()  # connecting is the only real check of a URL
        return target
    path = Path(target.location)
    if path.is_dir():
        raise HistoryTargetError(f"history target {path} is a directory; name a file in it, e.g. "
                                 f"--gpuperf-history={path / 'history.db'}")
    parent = path.parent if str(path.parent) else Path(".")
    existing = parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise HistoryTargetError(f"history target {path}: {existing} is not a directory; choose a path whose "
                                 f"parent is a directory")
    if path.exists() and not os.access(path, os.W_OK):
        raise HistoryTargetError(f"history target {path} is not writable; fix its permissions or choose "
                                 f"another path")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise HistoryTargetError(f"history target {path}: directory {existing} is not writable; choose a "
                                 f"writable location")
    try:
        if target.kind == "jsonl":
            path.parent.mkdir(parents=True, exist_ok=True)
            jsonl.validate(path)
        else:
            open_store(target).close()  # creates the file and its schema now: proves it can be written
    except OSError as exc:
        if disk_full(exc):
            raise full_error(str(path), exc) from None
        raise HistoryTargetError(f"history target {path} cannot be written ({exc.strerror or exc}); choose a "
                                 f"writable path") from None
    return target


def record_runs(target: str | Target, runs: Iterable[RunRecord]) -> int:
    """Write runs to the history target (:func:`record_each`); returns how many were new. This is what the
    session's ``finish()`` calls."""
    return sum(record_each(target, runs))


def record_each(target: str | Target, runs: Iterable[RunRecord]) -> list[bool]:
    """Write runs to the history target (a database: a few runs per transaction, each whole or absent,
    :meth:`.store.Store.record_runs`; a JSONL file: a locked line each); per run, whether it was new — False
    for a run the target held already (its run key: :attr:`.records.RunRecord.run_key`)."""
    tgt = parse(target) if isinstance(target, str) else target
    runs = list(runs)
    if tgt.kind == "jsonl":
        return [jsonl.append(tgt.location, run) for run in runs]
    with open_store(tgt) as store:
        return store.record_runs(runs)


def record_run(target: str | Target, run: RunRecord) -> bool:
    """Write one run; False when the store already held it (same uid)."""
    return record_runs(target, [run]) == 1


def read_runs(target: str | Target, device_key: str | None = None, skipped: list[str] | None = None
              ) -> list[RunRecord]:
    """Every run of a history target, oldest first (a JSONL file or a database).

    Reading never creates anything: a target that does not exist (a mistyped ``--db``) raises
    :class:`HistoryTargetError` naming it, instead of reading as an empty history. A database row whose
    JSON does not parse is left out and named in ``skipped`` (:meth:`.store.Store.runs`)."""
    tgt = parse(target) if isinstance(target, str) else target
    if tgt.kind == "jsonl":
        if not Path(tgt.location).is_file():
            raise HistoryTargetError(f"history file {tgt.location} does not exist; check the path (--db, "
                                     f"$GPUPERF_HISTORY) — reading never creates a history")
        runs = sorted(jsonl.read(tgt.location), key=lambda r: r.date)
        return [r for r in runs if device_key is None or r.device_key == device_key]
    with open_store(tgt, create=False) as store:
        return store.runs(device_key, skipped)
