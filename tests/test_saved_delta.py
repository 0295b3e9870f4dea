"""Saved runs stored as their difference from the first run of their folder read back as the whole document."""

from __future__ import annotations

import json

import pytest
from pathlib import Path

from pytest_gpuperf.schemas.results_doc import ResultsDocument
from pytest_gpuperf.util import jsonio, saved_delta


ROOT = Path(__file__).resolve().parents[1]


def _doc(values: dict[str, float], order=("a", "b")) -> dict:
    metrics = [{"name": n, "test": "t.py::f", "value": values[n], "info": {"k": {x: 1 for x in order}}} for n in values]
    return {"schema": "s", "run": {"id": "x"}, "metrics": metrics, "tests": []}


def test_a_delta_reads_back_key_for_key_in_order_and_type(tmp_path):
    base = _doc({"m1": 1.0, "m2": 2.0})
    doc = _doc({"m2": 2.5, "m1": 1, "m3": 3.0}, order=("b", "a"))  # reordered keys, an int for a float, a new metric
    doc["run"] = {"id": "y", "interrupted": False}
    del doc["tests"]
    jsonio.write_xz(tmp_path / "aa-1.json.xz", json.dumps(base).encode())
    delta = saved_delta.encode(base, doc, "aa-1.json.xz")
    jsonio.write_xz(tmp_path / "aa-2.json.xz", json.dumps(delta, separators=(",", ":")).encode())
    back = jsonio.read_json(tmp_path / "aa-2.json.xz")
    assert json.dumps(back) == json.dumps(doc)  # equal as text: order and types kept
    assert jsonio.read_json(tmp_path / "aa-1.json.xz") == base
    # read as stored: the delta stays a delta, and names its base without being parsed whole
    stored = jsonio.read_stored(tmp_path / "aa-2.json.xz")
    assert json.loads(stored) == delta and jsonio.stored_base(tmp_path / "aa-2.json", stored) == tmp_path / "aa-1.json.xz"
    assert jsonio.stored_base(tmp_path / "aa-1.json.xz", jsonio.read_stored(tmp_path / "aa-1.json.xz")) is None


@pytest.mark.parametrize("base_name", ["../aa-1.json.xz", "/etc/passwd", "sub/aa-1.json.xz", "..", ""])
def test_a_delta_never_names_a_file_outside_its_folder(tmp_path, base_name):
    jsonio.write_xz(tmp_path / "aa-2.json.xz", json.dumps({"$delta": base_name, "top": {}, "metrics": []}).encode())
    with pytest.raises(ValueError, match="not a file name of its own folder"):
        jsonio.read_json(tmp_path / "aa-2.json.xz")
    with pytest.raises(ValueError, match="not a file name of its own folder"):
        jsonio.stored_base(tmp_path / "aa-2.json.xz", jsonio.read_stored(tmp_path / "aa-2.json.xz"))


def test_a_delta_of_a_delta_is_refused(tmp_path):
    jsonio.write_xz(tmp_path / "aa-1.json.xz", json.dumps({"$delta": "aa-0.json.xz", "top": {}, "metrics": []}).encode())
    jsonio.write_xz(tmp_path / "aa-2.json.xz", json.dumps({"$delta": "aa-1.json.xz", "top": {}, "metrics": []}).encode())
    with pytest.raises(ValueError, match="not a whole results document"):
        jsonio.read_json(tmp_path / "aa-2.json.xz")


def test_a_saved_gate_checks_later_runs_are_deltas_and_load_as_results():
    folder = ROOT / "results" / "nvidia-h200" / "gatecheck-0d8cce4"
    raw = jsonio.unpack((folder / "aa-2.json.xz").read_bytes(), "aa-2.json.xz")
    assert saved_delta.is_delta(raw)
    doc = ResultsDocument.load(folder / "aa-2.json.xz")
    assert len(doc.metrics) == 1999
    assert doc.run["finished"] != jsonio.read_json(folder / "aa-1.json.xz")["run"]["finished"]


def test_a_delta_read_without_its_base_names_the_base_and_the_fix(tmp_path, capsys):
    """A later run of a gate check copied out of its folder alone: the file is there, its base is not. Read, compared
    or imported, it says so, naming the file to copy beside it, never "no such file" or "not valid JSON"."""
    from pytest_gpuperf.cli import main as gpuperf

    base = _doc({"m1": 1.0})
    lone = tmp_path / "lone"
    lone.mkdir()
    jsonio.write_xz(lone / "aa-2.json.xz", json.dumps(saved_delta.encode(base, _doc({"m1": 2.0}), "aa-1.json.xz")).encode())
    with pytest.raises(jsonio.MissingBaseError, match="difference from aa-1.json.xz.*copy aa-1.json.xz beside it"):
        jsonio.read_json(lone / "aa-2.json.xz")
    with pytest.raises(jsonio.MissingBaseError):
        jsonio.read_bytes(lone / "aa-2.json.xz")
    saved = ROOT / "results" / "nvidia-h200" / "gatecheck-0d8cce4"
    assert gpuperf(["compare", str(lone / "aa-2.json.xz"), str(saved / "aa-1.json.xz")]) == 2
    assert gpuperf(["history", "import", str(lone / "aa-2.json.xz"), "--db", str(tmp_path / "h.db")]) != 0
    said = capsys.readouterr().err
    assert said.count("copy aa-1.json.xz beside it") == 2 and "no such file" not in said and "not valid JSON" not in said


