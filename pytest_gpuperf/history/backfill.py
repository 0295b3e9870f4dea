"""Importing earlier runs: results JSON documents (one run each) and legacy JSONL histories.

Runs carry a uid derived from their content, so importing ``results/`` again after a new session adds
only the new runs — backfill is safe to repeat.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Iterator

from .records import RunRecord, from_results
from .target import HistoryTargetError


def _files(paths: Iterable[str | Path]) -> Iterator[Path]:
    for p in map(Path, paths):
        if p.is_dir():
            yield from sorted(f for f in p.rglob("*") if f.suffix in (".json", ".jsonl") and f.is_file())
        elif p.exists():
            yield p
        else:
            raise HistoryTargetError(f"{p} does not exist; name results JSON files, JSONL histories or folders")


def load(paths: Iterable[str | Path], skipped: list[str] | None = None) -> list[RunRecord]:
    """Runs from results JSON files and JSONL histories (folders are searched); files that are JSON but
    not results documents go to ``skipped`` (a folder also holds e.g. tuning caches), malformed ones raise."""
    from . import jsonl

    runs: list[RunRecord] = []
    for f in _files(paths):
        if f.suffix == ".jsonl":
            runs += jsonl.read(f)
            continue
        try:
            doc = json.loads(f.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise HistoryTargetError(f"{f} is not valid JSON ({exc}); fix or leave out that file") from None
        if not (isinstance(doc, dict) and isinstance(doc.get("device"), dict) and "metrics" in doc):
            if skipped is not None:
                skipped.append(str(f))
            continue
        runs.append(from_results(doc, source=str(f)))
    return sorted(runs, key=lambda r: r.date)
