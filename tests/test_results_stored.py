"""What a results file stores: compact JSON, and a metric's one-line message only where it says more than the
stored fields beside it (``report.results.stored``); and what a saved run kept in a repository stores of each
metric's baseline copy: what its readers take (``report.results.saved_form``)."""

from __future__ import annotations

import json
import statistics

from pathlib import Path

import pytest

from pytest_gpuperf import RESULTS_SCHEMA
from pytest_gpuperf.fleet.fleetload import pool_metrics
from pytest_gpuperf.gatecheck.run import RunOutcome, summarize_aa
from pytest_gpuperf.history.records import metric_from_json
from pytest_gpuperf.report import results, sensitivity
from pytest_gpuperf.schemas import problems
from pytest_gpuperf.schemas.results_doc import ResultsDocument
from pytest_gpuperf.util import jsonio

ROOT = Path(__file__).resolve().parents[1]


def _metric(name: str, verdict: str) -> dict:
    return {"test": "t.py::t", "name": name, "value": 1.25, "unit": "us", "better": "lower", "stats": None,
            "baseline": {"value": 1.0, "band": 0.3}, "verdict": verdict, "tolerance": None, "identity": {},
            "info": {"line": f"{name}: {verdict.upper()} — expected 1 us, measured 1.25 us", "n": 3}}


def _doc() -> dict:
    verdicts = ("pass", "loose", "regressed", "incomparable", "contended", "new")
    return {"schema": RESULTS_SCHEMA, "device": {"key": "cpu", "backend": "opencl"}, "environment": {}, "run": {},
            "metrics": [_metric(f"m.{v}", v) for v in verdicts], "card": {}}


def test_a_results_file_keeps_the_lines_that_say_why_and_is_compact(tmp_path):
    doc = _doc()
    path = tmp_path / "r.json"
    results.write(str(path), doc)
    text = path.read_text(encoding="utf-8")
    back = json.loads(text)
    assert text == json.dumps(back, separators=(",", ":")) + "\n"  # compact: no indentation, no spaces
    lines = {m["verdict"]: m["info"].get("line") for m in back["metrics"]}
    assert lines["pass"] is None and lines["loose"] is None  # restated by value, baseline and band
    assert all(lines[v] == f"m.{v}: {v.upper()} — expected 1 us, measured 1.25 us"
               for v in ("regressed", "incomparable", "contended", "new"))
    for a, b in zip(doc["metrics"], back["metrics"]):  # everything else as it was, in its order
        assert {k: v for k, v in a["info"].items() if k != "line"} == {k: v for k, v in b["info"].items() if k != "line"}
        assert [k for k in a if k != "info"] == [k for k in b if k != "info"] and a["value"] == b["value"]
    assert all("line" in m["info"] for m in doc["metrics"])  # the caller's document is left as it was


def test_a_saved_plant_run_written_again_follows_the_schema_and_its_summary_quotes_the_regression(tmp_path):
    """A saved gate-check run (a planted chase: one metric regressed, the rest pass), written as a results
    file is now: it follows the results schema, and the gate check's summary still quotes why it regressed."""
    doc = jsonio.read_json(ROOT / "results/nvidia-h200/gatecheck-e003155/plant-chase-1.json.xz")
    path = tmp_path / "plant.json"
    results.write(str(path), doc)
    back = jsonio.read_json(path)
    assert problems(back, RESULTS_SCHEMA) == []
    regressed = [m for m in back["metrics"] if m["verdict"] == "regressed"]
    assert len(regressed) == 1 and "REGRESSED" in regressed[0]["info"]["line"]
    assert all("line" not in m["info"] for m in back["metrics"] if m["verdict"] == "pass")
    entry = summarize_aa(1, RunOutcome(1, ResultsDocument.load(path), 1.0, tmp_path / "plant.log", path), fresh=False)
    assert entry["regressed"] == [{"metric": regressed[0]["name"], "line": regressed[0]["info"]["line"]}]


def test_a_document_without_a_metrics_list_is_stored_as_it_is():
    assert results.stored({"schema": RESULTS_SCHEMA, "metrics": None}) == {"schema": RESULTS_SCHEMA, "metrics": None}
    odd = {"metrics": [{"verdict": "pass", "info": None}, "not a metric"]}
    assert results.stored(odd) == odd


def _judged(name: str, verdict: str, value: float) -> dict:
    """A metric as the baseline gate leaves it: the entry's copy and the comparison in ``baseline``."""
    return {"test": "t.py::t", "name": name, "value": value, "unit": "us", "better": "lower",
            "stats": {"median": value, "mad": 0.01, "min": value, "max": value + 0.1, "n": 3,
                      "samples": [value, value, value + 0.1]},
            "baseline": {"value": 1.0, "unit": "us", "better": "lower", "tolerance": {"k": 6.0, "rel": 0.01},
                         "identity": {"n": 4096}, "run_values": [0.98, 1.0, 1.03], "runs": 3, "test": "t.py::t",
                         "citation": "a paper", "band": 0.3, "delta_rel": value - 1.0, "reason": "why loose",
                         "difference": {"ratio": value, "ci": [0.9, 1.1], "p_value": 0.5, "significant": False},
                         "detect": {"mde": 0.05, "basis": "band", "class": "\u22645 %"}},
            "verdict": verdict, "info": {"line": f"{name}: {verdict.upper()}", "n": 3}, "tolerance": None,
            "identity": {"n": 4096}}


