"""Everything wrong with a baseline file, all at once.

A reviewer fixing a hand-edited baseline wants the whole list, not one problem per attempt, so every
check here collects instead of raising. Two kinds of checks:

* :func:`parse` reads the JSON with an ``object_pairs_hook`` that notices duplicated keys. Plain
  ``json.loads`` keeps the last copy silently: a metric pasted twice was accepted, ``check`` said ok,
  and a later update kept the bogus copy and dropped the original.
* :func:`problems` type-checks the document with the shipped JSON Schema (``schemas/baseline-1.json``:
  ``provenance`` or ``device`` given as a string passed ``check`` and then crashed the run with an
  AttributeError) and adds the rules a schema cannot say (finite values, tolerance needs k and spread, no value
  or sample a measurement cannot take: :func:`.validity.entry_problem`).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Iterator

from .. import BASELINE_SCHEMA, LEAN_BASELINE_SCHEMA
from . import validity
from .verdicts import DIRECTIONS

TOLERANCE_KEYS = set(validity.TOLERANCE_KEYS)
Path_ = tuple[Any, ...]


class _Object(dict):
    """A parsed JSON object that remembers the keys it held more than once."""

    duplicates: list[str]


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A plain dict where every key is unique (the common case, at C speed), else an :class:`_Object` that
    remembers the keys held more than once."""
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    dup = _Object(obj)
    dup.duplicates = []
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen and key not in dup.duplicates:
            dup.duplicates.append(key)
        seen.add(key)
    return dup


def parse(text: str) -> tuple[Any, list[str]]:
    """The document (plain dicts) and one problem per duplicated key, naming where it sits.
    Raises ``json.JSONDecodeError`` for text that is not JSON at all. A document without any duplicated key
    (every object a plain dict) is returned as parsed: only one with duplicates is walked to name them."""
    flagged = False

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal flagged
        obj = _pairs(items)
        flagged = flagged or isinstance(obj, _Object)
        return obj

    raw = json.loads(text, object_pairs_hook=pairs)
    found: list[str] = []
    if not flagged:
        return raw, found
    return _plain(raw, (), found), found


def _plain(value: Any, where: Path_, found: list[str]) -> Any:
    if isinstance(value, dict):
        for key in getattr(value, "duplicates", ()):
            found.append(f"{_where(where) or 'top level'}: key {key!r} appears more than once (JSON keeps only "
                         f"the last copy; delete the duplicate)")
        return {k: _plain(v, (*where, k), found) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, (*where, i), found) for i, v in enumerate(value)]
    return value


def _where(path: Path_) -> str:
    """``("backends", "opencl", "metrics", "a.b", "value")`` → ``backends.opencl.metrics['a.b'].value``."""
    out = ""
    for i, part in enumerate(path):
        if isinstance(part, int):
            out += f"[{part}]"
        elif len(path) > 3 and i == 3 and path[2] == "metrics":
            out += f"[{part!r}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def problems(data: Any) -> list[str]:
    """Every problem of a parsed baseline document, each naming the metric and field; empty if valid."""
    if not isinstance(data, dict):
        return ["top level must be a JSON object"]
    found: list[tuple[Path_, str]] = []
    if data.get("schema") != BASELINE_SCHEMA:
        found.append((("schema",), f"'schema' must be {LEAN_BASELINE_SCHEMA!r} (or the older {BASELINE_SCHEMA!r}), "
                                   f"found {data.get('schema')!r}: not a baseline file?"))
    backends = data.get("backends")
    if not isinstance(backends, dict):
        found.append((("backends",), "'backends' must be an object mapping backend name to a section"))
    else:
        for backend, section in backends.items():
            if not isinstance(section, dict) or not isinstance(section.get("metrics", {}), dict):
                found.append((("backends", backend), f"backends.{backend} must be an object with a 'metrics' object"))
                continue
            for name, entry in section.get("metrics", {}).items():
                found += _entry(("backends", backend, "metrics", name), entry)
    covered = [where for where, _ in found]
    found += [(w, m) for w, m in _schema(data) if not any(w[:len(c)] == c for c in covered)]
    return [message for _, message in found]


def _schema(data: dict[str, Any]) -> Iterator[tuple[Path_, str]]:
    """The JSON Schema's type errors, one per location (the shipped schema, so ``check`` and a run agree).
    The compiled validator decides; only a document it refuses is walked for the messages (the walk costs a
    tenth of a second on a reviewed baseline, and every run reads one)."""
    from ..schemas import conforms, errors

    if conforms(data, BASELINE_SCHEMA):
        return
    for err in errors(data, BASELINE_SCHEMA):
        where = tuple(err.instance_path)
        yield where, f"{_where(where) or 'top level'}: {err.message}"


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _entry(path: Path_, entry: Any) -> list[tuple[Path_, str]]:
    where = _where(path)
    if not isinstance(entry, dict):
        return [(path, f"{where} must be an object")]
    out: list[tuple[Path_, str]] = []
    if not _number(entry.get("value")):
        out.append(((*path, "value"), f"{where}.value must be a finite number, found {entry.get('value')!r}"))
    if entry.get("better") not in DIRECTIONS:
        out.append(((*path, "better"), f"{where}.better must be one of {DIRECTIONS}, found {entry.get('better')!r}"))
    tol = entry.get("tolerance", {})
    if not isinstance(tol, dict):
        out.append(((*path, "tolerance"), f"{where}.tolerance must be an object"))
    else:
        unknown = set(tol) - TOLERANCE_KEYS
        if unknown:
            out.append(((*path, "tolerance"), f"{where}.tolerance has unknown keys {sorted(unknown)}; use "
                                              f"{sorted(TOLERANCE_KEYS)}"))
        for k, v in tol.items():
            if k in TOLERANCE_KEYS and (not _number(v) or v < 0):
                out.append(((*path, "tolerance", k), f"{where}.tolerance.{k} must be a non-negative number, "
                                                     f"found {v!r}"))
        if ("k" in tol) != ("spread" in tol):
            out.append(((*path, "tolerance"), f"{where}.tolerance needs both 'k' and 'spread' or neither"))
    if not isinstance(entry.get("identity", {}), dict):
        out.append(((*path, "identity"), f"{where}.identity must be an object of the options that shaped the value"))
    digest = entry.get("source_digest")
    if digest is not None and not (isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{8,64}", digest)):
        out.append(((*path, "source_digest"), f"{where}.source_digest must be the hex digest of the kernel sources "
                                              f"a results file records, found {digest!r}; remake the entry from "
                                              "results or remove the key"))
    rv = entry.get("run_values", [])
    if not isinstance(rv, list) or not all(_number(x) for x in rv):
        out.append(((*path, "run_values"), f"{where}.run_values must be a list of numbers (one per baseline run)"))
    xs = entry.get("samples")
    if xs is not None and (not isinstance(xs, list) or not all(_number(x) for x in xs)):
        out.append(((*path, "samples"), f"{where}.samples must be a list of finite numbers"))
    elif _number(entry.get("value")):
        impossible = validity.entry_problem(str(path[-1]), entry)
        if impossible is not None:
            out.append(((*path, "value"), f"{where}: {impossible}; remake the entry from runs without it"))
    return out
