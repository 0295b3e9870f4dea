"""``gpuperf fleet report|compare|baseline`` on real results files.

The cards are saved H100 A/A runs (``results/nvidia-h100-80gb-hbm3/gatecheck*``: unchanged code, every
verdict ``pass``) and saved PoCL runs, each written into a fleet-run folder as one job's results; the
documents keep a subset of their metric families (memory, launch, fuzzed accuracy, fp16 latency, the SM
clock) so each test reads a fleet in well under a second. A planted outlier is a copy of one of those
documents with one metric's value and raw samples scaled: the report's statistics must find exactly it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from pytest_gpuperf import FLEET_SCHEMA
from pytest_gpuperf.baselines import catalog, noise
from pytest_gpuperf.cli import main
from pytest_gpuperf.fleet import fleetload, fleetreport, rollout
from pytest_gpuperf.report.results import card_identity
from pytest_gpuperf.schemas import SchemaError, validate
from pytest_gpuperf.util import jsonio
from suite_support import load_script

ROOT = Path(__file__).resolve().parents[1]
H100 = ROOT / "results" / "nvidia-h100-80gb-hbm3"
#: five unchanged runs whose every metric passed its reviewed baseline: five healthy "cards"
HEALTHY = ["gatecheck/aa-2", "gatecheck/aa-3", "gatecheck/aa-4", "gatecheck-dev/gatecheck/aa-2",
           "gatecheck-dev/gatecheck/aa-5"]
FAMILIES = ("memory.", "launch.", "accuracy.fuzz.", "accuracy.fp64.sin.", "latency.fp16.", "clock.sm")
POCL = ROOT / "results" / "pocl-pthread-skylake-avx512-amd-epyc"


def _trim(doc: dict[str, Any]) -> dict[str, Any]:
    doc["metrics"] = [m for m in doc["metrics"] if m["name"].startswith(FAMILIES)]
    return doc


@pytest.fixture(scope="module")
def healthy() -> list[dict[str, Any]]:
    return [_trim(jsonio.read_json(H100 / f"{name}.json.xz")) for name in HEALTHY]


def _write_run(root: Path, docs: list[dict[str, Any]], labels: list[str] | None = None,
               jobs: list[dict[str, Any]] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i, doc in enumerate(docs):
        label = labels[i] if labels else f"node{i + 1}-{1000 + i}"
        folder = root / label / "results"
        folder.mkdir(parents=True)
        (folder / "run-opencl.json").write_text(json.dumps(doc))
        if jobs and jobs[i]:
            (root / label / "job.json").write_text(json.dumps(jobs[i]))
    return root


def _sampled_metric(doc: dict[str, Any]) -> dict[str, Any]:
    """The first lower-is-better timing with raw samples and a catalog floor no wider than the class's."""
    for m in doc["metrics"]:
        if (m["better"] == "lower" and (m.get("stats") or {}).get("samples") and m["name"].startswith("launch.")):
            return m
    raise AssertionError("no sampled launch metric in the saved run")


def _plant(doc: dict[str, Any], factor: float, pick: Callable[[dict], dict] = _sampled_metric) -> tuple[dict, str]:
    """A copy of ``doc`` with one metric's value and samples scaled by ``factor``."""
    out = copy.deepcopy(doc)
    m = pick(out)
    m["value"] *= factor
    m["stats"]["samples"] = [x * factor for x in m["stats"]["samples"]]
    m["stats"]["median"] *= factor
    return out, m["name"]


def _report(root: Path, confirm: Path | None = None, **kw: Any) -> dict[str, Any]:
    return fleetreport.analyze(fleetload.load(root), fleetload.load(confirm) if confirm else None,
                               fleetreport.Settings(**kw))


def _card(report: dict[str, Any], label: str) -> dict[str, Any]:
    return next(c for c in report["cards"] if c["job"] == label)


# --- card identity ---------------------------------------------------------------------------------

def test_card_identity_of_a_saved_run_names_host_pci_driver_clocks_and_power(healthy):
    card = card_identity(healthy[0]["device"], healthy[0]["environment"])
    assert card["pci_bus_id"] == "0000:00:06.0" and card["driver"] == "580.159.04"
    assert card["max_sm_clock_mhz"] == 1980 and card["power_limit_w"] == 700.0 and card["host"] == "vm"
    assert "uuid" not in card  # saved before NVML's UUID was recorded


