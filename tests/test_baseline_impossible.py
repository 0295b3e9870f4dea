"""An impossible value is an error, never a pass: one rule (``baselines/validity.py``) for every way a baseline
entry is made — ``gpuperf baseline from-results``, ``--gpuperf-update-baselines``, ``init`` — for the files
themselves and for the gate. A negative time is impossible, in the figure and in any raw sample of it, except
in a differenced figure (a difference of two timings: ``catalog.DIFFERENCED``, or ``info["differenced"]``),
whose single pairs may come out negative on a noisy host while its median may not; a non-finite value or
sample is always impossible.

The results documents are PoCL's saved runs (``results/pocl-*/``), where the event-timed chains and chases
hold negative pairs, with one figure edited, or a few written by hand in the results schema."""

from __future__ import annotations

import copy
import glob
import json
import math
from pathlib import Path
from typing import Any

import pytest

from pytest_gpuperf.baselines import baseline_file, catalog, contention, validity
from pytest_gpuperf.baselines.merge import merge_runs
from pytest_gpuperf.cli import main as gpuperf
from pytest_gpuperf.compare.load import merge
from pytest_gpuperf.devices import discover
from pytest_gpuperf.errors import BaselineFileError, GpuPerfError
from pytest_gpuperf.schemas.results_doc import MetricRecord, ResultsDocument
from pytest_gpuperf.util import jsonio
from suite_support import baseline_folder

REPO = Path(__file__).resolve().parents[1]
SAVED = REPO / "results" / "pocl-pthread-haswell-amd-epyc" / "default-1-opencl.json.xz"
REVIEWED = sorted(glob.glob(str(REPO / "pytest_gpuperf" / "baselines" / "reviewed" / "*.json")))
CL = [d for d in discover().devices if d.backend == "opencl"]


