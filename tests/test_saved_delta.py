"""Saved runs stored as their difference from the first run of their folder, or from another gate check's first run
of their device, read back as the whole document."""

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


@pytest.mark.parametrize("base_name", ["../aa-1.json.xz", "/etc/passwd", "sub/sub/aa-1.json.xz", "..", "",
                                       "../../x.json.xz", "../x/../aa-1.json.xz", "..\\x\\aa-1.json.xz", "../x\\y/aa-1.json.xz",
                                       "../../x/aa-1.json.xz", ".././aa-1.json.xz", "../x/", "./aa-1.json.xz",
                                       "sub/../aa-1.json.xz", "sub/", "/sub/aa-1.json.xz", "./sub/aa-1.json.xz",
                                       "sub/..", "sub\\aa-1.json.xz/x"])
def test_a_delta_never_names_a_file_outside_its_folder_a_sibling_folder_or_a_folder_inside_it(tmp_path, base_name):
    jsonio.write_xz(tmp_path / "aa-2.json.xz", json.dumps({"$delta": base_name, "top": {}, "metrics": []}).encode())
    with pytest.raises(ValueError, match="not a file name of its own folder"):
        jsonio.read_json(tmp_path / "aa-2.json.xz")
    with pytest.raises(ValueError, match="not a file name of its own folder"):
        jsonio.stored_base(tmp_path / "aa-2.json.xz", jsonio.read_stored(tmp_path / "aa-2.json.xz"))