def test_nvml_card_identity_on_a_cuda_card():
    pynvml = pytest.importorskip("pynvml", reason="nvidia-ml-py is not installed (the cuda extra)")
    from pytest_gpuperf.devices.nvml import card_identity as nvml_identity

    try:
        pynvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 - no driver on this host
        pytest.skip(f"NVML cannot start here ({exc}): CUDA-only path")
    try:
        ident = nvml_identity(pynvml, pynvml.nvmlDeviceGetHandleByIndex(0))
    finally:
        pynvml.nvmlShutdown()
    assert ident["uuid"].startswith(("GPU-", "MIG-"))


# --- the report --------------------------------------------------------------------------------------

def test_a_fleet_of_healthy_cards_is_ok(tmp_path, healthy):
    rep = _report(_write_run(tmp_path / "run", healthy))
    assert rep["schema"] == FLEET_SCHEMA and rep["tally"]["ok"] == 5, rep["cards"]
    assert rep["tests"] > 100 and fleetreport.exit_status(rep) == 0
    assert rep["cohorts"][0]["judged"] is True


def test_a_planted_outlier_is_uncertain_then_confirmed_or_cleared(tmp_path, healthy):
    planted, name = _plant(healthy[2], 1.5)
    rep = _report(_write_run(tmp_path / "run", healthy[:2] + [planted] + healthy[3:]))
    card = _card(rep, "node3-1002")
    assert card["verdict"] == "uncertain" and [o["metric"] for o in card["outliers"]] == [name]
    assert all(c["verdict"] == "ok" for c in rep["cards"] if c["job"] != "node3-1002")
    assert fleetreport.exit_status(rep) == 3
    # the confirmation re-run of the flagged card only: judged against the first run's cohort
    again = _write_run(tmp_path / "confirm", [_plant(healthy[4], 1.5)[0]], labels=["node3-2002"])
    rep = _report(tmp_path / "run", again)
    assert _card(rep, "node3-1002")["verdict"] == "fail" and fleetreport.exit_status(rep) == 1
    cleared = _write_run(tmp_path / "confirm-clean", [healthy[4]], labels=["node3-3002"])
    rep = _report(tmp_path / "run", cleared)
    assert _card(rep, "node3-1002")["verdict"] == "warn" and fleetreport.exit_status(rep) == 0


def test_a_confirmation_run_that_could_not_judge_the_flagged_metrics_leaves_the_card_uncertain(tmp_path, healthy):
    """The re-run measured the flagged figure while another process held the host (``contended``): it is left out
    of the fleet statistics, so it neither confirms nor clears the card — uncertain, saying why, not a quiet warn."""
    planted, name = _plant(healthy[2], 1.5)
    _write_run(tmp_path / "run", healthy[:2] + [planted] + healthy[3:])
    busy, _ = _plant(healthy[4], 1.5)
    m = next(x for x in busy["metrics"] if x["name"] == name)
    m["verdict"] = "contended"
    m["info"] = {**m["info"], "host": {"windows": 3, "contended": 1, "busy": 3, "remeasured": 2, "foreign_cores_max": 1.1}}
    again = _write_run(tmp_path / "confirm", [busy], labels=["node3-2002"])
    card = _card(_report(tmp_path / "run", again), "node3-1002")
    assert card["verdict"] == "uncertain", card
    assert "the confirmation run could not judge them again" in card["reasons"]["uncertain"][0]


def test_a_slower_card_within_the_floor_is_not_flagged(tmp_path, healthy):
    planted, _ = _plant(healthy[2], 1.01)  # 1 %: under the 3 % floor of a single-run GPU figure
    rep = _report(_write_run(tmp_path / "run", healthy[:2] + [planted] + healthy[3:]))
    assert rep["tally"]["ok"] == 5


def test_a_cohort_smaller_than_the_minimum_gets_no_fleet_relative_verdict(tmp_path, healthy):
    planted, _ = _plant(healthy[2], 1.5)
    rep = _report(_write_run(tmp_path / "run", healthy[:2] + [planted]))  # three cards
    assert rep["tally"]["ok"] == 3 and rep["cohorts"][0]["judged"] is False
    assert "fewer than the minimum of 4" in _card(rep, "node3-1002")["reasons"]["note"][0]
    assert _report(tmp_path / "run", min_cohort=3)["tally"]["uncertain"] == 1


