"""Legacy JSON-lines history API, kept for callers of ``append``/``read``; the history now lives in
:mod:`pytest_gpuperf.history` (SQLite/PostgreSQL, with this format as a locked legacy target)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..history import jsonl


def append(path: str | Path, record: dict[str, Any]) -> None:
    """Append one record under the history lock; refuses a file with damaged lines (HistoryTargetError)."""
    jsonl.append_record(path, record)


def read(path: str | Path) -> list[dict[str, Any]]:
    """Every record of the file; HistoryTargetError names a damaged line instead of UnicodeDecodeError."""
    target = Path(path)
    with jsonl._lock(target):  # noqa: SLF001 - same package family, one lock discipline
        return jsonl._lines(target)  # noqa: SLF001