def _write(path: Path, obj: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    jsonio.write_xz(path, json.dumps(obj, separators=(",", ":")).encode())
    return path


def test_a_delta_whose_base_is_in_a_sibling_folder_reads_back_whole(tmp_path):
    base, doc = _doc({"m1": 1.0, "m2": 2.0}), _doc({"m1": 1.5, "m2": 2.0})
    _write(tmp_path / "other" / "aa-1.json.xz", base)
    delta = saved_delta.encode(base, doc, "../other/aa-1.json.xz")
    path = _write(tmp_path / "mine" / "aa-1.json.xz", delta)
    assert json.dumps(jsonio.read_json(path)) == json.dumps(doc)
    assert json.loads(jsonio.read_bytes(path)) == doc
    assert jsonio.stored_base(path, jsonio.read_stored(path)) == tmp_path / "other" / "aa-1.json.xz"  # .. collapsed
    assert jsonio.base_of(path) == tmp_path / "other" / "aa-1.json.xz"
    assert jsonio.base_of(tmp_path / "other" / "aa-1.json.xz") is None


def _chain(tmp_path: Path) -> tuple[dict, dict, dict]:
    """A gate check whose first run is stored against another's (``anchor/aa-1``) and whose second run against its
    first: the second is read through two deltas."""
    anchor, first, second = _doc({"m1": 1.0, "m2": 2.0}), _doc({"m1": 1.1, "m2": 2.0}), _doc({"m1": 1.2, "m2": 2.0})
    second["run"] = {"id": "second"}
    _write(tmp_path / "anchor" / "aa-1.json.xz", anchor)
    _write(tmp_path / "g" / "aa-1.json.xz", saved_delta.encode(anchor, first, "../anchor/aa-1.json.xz"))
    _write(tmp_path / "g" / "aa-2.json.xz", saved_delta.encode(first, second, "aa-1.json.xz"))
    return anchor, first, second


def test_a_delta_of_a_delta_of_a_whole_document_reads_back_whole_and_follows_its_bases_changes(tmp_path):
    anchor, first, second = _chain(tmp_path)
    two = tmp_path / "g" / "aa-2.json.xz"
    assert json.dumps(jsonio.read_json(two)) == json.dumps(second)
    assert json.loads(jsonio.read_bytes(two)) == second
    assert json.dumps(jsonio.read_json(tmp_path / "g" / "aa-1.json.xz")) == json.dumps(first)
    # the base's own base changes: what the second run keeps of it through its base changes too
    anchor["tests"] = [{"test": "t.py::f", "duration_s": 3.0}]
    _write(tmp_path / "anchor" / "aa-1.json.xz", anchor)
    assert jsonio.read_json(two)["tests"] == anchor["tests"]


def test_a_base_read_through_two_deltas_or_a_cycle_is_refused(tmp_path):
    _, first, second = _chain(tmp_path)
    third = _doc({"m1": 1.3, "m2": 2.0})
    _write(tmp_path / "g" / "aa-3.json.xz", saved_delta.encode(second, third, "aa-2.json.xz"))
    said = "is stored as a difference from .*, itself a difference from .*: a base must be a whole document or the " \
           "difference from one"
    with pytest.raises(ValueError, match=said):
        jsonio.read_json(tmp_path / "g" / "aa-3.json.xz")
    with pytest.raises(ValueError, match=said):
        jsonio.read_bytes(tmp_path / "g" / "aa-3.json.xz")
    _write(tmp_path / "c" / "a.json.xz", {"$delta": "b.json.xz", "top": {}, "metrics": []})
    _write(tmp_path / "c" / "b.json.xz", {"$delta": "a.json.xz", "top": {}, "metrics": []})
    with pytest.raises(ValueError, match=said):
        jsonio.read_json(tmp_path / "c" / "a.json.xz")
    _write(tmp_path / "c" / "self.json.xz", {"$delta": "self.json.xz", "top": {}, "metrics": []})
    with pytest.raises(ValueError, match=said):
        jsonio.read_json(tmp_path / "c" / "self.json.xz")


def test_a_delta_whose_base_in_a_sibling_folder_is_missing_names_it_from_its_own_folder(tmp_path):
    _chain(tmp_path)
    (tmp_path / "anchor" / "aa-1.json.xz").unlink()
    for name in ("aa-1.json.xz", "aa-2.json.xz"):
        with pytest.raises(jsonio.MissingBaseError, match=r"\.\./anchor/aa-1\.json\.xz, a file .* not there: copy the "
                                                          "device's whole folder"):
            jsonio.read_json(tmp_path / "g" / name)
    with pytest.raises(jsonio.MissingBaseError, match="aa-2.json.xz is stored as its difference from aa-1.json.xz, "
                                                      "itself the difference from ../anchor/aa-1.json.xz"):
        jsonio.read_bytes(tmp_path / "g" / "aa-2.json.xz")


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
    number) or, with ``--anchor``, against the device's anchor (a whole gate check's first run,
    ``gatecheck-*/aa-1.json.xz``; for a device with no gate check, the fullest complete run of its own folder), and
    reads back through two deltas at most."""
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
    stored = anchored = 0
    for folder in (results / "nvidia-h100-80gb-hbm3", results / "pocl-cpu-skylake-avx512-amd-epyc"):
        own_anchor = cs.own_anchor(sorted(folder.glob("*.json.xz")))
        names = cs.tracked([str(folder.relative_to(ROOT))])
        top = cs.anchor(cs.first_runs(folder, names)) or own_anchor
        others = set(cs.other_anchors(folder, names, top))  # the H100's OpenCL runs: against its fullest OpenCL run
        for path in folder.glob("*.json.xz"):
            raw = jsonio.unpack(path.read_bytes(), path)
            if not saved_delta.is_delta(raw):
                continue
            named = json.loads(raw)["$delta"]
            if "/" in named:  # against the device's anchor: a whole gate check's first run
                anchored += 1
                assert named.startswith("gatecheck") and named.endswith("/aa-1.json.xz"), path
                assert jsonio.base_of(folder / named) is None, path
            elif folder / named in others or not any(folder.glob("gatecheck*/aa-1.json.xz")) and folder / named == own_anchor:
                anchored += 1  # another backend's anchor, or (no gate check) the fullest complete run of its own folder
                assert jsonio.base_of(folder / named) is None and cs.backend(folder / named) == cs.backend(path), path
            else:  # against the fullest run of its own set, itself whole or stored against the anchor
                stored += 1
                assert named != path.name and cs.RUN_NUMBER.sub("#", named) == cs.RUN_NUMBER.sub("#", path.name), path
                assert cs.RUN_NUMBER.search(path.name) and (folder / named).exists(), path
            assert cs.depth(path) <= saved_delta.MAX_DEPTH, path
            assert jsonio.read_json(path)["metrics"], path
    assert stored >= 10 and anchored >= 10, (stored, anchored)
    pocl = results / "pocl-cpu-skylake-avx512-amd-epyc"
    assert cs.set_base(pocl / "pocl6-3-opencl.json.xz") == pocl / "pocl6-1-opencl.json.xz"
    assert cs.set_base(results / "nvidia-h100-80gb-hbm3" / "l2c-cuda.json.xz") is None  # a run of no set


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


def _gate_run(values: int, shift: float, run_id: str) -> dict:
    """A results document of ``values`` metrics sharing long notes, as a gate check's first run holds: its readings
    moved by ``shift``."""
    from pytest_gpuperf import RESULTS_SCHEMA

    metrics = [{"name": f"kernel{i}.bandwidth", "test": f"tests/test_k.py::test_k[{i}]",
                "value": 100.0 + i * 0.37 + shift, "unit": "GB/s", "verdict": "pass",
                "info": {"citation": f"vendor guide section {i % 7}, the sustained rate of pattern {i}",
                         "note": "measured after warm-up with the clocks locked, the median of the kept samples"}}
               for i in range(values)]
    return {"schema": RESULTS_SCHEMA, "run": {"id": run_id, "finished": f"2024-01-01T00:00:{len(run_id):02d}"},
            "metrics": metrics, "tests": [{"test": f"tests/test_k.py::test_k[{i}]", "outcome": "passed"}
                                          for i in range(values)]}


def _git(root: Path, *args: str) -> None:
    import subprocess
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
                   cwd=root, check=True, capture_output=True)


def _commit_runs(root: Path) -> None:
    """A repository at ``root`` whose one commit holds the runs written there (what ``--check HEAD`` compares with)."""
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "runs")


def test_anchor_stores_a_devices_gate_checks_first_runs_against_its_fullest_and_every_run_reads_back(tmp_path,
                                                                                                     monkeypatch):
    """``compact_saved.py --delta --anchor DEVICE``: each gate check's whole first run is stored against the device's
    anchor (here the fullest: no folder is named ``gatecheck``), its later runs stay stored against it (read through
    two deltas), the anchor stays whole, a first run whose later runs are themselves bases stays whole, every run reads
    back as before, and ``--check`` against the revision before finds nothing changed."""
    cs = _compact_saved()
    monkeypatch.setattr(cs, "ROOT", tmp_path)
    device = tmp_path / "results" / "dev"
    firsts = {"gatecheck-a": _gate_run(60, 0.5, "a1"), "gatecheck-b": _gate_run(61, 0.0, "b1"),
              "gatecheck-c": _gate_run(60, 0.25, "c1")}
    docs: dict[Path, dict] = {}
    for folder, first in firsts.items():
        docs[_write(device / folder / "aa-1.json.xz", first)] = first
        second = _gate_run(60, 0.75, folder + "2")
        docs[_write(device / folder / "aa-2.json.xz", saved_delta.encode(first, second, "aa-1.json.xz"))] = second
    third = _gate_run(60, 0.8, "c3")  # c's third run stored against its second: c's first run must stay whole
    docs[_write(device / "gatecheck-c" / "aa-3.json.xz",
                saved_delta.encode(docs[device / "gatecheck-c" / "aa-2.json.xz"], third, "aa-2.json.xz"))] = third
    _commit_runs(tmp_path)
    sizes = {p: p.stat().st_size for p in docs}

    assert cs.main(["--delta", "--anchor", "results/dev"]) == 0
    anchor = device / "gatecheck-b" / "aa-1.json.xz"
    moved = device / "gatecheck-a" / "aa-1.json.xz"
    assert jsonio.base_of(anchor) is None and jsonio.base_of(device / "gatecheck-c" / "aa-1.json.xz") is None
    assert json.loads(jsonio.read_stored(moved))["$delta"] == "../gatecheck-b/aa-1.json.xz"
    assert moved.stat().st_size < sizes[moved]
    assert cs.depth(device / "gatecheck-a" / "aa-2.json.xz") == cs.depth(device / "gatecheck-c" / "aa-3.json.xz") == 2
    assert anchor in cs.bases(anchor.parent)
    for path, doc in docs.items():
        assert json.dumps(jsonio.read_json(path)) == json.dumps(doc), path
        assert cs.difference(str(path.relative_to(tmp_path)), "HEAD") is None, path
    # once more: nothing left to store; the anchor never becomes a delta
    sizes = {p: p.stat().st_size for p in docs}
    assert cs.main(["--delta", "--anchor", "results/dev"]) == 0
    assert {p: p.stat().st_size for p in docs} == sizes
    # the revision holding the chains reads them whole too
    _git(tmp_path, "commit", "-qam", "anchored")
    two = "results/dev/gatecheck-a/aa-2.json.xz"
    assert json.loads(cs._whole_at("HEAD", two)) == docs[device / "gatecheck-a" / "aa-2.json.xz"]
    assert cs.difference(two, "HEAD") is None
    # a later run of the anchored gate check is still stored against its first run: two deltas deep, no more
    fourth = _gate_run(60, 0.9, "a4")
    _write(device / "gatecheck-a" / "aa-4.json.xz", fourth)
    assert cs.to_delta("results/dev/gatecheck-a/aa-4.json.xz")[3] == "aa-1.json.xz"
    assert json.dumps(jsonio.read_json(device / "gatecheck-a" / "aa-4.json.xz")) == json.dumps(fourth)


def test_the_anchor_is_the_fullest_complete_first_run_the_newest_among_equals(tmp_path):
    cs = _compact_saved()
    named, full, other = (tmp_path / f / "aa-1.json.xz" for f in ("gatecheck", "gatecheck-x", "gatecheck-y"))
    _write(named, _gate_run(5, 0.0, "n"))
    _write(full, _gate_run(9, 0.0, "x"))
    _write(other, _gate_run(9, 0.1, "y"))
    assert cs.anchor([full, named, other]) == full  # the fullest, the first by name where they finished together
    _write(other, _gate_run(9, 0.1, "y-later"))
    assert cs.anchor([full, named, other]) == other  # the newest of the fullest
    _write(named, _gate_run(10, 0.0, "n"))
    assert cs.anchor([full, named, other]) == named  # more metrics outweigh a later finish
    _write(named, _gate_run(5, 0.0, "n"))
    _write(other, _gate_run(9, 0.1, "y"))
    _write(full, saved_delta.encode(_gate_run(9, 0.1, "y"), _gate_run(9, 0.0, "x-later"), "../gatecheck-y/aa-1.json.xz"))
    assert cs.anchor([full, named, other]) == full  # the newest, though stored as a delta: it competes as it reads back
    interrupted = _gate_run(9, 0.0, "x-latest")
    interrupted["run"]["interrupted"] = True
    cut = _write(tmp_path / "gatecheck-z" / "aa-1.json.xz", interrupted)
    assert cs.anchor([full, named, other, cut]) == full  # an interrupted run is never the anchor, newest or not


def test_a_newer_complete_run_stored_as_a_delta_becomes_the_anchor_and_the_earlier_anchor_a_delta_of_it(
        tmp_path, monkeypatch):
    """``--delta --anchor``: where the card's newest complete run had been stored against an earlier anchor, it is
    stored whole again and the earlier anchor (with the runs that named it) is stored against it; every run reads
    back as before, no chain deeper than two deltas."""
    cs = _compact_saved()
    monkeypatch.setattr(cs, "ROOT", tmp_path)
    device = tmp_path / "results" / "dev"
    old, new = _gate_run(60, 0.0, "old"), _gate_run(60, 0.5, "newer-run")
    second = _gate_run(60, 0.25, "old2")
    docs = {_write(device / "gatecheck-a" / "aa-1.json.xz", old): old,
            _write(device / "gatecheck-a" / "aa-2.json.xz", saved_delta.encode(old, second, "aa-1.json.xz")): second,
            _write(device / "fresh-b" / "aa-1.json.xz", saved_delta.encode(old, new, "../gatecheck-a/aa-1.json.xz")): new}
    _commit_runs(tmp_path)
    assert cs.main(["--delta", "--anchor", "results/dev"]) == 0
    top, earlier = device / "fresh-b" / "aa-1.json.xz", device / "gatecheck-a" / "aa-1.json.xz"
    assert jsonio.base_of(top) is None
    assert json.loads(jsonio.read_stored(earlier))["$delta"] == "../fresh-b/aa-1.json.xz"
    for path, doc in docs.items():
        assert json.dumps(jsonio.read_json(path)) == json.dumps(doc), path
        assert cs.depth(path) <= saved_delta.MAX_DEPTH, path
        assert cs.difference(str(path.relative_to(tmp_path)), "HEAD") is None, path


def test_anchor_frees_an_earlier_anchor_and_stores_a_study_s_base_against_the_anchor(tmp_path, monkeypatch):
    """``--delta --anchor``: the runs another folder stores against an earlier anchor are stored against the anchor
    instead, then the earlier anchor itself, and a study's base run (its later runs stored against it) too; every
    chain stays two deltas deep at most, every run reads back as before, and the study's base stays its base."""
    cs = _compact_saved()
    monkeypatch.setattr(cs, "ROOT", tmp_path)
    device = tmp_path / "results" / "dev"
    docs: dict[Path, dict] = {}
    top, old = _gate_run(61, 0.0, "a1"), _gate_run(60, 0.5, "o1")
    docs[_write(device / "gatecheck-a" / "aa-1.json.xz", top)] = top
    docs[_write(device / "gatecheck-old" / "aa-1.json.xz", old)] = old
    first, second = _gate_run(60, 0.25, "c1"), _gate_run(60, 0.3, "c2")
    docs[_write(device / "gatecheck-c" / "aa-1.json.xz",
                saved_delta.encode(old, first, "../gatecheck-old/aa-1.json.xz"))] = first
    docs[_write(device / "gatecheck-c" / "aa-2.json.xz", saved_delta.encode(first, second, "aa-1.json.xz"))] = second
    s1, s2 = _gate_run(60, 0.6, "s1"), _gate_run(60, 0.7, "s2")
    docs[_write(device / "study-x" / "s1-cuda.json.xz", s1)] = s1
    docs[_write(device / "study-x" / "s2-cuda.json.xz", saved_delta.encode(s1, s2, "s1-cuda.json.xz"))] = s2
    _commit_runs(tmp_path)

    assert cs.main(["--delta", "--anchor", "results/dev"]) == 0
    assert jsonio.base_of(device / "gatecheck-a" / "aa-1.json.xz") is None
    for moved in ("gatecheck-c/aa-1.json.xz", "gatecheck-old/aa-1.json.xz", "study-x/s1-cuda.json.xz"):
        assert json.loads(jsonio.read_stored(device / moved))["$delta"] == "../gatecheck-a/aa-1.json.xz", moved
    assert cs.depth(device / "gatecheck-c" / "aa-2.json.xz") == cs.depth(device / "study-x" / "s2-cuda.json.xz") == 2
    cs.delta_base.cache_clear()
    assert cs.delta_base(device / "study-x") == device / "study-x" / "s1-cuda.json.xz"
    for path, doc in docs.items():
        assert json.dumps(jsonio.read_json(path)) == json.dumps(doc), path
        assert cs.difference(str(path.relative_to(tmp_path)), "HEAD") is None, path


