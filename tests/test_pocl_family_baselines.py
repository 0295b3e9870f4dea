"""The shipped CPU family baselines of PoCL 5.0 (Ubuntu 24.04's runtime, LLVM 16) and PoCL 6.0 (Debian 13's, LLVM 18):
each validates, holds only the deterministic figures a family file may share, and its key is the one a device of
that runtime asks for, read from the device description a real run on it recorded (no OpenCL device needed: the
description is saved)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pytest_gpuperf.baselines import baseline_file, lookup, noise
from pytest_gpuperf.devices.base import DeviceInfo
from pytest_gpuperf.paths import REVIEWED_BASELINES
from pytest_gpuperf.util import jsonio

ROOT = Path(__file__).resolve().parents[1]
SAVED = ROOT / "results" / "pocl-cpu-skylake-avx512-amd-epyc"
#: runtime → its family key and a complete default run of the suites on it (one of those its file was made from)
FAMILIES = {
    "PoCL 5.0": ("pocl-5-0-debian-llvm-16-0-6-cpu", SAVED / "pocl5-1-opencl.json.xz"),
    "PoCL 6.0": ("pocl-6-0-debian-llvm-18-1-8-cpu", SAVED / "pocl6-1-opencl.json.xz"),
}
OTHERS = {"pocl-3-1-debian-llvm-15-0-6-cpu", *(key for key, _ in FAMILIES.values())}


def _device(path: Path) -> DeviceInfo:
    """The DeviceInfo a results file's ``device`` section describes (its recorded fields, nothing added)."""
    recorded = jsonio.read_json(path)["device"]
    fields = {f.name for f in dataclasses.fields(DeviceInfo)}
    return DeviceInfo(**{k: v for k, v in recorded.items() if k in fields})


@pytest.mark.parametrize("runtime", sorted(FAMILIES))
def test_the_pocl_device_asks_for_its_own_shipped_family_file(runtime: str):
    family, run = FAMILIES[runtime]
    info = _device(run)
    assert runtime in info.runtime_version and info.is_cpu
    assert info.family_key == family
    # the other PoCLs' families stay apart: their figures come from another runtime and compiler
    assert OTHERS - {info.family_key} == OTHERS - {family} and info.family_key in OTHERS
    src = lookup.resolve(Path("/nonexistent-user-dir"), info.key, info.backend, info.family_key)
    assert src.origin == "family" and src.family_count > 200


@pytest.mark.parametrize("runtime", sorted(FAMILIES))
def test_the_pocl_family_file_validates_and_holds_only_deterministic_entries(runtime: str):
    family, _ = FAMILIES[runtime]
    path = baseline_file.path_for(REVIEWED_BASELINES, family)
    data = baseline_file.load_file(path).data  # raises, listing every problem, on a malformed file
    assert data["device"]["key"] == family and baseline_file.recorded_class(data) == "cpu"
    metrics = data["backends"]["opencl"]["metrics"]
    assert len(metrics) > 200
    timed = [n for n, e in metrics.items() if not noise.is_deterministic(e, n)]
    assert not timed, f"timing figures in a family file: {timed[:5]}"
    assert runtime in data["backends"]["opencl"]["provenance"]["runtime"]


def test_the_pocl6_family_file_holds_what_every_run_it_was_made_from_read():
    """Each entry is the value all three runs read; a gate run in a folder with no baseline found the file by itself
    and passed, and a sin made 1 ulp worse read ``regressed`` against it."""
    family, _ = FAMILIES["PoCL 6.0"]
    metrics = baseline_file.load_file(baseline_file.path_for(REVIEWED_BASELINES, family)).metrics("opencl")
    runs = [{m["name"]: m for m in jsonio.read_json(SAVED / f"pocl6-{i}-opencl.json.xz")["metrics"]} for i in (1, 2, 3)]
    for name, entry in metrics.items():
        values = {r[name]["value"] for r in runs}
        assert values == {entry.get("measured", entry["value"])}, (name, values)  # a bound's entry keeps its reading
    gate = jsonio.read_json(SAVED / "pocl6-gate-1-opencl.json.xz")
    verdicts = {m["name"]: m["verdict"] for m in gate["metrics"]}
    assert not gate["run"]["interrupted"] and set(metrics) <= set(verdicts)
    assert {verdicts[n] for n in metrics} <= {"pass", "loose"}
    planted = {m["name"]: m["verdict"] for m in jsonio.read_json(SAVED / "pocl6-plant-ulp-opencl.json.xz")["metrics"]}
    assert planted["accuracy.fp32.sin.max_ulp"] == "regressed"