def test_a_saved_run_keeps_what_its_readers_take_of_the_baseline_copy(tmp_path):
    """The saved form keeps each gate's detection power (what its verdict was worth) and leaves out the copy of the
    entry's own fields, the significance test's figures and a delta the values give; the history, the fleet
    report's noise, the gate check's delta and the schema read the same from it, and compacting it again changes
    nothing."""
    device = {"backend": "opencl", "index": 0, "name": "CPU", "vendor": "pocl", "key": "cpu", "is_cpu": True}
    judged = [_judged("m.pass", "pass", 1.02), _judged("m.regressed", "regressed", 1.5),
              {**_judged("m.new", "new", 2.0), "baseline": None}]
    doc = {**_doc(), "device": device, "metrics": judged, "detection": sensitivity.tally(judged)}
    saved = results.saved_form(doc)
    names = sorted(["value", "better", "band", "run_spread", "reason", "detect"])  # delta_rel: the value gives it
    assert [sorted(m["baseline"]) for m in saved["metrics"][:2]] == [names] * 2
    assert saved["metrics"][0]["baseline"]["detect"] == {"mde": 0.05, "basis": "band", "class": "\u22645 %"}
    assert saved["metrics"][0]["baseline"]["run_spread"] == pytest.approx(statistics.stdev([0.98, 1.0, 1.03]) / 1.0)
    odd = {**doc["metrics"][0], "baseline": {**doc["metrics"][0]["baseline"], "delta_rel": 0.5}}
    assert results.saved_form({**doc, "metrics": [odd]})["metrics"][0]["baseline"]["delta_rel"] == 0.5  # kept
    assert saved["metrics"][2]["baseline"] is None and "difference" in doc["metrics"][0]["baseline"]  # doc kept
    assert "line" not in saved["metrics"][0]["info"] and saved["metrics"][1]["info"]["line"] == "m.regressed: REGRESSED"
    assert results.saved_form(saved) == saved
    path = tmp_path / "saved.json"
    results.write(str(path), saved)
    assert problems(jsonio.read_json(path), RESULTS_SCHEMA) == []
    full, kept = ResultsDocument.from_json(results.stored(doc)), ResultsDocument.load(path)  # as written, as saved
    assert [metric_from_json(m) for m in full.metrics] == [metric_from_json(m) for m in kept.metrics]
    assert [m.delta_rel for m in kept.metrics] == [m.delta_rel for m in full.metrics] == [1.02 - 1.0, 0.5, None]
    assert pool_metrics([full]) == pool_metrics([kept])
    assert kept.detection == full.detection == sensitivity.tally(full.metrics)  # the run's tally of detect


@pytest.mark.parametrize("key", ["nvidia-h100-80gb-hbm3", "nvidia-h200"])
def test_the_newest_saved_gpu_gate_check_shows_what_each_of_its_gates_would_catch(key):
    """Each card's newest complete gated run, as the repository keeps it: stored whole (the anchor the card's other
    saved CUDA runs are stored against; its OpenCL runs have their own), and every judged metric keeps its detection power (the smallest change its gate
    would read ``regressed``), which add up to the run's own tally."""
    import collections
    from pathlib import Path

    firsts = sorted((Path(__file__).resolve().parents[1] / "results" / key).glob("*/aa-1.json.xz"))
    backend = {p: jsonio.read_json(p)["device"]["backend"] for p in firsts}
    whole = [p for p in firsts if jsonio.base_of(p) is None]
    assert len({backend[p] for p in whole}) == len(whole), whole  # one anchor per backend (compact_saved --anchor)
    firsts = [p for p in firsts if backend[p] == "cuda"]
    whole = [p for p in whole if backend[p] == "cuda"]
    assert len(whole) == 1, whole  # the CUDA anchor
    runs = {p: jsonio.read_json(p)["run"] for p in firsts}
    newest = max((p for p, r in runs.items() if not r.get("interrupted")), key=lambda p: str(runs[p].get("finished")))
    assert whole == [newest], (whole, newest)
    doc = jsonio.read_json(whole[0])
    assert not doc["run"].get("interrupted")
    judged = [m for m in doc["metrics"] if m["verdict"] not in ("ungated", "new")]
    # no regression; the H200's anchor may read figures improved on its baseline
    allowed = {"pass", "loose"} | ({"improved"} if key == "nvidia-h200" else set())
    assert len(judged) > 1800 and all(m["verdict"] in allowed for m in judged), collections.Counter(
        m["verdict"] for m in judged)
    detects = [m["baseline"]["detect"] for m in judged]
    for d in detects:  # a relative change, else an absolute one, else the documented bound it is judged against
        size = d["absolute"] if d["class"] == "absolute" else d["mde"]
        assert (isinstance(size, (int, float)) and size >= 0) if d["class"] != "bound" else size is None, d
    assert dict(collections.Counter(d["class"] for d in detects)) == doc["detection"]
    assert sum(d["class"] in ("≤2 %", "≤5 %") for d in detects) > 1000