def _metric(name: str, samples: list[Any], unit: str = "us", value: Any = None, **info: Any) -> dict[str, Any]:
    """One metric of a results document (schema ``pytest-gpuperf/1``) with its raw samples."""
    finite = sorted(x for x in samples if isinstance(x, (int, float)) and math.isfinite(x))
    median = finite[len(finite) // 2] if finite else 0.0
    return {"test": "test_k.py::test_k", "name": name, "value": median if value is None else value, "unit": unit,
            "better": "lower", "verdict": "new", "info": dict(info), "tolerance": None, "identity": {},
            "stats": {"median": median, "mad": 0.1, "min": min(finite, default=0.0), "max": max(finite, default=0.0),
                      "n": len(samples), "samples": samples}}


def _doc(*metrics: dict[str, Any]) -> dict[str, Any]:
    return {"schema": "pytest-gpuperf/1",
            "device": {"key": "dev", "name": "Dev", "backend": "opencl", "index": 0, "vendor": "v", "is_cpu": True},
            "environment": {"driver": "1", "runtime": "r", "toolkit": "t", "commit": "abc"},
            "run": {"started": "s", "finished": "f"}, "metrics": list(metrics)}


def _write(tmp_path: Path, name: str, doc: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.fixture(scope="module")
def saved() -> dict[str, Any]:
    """A saved PoCL run of the shipped suites (its chains and chases hold negative pairs)."""
    return jsonio.read_json(SAVED)


def _named(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(m for m in doc["metrics"] if m["name"] == name)


# ---- the rule ----------------------------------------------------------------------------------------------

def test_the_shipped_differenced_figures_are_named_in_the_catalog() -> None:
    for name in ("latency.fp32.add.fast.ns", "latency.fp64.rcp.cycles", "memory.chase.1MiB.latency.cycles",
                 "memory.l1.latency.cycles", "memory.dram.latency.cycles", "memory.shared.latency.cycles",
                 "memory.global.latency.loaded.cycles"):
        assert catalog.differenced(name), name
    for name in ("launch.empty.device_us", "memory.copy.bandwidth.1MiB", "model.ptx.global_latency.full_device.cycles",
                 "memory.global.latency_model.r2", "throughput.fp32.fma.ops_per_clk"):
        assert catalog.differenced(name) is None, name


def test_a_negative_sample_of_a_time_is_impossible_unless_the_figure_is_differenced() -> None:
    said = validity.sample_problem("k.us", "us", [2.0, -0.4, 2.2], differenced=False)
    assert said is not None and "k.us" in said and "-0.4 us" in said and "negative" in said
    assert "again alone" in said and "timer's resolution" in said  # what to do
    assert validity.sample_problem("k.us", "us", [2.0, -0.4, 2.2], differenced=True) is None
    said = validity.sample_problem("k.us", "us", [-2.0, -0.4, 2.2], differenced=True)
    assert said is not None and "median" in said and "-0.4 us" in said
    assert validity.sample_problem("k.delta", "ratio", [-1.0, -2.0], differenced=False) is None  # signed unit


@pytest.mark.parametrize("bad", [math.nan, math.inf, "nan", "-inf"])
def test_a_non_finite_sample_or_value_is_always_impossible(bad: Any) -> None:
    for differenced in (False, True):
        said = validity.sample_problem("k.ratio", "ratio", [1.0, bad, 1.1], differenced=differenced)
        assert said is not None and "not finite" in said
    said = validity.metric_problem(_metric("k.us", [1.0, 1.1], value=bad))
    assert said is not None and "k.us" in said


def test_a_declared_differenced_figure_of_one_s_own_may_have_negative_pairs() -> None:
    assert validity.metric_problem(_metric("my.diff.ns", [-0.4, 2.0, 2.2, 2.4], unit="ns", differenced=True)) is None
    said = validity.metric_problem(_metric("my.diff.ns", [-0.4, 2.0, 2.2, 2.4], unit="ns"))
    assert said is not None and "info['differenced']" in said


# ---- from-results ------------------------------------------------------------------------------------------

def test_the_hand_written_runs_follow_the_results_schema() -> None:
    from pytest_gpuperf import RESULTS_SCHEMA
    from pytest_gpuperf.schemas import problems

    doc = _doc(_metric("a.us", [1.0, -2.0]), _metric("b.us", [1.0], value="nan"), _metric("c.us", [1.0], value="-inf"))
    assert problems(doc, RESULTS_SCHEMA) == []


def test_from_results_refuses_a_negative_latency_and_writes_nothing(tmp_path: Path, capsys) -> None:
    bad = _doc(_metric("my.kernel.latency_us", [5.0, 5.1, -0.3, 5.2]), _metric("my.other.us", [1.0, 1.1]))
    paths = [_write(tmp_path, "r1.json", _doc(_metric("my.kernel.latency_us", [5.0, 5.1]), _metric("my.other.us", [1.0]))),
             _write(tmp_path, "r2.json", bad)]
    assert gpuperf(["baseline", "from-results", "--dir", str(tmp_path / "bl"), *paths]) == 2
    err = capsys.readouterr().err
    assert "impossible value: my.kernel.latency_us" in err and "-0.3 us" in err and "run 2" in err
    assert "again alone" in err and "my.other.us" not in err
    assert not (tmp_path / "bl" / "dev.json").exists()


@pytest.mark.parametrize("value", ["nan", -2.0])
def test_from_results_refuses_an_impossible_value(tmp_path: Path, capsys, value: Any) -> None:
    path = _write(tmp_path, "r.json", _doc(_metric("my.kernel.us", [1.0, 1.1], value=value)))
    assert gpuperf(["baseline", "from-results", "--dir", str(tmp_path / "bl"), path]) == 2
    assert "impossible value: my.kernel.us" in capsys.readouterr().err
    assert not (tmp_path / "bl" / "dev.json").exists()


def test_from_results_takes_a_saved_pocl_run_whose_differenced_figures_have_negative_pairs(
        tmp_path: Path, saved: dict[str, Any]) -> None:
    doc = copy.deepcopy(saved)
    pairs = {m["name"]: m for m in doc["metrics"]
             if any(isinstance(x, (int, float)) and x < 0 for x in (m.get("stats") or {}).get("samples") or [])}
    assert pairs and all(catalog.differenced(n) for n in pairs)  # the saved run holds negative pairs, all differenced
    entries = merge_runs([ResultsDocument.from_json(doc)], 6.0)
    chain = "latency.fp32.add.fast.ns"
    assert chain in pairs and entries[chain]["value"] > 0 and min(entries[chain]["samples"]) < 0
    # the same run with one sample of a launch time (not a difference) negative is refused, naming it
    launch = _named(doc, "launch.empty.device_us")
    launch["stats"]["samples"][0] = -abs(launch["stats"]["samples"][0])
    with pytest.raises(GpuPerfError, match=r"impossible value: launch\.empty\.device_us: 1 of its \d+ samples are "
                                           r"negative") as got:
        merge_runs([ResultsDocument.from_json(doc)], 6.0)
    assert chain not in str(got.value)
    # a differenced figure whose median is negative is refused too
    doc = copy.deepcopy(saved)
    chase = _named(doc, "memory.chase.1MiB.latency.cycles")
    chase["stats"]["samples"] = [-abs(x) - 1.0 for x in chase["stats"]["samples"]]
    chase["value"] = sorted(chase["stats"]["samples"])[len(chase["stats"]["samples"]) // 2]
    with pytest.raises(GpuPerfError, match=r"memory\.chase\.1MiB\.latency\.cycles = -[\d.]+ cycles is negative"):
        merge_runs([ResultsDocument.from_json(doc)], 6.0)


# ---- init (the same rule, through its screening) -----------------------------------------------------------

def test_init_screens_by_the_same_rule() -> None:
    docs = [_doc(_metric("a.us", [1.0, 1.1]), _metric("b.ns", [-0.4, 2.0, 2.1], unit="ns"),
                 _metric("latency.my.op.ns", [-0.4, 2.0, 2.1], unit="ns"), _metric("c.us", [1.0], value="nan"))]
    sc = contention.screen([ResultsDocument.from_json(d) for d in docs])
    assert sorted(sc.impossible) == ["b.ns", "c.us"]
    assert sc.left_out["b.ns"] == f"run 1: {validity.metric_problem(docs[0]['metrics'][1])}"
    merged = merge_runs(sc.docs, 6.0)  # what init then merges holds nothing impossible
    assert sorted(merged) == ["a.us", "latency.my.op.ns"]


# ---- baseline files: written and loaded by the rule ----------------------------------------------------------

def _entry(samples: list[float], **extra: Any) -> dict[str, Any]:
    return {"value": sorted(samples)[len(samples) // 2], "unit": "ns", "better": "lower",
            "tolerance": {"rel": 0.1}, "samples": samples, **extra}


def test_a_baseline_file_with_an_impossible_entry_is_refused_naming_it(tmp_path: Path) -> None:
    doc = {"schema": "pytest-gpuperf-baseline/1", "device": {"key": "dev"},
           "backends": {"opencl": {"provenance": {}, "metrics": {
               "my.fit.ns": _entry([-0.4, 2.0, 2.2]),
               "latency.my.op.ns": _entry([-0.4, 2.0, 2.2]),            # differenced by its name
               "my.diff.ns": _entry([-0.4, 2.0, 2.2], differenced=True),  # declared differenced
               "my.neg.ns": {**_entry([-3.0, -2.0, 1.0], differenced=True), "value": 1.0},  # its pairs' median
               "my.neg.us": {**_entry([1.0, 2.0]), "value": -1.0, "unit": "us"}}}}}
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(BaselineFileError) as got:
        baseline_file.load_file(path)
    found = got.value.problems
    assert len(found) == 3, found
    assert any("my.fit.ns" in p and "-0.4 ns" in p for p in found)
    assert any("my.neg.ns" in p and "median" in p for p in found)
    assert any("my.neg.us = -1 us is negative" in p for p in found)


def test_update_refuses_to_write_an_impossible_entry(tmp_path: Path) -> None:
    target = baseline_file.BaselineFile(tmp_path / "dev.json")
    with pytest.raises(BaselineFileError, match="my.fit.ns"):
        baseline_file.update(target, "opencl", {"key": "dev"}, {}, {"my.fit.ns": _entry([-0.4, 2.0, 2.2])})
    assert not target.path.exists()


@pytest.mark.parametrize("path", REVIEWED, ids=lambda p: Path(p).stem)
def test_no_reviewed_baseline_holds_an_impossible_value(path: str) -> None:
    """Every shipped entry passes the rule (loading refuses a file that fails it); the check is not vacuous: the
    PoCL file's chain and chase entries keep negative pairs, which only their differenced name allows."""
    data = baseline_file.load_file(path).data
    entries = [(n, e) for s in data["backends"].values() for n, e in s["metrics"].items()]
    assert entries and all(validity.entry_problem(n, e) is None for n, e in entries)
    pairs = [n for n, e in entries if min(e.get("samples") or [0.0]) < 0]
    assert all(catalog.differenced(n) for n in pairs)
    assert all(validity.sample_problem(n, e["unit"], e["samples"], differenced=False) is not None
               for n, e in entries if n in pairs)
    if Path(path).stem.startswith("pocl-pthread"):
        assert len(pairs) > 10


def test_every_differenced_row_names_figures_the_reviewed_baselines_hold() -> None:
    from fnmatch import fnmatchcase

    names = {n for p in REVIEWED for s in baseline_file.load_file(p).data["backends"].values() for n in s["metrics"]}
    for pattern, how in catalog.DIFFERENCED:
        assert how and any(fnmatchcase(n, pattern) for n in names), pattern


# ---- the gate ----------------------------------------------------------------------------------------------

def side_metric(name: str, metrics: list[dict[str, Any]]):
    """A side's metric from one stored metric per run, each read as the comparison reads it."""
    return merge(name, [MetricRecord.from_json(m) for m in metrics])


def test_gpuperf_compare_reads_an_impossible_sample_as_an_error_row() -> None:
    from pytest_gpuperf.compare.engine import judge

    dev = {"key": "dev", "is_cpu": True}
    good = side_metric("my.kernel.us", [_metric("my.kernel.us", [5.0, 5.1, 5.2, 5.0, 5.1])])
    bad = side_metric("my.kernel.us", [_metric("my.kernel.us", [5.0, -5.1, 5.2, 5.0, 5.1])])
    row = judge(good, bad, dev, dev)
    assert row.verdict == "error" and row.fails and "B: impossible value: my.kernel.us" in row.reason
    pairs = [side_metric("latency.my.op.ns", [_metric("latency.my.op.ns", [5.0, -5.1, 5.2, 5.0, 5.1], unit="ns")])
             for _ in "AB"]
    assert judge(*pairs, dev, dev).verdict != "error"


RECORD = '''
import json, os
from pytest_gpuperf.timing.stats import Stats


def test_record(gpu_device, gpuperf_record):
    doc = json.load(open(os.environ["RUN"]))
    for m in doc["metrics"]:
        gpuperf_record(m["name"], m["value"], m["unit"], better=m["better"], stats=Stats.of(m["stats"]["samples"]),
                       info=m["info"])
'''


def _run_file(tmp_path: Path, saved: dict[str, Any], names: tuple[str, ...], negative: str | None = None) -> str:
    """A results file holding the saved run's ``names``, with one sample of ``negative`` made negative."""
    doc = copy.deepcopy(saved)
    doc["metrics"] = [m for m in doc["metrics"] if m["name"] in names]
    for m in doc["metrics"]:
        m["info"] = {k: v for k, v in m["info"].items() if k not in ("line", "host", "tenants", "power")}
        if m["name"] == negative:
            m["stats"]["samples"][0] = -abs(m["stats"]["samples"][0])
    return _write(tmp_path, f"run-{negative or 'clean'}.json", doc)


@pytest.mark.skipif(not CL, reason="no OpenCL device (install pocl-opencl-icd)")
def test_update_path_and_gate_refuse_a_negative_time_and_take_differenced_pairs(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, saved: dict[str, Any]) -> None:
    names = ("latency.fp32.add.fast.ns", "memory.chase.1MiB.latency.cycles", "launch.empty.device_us")
    pytester.makepyfile(RECORD)
    bl = baseline_folder(pytester.path, "bl")
    args = ("--gpuperf-device=opencl:0", f"--gpuperf-baseline-dir={bl}", "-p", "no:cacheprovider")
    # the update path: the saved figures, differenced ones with negative pairs, are written
    monkeypatch.setenv("RUN", _run_file(pytester.path, saved, names))
    pytester.runpytest(*args, "--gpuperf-update-baselines").assert_outcomes(passed=1)
    (written,) = bl.glob("*.json")
    entries = baseline_file.load_file(written).metrics("opencl")
    assert sorted(entries) == sorted(names) and min(entries["latency.fp32.add.fast.ns"]["samples"]) < 0
    before = entries["launch.empty.device_us"]
    # the same run with one launch-time sample negative: the test fails naming it, and its entry is not rewritten
    monkeypatch.setenv("RUN", _run_file(pytester.path, saved, names, negative="launch.empty.device_us"))
    result = pytester.runpytest(*args, "--gpuperf-update-baselines")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*impossible value: launch.empty.device_us: 1 of its * samples are negative*"])
    assert baseline_file.load_file(written).metrics("opencl")["launch.empty.device_us"] == before
    # gated against that baseline: an error (the test fails), never a verdict
    result = pytester.runpytest(*args)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "impossible value: launch.empty.device_us" in out and result.ret != 0
