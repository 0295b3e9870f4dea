"""The sibling check (issue 19) on synthetic results documents whose answer is known by construction.

Samples are drawn with a fixed seed around known medians; a card planted 10 % slower than three
healthy siblings must be the only outlier on a GPU (3 % floor), and the rules around it (direction,
significance, the class floor, CPU floors, values without samples, identity, physical identity,
backends) must each decide the way the module docstring says.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pytest_gpuperf import RESULTS_SCHEMA
from pytest_gpuperf.fleet import siblings
from pytest_gpuperf.fleet.identity import normalize_pci, physical_id
from pytest_gpuperf.schemas.results_doc import ResultsDocument
from suite_support import gpuperf_in_process

ROOT = Path(__file__).resolve().parents[1]


def _metric(name: str, samples=None, value=None, unit="us", better="lower", identity=None) -> dict:
    if samples is not None:
        xs = [float(x) for x in samples]
        value = float(np.median(xs))
        stats = {"median": value, "mad": 0.0, "min": min(xs), "max": max(xs), "n": len(xs), "samples": xs}
    else:
        stats = None
    return {"test": "t.py::f", "name": name, "value": value, "unit": unit, "better": better, "stats": stats,
            "baseline": None, "verdict": "new", "info": {}, "tolerance": None, "identity": identity or {}}


def _doc(index: int, metrics: list[dict], key="nvidia-h100-80gb-hbm3", backend="cuda", is_cpu=False,
         pci: str | None = None) -> dict:
    extra = {"pci_bus_id": pci} if pci else {}
    return {"schema": RESULTS_SCHEMA,
            "device": {"backend": backend, "index": index, "spec": f"{backend}:{index}", "key": key,
                       "name": key, "is_cpu": is_cpu, "extra": extra},
            "environment": {}, "run": {}, "metrics": metrics}


def _check(docs: list[dict], **kwargs) -> dict:
    """The sibling report of ``docs``, each read as a results file is (:class:`ResultsDocument`)."""
    return siblings.check([ResultsDocument.from_json(d, f"r{i}.json") for i, d in enumerate(docs)], **kwargs)


def _noisy(median: float, n: int = 40, cv: float = 0.005, seed: int = 0) -> np.ndarray:
    return median * (1.0 + cv * np.random.default_rng(seed).standard_normal(n))


def _rows(report: dict, metric: str) -> dict[str, dict]:
    return {r["device"]: r for g in report["groups"] for r in g["rows"] if r["metric"] == metric}


def test_the_card_planted_ten_percent_slower_is_the_only_outlier():
    docs = [_doc(i, [_metric("lat.fma", _noisy(10.0 * (1.10 if i == 2 else 1.0), seed=i))]) for i in range(4)]
    rep = _check(docs)
    rows = _rows(rep, "lat.fma")
    assert rows["cuda:2"]["verdict"] == "outlier"
    assert 1.08 < rows["cuda:2"]["ratio"] < 1.12 and rows["cuda:2"]["basis"] == "samples"
    assert rows["cuda:2"]["difference"]["significant"] is True
    assert {s: r["verdict"] for s, r in rows.items() if s != "cuda:2"} == {"cuda:0": "same", "cuda:1": "same",
                                                                         "cuda:3": "same"}
    assert [r["device"] for r in rep["outliers"]] == ["cuda:2"]
    assert rep["groups"][0]["outlier_devices"] == ["cuda:2"]
    assert rep["schema"] == siblings.SCHEMA
    from pytest_gpuperf.schemas import SchemaError, validate
    validate(rep, siblings.SCHEMA, source="sibling report")  # the versioned schema, shipped as package data
    bad = {**rep, "outliers": [{**rep["outliers"][0], "verdict": "slow"}]}
    with pytest.raises(SchemaError):
        validate(bad, siblings.SCHEMA, source="a sibling report with an unknown verdict")


def test_direction_comes_from_better_a_faster_card_is_better_not_outlier():
    # higher is better (bandwidth): the card reading 10 % less is the outlier, the one reading more is not
    docs = [_doc(0, [_metric("bw", _noisy(3000, seed=1), unit="GB/s", better="higher")]),
            _doc(1, [_metric("bw", _noisy(2700, seed=2), unit="GB/s", better="higher")]),
            _doc(2, [_metric("bw", _noisy(3000, seed=3), unit="GB/s", better="higher")])]
    rows = _rows(_check(docs), "bw")
    assert rows["cuda:1"]["verdict"] == "outlier"
    assert rows["cuda:0"]["verdict"] != "outlier" and rows["cuda:2"]["verdict"] != "outlier"
    # lower is better: a card 10 % *faster* than its siblings is "better"
    docs = [_doc(i, [_metric("t", _noisy(9.0 if i == 0 else 10.0, seed=10 + i))]) for i in range(4)]
    rows = _rows(_check(docs), "t")
    assert rows["cuda:0"]["verdict"] == "better"
    assert all(rows[f"cuda:{i}"]["verdict"] == "same" for i in (1, 2, 3))


def test_an_effect_inside_the_class_floor_is_not_an_outlier_even_when_significant():
    docs = [_doc(i, [_metric("t", _noisy(10.0 * (1.02 if i == 1 else 1.0), n=200, cv=0.001, seed=i))])
            for i in range(2)]
    row = _rows(_check(docs), "t")["cuda:1"]
    assert row["difference"]["significant"] is True and 1.015 < row["ratio"] < 1.025
    assert row["verdict"] == "same" and row["threshold"] == 0.03
    # with one threshold of 1 % for every metric (gpuperf siblings --threshold 0.01) it is one
    assert _rows(_check(docs, floor=0.01), "t")["cuda:1"]["verdict"] == "outlier"


def test_beyond_the_floor_but_not_significant_is_same_with_the_reason():
    # five samples a side, spread over ±50 %: the medians differ by 20 % but the test cannot tell
    a = [5.0, 8.0, 10.0, 12.0, 15.0]
    b = [6.0, 9.0, 12.0, 14.0, 18.0]
    rows = _rows(_check([_doc(0, [_metric("t", a)]), _doc(1, [_metric("t", b)])]), "t")
    assert rows["cuda:1"]["ratio"] > 1.03
    assert rows["cuda:1"]["verdict"] == "same" and "not significant" in rows["cuda:1"]["reason"]


def test_cpu_devices_use_the_cpu_floor_of_the_class():
    # a time 50 % slower is inside PoCL's 100 % time floor; 3x slower is past it
    def docs(factor):
        return [_doc(i, [_metric("t", _noisy(1.0 * (factor if i == 1 else 1.0), seed=i))], key="pocl-x",
                     backend="opencl", is_cpu=True) for i in range(2)]

    assert _rows(_check(docs(1.5)), "t")["opencl:1"]["verdict"] == "same"
    row = _rows(_check(docs(3.0)), "t")["opencl:1"]
    assert row["verdict"] == "outlier" and row["threshold"] == 1.0


def test_metrics_without_samples_are_judged_on_values_and_exact_ones_must_match():
    docs = [_doc(i, [_metric("ulp.sin", value=4.0 if i == 1 else 1.0, unit="ulp", better="bound"),
                     _metric("count", value=7 if i == 2 else 3, unit="items", better="exact"),
                     _metric("zero", value=2.0 if i == 0 else 0.0, unit="ulp", better="lower")])
            for i in range(4)]
    rep = _check(docs)
    ulp = _rows(rep, "ulp.sin")
    assert ulp["cuda:1"]["verdict"] == "outlier" and ulp["cuda:1"]["basis"] == "values"
    assert ulp["cuda:0"]["verdict"] == "same"
    count = _rows(rep, "count")
    assert count["cuda:2"]["verdict"] == "outlier" and count["cuda:0"]["verdict"] == "same"
    assert _rows(rep, "zero")["cuda:0"]["verdict"] == "outlier"


def test_a_metric_measured_another_way_is_incomparable():
    docs = [_doc(0, [_metric("t", _noisy(10, seed=1), identity={"n": 4096})]),
            _doc(1, [_metric("t", _noisy(20, seed=2), identity={"n": 8192})])]
    rows = _rows(_check(docs), "t")
    assert {r["verdict"] for r in rows.values()} == {"incomparable"}


def test_groups_are_one_model_one_backend_and_distinct_physical_cards():
    slow = [_metric("t", _noisy(20, seed=5))]
    fast = [_metric("t", _noisy(10, seed=6))]
    # two models: no group at all
    assert _check([_doc(0, fast), _doc(1, slow, key="nvidia-a100")])["groups"] == []
    # the CUDA and the OpenCL view of one card: one card, never its own sibling
    same_card = [_doc(0, fast, pci="0000:3B:00.0"), _doc(0, slow, backend="opencl", pci="00000000:3b:00.0")]
    assert _check(same_card)["groups"] == []
    # the same card's file given twice is one card
    assert _check([_doc(0, fast, pci="0000:3b:00.0"), _doc(1, slow, pci="0000:3B:00.0")])["groups"] == []


def test_physical_identity_joins_cuda_and_nvidia_opencl_spellings():
    assert normalize_pci("00000000:3B:00.0") == normalize_pci("0000:3b:00.0") == normalize_pci("3b:00") == "0000:3b:00"
    assert normalize_pci("not a bus id") is None
    cuda = {"backend": "cuda", "index": 0, "extra": {"pci_bus_id": "0000:3B:00.0"}}
    ocl = {"backend": "opencl", "index": 1, "extra": {"pci_bus_id": "0000:3b:00.0"}}
    assert physical_id(cuda) == physical_id(ocl) == "pci:0000:3b:00"
    assert physical_id({"backend": "opencl", "index": 1, "extra": {}}) == "opencl:1"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest_gpuperf.cli", "siblings", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def test_cli_exit_status_and_formats(tmp_path, capsys):
    paths = []
    for i in range(3):
        p = tmp_path / f"r{i}.json"
        p.write_text(json.dumps(_doc(i, [_metric("t", _noisy(10.0 * (1.2 if i == 1 else 1.0), seed=i))])))
        paths.append(str(p))
    res = _cli(*paths)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "OUTLIER cuda:1 t" in res.stdout
    out = tmp_path / "s.json"
    code, stdout, err = gpuperf_in_process(capsys, "siblings", paths[0], paths[2], "--format", "json", "-o", str(out))
    assert code == 0, stdout + err
    assert json.loads(out.read_text())["outliers"] == []
    (tmp_path / "bad.json").write_text("{}")
    code, _, err = gpuperf_in_process(capsys, "siblings", paths[0], str(tmp_path / "bad.json"))
    assert code == 2 and "not a pytest-gpuperf results document" in err
    assert gpuperf_in_process(capsys, "siblings", paths[0])[0] == 2  # one card has no siblings
    # the report written beside the results (s.json: a siblings report) is read past when a glob takes it in
    code, _, err = gpuperf_in_process(capsys, "siblings", paths[0], paths[2], str(out))
    assert code == 0 and f"{out} is a siblings report, not a run's results: left out" in err


def test_history_import_keeps_two_cards_of_one_model_from_one_run_apart(tmp_path):
    """Results files of two same-model cards of one run differ only in the device index: importing both
    must add two runs (the uid hashes the index), and importing them again adds none."""
    from pytest_gpuperf.history.backends import read_runs, record_runs
    from pytest_gpuperf.history.records import from_results, read_results

    docs = []
    for i in range(2):
        doc = _doc(i, [_metric("t", _noisy(10.0, seed=i))], key="pocl-x", backend="opencl", is_cpu=True)
        doc["run"] = {"started": "2026-11-24T08:00:00Z", "argv": ["--gpuperf-device=all"]}
        doc["environment"] = {"commit": "abc", "host": "h"}
        docs.append(doc)
    runs = [from_results(read_results(d)) for d in docs]
    assert runs[0].uid != runs[1].uid
    target = str(tmp_path / "h.db")
    assert record_runs(target, runs) == 2
    assert record_runs(target, [from_results(read_results(d)) for d in docs]) == 0
    assert len(read_runs(target)) == 2