def _compact_saved():
    import importlib.util
    spec = importlib.util.spec_from_file_location("compact_saved", ROOT / "scripts" / "compact_saved.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_runs_are_stored_against_a_gate_check_s_first_run_or_a_set_s_first_and_a_device_s_folder_by_its_sets():
    """``compact_saved.py --delta``: a gate check's runs against its ``aa-1``; the runs of a baseline or a study
    (a folder below a device's) against the one with the most metrics, the first by name among equals (a study's
    full run, not a plant of seven metrics); a device's own folder, whose runs belong to unrelated suites, has no
    base of its own: each run is stored against the fullest run of its own set (the same name but for the run
    number), and a run of no set stays whole."""
    cs = _compact_saved()
    results = ROOT / "results"
    assert cs.delta_base(results / "nvidia-h200" / "gatecheck-11e8603") == \
        results / "nvidia-h200" / "gatecheck-11e8603" / "aa-1.json.xz"
    assert cs.delta_base(results / "nvidia-h200" / "baseline-171978e") == \
        results / "nvidia-h200" / "baseline-171978e" / "b1-cuda.json.xz"
    study = results / "nvidia-h200" / "queue-study-b3e0c59"
    assert cs.delta_base(study) == study / "study-1.json.xz"
    assert jsonio.read_json(study / "study-2.json.xz")["metrics"] and \
        json.loads(jsonio.unpack((study / "study-2.json.xz").read_bytes(), "study-2.json.xz"))["$delta"] == "study-1.json.xz"
    # a run another delta is stored against stays whole, whatever base the folder would give it now
    assert study / "plant-compute-1.json.xz" in cs.bases(study)
    assert not saved_delta.is_delta(jsonio.unpack((study / "plant-compute-1.json.xz").read_bytes(), "plant-compute-1"))
    assert cs.delta_base(results / "nvidia-h100-80gb-hbm3") is None
    stored = 0
    for folder in (results / "nvidia-h100-80gb-hbm3", results / "pocl-cpu-skylake-avx512-amd-epyc"):
        for path in folder.glob("*.json.xz"):
            raw = jsonio.unpack(path.read_bytes(), path)
            base = cs.set_base(path)
            if not saved_delta.is_delta(raw):
                continue
            stored += 1  # a run of a device's folder is stored only against the fullest run of its own set
            assert base is not None and json.loads(raw)["$delta"] == base.name != path.name, path
            assert cs.RUN_NUMBER.sub("#", base.name) == cs.RUN_NUMBER.sub("#", path.name), path
            assert not saved_delta.is_delta(jsonio.unpack(base.read_bytes(), base)), base
    assert stored >= 10, stored
    pocl = results / "pocl-cpu-skylake-avx512-amd-epyc"
    assert cs.set_base(pocl / "pocl6-3-opencl.json.xz") == pocl / "pocl6-1-opencl.json.xz"
    assert cs.set_base(results / "nvidia-h100-80gb-hbm3" / "l2c-cuda.json.xz") is None  # a run of no set: whole
    assert not saved_delta.is_delta(jsonio.unpack((results / "nvidia-h100-80gb-hbm3" / "l2c-cuda.json.xz").read_bytes(), "l2c"))


def test_the_check_against_a_revision_reads_a_delta_there_whole():
    """``compact_saved.py --check REV`` reads a run stored as a delta at REV against its base as it was there:
    a file unchanged since reads as the same document, not as 'other bytes'."""
    cs = _compact_saved()
    name = "results/nvidia-h100-80gb-hbm3/gatecheck-fa43429/aa-2.json.xz"  # stored as a delta of aa-1
    if not cs._at("HEAD", name):
        pytest.skip("not a git checkout")
    raw = jsonio.unpack(cs.subprocess.run(["git", "show", f"HEAD:{name}"], cwd=ROOT, capture_output=True,
                                          check=True).stdout, name)
    assert saved_delta.is_delta(raw)
    assert json.loads(cs._whole_at("HEAD", name)) == jsonio.read_json(ROOT / name)
    assert cs.difference(name, "HEAD") is None


def test_documents_read_from_one_base_share_no_list_or_mapping(tmp_path):
    """A folder's base is parsed once and kept for its deltas: what a document keeps of it is its own copy, so a
    reader that changes one document changes neither the base nor another document read from it."""
    base = _doc({"m1": 1.0, "m2": 2.0})
    base["tests"] = [{"test": "t.py::f", "duration_s": 1.0}]
    jsonio.write_xz(tmp_path / "aa-1.json.xz", json.dumps(base).encode())
    for i, v in ((2, 1.5), (3, 1.7)):
        later = _doc({"m1": v, "m2": 2.0})
        later["tests"] = base["tests"]
        jsonio.write_xz(tmp_path / f"aa-{i}.json.xz",
                        json.dumps(saved_delta.encode(base, later, "aa-1.json.xz")).encode())
    two, three = jsonio.read_json(tmp_path / "aa-2.json.xz"), jsonio.read_json(tmp_path / "aa-3.json.xz")
    assert two["metrics"][1] == three["metrics"][1] == base["metrics"][1]  # kept whole from the base
    two["metrics"][1]["info"]["k"]["a"] = 99
    two["tests"][0]["duration_s"] = 99
    two["run"]["id"] = "changed"
    again = jsonio.read_json(tmp_path / "aa-3.json.xz")
    assert three["metrics"][1]["info"]["k"]["a"] == again["metrics"][1]["info"]["k"]["a"] == 1
    assert three["tests"][0]["duration_s"] == again["tests"][0]["duration_s"] == 1.0
    assert again["run"]["id"] == "x" and jsonio.read_json(tmp_path / "aa-1.json.xz") == base
