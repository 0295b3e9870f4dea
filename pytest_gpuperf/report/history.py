"""Benchmark history for trend tracking: one JSON line per run and device, appended atomically.

The whole file is rewritten through a temporary file and a rename, so a crash mid-append leaves
the earlier history intact (plain ``open(..., "a")`` can leave a torn last line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
import json

from ..util.atomic import atomic_write_chunks


def append(path: str | Path, record: dict[str, Any]) -> None:
    target = Path(path)
    old = target.read_bytes() if target.exists() else b""
    if old and not old.endswith(b"\n"):
        old += b"\n"
    atomic_write_chunks(target, [old, (json.dumps(record, separators=(",", ":")) + "\n").encode()])


def read(path: str | Path) -> list[dict[str, Any]]:
    target = Path(path)
    if not target.exists():
        return []
    return [json.loads(line) for line in target.read_text().splitlines() if line.strip()]
