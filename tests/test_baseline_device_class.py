"""A baseline file records its device's class (``device.class``: ``gpu`` or ``cpu``) when it is made, and
``gpuperf baseline migrate --catalog-bands`` refuses a class that contradicts the one a file records or
proves (an older file without the field: a cuda section, a PoCL CPU driver's key), so a user's wrong
``--catalog-bands`` cannot give a GPU baseline the CPU bands; ``gpuperf baseline diff`` shows the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_gpuperf.baselines import baseline_file
from pytest_gpuperf.cli import main as gpuperf
from pytest_gpuperf.errors import BaselineFileError


def _results(path: Path, key: str, backend: str, is_cpu: bool | None, value: float) -> str:
    device = {"key": key, "name": key.upper(), "backend": backend}
    if is_cpu is not None:
        device["is_cpu"] = is_cpu
    path.write_text(json.dumps({
        "schema": "pytest-gpuperf/1", "device": device,
        "environment": {"driver": "1", "runtime": "r", "toolkit": "t", "commit": "abc"}, "run": {"finished": "now"},
        "metrics": [{"test": "t.py::f", "name": "memory.dram.latency.cycles", "value": value, "unit": "cycles",
                     "better": "lower", "stats": {"median": value, "mad": 1.0, "min": value, "max": value, "n": 9},
                     "info": {}, "tolerance": None}]}))
    return str(path)


def _file(tmp_path: Path, key: str, backend: str, device_class: str | None) -> Path:
    """A baseline file of one DRAM-latency entry with a band of 3 % (older than the catalog's 5 %)."""
    device = {"key": key, "name": key.upper(), **({"class": device_class} if device_class else {})}
    path = tmp_path / f"{key}.json"
    path.write_text(json.dumps({"schema": "pytest-gpuperf-baseline/1", "device": device, "backends": {backend: {
        "provenance": {"driver": "1"}, "metrics": {"memory.dram.latency.cycles": {
            "value": 670.0, "unit": "cycles", "better": "lower", "tolerance": {"rel": 0.03}}}}}}))
    return path


@pytest.mark.parametrize("is_cpu,expected", [(False, "gpu"), (True, "cpu"), (None, None)])
def test_from_results_records_the_class_its_runs_name(tmp_path, is_cpu, expected):
    runs = [_results(tmp_path / f"r{i}.json", "dev", "opencl", is_cpu, 600.0 + i) for i in range(3)]
    assert gpuperf(["baseline", "from-results", "--dir", str(tmp_path / "bl"), *runs]) == 0
    data = json.loads((tmp_path / "bl" / "dev.json").read_text())
    assert baseline_file.recorded_class(data) == expected  # older results do not say: no class is guessed
    assert gpuperf(["baseline", "check", str(tmp_path / "bl")]) == 0


def test_diff_shows_the_class_a_migration_recorded(tmp_path, capsys):
    (tmp_path / "old").mkdir()
    old = _file(tmp_path / "old", "card", "cuda", None)
    new = tmp_path / "card.json"
    new.write_text(old.read_text())
    assert gpuperf(["baseline", "migrate", str(new)]) == 0
    assert "device class gpu recorded (it has a cuda section, and CUDA devices are GPUs)" in capsys.readouterr().out
    assert gpuperf(["baseline", "diff", str(old), str(new)]) == 1
    assert "device class: (unset) → gpu" in capsys.readouterr().out


@pytest.mark.parametrize("key,backend,recorded,why", [
    ("card", "opencl", "gpu", "its device header records it"),
    ("card", "cuda", None, "it has a cuda section"),
])
def test_catalog_bands_of_another_class_are_refused_before_anything_is_written(tmp_path, capsys, key, backend,
                                                                             recorded, why):
    path = _file(tmp_path, key, backend, recorded)
    other = _file(tmp_path, "a-cpu", "opencl", "cpu")  # a file of the class asked for, named first: left as it is too
    before = {p: p.read_bytes() for p in (path, other)}
    assert gpuperf(["baseline", "migrate", str(other), str(path), "--catalog-bands", "cpu"]) == 2
    err = capsys.readouterr().err
    assert f"{path} is a gpu baseline ({why}" in err and "pass --catalog-bands gpu" in err, err
    assert {p: p.read_bytes() for p in (path, other)} == before
    assert gpuperf(["baseline", "migrate", str(path), "--catalog-bands", "gpu"]) == 0
    assert json.loads(path.read_text())["device"]["class"] == "gpu"
    assert json.loads(path.read_text())["backends"][backend]["metrics"]["memory.dram.latency.cycles"]["tolerance"] \
        == {"rel": 0.05}


def test_a_pocl_cpu_key_proves_a_cpu_and_a_pocl_gpu_key_proves_nothing(tmp_path, capsys):
    cpu = _file(tmp_path, "pocl-pthread-haswell-amd-epyc", "opencl", None)
    assert gpuperf(["baseline", "migrate", str(cpu), "--catalog-bands", "gpu"]) == 2
    assert "names a PoCL CPU driver" in capsys.readouterr().err
    gpu_by_pocl = _file(tmp_path, "pocl-nvidia-h100", "opencl", None)  # PoCL's CUDA driver: a GPU
    assert baseline_file.proven_class(json.loads(gpu_by_pocl.read_text())) is None


def test_a_file_that_proves_no_class_takes_the_one_passed_and_says_so(tmp_path, capsys):
    path = _file(tmp_path, "some-opencl-card", "opencl", None)
    assert gpuperf(["baseline", "migrate", str(path)]) == 0  # no class asked: none guessed
    assert "class" not in json.loads(path.read_text())["device"]
    capsys.readouterr()
    assert gpuperf(["baseline", "migrate", str(path), "--catalog-bands", "gpu"]) == 0
    out = capsys.readouterr().out
    assert "device class gpu recorded (it records none and nothing in it proves one: taken from --catalog-bands)" in out
    assert json.loads(path.read_text())["device"]["class"] == "gpu"
    assert gpuperf(["baseline", "migrate", str(path), "--catalog-bands", "cpu"]) == 2  # now it records one


def test_a_device_of_another_class_is_not_written_into_a_file(tmp_path):
    path = _file(tmp_path, "card", "opencl", "gpu")
    target = baseline_file.BaselineFile(path)
    entry = {"value": 1.0, "unit": "us", "better": "lower", "tolerance": {"rel": 1.0}}
    with pytest.raises(BaselineFileError, match="records device class 'gpu', and entries of a cpu device"):
        baseline_file.update(target, "opencl", {"key": "card", "name": "CARD", "class": "cpu"}, {}, {"x.us": entry})
    baseline_file.update(target, "opencl", {"key": "card", "name": "CARD", "class": "gpu"}, {}, {"x.us": entry})
    assert baseline_file.load(tmp_path, "card").metrics("opencl")["x.us"]["value"] == 1.0


def test_a_class_the_schema_does_not_know_is_a_problem(tmp_path, capsys):
    path = _file(tmp_path, "card", "opencl", "GPU")
    assert gpuperf(["baseline", "check", str(path)]) == 1
    assert "device.class" in capsys.readouterr().out
