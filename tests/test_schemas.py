"""The shipped JSON Schemas: every committed results and baseline file follows the schema it names,
and the schemas refuse what the formats forbid (so the first test is not vacuous)."""

from __future__ import annotations

import copy
import functools
import re
from pathlib import Path

import pytest

from pytest_gpuperf.util import jsonio
from pytest_gpuperf import BASELINE_SCHEMA, LEAN_BASELINE_SCHEMA, RESULTS_SCHEMA
from pytest_gpuperf.baselines import fileformat
from pytest_gpuperf.schemas import FILES, SchemaError, conforms, problems, schema_for, validate

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = sorted((ROOT / "results").rglob("*.json*")) + sorted((ROOT / "pytest_gpuperf" / "baselines" / "reviewed").glob("*.json"))


#: a ``"schema": "NAME"`` pair of a JSON text (its keys and strings are always double-quoted, names plain ASCII)
SCHEMA_KEY = re.compile(rb'"schema"\s*:\s*"([^"\\]+)"')


def _schemas_named() -> dict[Path, str]:
    """Each committed file that names a shipped schema, with that name, found in its text: the committed files
    are a few hundred megabytes of JSON, and parsing them all here, at collection, cost seconds before their
    tests parse them again (a run stored as a delta is read as stored, and names its base's schema). A file that names a shipped schema at its top holds that pair, so none is missed; a
    file holding the pairs of two shipped schemas is parsed to tell which is its own, and each test checks its
    file's top-level name before validating (a name found only deeper fails there, loudly)."""
    out: dict[Path, str] = {}

    @functools.cache
    def names(path: Path) -> frozenset[str]:
        return frozenset(m.group(1).decode() for m in SCHEMA_KEY.finditer(jsonio.read_stored(path))) & set(FILES)

    for path in COMMITTED:
        found = set(names(path))
        base: Path | None = path
        while not found and (base := jsonio.stored_base(base, jsonio.read_stored(base))) is not None:
            found = set(names(base))  # a delta names what its base names (or its base's), unless it changes it
        name = found.pop() if len(found) == 1 else jsonio.read_json(path).get("schema") if found else None
        if name in FILES:
            out[path] = name
    return out


SHIPPED = _schemas_named()


def test_schemas_ship_with_the_package():
    for name in FILES:
        assert schema_for(name)["properties"]["schema"] == {"const": name}


@pytest.mark.parametrize("path", list(SHIPPED), ids=lambda p: str(p.relative_to(ROOT)))
def test_committed_file_follows_its_schema(path):
    doc = jsonio.read_json(path)
    assert doc.get("schema") == SHIPPED[path], f"{path} names {doc.get('schema')!r} at its top, not {SHIPPED[path]!r}"
    validate(doc, source=str(path))


def test_both_formats_are_committed():
    names = set(SHIPPED.values())
    assert {RESULTS_SCHEMA, LEAN_BASELINE_SCHEMA} <= names


@functools.cache
def _doc(schema: str) -> dict:
    """A committed document of ``schema``; the expanded baseline form (what code reads, and what older
    files hold) from a committed lean file. Built once per schema: callers break a deep copy."""
    wanted = LEAN_BASELINE_SCHEMA if schema == BASELINE_SCHEMA else schema
    doc = jsonio.read_json(next(p for p, name in SHIPPED.items() if name == wanted))
    return fileformat.expand(doc)[0] if schema == BASELINE_SCHEMA else doc


def _first_entry(doc: dict) -> dict:
    section = next(iter(doc["backends"].values()))
    return next(iter(section["metrics"].values()))


@pytest.mark.parametrize("schema,break_it,where", [
    (RESULTS_SCHEMA, lambda d: d["device"].update(compute_units="132"), "device/compute_units"),
    (RESULTS_SCHEMA, lambda d: d["device"].update(peak_bandwidth_gbs="3352"), "device/peak_bandwidth_gbs"),
    (RESULTS_SCHEMA, lambda d: d["metrics"][0].update(better="faster"), "metrics/0/better"),
    (RESULTS_SCHEMA, lambda d: d["metrics"][0].update(identity=["opt"]), "metrics/0/identity"),
    (RESULTS_SCHEMA, lambda d: d["metrics"][0].update(stats={"median": 1.0, "mad": 0.0, "min": 1.0, "max": 1.0,
                                                             "n": 2, "samples": [1.0, "x"]}), "metrics/0/stats"),
    (RESULTS_SCHEMA, lambda d: d.pop("metrics"), "(top level)"),
    (BASELINE_SCHEMA, lambda d: _first_entry(d).update(value="1.0"), "value"),
    (BASELINE_SCHEMA, lambda d: _first_entry(d).update(samples=[1.0, None]), "samples/1"),
    (BASELINE_SCHEMA, lambda d: _first_entry(d).update(tolerance={"pct": 3}), "tolerance"),
    (BASELINE_SCHEMA, lambda d: _first_entry(d).update(identity="x"), "identity"),
    (LEAN_BASELINE_SCHEMA, lambda d: _first_entry(d).update(value="1.0"), "value"),
    (LEAN_BASELINE_SCHEMA, lambda d: _first_entry(d).update(samples=[1.0, 2.0]), "samples"),
    (LEAN_BASELINE_SCHEMA, lambda d: _first_entry(d).update(samples={"values": [1.0, None]}), "samples/values/1"),
    (LEAN_BASELINE_SCHEMA, lambda d: _first_entry(d).update(provenance=7), "provenance"),
    (LEAN_BASELINE_SCHEMA, lambda d: next(iter(d["backends"].values())).update(provenances={"x": "y"}),
     "provenances/x"),
])
def test_schema_refuses_a_broken_document(schema, break_it, where):
    """The compiled validator (``conforms``, the quick answer a baseline read takes) and the walk that names
    the problems agree: both accept the committed document, both refuse each break of it."""
    doc = copy.deepcopy(_doc(schema))
    assert problems(doc, schema) == [] and conforms(doc, schema)
    break_it(doc)
    found = problems(doc, schema)
    assert found and any(where in f for f in found), found
    assert not conforms(doc, schema)


def test_new_keys_are_allowed_and_versions_are_checked_by_name():
    doc = copy.deepcopy(_doc(RESULTS_SCHEMA))
    doc["device"]["a_key_added_later"] = {"x": 1}
    doc["metrics"][0]["another"] = [1]
    validate(doc)
    doc["schema"] = "pytest-gpuperf/2"
    with pytest.raises(SchemaError, match="unknown schema 'pytest-gpuperf/2'"):
        validate(doc)
    with pytest.raises(SchemaError, match="has schema 'pytest-gpuperf/2', expected 'pytest-gpuperf/1'"):
        validate(doc, RESULTS_SCHEMA)