def test_anchor_stores_the_device_folders_own_runs_against_the_anchor_and_each_reads_back(tmp_path, monkeypatch,
                                                                                         capsys):
    """``--delta --anchor``: a whole run of the device's own folder, and the base of a set there (its later run stored
    against it), are stored against the anchor as ``<folder>/aa-1.json.xz``; every run reads back as before, the
    anchor stays whole and is a base no later pass stores away, an earlier anchor those runs name is freed to the new
    one under the right name, and a run copied out alone names the folder to copy with it."""
    cs = _compact_saved()
    monkeypatch.setattr(cs, "ROOT", tmp_path)
    device = tmp_path / "results" / "dev"
    docs: dict[Path, dict] = {}
    top, alone, set1, set2 = (_gate_run(61, 0.0, "a1"), _gate_run(60, 0.5, "u"), _gate_run(60, 0.6, "p1"),
                              _gate_run(60, 0.7, "p2"))
    docs[_write(device / "gatecheck-a" / "aa-1.json.xz", top)] = top
    docs[_write(device / "upgrade-cuda.json.xz", alone)] = alone
    docs[_write(device / "pocl6-1-opencl.json.xz", set1)] = set1
    docs[_write(device / "pocl6-2-opencl.json.xz", saved_delta.encode(set1, set2, "pocl6-1-opencl.json.xz"))] = set2
    _commit_runs(tmp_path)

    assert cs.main(["--delta", "--anchor", "results/dev"]) == 0
    anchor = device / "gatecheck-a" / "aa-1.json.xz"
    assert jsonio.base_of(anchor) is None and anchor in cs.bases(anchor.parent)
    for moved in ("upgrade-cuda.json.xz", "pocl6-1-opencl.json.xz"):
        assert json.loads(jsonio.read_stored(device / moved))["$delta"] == "gatecheck-a/aa-1.json.xz", moved
    assert cs.depth(device / "pocl6-2-opencl.json.xz") == 2
    for path, doc in docs.items():
        assert json.dumps(jsonio.read_json(path)) == json.dumps(doc), path
        assert cs.difference(str(path.relative_to(tmp_path)), "HEAD") is None, path
    assert cs.to_delta("results/dev/gatecheck-a/aa-1.json.xz")[1:3] == (anchor.stat().st_size,) * 2
    # a fuller gate check's first run becomes the anchor: the device's own runs move to it, named from their folder
    fuller = _gate_run(62, 0.1, "b1")
    docs[_write(device / "gatecheck-b" / "aa-1.json.xz", fuller)] = fuller
    _git(tmp_path, "add", "-A")
    assert cs.main(["--delta", "--anchor", "results/dev"]) == 0
    assert json.loads(jsonio.read_stored(device / "upgrade-cuda.json.xz"))["$delta"] == "gatecheck-b/aa-1.json.xz"
    assert json.loads(jsonio.read_stored(anchor))["$delta"] == "../gatecheck-b/aa-1.json.xz"
    for path, doc in docs.items():
        assert json.dumps(jsonio.read_json(path)) == json.dumps(doc), path
    # copied out alone, the run says which folder to copy with it
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "upgrade-cuda.json.xz").write_bytes((device / "upgrade-cuda.json.xz").read_bytes())
    with pytest.raises(jsonio.MissingBaseError, match="gatecheck-b/aa-1.json.xz.*copy the device's whole folder"):
        jsonio.read_json(tmp_path / "out" / "upgrade-cuda.json.xz")


