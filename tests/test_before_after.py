"""scripts/before_after.py on saved PoCL runs (read, never changed): two unchanged runs agree, a planted change and
edits of a copy are each named, a kernel digest on one side only is no difference, bad input exits 2."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_gpuperf.baselines import noise
from pytest_gpuperf.util import jsonio
from suite_support import load_script

before_after = load_script("before_after")

RESULTS = Path(__file__).resolve().parents[1] / "results"
#: two unchanged runs of the precision suites on one host, one commit
CHOICE = [RESULTS / "pocl-pthread-skylake-avx512-intel-r-xeon-r-processor" / f"precision-choice-{i}-opencl.json.xz"
          for i in (1, 2)]
#: a run of the precision suites on the host the reviewed PoCL baseline was made on
PRECISION = RESULTS / "pocl-pthread-haswell-amd-epyc" / "precision-opencl.json.xz"
GATECHECK = RESULTS / "pocl-pthread-haswell-amd-epyc" / "gatecheck"


def run(capsys: pytest.CaptureFixture[str], *args: Any) -> tuple[int, str, str]:
    code = before_after.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def report(capsys: pytest.CaptureFixture[str], *args: Any) -> tuple[int, dict[str, Any]]:
    code, out, _ = run(capsys, *args, "--format", "json")
    return code, json.loads(out)


def write(path: Path, doc: dict[str, Any]) -> Path:
    jsonio.write_gz(path, json.dumps(doc).encode("utf-8"))
    return path


def is_deterministic(m: dict[str, Any]) -> bool:
    return noise.is_deterministic(m, m["name"])


def test_two_unchanged_runs_agree_and_their_timings_are_only_counted(capsys):
    code, doc = report(capsys, *CHOICE)
    assert code == 0 and doc["same"]
    assert doc["names"] == {"both": 34, "only_before": [], "only_after": []}
    assert doc["deterministic_values"]["equal"] > 0 and not doc["deterministic_values"]["differ"]
    assert doc["verdicts"] == {"equal": 34, "differ": []}
    timing = doc["timing"]
    assert timing["metrics"] + doc["deterministic_values"]["equal"] == 34
    assert timing["highest"] > 0 > timing["lowest"]  # their values moved, and that is not a failure


def test_a_run_against_itself_agrees(capsys):
    code, out, err = run(capsys, PRECISION, PRECISION)
    assert code == 0 and not err
    assert "names: 114 in both, 0 only before, 0 only after" in out
    assert "verdicts judged again against the same baseline: 114 equal, 0 differ" in out
    assert "result: SAME" in out and "pocl-pthread-haswell-amd-epyc.json" in out


def test_a_planted_one_ulp_change_reads_as_a_changed_value_and_verdict(tmp_path, capsys):
    planted = jsonio.read_json(GATECHECK / "plant-ulp-1.json.xz")
    aa = jsonio.read_json(GATECHECK / "aa-1.json.xz")
    names = {m["name"] for m in planted["metrics"]}
    aa["metrics"] = [m for m in aa["metrics"] if m["name"] in names]  # the unplanted run's same four metrics
    code, doc = report(capsys, write(tmp_path / "aa.json.gz", aa), GATECHECK / "plant-ulp-1.json.xz")
    assert code == 1 and not doc["same"]
    changed = {"accuracy.fp32.sin.max_ulp", "accuracy.fp32.sin.mean_ulp"}
    assert {d["metric"] for d in doc["deterministic_values"]["differ"]} == changed
    assert {(d["metric"], d["before"], d["after"]) for d in doc["verdicts"]["differ"]} == {
        (n, "pass", "regressed") for n in changed}
    assert doc["deterministic_values"]["equal"] == 2 and not doc["identities"]["differ"]


def test_a_changed_value_a_removed_metric_and_a_changed_identity_are_each_named(tmp_path, capsys):
    before = jsonio.read_json(PRECISION)
    after = copy.deepcopy(before)
    fixed = next(m for m in after["metrics"] if is_deterministic(m) and m["value"])
    fixed["value"] = fixed["value"] * 1.5
    removed = after["metrics"].pop(len(after["metrics"]) - 1)["name"]
    reshaped = next(m for m in after["metrics"] if m["identity"] and m is not fixed)
    reshaped["identity"] = {**reshaped["identity"], "n": 1 + int(reshaped["identity"].get("n", 0))}
    code, out, _ = run(capsys, PRECISION, write(tmp_path / "after.json.gz", after))
    assert code == 1 and "result: DIFFERENT" in out
    assert "0 only after" in out and "1 only before" in out and f"only before:\n  {removed}\n" in out
    assert f"identity differs:\n  {reshaped['name']}: " in out
    assert f"deterministic value differs:\n  {fixed['name']}: " in out
    code, doc = report(capsys, PRECISION, tmp_path / "after.json.gz")
    assert code == 1
    assert doc["names"]["only_before"] == [removed]
    assert [d["metric"] for d in doc["identities"]["differ"]] == [reshaped["name"]]
    assert [d["metric"] for d in doc["deterministic_values"]["differ"]] == [fixed["name"]]


def test_a_kernel_digest_on_one_side_only_is_no_difference_two_different_ones_are(tmp_path, capsys):
    doc = jsonio.read_json(PRECISION)
    first = doc["metrics"][0]["name"]
    one = copy.deepcopy(doc)
    one["metrics"][0]["source_digest"] = "0123456789abcdef"
    code, out, _ = run(capsys, PRECISION, write(tmp_path / "one.json.gz", one))
    assert code == 0 and "0 differ, 1 carried by one side only (not a difference)" in out
    other = copy.deepcopy(one)
    other["metrics"][0]["source_digest"] = "fedcba9876543210"
    code, out, _ = run(capsys, tmp_path / "one.json.gz", write(tmp_path / "other.json.gz", other))
    assert code == 1 and f"kernel source differs:\n  {first}: " in out


def test_bad_input_exits_2_with_one_line_naming_the_file_and_the_fix(tmp_path, capsys):
    not_results = tmp_path / "gatecheck.json"
    not_results.write_text(json.dumps({"runs": []}))
    code, out, err = run(capsys, not_results, PRECISION)
    assert code == 2 and not out and len(err.strip().splitlines()) == 1
    assert str(not_results) in err and "--gpuperf-json" in err
    code, _, err = run(capsys, PRECISION, CHOICE[0])  # two device models
    assert code == 2 and "pocl-pthread-haswell-amd-epyc" in err and "one device model" in err
    code, _, err = run(capsys, PRECISION, PRECISION, "--baseline-dir", tmp_path)
    assert code == 2 and "holds no baseline of pocl-pthread-haswell-amd-epyc" in err


#: two H200 machines, one run each, of the README command before and after a move of the counters code
H200 = [RESULTS / "nvidia-h200" / "gatecheck-d6b9582" / "aa-1.json.xz",
        RESULTS / "nvidia-h200" / "gatecheck-adcb4e6" / "aa-1.json.xz"]


def test_grid_figures_one_step_apart_are_the_same_figure_two_steps_are_not(tmp_path, capsys):
    """λ0 and the L2 size are read off a grid of timed points: one step apart they are listed as the same
    figure, as the gate judges them; a cache size moved by a third is a changed value."""
    _, doc = report(capsys, *H200)
    values = doc["deterministic_values"]
    assert {d["metric"] for d in values["within_grid_step"]} == {"tuning.lambda0", "memory.l2.size.bytes"}
    assert values["differ"] == [] and values["equal"] > 600
    after = jsonio.read_json(H200[1])
    for m in after["metrics"]:
        if m["name"] == "memory.l2.size.bytes":
            m["value"] *= 2 / 3
    _, doc = report(capsys, H200[0], write(tmp_path / "shrunk.json.gz", after))
    assert [d["metric"] for d in doc["deterministic_values"]["differ"]] == ["memory.l2.size.bytes"]
    assert "memory.l2.size.bytes" not in {d["metric"] for d in doc["deterministic_values"]["within_grid_step"]}