def test_a_throttled_figure_is_left_out_and_named_unless_kept(tmp_path, healthy):
    planted, name = _plant(healthy[2], 1.5)
    m = next(x for x in planted["metrics"] if x["name"] == name)
    m["info"] = {**m["info"], "power": {"throttled": True, "throttle_reasons": ["sw_power_cap"]}}
    root = _write_run(tmp_path / "run", healthy[:2] + [planted] + healthy[3:])
    card = _card(_report(root), "node3-1002")
    assert card["verdict"] == "ok" and card["excluded_metrics"] == [name]
    assert "left out of the fleet statistics" in card["reasons"]["note"][0]
    assert _card(_report(root, keep_disturbed=True), "node3-1002")["verdict"] == "uncertain"


def _deterministic(docs: list[dict[str, Any]], doc: dict[str, Any]) -> dict[str, Any]:
    """A deterministic figure (a size, a count, an ulp error) every card recorded the same way (the runs span two commits, and a
    figure whose identity changed between them is two measurements) with a non-zero value."""
    def same(name: str) -> bool:
        ms = [next((m for m in d["metrics"] if m["name"] == name), None) for d in docs]
        return all(m is not None and m["identity"] == ms[0]["identity"] and m["value"] == ms[0]["value"] for m in ms)
    return next(m for m in doc["metrics"] if isinstance(m["value"], float) and m["value"] > 0
                and noise.is_deterministic(m, m["name"]) and same(m["name"])
                and catalog.grid_tolerance(m["name"], True) is None)  # a grid figure keeps its one-step band


def test_a_deterministic_figure_is_compared_bit_for_bit(tmp_path, healthy):
    odd = copy.deepcopy(healthy[1])
    m = _deterministic(healthy, odd)
    m["value"] = float(np.nextafter(m["value"], np.inf))  # one ulp of the float64 apart
    rep = _report(_write_run(tmp_path / "run", [healthy[0], odd] + healthy[2:]))
    card = _card(rep, "node2-1001")
    assert card["verdict"] == "fail"
    assert [d["metric"] for d in card["deterministic_mismatches"]] == [m["name"]]
    assert sum(c["verdict"] == "ok" for c in rep["cards"]) == 4


def test_a_cache_size_one_grid_step_apart_is_the_same_figure_a_third_smaller_fails(tmp_path, healthy):
    """A cache size read off its footprint grid moves one step between unchanged runs: a card one step from the
    cohort is the same figure (as its gate reads it), a card whose cache reads a third smaller fails."""
    name = next(m["name"] for m in healthy[0]["metrics"] if catalog.grid_tolerance(m["name"], True))
    step, small = copy.deepcopy(healthy[1]), copy.deepcopy(healthy[2])
    for doc, factor in ((step, 1.032), (small, 0.66)):
        m = next(m for m in doc["metrics"] if m["name"] == name)
        m["value"] = m["value"] * factor
    rep = _report(_write_run(tmp_path / "run", [healthy[0], step, small] + healthy[3:]))
    assert [d["metric"] for d in _card(rep, "node2-1001")["deterministic_mismatches"]] == []
    assert [d["metric"] for d in _card(rep, "node3-1002")["deterministic_mismatches"]] == [name]


def test_a_regressed_or_missing_metric_fails_the_card(tmp_path, healthy):
    bad = copy.deepcopy(healthy[0])
    bad["metrics"][0]["verdict"] = "regressed"
    gone = copy.deepcopy(healthy[1])
    gone["missing"] = ["memory.l2.bandwidth"]
    rep = _report(_write_run(tmp_path / "run", [bad, gone] + healthy[2:]))
    assert _card(rep, "node1-1000")["reasons"]["fail"][0].startswith("1 metric(s) regressed")
    assert "missing" in _card(rep, "node2-1001")["reasons"]["fail"][0]
    assert rep["tally"]["fail"] == 2 and rep["cards"][0]["verdict"] == "fail"  # worst first


def test_pocl_jobs_sharing_one_device_are_cards_named_by_job(tmp_path):
    docs = [jsonio.read_json(POCL / f"suites{s}-opencl.json.xz") for s in ("", "-r2", "-r3", "-r4")]
    fleet = fleetload.load(_write_run(tmp_path / "run", docs))
    assert sorted(c.name for c in fleet.cards) == [f"node{i}-{999 + i}/pocl-pthread-skylake-avx512-amd-epyc"
                                                   for i in range(1, 5)]
    assert len({c.cohort for c in fleet.cards}) == 1 and all(c.is_cpu for c in fleet.cards)


