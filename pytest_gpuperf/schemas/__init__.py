"""The versioned JSON Schemas of the files this project writes, shipped with the package so other tools
can validate what they read:

* ``results-1.json`` — results documents (``pytest-gpuperf/1``, ``--gpuperf-json``);
* ``baseline-1.json`` — baseline files as code reads them, and as older files hold them (``pytest-gpuperf-baseline/1``);
* ``baseline-2.json`` — baseline files as they are written (``pytest-gpuperf-baseline/2``, ``baselines/<device-key>.json``);
* ``tuning-cache-1.json`` — tuning cache entries (``pytest-gpuperf-tuning/1``);
* ``ncu-reference-1.json`` — the kernel-class suite's stored Nsight Compute profiles (``pytest-gpuperf-ncu-reference/1``);
* ``compare-1.json`` — run-against-run reports (``pytest-gpuperf-compare/1``, ``gpuperf compare --format json``);
* ``siblings-1.json`` — sibling reports of several cards of one model (``pytest-gpuperf-siblings/1``, ``siblings.json``);
* ``fleet-1.json`` — fleet reports, one verdict per card of a fleet run (``pytest-gpuperf-fleet/1``, ``gpuperf fleet report --format json``).

Each document names its schema in its ``"schema"`` key; :func:`schema_for` maps that name to the file.
The schemas type-check the known keys and allow additional ones: the formats grow by adding keys.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

import jsonschema_rs

from .. import (BASELINE_SCHEMA, COMPARE_SCHEMA, FLEET_SCHEMA, LEAN_BASELINE_SCHEMA, NCU_REFERENCE_SCHEMA,
                RESULTS_SCHEMA, SIBLINGS_SCHEMA, TUNING_CACHE_SCHEMA)
from ..errors import GpuPerfError

FILES: dict[str, str] = {RESULTS_SCHEMA: "results-1.json", BASELINE_SCHEMA: "baseline-1.json",
                         LEAN_BASELINE_SCHEMA: "baseline-2.json",
                         TUNING_CACHE_SCHEMA: "tuning-cache-1.json", COMPARE_SCHEMA: "compare-1.json",
                         SIBLINGS_SCHEMA: "siblings-1.json", NCU_REFERENCE_SCHEMA: "ncu-reference-1.json",
                         FLEET_SCHEMA: "fleet-1.json"}


class SchemaError(GpuPerfError):
    """A document does not follow the schema it names (or names none we know)."""


@lru_cache(maxsize=None)
def schema_for(name: str) -> dict[str, Any]:
    """The JSON Schema of ``name`` (e.g. ``"pytest-gpuperf/1"``), read from the package data."""
    if name not in FILES:
        raise SchemaError(f"unknown schema {name!r}; this version of pytest-gpuperf knows {sorted(FILES)}")
    return json.loads(resources.files(__package__).joinpath(FILES[name]).read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def _fast(name: str) -> Any:
    """A compiled validator of schema ``name`` (jsonschema-rs): a results document of a few thousand
    metrics is checked in milliseconds instead of a fifth of a second."""
    return jsonschema_rs.validator_for(schema_for(name))


def conforms(doc: Any, name: str) -> bool:
    """Whether ``doc`` follows schema ``name``, by the compiled validator: the quick answer for callers that
    walk a refused document for their own messages (a baseline file is read at the start of every run)."""
    return bool(_fast(name).is_valid(doc))


def problems(doc: Any, name: str) -> list[str]:
    """Every violation of schema ``name`` in ``doc``, each as ``path: message`` (empty if valid).

    The compiled validator decides and, for a document it refuses, lists every violation (in the order
    of their paths, so the same broken file always reads the same)."""
    if conforms(doc, name):
        return []
    out = []
    for err in errors(doc, name):
        where = "/".join(str(p) for p in err.instance_path) or "(top level)"
        out.append(f"{where}: {err.message}")
    return out


def errors(doc: Any, name: str) -> list[Any]:
    """The violations of schema ``name`` in ``doc`` (``jsonschema_rs.ValidationError``: ``instance_path``,
    ``message``), sorted by their path."""
    return sorted(_fast(name).iter_errors(doc), key=lambda e: list(map(str, e.instance_path)))


def validate(doc: Any, name: str | None = None, source: str = "document") -> None:
    """Raise :class:`SchemaError` listing what is wrong with ``doc``; ``name`` defaults to the schema
    the document itself declares, so a file of another version is refused by name, not by its shape."""
    declared = doc.get("schema") if isinstance(doc, dict) else None
    if declared is None:
        expected = repr(name) if name else f"one of {sorted(FILES)}"
        raise SchemaError(f"{source} names no schema (no 'schema' key); expected {expected}")
    name = name or declared
    if declared != name:
        raise SchemaError(f"{source} has schema {declared!r}, expected {name!r}")
    found = problems(doc, name)
    if found:
        shown = "\n  ".join(found[:10]) + (f"\n  ... and {len(found) - 10} more" if len(found) > 10 else "")
        raise SchemaError(f"{source} does not follow schema {name!r}:\n  {shown}")