def test_anchor_on_a_device_with_no_gate_check_is_its_own_folders_fullest_complete_run(tmp_path, monkeypatch):
    """``--delta --anchor`` on a device with no gate check (a CPU device's folder of unrelated suites): the newest
    complete whole run with the most metrics of its own folder is the anchor; each other set's first run is stored
    against it by its file name (its later runs then read through two deltas), a run of a folder inside it is not
    (it could not name a file of its parent folder), a set's later run stored as a delta is not made whole for it,
    and every run reads back as before."""
    cs = _compact_saved()
    monkeypatch.setattr(cs, "ROOT", tmp_path)
    device = tmp_path / "results" / "cpu"
    docs: dict[Path, dict] = {}
    old, new1, new2 = _gate_run(60, 0.4, "old"), _gate_run(60, 0.5, "new-1"), _gate_run(60, 0.55, "new-2-later")
    other1, other2, inside = _gate_run(60, 0.6, "o1"), _gate_run(60, 0.7, "o2"), _gate_run(60, 0.8, "x")
    broken = _gate_run(70, 0.9, "z-cut-short")
    broken["run"]["interrupted"] = True  # the most metrics, but incomplete: never the anchor
    docs[_write(device / "old-opencl.json.xz", old)] = old
    docs[_write(device / "new-1-opencl.json.xz", new1)] = new1
    docs[_write(device / "new-2-opencl.json.xz", saved_delta.encode(new1, new2, "new-1-opencl.json.xz"))] = new2
    docs[_write(device / "other-1-opencl.json.xz", other1)] = other1
    docs[_write(device / "other-2-opencl.json.xz", saved_delta.encode(other1, other2, "other-1-opencl.json.xz"))] = other2
    docs[_write(device / "cut-opencl.json.xz", broken)] = broken
    docs[_write(device / "before-after" / "after-opencl.json.xz", inside)] = inside
    _commit_runs(tmp_path)

    assert cs.main(["--delta", "--anchor", "results/cpu"]) == 0
    anchor = device / "new-1-opencl.json.xz"  # newer than old-opencl's; new-2 is newer still but a delta
    assert jsonio.base_of(anchor) is None
    for moved in ("old-opencl.json.xz", "other-1-opencl.json.xz", "cut-opencl.json.xz"):
        assert json.loads(jsonio.read_stored(device / moved))["$delta"] == "new-1-opencl.json.xz", moved
    assert cs.depth(device / "other-2-opencl.json.xz") == 2
    assert jsonio.base_of(device / "before-after" / "after-opencl.json.xz") is None
    assert cs.set_base(device / "other-2-opencl.json.xz") == device / "other-1-opencl.json.xz"  # read back whole
    for path, doc in docs.items():
        assert json.dumps(jsonio.read_json(path)) == json.dumps(doc), path
        assert cs.difference(str(path.relative_to(tmp_path)), "HEAD") is None, path
    sizes = {p: p.stat().st_size for p in docs}
    assert cs.main(["--delta", "--anchor", "results/cpu"]) == 0  # once more: nothing left to store
    assert {p: p.stat().st_size for p in docs} == sizes