def test_a_job_without_results_fails_and_its_node_is_drained(tmp_path, healthy, capsys):
    root = _write_run(tmp_path / "run", healthy[:4])
    (root / "node9-1009").mkdir()
    (root / "node9-1009" / "job.json").write_text(json.dumps({"fleet_run": "run", "job_id": 1009, "node": "node9"}))
    assert main(["fleet", "report", str(root), "--drain"]) == 1
    out = capsys.readouterr().out
    assert "scontrol update nodename=node9 state=drain reason='gpuperf: job node9-1009: no results'" in out
    assert "dry run" in out
    # the report written to a file: the drain commands are still said here, where the operator reads them
    assert main(["fleet", "report", str(root), "--drain", "--format", "html", "-o", str(tmp_path / "fleet.html")]) == 1
    said = capsys.readouterr().out
    assert said.strip() == "scontrol update nodename=node9 state=drain reason='gpuperf: job node9-1009: no results'"


def test_no_results_at_all_is_bad_input(tmp_path, capsys):
    (tmp_path / "run" / "node1-1").mkdir(parents=True)
    (tmp_path / "run" / "node1-1" / "job.json").write_text("{}")
    assert main(["fleet", "report", str(tmp_path / "run")]) == 2
    assert "nothing to check" in capsys.readouterr().err
    assert main(["fleet", "report", str(tmp_path / "nowhere")]) == 2


def test_a_job_folder_s_other_files_are_skipped_or_named(tmp_path, healthy):
    """Beside a card's run: JSON of another schema is passed over in silence; a file that is not JSON, and one
    of the results schema without device or metrics, are named as problems; one whose metric is not an
    object refuses the fleet, naming the file."""
    root = _write_run(tmp_path / "run", healthy[:2])
    folder = root / "node1-1000" / "results"
    (folder / "siblings.json").write_text(json.dumps({"schema": "other/1", "device": {}, "metrics": []}))
    (folder / "cut.json").write_text("{trunc")
    (folder / "nodevice.json").write_text(json.dumps({**healthy[0], "device": None}))
    (folder / "nometrics.json").write_text(json.dumps({k: v for k, v in healthy[0].items() if k != "metrics"}))
    fleet = fleetload.load(root)
    assert len(fleet.cards) == 2 and [len(c.docs) for c in fleet.cards] == [1, 1]
    why = {Path(p["path"]).name: p["why"] for p in fleet.problems}
    assert sorted(why) == ["cut.json", "nodevice.json", "nometrics.json"]
    assert why["cut.json"].startswith("not readable JSON")
    assert why["nodevice.json"] == why["nometrics.json"] == "a results document without device or metrics"
    (folder / "badmetric.json").write_text(json.dumps({**healthy[0], "metrics": [1]}))
    with pytest.raises(ValueError, match=r"badmetric\.json: metrics\[0\]: a metric is int"):
        fleetload.load(root)


def test_the_html_page_escapes_what_the_files_say(tmp_path, healthy):
    planted, _ = _plant(healthy[2], 1.5)
    jobs = [None, None, {"node": "<script>alert(1)</script>"}, None, None]
    root = _write_run(tmp_path / "run", healthy[:2] + [planted] + healthy[3:], jobs=jobs)
    out = tmp_path / "fleet.html"
    assert main(["fleet", "report", str(root), "--format", "html", "-o", str(out)]) == 3
    page = out.read_text()
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<h2>Fleet-relative outliers (1)</h2>" in page


def test_the_json_report_names_its_schema_and_the_exit_is_the_worst_card(tmp_path, healthy):
    bad = copy.deepcopy(healthy[0])
    bad["metrics"][0]["verdict"] = "regressed"
    root = _write_run(tmp_path / "run", [bad] + healthy[1:])
    out = tmp_path / "fleet.json"
    assert main(["fleet", "report", str(root), "--format", "json", "-o", str(out)]) == 1
    rep = json.loads(out.read_text())
    assert rep["schema"] == FLEET_SCHEMA and rep["verdict"] == "fail" and rep["drain"] == []
    validate(rep)  # schemas/fleet-1.json
    rep["cards"][0]["verdict"] = "broken"
    with pytest.raises(SchemaError, match="verdict"):
        validate(rep)


