"""Importing earlier runs: results JSON documents (one run each) and legacy JSONL histories.

Runs carry a run key (the results document's ``run.id`` with the device, else a digest of device, host,
commit, start and values), so importing ``results/`` again after a new session adds only the new runs,
and a file whose run was recorded live by ``--gpuperf-history`` adds nothing — backfill is safe to repeat. What a folder holds falls in three kinds:

* a results document that follows the results schema — the very check ``gpuperf compare`` makes
  (:mod:`pytest_gpuperf.schemas`) — or a clean JSON-lines history: imported;
* JSON of another kind (Nsight Compute exports, gate-check and compare reports, power corpora, a
  results document without metrics): skipped, with one line naming it and why;
* a broken file — JSON that does not parse (a torn or truncated file), a results document that fails
  the schema (a value ``"fast"``), a JSON-lines history with a damaged line: named with what is wrong,
  and the import, which still keeps every good file, ends non-zero.

Input that yields nothing to import at all is an error, never an empty success.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

from .. import RESULTS_SCHEMA
from .records import NotResultsError, RunRecord, from_results, not_results, read_results
from .target import HistoryTargetError
from ..util import jsonio
from ..util.gcpause import paused_gc


class BadFileError(ValueError):
    """A file that should hold runs but is broken (unparsable JSON, a results document that fails the
    schema, a damaged history line); the message names the file and the problem."""


def schema_problem(doc: object, source: str) -> str | None:
    """Why a results document fails the results schema (the first problems), or None where it follows it
    or is not a results document at all."""
    from ..schemas import problems

    if not isinstance(doc, dict):
        return None
    if doc.get("schema") != RESULTS_SCHEMA and not_results(doc) is not None:
        return None  # another kind of JSON: skipped, not judged by this schema
    found = problems(doc, RESULTS_SCHEMA)
    if not found:
        return None
    more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
    return f"{source}: does not follow schema {RESULTS_SCHEMA!r}: {'; '.join(found[:3])}{more}"


def _files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Every .json/.jsonl file the paths name, compressed (.json.gz) or not (folders searched recursively,
    sorted); a path that does not exist is an error, since a typo must not pass as an empty backfill."""
    for p in map(jsonio.saved, paths):
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if (jsonio.is_results_name(f.name) or f.name.endswith(".jsonl"))
                           and f.is_file())
            if not found:
                raise HistoryTargetError(f"{p} holds no .json, .json.xz, .json.gz or .jsonl file; name the folder your "
                                         f"--gpuperf-json results were written to")
            yield from found
        elif p.exists():
            yield p
        else:
            raise HistoryTargetError(f"{p} does not exist; name results JSON files, JSONL histories or folders")


def _read(f: Path) -> list[RunRecord]:
    """The runs of one file; :class:`NotResultsError` saying why when it is JSON of another kind,
    :class:`BadFileError` saying what is wrong when it is broken."""
    from . import jsonl

    if f.suffix == ".jsonl":
        try:
            runs = jsonl.read(f)
        except HistoryTargetError as exc:  # a damaged line
            raise BadFileError(str(exc)) from None
        except (KeyError, TypeError, ValueError) as exc:
            raise NotResultsError(f"{f}: a JSON-lines file that is not a run history ({type(exc).__name__}: "
                                  f"{exc})") from None
        if not runs:
            raise NotResultsError(f"{f}: an empty JSON-lines history")
        return runs
    try:
        doc = jsonio.read_json(f)
    except OSError as exc:  # not readable as a file: special, too large, a delta whose base is elsewhere
        raise BadFileError(f"{f}: cannot read it ({type(exc).__name__}: {exc})") from None
    except (EOFError, UnicodeDecodeError, ValueError) as exc:  # EOFError: a truncated .gz
        raise BadFileError(f"{f}: not valid JSON ({type(exc).__name__}: {exc}); a torn or truncated file? "
                           f"restore it, or move it out of the folder") from None
    problem = schema_problem(doc, str(f))
    if problem:
        raise BadFileError(problem + "; fix or move that file (gpuperf compare refuses it too)")
    try:
        return [from_results(read_results(doc, source=str(f)), source=str(f))]
    except NotResultsError:  # JSON of another kind
        raise
    except (AttributeError, KeyError, TypeError, ValueError) as exc:  # a results document with a bad entry
        raise BadFileError(f"{f}: a malformed results document ({type(exc).__name__}: {exc})") from None


def load(paths: Iterable[str | Path], skipped: list[str] | None = None,
         bad: list[str] | None = None) -> list[RunRecord]:
    """Runs from results JSON files and JSONL histories (folders are searched), oldest first.

    A file of another kind goes to ``skipped`` as one line naming it and why; a broken file to ``bad``
    (where either list is None, the first such file raises :class:`NotResultsError` or
    :class:`BadFileError`). A path that does not exist, a folder without JSON, or input in which no file at
    all could be imported raises :class:`HistoryTargetError`."""
    runs: list[RunRecord] = []
    reasons: list[str] = []
    broken: list[str] = []
    names = [str(p) for p in paths]
    with paused_gc():  # the runs read so far only grow: no collector passes over them file after file
        for f in _files(names):
            try:
                runs += _read(f)
            except NotResultsError as exc:
                if skipped is None:
                    raise
                reasons.append(str(exc))
            except BadFileError as exc:
                if bad is None:
                    raise
                broken.append(str(exc))
    if skipped is not None:
        skipped += reasons
    if bad is not None:
        bad += broken
    if not runs:
        what = f"{len(reasons)} file(s) of another kind" + (f" and {len(broken)} broken one(s)" if broken else "")
        raise HistoryTargetError(f"nothing to import from {' '.join(names)}: {what}, no results document (written "
                                 f"by --gpuperf-json) or run history")
    return sorted(runs, key=lambda r: r.date)