def _backend_run(backend: str, values: int, shift: float, run_id: str) -> dict:
    """A gate-check-like run of ``backend``: its own metric names and notes, as a card's OpenCL run has beside its
    CUDA ones."""
    doc = _gate_run(values, shift, run_id)
    doc["device"] = {"backend": backend}
    for m in doc["metrics"]:
        m["name"], m["info"]["note"] = f"{backend}.{m['name']}", f"{backend}: {m['info']['note']}, queue {m['value']}"
    return doc


def test_anchor_stores_another_backends_runs_against_that_backends_own_anchor(tmp_path, monkeypatch):
    """``--delta --anchor`` on a card measured through two backends: the CUDA anchor stays the fullest run, and the
    OpenCL runs stored against it (or whole) are stored against the OpenCL gate check's first run instead, made whole
    for them where that saves bytes overall — from the device's folder, a sibling folder and its own folder — while an
    OpenCL run stored against another OpenCL run stays so (its chain now two deltas deep); every run reads back as
    before, and a second pass changes nothing."""
    cs = _compact_saved()
    monkeypatch.setattr(cs, "ROOT", tmp_path)
    device = tmp_path / "results" / "card"
    docs: dict[Path, dict] = {}
    cuda = _backend_run("cuda", 80, 0.0, "c1")
    ocl, ocl2, own1, own2, beside = (_backend_run("opencl", 60, x, f"o{x}") for x in (0.1, 0.2, 0.3, 0.4, 0.5))
    docs[_write(device / "gatecheck-a" / "aa-1.json.xz", cuda)] = cuda
    docs[_write(device / "gatecheck-a" / "aa-opencl-2.json.xz", saved_delta.encode(cuda, beside, "aa-1.json.xz"))] = beside
    docs[_write(device / "gatecheck-b-opencl" / "aa-1.json.xz",
                saved_delta.encode(cuda, ocl, "../gatecheck-a/aa-1.json.xz"))] = ocl
    docs[_write(device / "gatecheck-b-opencl" / "aa-2.json.xz", saved_delta.encode(ocl, ocl2, "aa-1.json.xz"))] = ocl2
    docs[_write(device / "nvocl-1-opencl.json.xz", saved_delta.encode(cuda, own1, "gatecheck-a/aa-1.json.xz"))] = own1
    docs[_write(device / "nvocl-2-opencl.json.xz", saved_delta.encode(own1, own2, "nvocl-1-opencl.json.xz"))] = own2
    _commit_runs(tmp_path)
    sizes = {p: p.stat().st_size for p in docs}

    assert cs.main(["--delta", "--anchor", "results/card"]) == 0
    other = device / "gatecheck-b-opencl" / "aa-1.json.xz"
    assert cs.other_anchors(device, cs.tracked(["results/card"]), device / "gatecheck-a" / "aa-1.json.xz") == [other]
    assert jsonio.base_of(device / "gatecheck-a" / "aa-1.json.xz") is None and jsonio.base_of(other) is None
    assert json.loads(jsonio.read_stored(device / "nvocl-1-opencl.json.xz"))["$delta"] == "gatecheck-b-opencl/aa-1.json.xz"
    assert json.loads(jsonio.read_stored(device / "gatecheck-a" / "aa-opencl-2.json.xz"))["$delta"] == \
        "../gatecheck-b-opencl/aa-1.json.xz"
    assert jsonio.base_of(device / "nvocl-2-opencl.json.xz") == device / "nvocl-1-opencl.json.xz"
    assert cs.depth(device / "nvocl-2-opencl.json.xz") == 2
    assert sum(p.stat().st_size for p in docs) < sum(sizes.values())
    for path, doc in docs.items():
        assert json.dumps(jsonio.read_json(path)) == json.dumps(doc), path
        assert cs.difference(str(path.relative_to(tmp_path)), "HEAD") is None, path
    sizes = {p: p.stat().st_size for p in docs}
    assert cs.main(["--delta", "--anchor", "results/card"]) == 0  # once more: the OpenCL anchor stays whole
    assert {p: p.stat().st_size for p in docs} == sizes


