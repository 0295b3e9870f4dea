"""The legacy history format: one JSON line per run, kept for ``--gpuperf-history=path.jsonl``.

The old writer re-read and rewrote the whole file, so two sessions finishing together lost lines,
and it appended to a file with garbage in it until ``read()`` failed. Now every append holds an
exclusive lock file (:func:`pytest_gpuperf.util.locks.file_lock`), checks the file is valid JSON lines first, and
appends one line with a single ``write`` + ``fsync``; a crash can at worst leave a torn last line,
which the next append refuses with the line number instead of burying it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

from filelock import FileLock

from ..util.locks import file_lock
from .records import RunRecord, dumps, finite, from_legacy_line
from .target import HistoryTargetError, disk_full, full_error

LOCK_TIMEOUT_S = 120.0


def _lock(path: Path) -> FileLock:
    return file_lock(path, timeout=LOCK_TIMEOUT_S)


def _lines(path: Path) -> list[dict[str, Any]]:
    """Every record of the file; HistoryTargetError naming the first bad line."""
    if not path.exists():
        return []
    data = path.read_bytes()
    out = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw.decode("utf-8"))
            if not isinstance(rec, dict):
                raise ValueError("not a JSON object")
        except (UnicodeDecodeError, ValueError) as exc:
            raise HistoryTargetError(
                f"history file {path} line {number} is not a JSON record ({type(exc).__name__}: "
                f"{str(exc)[:80]}); refusing to append to a damaged history — repair or move that file, "
                f"or switch to a database (--gpuperf-history=history.db)") from None
        out.append(rec)
    if data and not data.endswith(b"\n"):
        raise HistoryTargetError(f"history file {path} does not end with a newline (a torn last line); "
                                 f"repair or move that file")
    return out


def validate(path: str | Path) -> None:
    """Raise HistoryTargetError if ``path`` exists and is not a clean JSON-lines history."""
    target = Path(path)
    with _lock(target):
        _lines(target)


def append(path: str | Path, run: RunRecord) -> bool:
    """Append one run as one line, under the lock; old readers still find date/key/metrics{name: value}.
    False, and nothing written, when the file holds the run already (the same run key: recorded live and
    imported from its results file)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    key = run.run_key
    return append_record(target, {"date": run.date, "key": run.device_key, "backend": run.backend,
                                  "driver": run.driver, "commit": run.commit,
                                  "metrics": {m.name: m.value for m in run.metrics}, "run": run.to_json(),
                                  "run_key": key},
                         unless=lambda lines: any(_key(rec) == key for rec in lines))


def _key(rec: dict[str, Any]) -> str | None:
    """The run key of a line: written beside the run since keys exist, computed for older lines."""
    if isinstance(rec.get("run_key"), str):
        return rec["run_key"]
    try:
        return from_legacy_line(rec).run_key
    except (KeyError, TypeError, ValueError):
        return None


def append_record(path: str | Path, record: dict[str, Any],
                  unless: Callable[[list[dict[str, Any]]], bool] | None = None) -> bool:
    """Append one JSON object as one line: locked, after checking the file, one write, fsync. ``unless``
    (the lines already there → bool) decides under the lock that it is not written; returns whether it was."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    line = (dumps(finite(record), separators=(",", ":"), default=str) + "\n").encode()
    with _lock(target):
        lines = _lines(target)
        if unless is not None and unless(lines):
            return False
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        size = os.fstat(fd).st_size
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError as exc:
            os.ftruncate(fd, size)  # no torn line left behind
            if disk_full(exc):
                raise full_error(str(target), exc) from None
            raise
        finally:
            os.close(fd)
    return True


def records(path: str | Path) -> list[dict[str, Any]]:
    """Every line of the file as the JSON object written, under the lock; HistoryTargetError names a
    damaged line."""
    target = Path(path)
    with _lock(target):
        return _lines(target)


def read(path: str | Path) -> list[RunRecord]:
    """Every run of a JSONL history (old lines and new ones)."""
    target = Path(path)
    return [from_legacy_line(rec, source=str(target)) for rec in records(target)]