def test_confirmation_jobs_inside_the_fleet_folder_and_the_drain_hook_executed(tmp_path, healthy, capsys):
    planted, _ = _plant(healthy[2], 1.5)
    again, _ = _plant(healthy[4], 1.5)
    jobs = [None, None, {"node": "node3", "array_task": 2}, None, None,
            {"node": "node3", "array_task": 2, "confirm": True}]
    root = _write_run(tmp_path / "run", healthy[:2] + [planted] + healthy[3:] + [again],
                      labels=["n1-1", "n2-2", "node3-3", "n4-4", "n5-5", "node3-9"], jobs=jobs)
    done = tmp_path / "drained.txt"
    status = main(["fleet", "report", str(root), "--drain", "--execute",
                   "--drain-command", f"sh -c 'echo \"$0 $1\" >> {done}' {{node}} {{reason}}"])
    assert status == 1
    assert done.read_text().startswith("node3 gpuperf: node3-3/nvidia-h100-80gb-hbm3: 1 metric(s) worse than the cohort")
    assert "drained:" in capsys.readouterr().out


def test_labelled_files_make_a_fleet_of_saved_runs(tmp_path, healthy, capsys):
    files = []
    for i, doc in enumerate(healthy[:4]):
        path = tmp_path / f"aa-{i}.json"
        path.write_text(json.dumps(doc))
        files.append(f"machine-{i}={path}")
    assert main(["fleet", "report", "--files", *files]) == 0
    assert "machine-3/nvidia-h100-80gb-hbm3" in capsys.readouterr().out
    assert main(["fleet", "report", "--files", "no-label-here"]) == 2


def _saved_run(path: Path, doc: dict[str, Any], uuid: str | None) -> None:
    doc = copy.deepcopy(doc)
    doc["card"] = {**card_identity(doc["device"], doc["environment"]), **({"uuid": uuid} if uuid else {})}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def test_the_saved_fleet_pairs_a_gate_check_s_runs_by_the_card_s_uuid(tmp_path, healthy, capsys):
    """``scripts/fleet_saved.py``: a gate-check folder whose A/A runs came from two cards (two UUIDs) is two
    cards, each its first run in the fleet and its second as confirmation; a folder whose runs record no UUID
    stays one card; planted and calibration runs are no cards."""
    fleet_saved = load_script("fleet_saved")
    h200 = tmp_path / "results" / "nvidia-h200"
    two, old = h200 / "gatecheck-two", h200 / "gatecheck-old"
    a, b = "GPU-1111aaaa-0000-0000-0000-000000000001", "GPU-2222bbbb-0000-0000-0000-000000000002"
    for name, doc, uuid in (("aa-1", healthy[0], a), ("aa-2", healthy[1], b), ("aa-3", healthy[2], b),
                            ("plant-memory-1", healthy[3], "GPU-3333cccc-0000-0000-0000-000000000003"),
                            ("calib-memory-1", healthy[4], a)):
        _saved_run(two / f"{name}.json", doc, uuid)
    for name, doc in (("aa-1", healthy[3]), ("aa-2", healthy[4])):
        _saved_run(old / f"{name}.json", doc, None)
    folder = "results/nvidia-h200"
    assert fleet_saved.card_runs(tmp_path / "results") == [
        ("h200/gatecheck-old", [f"{folder}/gatecheck-old/aa-1.json", f"{folder}/gatecheck-old/aa-2.json"]),
        ("h200/gatecheck-two/GPU-1111aaaa", [f"{folder}/gatecheck-two/aa-1.json"]),
        ("h200/gatecheck-two/GPU-2222bbbb",
         [f"{folder}/gatecheck-two/aa-2.json", f"{folder}/gatecheck-two/aa-3.json"])]
    out = tmp_path / "fleet-saved"
    assert fleet_saved.main(["--results", str(tmp_path / "results"), "--out", str(out)]) == 0
    rep = jsonio.read_json(out / "fleet-report.json.xz")
    assert sorted(c["card"] for c in rep["cards"] if "uuid" in c["identity"]) == [a, b]
    assert len(rep["cards"]) == 3 and rep["cards"][0]["files"][0].startswith("results/nvidia-h200/")
    assert [x["file"] for x in rep["labels"]["confirm"]] == [f"{folder}/gatecheck-old/aa-2.json",
                                                             f"{folder}/gatecheck-two/aa-3.json"]
    assert "h200/gatecheck-two/GPU-2222bbbb" in capsys.readouterr().out


# --- the fleet baseline and the rollout gate --------------------------------------------------------

