"""Importing earlier runs: results JSON documents (one run each) and legacy JSONL histories.

Runs carry a uid derived from their content, so importing ``results/`` again after a new session adds
only the new runs — backfill is safe to repeat. A results folder also holds JSON that is not a results
document (Nsight Compute exports, gate-check reports, power corpora): each such file is skipped with the
reason, and the rest is imported. Input that yields nothing to import at all is an error, never an empty
success.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

from .records import NotResultsError, RunRecord, from_results
from .target import HistoryTargetError
from ..util import jsonio


def _files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Every .json/.jsonl file the paths name, compressed (.json.gz) or not (folders searched recursively,
    sorted); a path that does not exist is an error, since a typo must not pass as an empty backfill."""
    for p in map(jsonio.saved, paths):
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.name.endswith((".json", ".jsonl", ".json.gz")) and f.is_file())
            if not found:
                raise HistoryTargetError(f"{p} holds no .json, .json.gz or .jsonl file; name the folder your "
                                         f"--gpuperf-json results were written to")
            yield from found
        elif p.exists():
            yield p
        else:
            raise HistoryTargetError(f"{p} does not exist; name results JSON files, JSONL histories or folders")


def _read(f: Path) -> list[RunRecord]:
    """The runs of one file; :class:`NotResultsError` saying why when it holds none that can be imported."""
    from . import jsonl

    if f.suffix == ".jsonl":
        try:
            runs = jsonl.read(f)
        except HistoryTargetError as exc:
            raise NotResultsError(str(exc)) from None
        except (KeyError, TypeError, ValueError) as exc:
            raise NotResultsError(f"{f}: a JSON-lines file that is not a run history ({type(exc).__name__}: "
                                  f"{exc})") from None
        if not runs:
            raise NotResultsError(f"{f}: an empty JSON-lines history")
        return runs
    try:
        doc = jsonio.read_json(f)
    except (EOFError, OSError, UnicodeDecodeError, ValueError) as exc:
        raise NotResultsError(f"{f}: not valid JSON ({exc})") from None
    try:
        return [from_results(doc, source=str(f))]
    except NotResultsError:
        raise
    except (AttributeError, KeyError, TypeError, ValueError) as exc:  # a results document with a bad entry
        raise NotResultsError(f"{f}: a malformed results document ({type(exc).__name__}: {exc})") from None


def load(paths: Iterable[str | Path], skipped: list[str] | None = None) -> list[RunRecord]:
    """Runs from results JSON files and JSONL histories (folders are searched), oldest first.

    A file that holds no importable run goes to ``skipped`` as one line naming the file and why (or raises
    :class:`NotResultsError` when ``skipped`` is None); a path that does not exist, a folder without JSON,
    or input in which no file at all could be imported raises :class:`HistoryTargetError`."""
    runs: list[RunRecord] = []
    reasons: list[str] = []
    names = [str(p) for p in paths]
    for f in _files(names):
        try:
            runs += _read(f)
        except NotResultsError as exc:
            if skipped is None:
                raise
            reasons.append(str(exc))
    if skipped is not None:
        skipped += reasons
    if not runs:
        raise HistoryTargetError(f"nothing to import from {' '.join(names)}: none of its {len(reasons)} JSON "
                                 f"file(s) is a results document (written by --gpuperf-json) or a run history")
    return sorted(runs, key=lambda r: r.date)