@pytest.mark.parametrize("run", [1, 2, 3])
def test_ubuntu_26_04_s_pocl_gates_against_debian_13_s_family_file(run: int):
    """Ubuntu 26.04 ships the same PoCL 6.0 and LLVM: its runs, from folders with no baseline, found that file."""
    family, _ = FAMILIES["PoCL 6.0"]
    path = SAVED / f"ubuntu2604-{run}-opencl.json.xz"
    assert _device(path).family_key == family
    doc = jsonio.read_json(path)
    entries = baseline_file.load_file(baseline_file.path_for(REVIEWED_BASELINES, family)).metrics("opencl")
    verdicts = {m["name"]: m["verdict"] for m in doc["metrics"]}
    assert not doc["run"]["interrupted"] and doc["environment"]["python"].startswith("3.14")
    assert {verdicts[n] for n in entries} <= {"pass", "loose"}


def test_ubuntu_22_04_s_pocl_that_builds_nothing_left_a_file_saying_why():
    doc = jsonio.read_json(ROOT / "results" / "pocl-pthread-amd-epyc" / "ubuntu2204-1-opencl.json.xz")
    assert "pocl 1.8" in doc["device"]["runtime_version"] and doc["metrics"] == []
    assert "unknown target CPU" in doc["run"]["abandoned"]


def test_the_pocl3_family_file_gates_the_users_accuracy_composites_and_precision_counts_of_every_run_it_was_made_from():
    """PoCL 3.1 (Debian 12, this project's CI device) shares the deterministic figures of the users' accuracy check,
    the composite operations and the precision tuner: each entry is the value its three runs on the haswell host read,
    those another CPU model of the same runtime did not reproduce stay out, named with what that model read, and a
    PoCL 3.1 device asks for the file and gates them."""
    family = "pocl-3-1-debian-llvm-15-0-6-cpu"
    section = baseline_file.load_file(baseline_file.path_for(REVIEWED_BASELINES, family)).data["backends"]["opencl"]
    saved = ROOT / "results" / "pocl-pthread-haswell-amd-epyc"
    docs = [jsonio.read_json(saved / f"family31-{i}-opencl.json.xz") for i in (1, 2, 3)]
    assert not any(d["run"]["interrupted"] for d in docs)
    runs = [{m["name"]: m for m in d["metrics"]} for d in docs]
    made = {n: e for n, e in section["metrics"].items() if n in runs[0]}
    assert len(made) >= 110 and {n.split(".")[1] for n in made} >= {"pyopencl", "cmp", "tuner", "refine", "vprec"}
    for name, entry in made.items():
        assert {r[name]["value"] for r in runs} == {entry.get("measured", entry["value"])}, name
        assert entry["provenance"]["commit"] == docs[0]["environment"]["commit"]
    apart = section["provenance"]["cpu_dependent"]
    assert {n for n in apart if n.startswith("accuracy.pyopencl.")} and not set(apart) & set(section["metrics"])
    assert all("pocl-pthread-skylake-avx512-intel-r-xeon-r-processor" in why for why in apart.values())
    info = _device(saved / "family31-1-opencl.json.xz")
    assert info.family_key == family
    src = lookup.resolve(Path("/nonexistent-user-dir"), info.key, info.backend, info.family_key)
    assert set(made) <= set(src.file.metrics("opencl"))