def test_a_fleet_baseline_leaves_out_flagged_cards_and_passes_baseline_check(tmp_path, healthy, capsys):
    planted, _ = _plant(healthy[2], 1.5)
    root = _write_run(tmp_path / "run", healthy[:2] + [planted] + healthy[3:])
    assert main(["fleet", "baseline", str(root), "--dir", str(tmp_path / "bl")]) == 0
    assert "left out (flagged): node3-1002/nvidia-h100-80gb-hbm3" in capsys.readouterr().out
    assert main(["baseline", "check", str(tmp_path / "bl")]) == 0
    data = jsonio.read_json(tmp_path / "bl" / "nvidia-h100-80gb-hbm3.json")
    assert data["backends"]["cuda"]["provenance"]["cards"] == 4


def test_the_rollout_gate_fails_a_metric_worse_on_every_new_card(tmp_path, healthy):
    old = _write_run(tmp_path / "old", healthy)
    worse = [_plant(d, 1.2)[0] for d in healthy]
    new = _write_run(tmp_path / "new", worse)
    rep = rollout.compare(fleetload.load(old), fleetload.load(new))
    assert [r["metric"] for r in rep["worse"]] == [_sampled_metric(healthy[0])["name"]]
    assert main(["fleet", "compare", str(old), str(new)]) == 1
    assert main(["fleet", "compare", str(old), str(_write_run(tmp_path / "same", healthy[::-1]))]) == 0
    # every metric both runs hold is counted: unchanged deterministic figures as same, and a timing that only one
    # new card measured on a quiet host as not judged, with why (a busy fleet must not look like a clean one)
    busy = copy.deepcopy(healthy)
    name = _sampled_metric(healthy[0])["name"]
    for d in busy[1:]:
        m = next(x for x in d["metrics"] if x["name"] == name)
        m["verdict"] = "contended"
        m["info"] = {**m["info"], "host": {"windows": 3, "contended": 1, "busy": 3, "remeasured": 2,
                                           "foreign_cores_max": 1.1}}
    rep = rollout.compare(fleetload.load(old), fleetload.load(_write_run(tmp_path / "busy", busy)))
    (model,) = rep["models"]
    rows = {r["metric"]: r for r in model["rows"]}
    assert rows[name]["verdict"] == "informational" and "busy" in rows[name]["why"] and rows[name]["new_cards"] == 1
    assert model["tally"]["informational"] >= 1 and model["tally"]["same"] >= 1
    assert sum(model["tally"].values()) == len(model["rows"])


def test_a_results_document_with_its_card_section_follows_the_schema(healthy):
    doc = copy.deepcopy(healthy[0])
    doc["card"] = {**card_identity(doc["device"], doc["environment"]), "uuid": "GPU-0a1b", "serial": "1654922000001",
                   "vbios": "96.00.99.00.01", "application_sm_clock_mhz": 1980, "ecc_mode": "on"}
    validate(doc)
    doc["card"]["ecc_mode"] = "maybe"
    with pytest.raises(SchemaError, match="ecc_mode"):
        validate(doc)


PLANTED = ROOT / "results" / "fleet-saved" / "pocl-planted"


def test_four_pocl_jobs_one_planted_the_report_fails_exactly_that_card(capsys):
    """Real PoCL runs (``gpuperf run suites/test_memory.py --gpuperf-device=opencl:0``, one at a time on a busy
    host, job node3 with ``--gpuperf-plant memory=1.0``): the planted card is the only one flagged, and its
    confirmation re-run fails it."""
    run, confirm = str(PLANTED / "run"), str(PLANTED / "confirm")
    assert main(["fleet", "report", run, "--keep-disturbed", "--format", "json"]) == 3
    rep = json.loads(capsys.readouterr().out)
    assert [c["job"] for c in rep["cards"] if c["verdict"] == "uncertain"] == ["node3-103"]
    flagged = {o["metric"] for o in rep["cards"][0]["outliers"]}
    assert flagged and all(name.startswith("memory.copy.bandwidth.") for name in flagged)
    assert main(["fleet", "report", run, "--keep-disturbed", "--confirm", confirm, "--drain"]) == 1
    out = capsys.readouterr().out
    assert "scontrol update nodename=node3 state=drain" in out and "nodename=node1" not in out
    # the host was busy: by default its contended figures are left out, and nothing is judged
    assert main(["fleet", "report", run]) == 0
