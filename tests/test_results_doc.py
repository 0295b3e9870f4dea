"""The typed results document (``schemas.results_doc``): it reads every saved results file and writes back the
very dict it read, key order included, and a malformed document fails with the file's name and the problem."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Iterator

import pytest

from pytest_gpuperf import RESULTS_SCHEMA
from pytest_gpuperf.report import results
from pytest_gpuperf.schemas.results_doc import MetricRecord, ResultsDocument, ResultsDocumentError
from pytest_gpuperf.timing.stats import Stats
from pytest_gpuperf.util import jsonio

ROOT = Path(__file__).resolve().parents[1]


def _saved_results() -> Iterator[tuple[Path, dict]]:
    """Every saved file under results/ that is a results document (schema pytest-gpuperf/1), with its dict, one
    at a time (hundreds of MB of JSON held at once would only make the collector walk them)."""
    for p in sorted((ROOT / "results").rglob("*.json*")):
        if not jsonio.is_results_name(p.name):
            continue
        raw = jsonio.read_json(p)
        if isinstance(raw, dict) and raw.get("schema") == RESULTS_SCHEMA:
            yield p, raw


def test_every_saved_results_file_round_trips_to_the_identical_dict() -> None:
    n, xz = 0, None
    for p, raw in _saved_results():
        n += 1
        xz = xz or (p if p.suffix == ".xz" else None)
        doc = ResultsDocument.from_json(raw, p)
        assert len(doc.metrics) == len(raw["metrics"]) and doc.source == str(p)
        back = doc.to_json()
        assert back == raw, p
        # key order too, at the top and in every metric (nested sections are the file's own dicts)
        assert list(back) == list(raw), p
        assert all(list(a) == list(b) for a, b in zip(back["metrics"], raw["metrics"])), p
    assert n > 100, "the saved runs under results/ were not found"
    assert xz is not None, "no saved results file is stored as .json.xz"
    assert ResultsDocument.load(xz).to_json() == jsonio.read_json(xz)


def test_a_written_document_round_trips_and_names_its_fields() -> None:
    m = results.Metric(test="t.py::t", name="a.b", value=2.5, unit="us", better="lower",
                       stats=Stats(2.5, 0.1, 2.4, 2.7, 3, (2.4, 2.5, 2.7)), identity={"n": 4})
    raw = {"schema": RESULTS_SCHEMA, "device": {"key": "cpu"}, "environment": {}, "run": {},
           "metrics": [m.to_json(), {**m.to_json(), "name": "a.c", "later": 1}], "missing": [], "extra_top": 7}
    doc = ResultsDocument.from_json(raw, "x.json")
    assert doc.to_json() == raw and list(doc.to_json()) == list(raw)
    rec = doc.metric("a.b")
    assert isinstance(rec, MetricRecord)
    assert (rec.value, rec.unit, rec.better, rec.identity, rec.samples) == (2.5, "us", "lower", {"n": 4},
                                                                              [2.4, 2.5, 2.7])
    assert doc.metric("a.c").extra == {"later": 1} and doc.extra == {"extra_top": 7}
    assert doc.metric("nope") is None
    assert doc.device == {"key": "cpu"} and doc.card is None and doc.get("card", "absent") == "absent"


def test_an_older_metric_without_identity_stays_without_it() -> None:
    old = {"test": "t", "name": "x", "value": 1.0, "unit": "us", "better": "lower", "stats": None,
           "baseline": None, "verdict": "new", "info": {}, "tolerance": None}
    rec = MetricRecord.from_json(old)
    assert rec.identity == {} and rec.get("identity") is None and rec.to_json() == old


@pytest.mark.parametrize("raw, problem", [
    ([1, 2], "holds a JSON list, not an object"),
    ({"schema": RESULTS_SCHEMA}, "has no 'metrics' list"),
    ({"metrics": {}}, "has no 'metrics' list"),
    ({"metrics": [], "device": "gpu"}, "its 'device' is str, not an object"),
    ({"metrics": [3]}, "metrics[0]: a metric is int, not an object"),
])
def test_a_malformed_document_names_the_file_and_the_problem(raw: object, problem: str) -> None:
    with pytest.raises(ResultsDocumentError) as e:
        ResultsDocument.from_json(raw, "runs/bad.json")
    assert str(e.value).startswith("runs/bad.json") and problem in str(e.value)


def test_load_reads_gzip_and_refuses_what_is_not_json(tmp_path: Path) -> None:
    raw = {"schema": RESULTS_SCHEMA, "device": {}, "environment": {}, "run": {}, "metrics": []}
    gz = tmp_path / "r.json.gz"
    gz.write_bytes(gzip.compress(json.dumps(raw).encode()))
    assert ResultsDocument.load(tmp_path / "r.json").to_json() == raw
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ResultsDocumentError, match="bad.json: not valid JSON"):
        ResultsDocument.load(bad)
    with pytest.raises(FileNotFoundError):
        ResultsDocument.load(tmp_path / "none.json")


def test_require_fails_as_indexing_the_stored_dict_would() -> None:
    rec = MetricRecord.from_json({"name": "x", "value": 1.0})
    assert rec.require("name", "value") is rec
    with pytest.raises(KeyError, match="unit"):
        rec.require("name", "unit")