def test_xz_stores_a_kept_gate_checks_file_compressed_and_leaves_the_devices_own_plain(tmp_path, monkeypatch):
    """``compact_saved.py --xz``: the ``gatecheck.json`` of a kept gate check (a ``gatecheck-*`` folder) becomes
    ``gatecheck.json.xz`` with the same bytes inside, read back by the name it had; a device folder's own
    ``gatecheck.json``, where ``gpuperf baseline gatecheck`` writes and appends, stays plain; ``--check`` against
    the revision before finds nothing changed."""
    cs = _compact_saved()
    monkeypatch.setattr(cs, "ROOT", tmp_path)
    device = tmp_path / "results" / "dev"
    text = json.dumps({"schema": "pytest-gpuperf-gatecheck/1", "aa": [{"run": 1, "exit": 0}] * 40}, indent=1)
    for where in (device / "gatecheck-a", device):
        where.mkdir(parents=True, exist_ok=True)
        (where / "gatecheck.json").write_text(text)
    _write(device / "gatecheck-a" / "aa-1.json.xz", _gate_run(5, 0.0, "a1"))
    _commit_runs(tmp_path)

    assert cs.main(["--xz", "results"]) == 0
    kept = device / "gatecheck-a" / "gatecheck.json"
    assert not kept.exists() and (device / "gatecheck-a" / "gatecheck.json.xz").stat().st_size < len(text)
    assert jsonio.read_text(kept) == text  # asked for by its old name, read from its .xz twin
    assert (device / "gatecheck.json").read_text() == text
    _git(tmp_path, "add", "-A")
    assert cs.main(["--check", "HEAD", "results"]) == 0


def test_saved_runs_are_xz_without_position_bits_smaller_than_the_default_and_the_same_bytes_each_time():
    import lzma

    whole = jsonio.read_bytes(ROOT / "results" / "nvidia-h100-80gb-hbm3" / "gatecheck-0322ea6" / "aa-1.json.xz")
    stored = jsonio.xz_bytes(whole)
    assert stored == jsonio.xz_bytes(whole) and lzma.decompress(stored) == whole
    default = lzma.compress(whole, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=6 | lzma.PRESET_EXTREME)
    assert len(stored) < len(default)
