"""Trend tracking: every run's metrics in a history store, change points over commits, a dashboard.

Modules, one job each: :mod:`.target` (which store a URL names, and checking it early),
:mod:`.schema` (tables and versioned migrations), :mod:`.store` (SQLite/PostgreSQL reads and writes),
:mod:`.jsonl` (the legacy locked JSON-lines format), :mod:`.records` (the run/metric shape, from a live
session or a results file), :mod:`.backfill` (imports), :mod:`.detect` (steps a team can act on),
:mod:`.dashboard` (the static HTML report: ``templates/`` and ``static/`` hold its page and script),
:mod:`.cli` (``gpuperf history …``).
"""

from __future__ import annotations

from typing import Iterable

from .records import MetricRecord, RunRecord
from .target import HistoryTargetError, Target, check, parse

__all__ = ["HistoryTargetError", "MetricRecord", "RunRecord", "Target", "check", "parse", "record_run",
           "record_runs", "read_runs"]


def record_runs(target: str | Target, runs: Iterable[RunRecord]) -> int:
    """Write runs to the history target (each in its own transaction / locked line); returns how many
    were new. This is what the session's ``finish()`` calls."""
    tgt = parse(target) if isinstance(target, str) else target
    runs = list(runs)
    if tgt.kind == "jsonl":
        from . import jsonl

        for run in runs:
            jsonl.append(tgt.location, run)
        return len(runs)
    from .store import open_store

    with open_store(tgt) as store:
        return sum(store.record_run(run) for run in runs)


def record_run(target: str | Target, run: RunRecord) -> bool:
    """Write one run; False when the store already held it (same uid)."""
    return record_runs(target, [run]) == 1


def read_runs(target: str | Target, device_key: str | None = None) -> list[RunRecord]:
    """Every run of a history target, oldest first (a JSONL file or a database).

    Reading never creates anything: a target that does not exist (a mistyped ``--db``) raises
    :class:`HistoryTargetError` naming it, instead of reading as an empty history."""
    tgt = parse(target) if isinstance(target, str) else target
    if tgt.kind == "jsonl":
        from pathlib import Path

        from . import jsonl

        if not Path(tgt.location).is_file():
            raise HistoryTargetError(f"history file {tgt.location} does not exist; check the path (--db, "
                                     f"$GPUPERF_HISTORY) — reading never creates a history")
        runs = sorted(jsonl.read(tgt.location), key=lambda r: r.date)
        return [r for r in runs if device_key is None or r.device_key == device_key]
    from .store import open_store

    with open_store(tgt, create=False) as store:
        return store.runs(device_key)
