"""Baseline files in the lean form (schema /2) and their review: the older form is read and migrated
without changing a single entry or verdict, the lean form lists its own problems, a changed metric is
one changed line, and ``gpuperf baseline diff`` says what moved."""

from __future__ import annotations

import copy
import difflib
import json
from pathlib import Path

import pytest

from pytest_gpuperf import BASELINE_SCHEMA, LEAN_BASELINE_SCHEMA
from pytest_gpuperf.baselines import baseline_file, catalog, fileformat
from pytest_gpuperf.baselines.verdicts import compare
from pytest_gpuperf.cli import main as gpuperf
from pytest_gpuperf.errors import BaselineFileError
from pytest_gpuperf.util import jsonio

ROOT = Path(__file__).resolve().parents[1]
REVIEWED = sorted((ROOT / "pytest_gpuperf" / "baselines" / "reviewed").glob("*.json"))
#: the H100 baseline as it was committed in the older form (schema /1: provenance in every entry)
V1_H100 = ROOT / "tests" / "data" / "baseline-v1-nvidia-h100-80gb-hbm3.json.xz"
H100_RUNS = sorted((ROOT / "results" / "nvidia-h100-80gb-hbm3").glob("default-[0-9]-cuda.json.xz"))


def _verdict(metric: dict, entry: dict | None) -> tuple:
    """A results metric judged against a baseline entry as a run judges it (session.record's call)."""
    info = metric.get("info") or {}
    c = compare(float(metric["value"]), metric["better"], entry, samples=(metric.get("stats") or {}).get("samples"),
                identity=metric.get("identity"), gate_if_stable=info.get("gate") == "if-stable",
                name=metric["name"], unit=metric["unit"], info=info)
    return c.verdict, c.band, c.reason, None if c.difference is None else c.difference.to_json()


@pytest.mark.parametrize("path", REVIEWED, ids=lambda p: p.name)
def test_reviewed_files_are_lean_and_written_as_the_writer_writes_them(path):
    text = path.read_text(encoding="utf-8")
    assert json.loads(text)["schema"] == LEAN_BASELINE_SCHEMA
    data = baseline_file.load(path.parent, path.stem).data
    assert fileformat.dumps(data) == text  # migrate on it changes nothing
    metrics = sum(len(s["metrics"]) for s in data["backends"].values())
    assert len(text.splitlines()) < metrics + 40  # one line per metric, a few header lines


def test_migrating_the_older_form_keeps_every_entry_and_every_verdict(tmp_path):
    old = tmp_path / "old" / "nvidia-h100-80gb-hbm3.json"
    old.parent.mkdir()
    old.write_bytes(jsonio.read_bytes(V1_H100))
    new = tmp_path / "nvidia-h100-80gb-hbm3.json"
    new.write_bytes(old.read_bytes())
    assert gpuperf(["baseline", "migrate", str(new)]) == 0
    before, after = baseline_file.load(old.parent, old.stem), baseline_file.load(new.parent, new.stem)
    assert json.loads(old.read_text())["schema"] == BASELINE_SCHEMA
    assert json.loads(new.read_text())["schema"] == LEAN_BASELINE_SCHEMA
    retired = sorted(n for n in before.metrics("cuda") if catalog.retired(n))  # metrics the suites moved
    assert retired and not [n for n in retired if n in after.metrics("cuda")]
    for name in retired:
        del before.data["backends"]["cuda"]["metrics"][name]
    assert after.data["device"] == {**before.data["device"], "class": "gpu"}  # its cuda section proves it
    before.data["device"]["class"] = "gpu"
    assert after.data == before.data
    assert new.stat().st_size < old.stat().st_size / 1.8 and len(new.read_text().splitlines()) < 2000
    assert len(before.data["backends"]["cuda"]["metrics"]) > 1900  # the whole file, not a sample of it
    # re-judge the committed H100 runs against the old file and the migrated one: every verdict, band,
    # reason and significance test the same (sampled timings included)
    assert H100_RUNS
    judged = sampled = 0
    for path in H100_RUNS:
        for m in jsonio.read_json(path)["metrics"]:
            entry = before.metrics("cuda").get(m["name"])  # a retired one was dropped from both
            if entry is None or not isinstance(m.get("value"), (int, float)):
                continue
            old_verdict = _verdict(m, entry)
            assert _verdict(m, after.metrics("cuda")[m["name"]]) == old_verdict, m["name"]
            judged += 1
            sampled += old_verdict[3] is not None
    assert judged > 3000 and sampled > 500


def _entry(value: float, **extra: object) -> dict:
    return {"value": value, "unit": "us", "better": "lower", "test": "t.py::f", "tolerance": {"rel": 0.03},
            "identity": {}, **extra}


def _v1(**sections: dict) -> dict:
    return {"schema": BASELINE_SCHEMA, "device": {"key": "dev", "name": "Dev"}, "note": "reviewed by A",
            "backends": sections}


def test_the_lean_form_keeps_reviewers_notes_and_tells_provenances_apart():
    p1 = {"driver": "1", "commit": "abc", "date": "d", "runs": 3}
    p2 = {**p1, "driver": "2"}  # the same commit, date and runs: a label of its own all the same
    head = {**p1, "commit": "def"}
    data = _v1(opencl={"provenance": head, "owner": "team",
                       "metrics": {"a": _entry(1.0, provenance=p1, samples=[1.0, 1.1, 0.9, 1.0, 1.2], note="x"),
                                   "b": _entry(2.0, provenance=p2, run_values=[2.0, 2.1], runs=2),
                                   "c": _entry(3.0, provenance=dict(head))}})
    text = fileformat.dumps(data)
    doc = json.loads(text)
    section = doc["backends"]["opencl"]
    assert sorted(section["provenances"]) == ["abc d 3 runs", "abc d 3 runs (2)"]
    assert "provenance" not in section["metrics"]["c"]  # the header's: not repeated
    assert section["metrics"]["a"]["samples"] == {"median": 1.0, "mad": 0.1, "values": [1.0, 1.1, 0.9, 1.0, 1.2]}
    expanded, problems = fileformat.expand(doc)
    assert problems == [] and expanded == data
    assert text.count("\n") == 21  # 14 lines of headers and braces, two labels, the tests' line, one line per metric


def test_a_label_names_a_full_commit_by_its_first_digits_and_the_day_and_the_provenance_keeps_both_whole():
    sha = "0123456789abcdef0123456789abcdef01234567"
    earlier = {"commit": sha, "date": "2026-12-04T12:42:26+00:00", "runs": 3}
    other = {**earlier, "commit": sha[:39] + "8"}  # another commit of the same first digits: a label of its own
    data = _v1(cuda={"provenance": {"commit": "head", "date": "d", "runs": 3},
                     "metrics": {"a": _entry(1.0, provenance=earlier), "b": _entry(2.0, provenance=other),
                                 "c": _entry(3.0, provenance={"commit": "not-a-sha", "date": "d", "runs": 1})}})
    doc = json.loads(fileformat.dumps(data))
    labels = sorted(doc["backends"]["cuda"]["provenances"])
    assert labels == ["0123456 2026-12-04 3 runs", "0123456 2026-12-04 3 runs (2)", "not-a-sha d 1 run"], labels
    assert {doc["backends"]["cuda"]["provenances"][k]["commit"] for k in labels[:2]} == {sha, other["commit"]}
    assert doc["backends"]["cuda"]["provenances"][labels[0]]["date"] == earlier["date"]
    expanded, problems = fileformat.expand(doc)
    assert problems == [] and expanded == data


def test_changing_one_metric_changes_one_line():
    data = _v1(opencl={"provenance": {"commit": "a"},
                       "metrics": {f"m{i}": _entry(float(i), provenance={"commit": "a"}) for i in range(1, 30)}})
    changed = copy.deepcopy(data)
    changed["backends"]["opencl"]["metrics"]["m7"]["value"] = 7.5
    delta = [line for line in difflib.unified_diff(fileformat.dumps(data).splitlines(),
                                                   fileformat.dumps(changed).splitlines(), lineterm="", n=0)
             if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert len(delta) == 2 and '"m7": {"value":7.5' in delta[1]


def test_a_metric_line_is_compact_json():
    data = _v1(opencl={"provenance": {"commit": "a"}, "metrics": {"m1": _entry(1.0, provenance={"commit": "a"})}})
    line = next(x for x in fileformat.dumps(data).splitlines() if x.lstrip().startswith('"m1"'))
    body = line.split(": ", 1)[1].rstrip(",")
    assert ", " not in body and '": ' not in body and json.loads(body)["value"] == 1.0


def test_a_lean_file_lists_every_problem_of_its_own(tmp_path):
    path = tmp_path / "dev.json"
    baseline_file.write(path, _v1(opencl={"provenance": {"commit": "a"},
                                  "metrics": {"a": _entry(1.0, samples=[1.0, 2.0, 3.0, 4.0, 5.0]),
                                              "b": _entry(2.0, provenance={"commit": "old"})}}))
    doc = json.loads(path.read_text())
    doc["backends"]["opencl"]["metrics"]["a"]["samples"]["median"] = 9.0
    doc["backends"]["opencl"]["metrics"]["b"]["provenance"] = "zzz"
    path.write_text(json.dumps(doc))
    with pytest.raises(BaselineFileError) as err:
        baseline_file.load(tmp_path, "dev")
    problems = err.value.problems
    assert any("metrics['a'].samples.median is 9.0 but its values give 3.0" in p for p in problems), problems
    assert any("metrics['b'].provenance names 'zzz', which is not among" in p for p in problems), problems
    doc["backends"]["opencl"]["metrics"]["a"]["samples"] = [1.0, 2.0]  # the older form's list in a lean file
    path.write_text(json.dumps(doc))
    with pytest.raises(BaselineFileError, match=r"samples must be a digest"):
        baseline_file.load(tmp_path, "dev")


def test_migrate_writes_nothing_when_a_file_is_malformed(tmp_path, capsys):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_v1(opencl={"provenance": {}, "metrics": {"a": _entry(1.0)}})))
    (tmp_path / "bad.json").write_text('{"schema": "pytest-gpuperf-baseline/1", "backends": {')
    before = good.read_text()
    assert gpuperf(["baseline", "migrate", str(tmp_path)]) == 2
    assert "malformed baseline file" in capsys.readouterr().err and good.read_text() == before
    (tmp_path / "bad.json").unlink()
    assert gpuperf(["baseline", "migrate", str(tmp_path)]) == 0
    assert json.loads(good.read_text())["schema"] == LEAN_BASELINE_SCHEMA
    assert "migrated" in capsys.readouterr().out
    assert gpuperf(["baseline", "migrate", str(good)]) == 0 and "already lean" in capsys.readouterr().out


def _two_files(tmp_path, a: dict, b: dict) -> tuple[str, str]:
    """Baseline documents ``a`` and ``b`` written as files of one device key, older first."""
    for name, data in (("a", a), ("b", b)):
        (tmp_path / name).mkdir()
        baseline_file.write(tmp_path / name / "dev.json", data)
    return str(tmp_path / "a" / "dev.json"), str(tmp_path / "b" / "dev.json")


def test_baseline_diff_reads_as_a_review(tmp_path, capsys):
    prov_a, prov_b = {"driver": "550", "commit": "aaa"}, {"driver": "580", "commit": "bbb"}
    a = _v1(cuda={"provenance": prov_a, "metrics": {
        "copy.bw": {**_entry(2900.0, provenance=prov_a), "unit": "GB/s", "better": "higher"},
        "launch.us": _entry(5.0, provenance=prov_a),
        "sin.ulp": _entry(1.0, provenance=prov_a, identity={"n": 4096}),
        "gone.us": _entry(9.0, provenance=prov_a),
        "same.us": _entry(4.0, provenance=prov_a, samples=[4.0, 4.1, 3.9, 4.0, 4.0])}})
    b = _v1(cuda={"provenance": prov_b, "metrics": {
        "copy.bw": {**_entry(2755.0, provenance=prov_b), "unit": "GB/s", "better": "higher"},
        "launch.us": _entry(5.0, provenance=prov_b, tolerance={"rel": 0.04}, test="t.py::g"),
        "sin.ulp": _entry(1.0, provenance=prov_b, identity={"n": 8192}),
        "new.us": _entry(3.0, provenance=prov_b),
        "same.us": _entry(4.0, provenance=prov_b, samples=[4.0, 4.2, 3.8, 4.0, 4.0])}})
    fa, fb = _two_files(tmp_path, a, b)
    assert gpuperf(["baseline", "diff", fa, fb]) == 1
    out = capsys.readouterr().out
    assert "cuda: 5 → 5 metrics: 1 added, 1 removed, 1 identities changed, 2 values or bands moved, " \
           "1 re-measured with the same value and band" in out, out
    assert "header commit: aaa → bbb" in out and "header driver: 550 → 580" in out
    assert "+ new.us: 3 us ± 0.09 (3.0%), lower is better" in out
    assert "- gone.us: 9 us ± 0.27 (3.0%), lower is better" in out
    assert "~ sin.ulp: n: 4096 → 8192" in out
    assert "~ copy.bw: 2900 → 2755 GB/s (-5.0%)" in out
    assert "~ launch.us: band ± 0.15 (3.0%) → ± 0.2 (4.0%)" in out
    assert "~ launch.us: test: t.py::f → t.py::g" in out
    assert out.index("copy.bw: 2900") < out.index("launch.us: band")  # the larger move (5 % of the value against 1 %) first
    assert gpuperf(["baseline", "diff", fa, fa]) == 0
    assert "no changes" in capsys.readouterr().out
    assert gpuperf(["baseline", "diff", fa, str(tmp_path / "nope.json")]) == 2
    assert "nope.json is not a file" in capsys.readouterr().err


def test_baseline_diff_lists_each_band_widened_past_its_factor_with_the_cause_its_entry_records(tmp_path, capsys):
    prov = {"driver": "580", "commit": "aaa"}
    pooled = {**prov, "band_from": {"script": "scripts/derived_bands.py",
                                    "causes": {"chase.cycles": "between machines: 9 runs on 3 machines spread 2 %"}}}
    a = _v1(cuda={"provenance": prov, "metrics": {"chase.cycles": _entry(100.0, provenance=prov),
                                                  "copy.us": _entry(50.0, provenance=prov),
                                                  "grid.us": _entry(5.0, provenance=prov)}})
    b = _v1(cuda={"provenance": prov, "metrics": {
        "chase.cycles": _entry(100.0, provenance=pooled, tolerance={"rel": 0.12}),  # ×4, its cause recorded
        "copy.us": _entry(50.0, provenance=prov, tolerance={"rel": 0.06}),  # ×2, no cause recorded
        "grid.us": _entry(5.0, provenance=prov, tolerance={"rel": 0.04})}})  # ×1.33: under the factor
    fa, fb = _two_files(tmp_path, a, b)
    assert gpuperf(["baseline", "diff", fa, fb]) == 1
    out = capsys.readouterr().out
    assert "band widened more than ×1.5, widest first, 1 of them with no measured cause stated (2):" in out, out
    assert ("! chase.cycles: band ± 3 (3.0%) → ± 12 (12.0%) (×4.00); cause: between machines: 9 runs on 3 "
            "machines spread 2 %") in out
    assert "! copy.us: band ± 1.5 (3.0%) → ± 3 (6.0%) (×2.00); cause: no measured cause stated" in out
    assert "! grid.us" not in out and "~ grid.us: band ± 0.15 (3.0%) → ± 0.2 (4.0%)" in out
    assert out.index("! chase.cycles") < out.index("! copy.us")  # widest first
    assert gpuperf(["baseline", "diff", fa, fb, "--widened", "3"]) == 1
    out = capsys.readouterr().out
    assert "0 of them with no measured cause stated (1):" in out and "! copy.us" not in out
    assert gpuperf(["baseline", "diff", fa, fb, "--widened", "1"]) == 2
    assert "--widened 1: give a factor above 1" in capsys.readouterr().err


def test_migrate_gives_entries_the_catalog_s_class_band_only_when_asked(tmp_path, capsys):
    """After an upgrade whose catalog measured a class's noise anew (DRAM latency between machines), a
    user's baseline takes the new band with ``--catalog-bands``; the measured k × spread stays, an entry
    whose family sets no band keeps its own, and without the option no verdict changes."""
    src = ROOT / "pytest_gpuperf" / "baselines" / "reviewed" / "nvidia-h200.json"
    path = tmp_path / "nvidia-h200.json"
    data = json.loads(src.read_text())
    metrics = data["backends"]["cuda"]["metrics"]
    # a user's own entry: its band from its runs, not pooled between machines (the shipped one's provenance names a
    # pooling, whose measured band the catalog never replaces)
    metrics["memory.dram.latency.cycles"]["provenance"] = next(
        k for k, v in data["backends"]["cuda"]["provenances"].items() if not v.get(catalog.BAND_FROM))
    metrics["memory.dram.latency.cycles"]["tolerance"] = {"rel": 0.03, "k": 6.0, "spread": 1.5}
    own = copy.deepcopy(metrics["latency.fp32.fma.cycles"])
    assert catalog.tolerance("latency.fp32.fma.cycles", False) is None
    path.write_text(json.dumps(data))
    before = path.read_text()
    assert gpuperf(["baseline", "migrate", str(path)]) == 0
    assert json.loads(path.read_text())["backends"]["cuda"]["metrics"]["memory.dram.latency.cycles"]["tolerance"]["rel"] == 0.03
    assert gpuperf(["baseline", "migrate", str(path), "--catalog-bands", "gpu"]) == 0
    out = capsys.readouterr().out
    assert "entries given the catalog's band" in out and "memory.dram.latency.cycles" in out, out
    after = json.loads(path.read_text())["backends"]["cuda"]["metrics"]
    assert after["memory.dram.latency.cycles"]["tolerance"] == {"rel": catalog.tolerance("memory.dram.latency.cycles", False)["rel"],
                                                                "k": 6.0, "spread": 1.5}
    assert after["latency.fp32.fma.cycles"]["tolerance"] == own["tolerance"]
    assert path.read_text() != before
    assert gpuperf(["baseline", "migrate", str(path), "--catalog-bands", "gpu"]) == 0
    assert "already lean" in capsys.readouterr().out  # a second migration finds nothing left to change


@pytest.mark.parametrize("path", REVIEWED, ids=lambda p: p.stem)
def test_the_shipped_baselines_hold_the_catalog_s_bands(path, tmp_path, capsys):
    """A catalog row whose band changed without its shipped baselines being migrated fails here: the reviewed
    files must gate as a run of this plugin records its metrics."""
    copy_ = tmp_path / path.name
    copy_.write_text(path.read_text())
    device_class = baseline_file.recorded_class(json.loads(path.read_text()))
    assert device_class == ("cpu" if path.stem.startswith("pocl-") else "gpu")
    assert gpuperf(["baseline", "migrate", str(copy_), "--catalog-bands", device_class]) == 0
    out = capsys.readouterr().out
    assert "already lean" in out and "catalog's band" not in out, out


def test_migrate_gives_an_older_ranked_pass_entry_its_band_in_configurations_of_the_space(tmp_path, capsys):
    """A baseline made before the ranked pass's band (one configuration of the space, as every stage) takes
    ``catalog.RANKED_PASS_CONFIGS`` configurations of its kernel's space (the section's ``tuning.<k>.space``)
    from ``--catalog-bands``; the other stages keep their one configuration; a section without the space
    entry keeps the entry's band and says so."""
    src = ROOT / "pytest_gpuperf" / "baselines" / "reviewed" / "nvidia-h200.json"
    data = json.loads(src.read_text())
    metrics = data["backends"]["cuda"]["metrics"]
    ranked, plain = "tuning.matvec_wg.dao_ranked.evals.final", "tuning.matvec_wg.dao.evals.final"
    space = metrics["tuning.matvec_wg.space"]["value"]
    # the plain stage's count read the same on every machine pooled: half a configuration, so one more is caught
    assert metrics[plain]["tolerance"] == {"abs": 0.5 / space, "step": 1 / space}
    metrics[ranked]["tolerance"] = {"abs": 1 / space}  # as the older plugin recorded it
    metrics[ranked].pop("provenance", None)  # not measured between machines (catalog.measured_band): the row's band
    path = tmp_path / "nvidia-h200.json"
    path.write_text(json.dumps(data))
    assert gpuperf(["baseline", "migrate", str(path), "--catalog-bands", "gpu"]) == 0
    out = capsys.readouterr().out
    assert "1 entries given the catalog's band" in out and ranked in out, out
    after = json.loads(path.read_text())["backends"]["cuda"]["metrics"]
    assert after[ranked]["tolerance"] == {"abs": catalog.RANKED_PASS_CONFIGS / space} == {"abs": 4 / 32}
    assert after[plain]["tolerance"] == {"abs": 0.5 / space, "step": 1 / space}  # measured: migrate keeps it
    del metrics["tuning.matvec_wg.space"]
    path.write_text(json.dumps(data))
    assert gpuperf(["baseline", "migrate", str(path), "--catalog-bands", "gpu"]) == 0
    out = capsys.readouterr().out
    assert f"kept its band: cuda: {ranked}: its band is 4 configuration(s)" in out, out
    assert "no tuning.matvec_wg.space entry" in out
    assert json.loads(path.read_text())["backends"]["cuda"]["metrics"][ranked]["tolerance"] == {"abs": 1 / space}


def test_the_tuner_and_migrate_take_the_ranked_pass_s_band_from_one_row():
    """The race records each stage's band through the catalog, and migrate computes the same band from a
    section's space entry: the number of configurations lives in one row."""
    name = "tuning.reduce.dao_ranked.evals.final"
    assert catalog.space_band(name, 223) == {"abs": catalog.RANKED_PASS_CONFIGS / 223}
    assert catalog.space_band("tuning.reduce.lim_rules.evals.final", 223) == {"abs": 1 / 223}
    assert catalog.space_band("tuning.reduce.dao.quality", 223) is None  # not a band in configurations
    section = {"tuning.reduce.space": {"value": 223.0}}
    assert catalog.baseline_band(name, False, section) == catalog.baseline_band(name, True, section) \
        == catalog.space_band(name, 223)
    assert catalog.tolerance(name, False) is None  # no space, no band


def test_the_lean_form_defines_each_test_and_citation_once_and_names_a_dangling_label():
    """Hundreds of entries share a few test ids and citations: each is written once, under the section's ``tests``
    and ``citations``, and the entries name it by a label that stays the same when other entries change."""
    cite = "Surineni thesis §4.3"
    metrics = {f"m{i}": _entry(float(i), test=f"suites/t.py::f[{i % 2}]", citation=cite, provenance={"commit": "a"})
               for i in range(1, 7)}
    data = _v1(opencl={"provenance": {"commit": "a"}, "metrics": metrics})
    doc = json.loads(fileformat.dumps(data))
    section = doc["backends"]["opencl"]
    assert sorted(section["tests"].values()) == ["suites/t.py::f[0]", "suites/t.py::f[1]"]
    assert list(section["citations"].values()) == [cite]
    label = section["metrics"]["m1"]["test"]
    assert label.startswith("#") and section["tests"][label] == "suites/t.py::f[1]"
    expanded, problems = fileformat.expand(doc)
    assert problems == [] and expanded == data
    fewer = copy.deepcopy(data)
    del fewer["backends"]["opencl"]["metrics"]["m2"]
    assert json.loads(fileformat.dumps(fewer))["backends"]["opencl"]["metrics"]["m1"]["test"] == label
    del section["tests"][label]
    _, problems = fileformat.expand(doc)
    assert any("metrics['m1'].test names" in p and "backends.opencl.tests" in p for p in problems), problems


def test_the_lean_form_writes_runs_that_all_read_one_value_once():
    """A deterministic figure's pooled runs (forty identical values) are written once with their count; runs that
    differ, or a count that does not match, are written as they are; both read back equal."""
    same = _entry(2.0, run_values=[2.0] * 41, runs=41, provenance={"commit": "a"})
    apart = _entry(3.0, run_values=[3.0, 3.1, 3.0], runs=3, provenance={"commit": "a"})
    odd = _entry(4.0, run_values=[4.0, 4.0], runs=5, provenance={"commit": "a"})  # a count the values do not give
    data = _v1(cuda={"provenance": {"commit": "a"}, "metrics": {"same": same, "apart": apart, "odd": odd}})
    doc = json.loads(fileformat.dumps(data))
    written = doc["backends"]["cuda"]["metrics"]
    assert written["same"]["run_values"] == [2.0] and written["same"]["runs"] == 41
    assert written["apart"]["run_values"] == [3.0, 3.1, 3.0] and written["odd"]["run_values"] == [4.0, 4.0]
    expanded, problems = fileformat.expand(doc)
    assert problems == [] and expanded == data


def test_a_partial_update_keeps_the_section_s_provenance_and_a_full_one_replaces_it(tmp_path):
    """Re-making a few entries (``from-results --identity-changed``/``--match``) gives them their own runs'
    provenance and leaves the one the section was made from; re-making every entry replaces it."""
    target = baseline_file.BaselineFile(tmp_path / "card.json")
    device = {"key": "card", "name": "CARD"}

    def entry(value: float, prov: dict) -> dict:
        return {"value": value, "unit": "us", "better": "lower", "tolerance": {"rel": 0.05}, "provenance": prov}

    made = {"commit": "aaa", "date": "2026-01-01T00:00:00+00:00", "runs": 3}
    remade = {"commit": "bbb", "date": "2026-02-01T00:00:00+00:00", "runs": 6}
    baseline_file.update(target, "cuda", device, made, {"a.us": entry(1.0, made), "b.us": entry(2.0, made)})
    baseline_file.update(target, "cuda", device, remade, {"b.us": entry(2.5, remade)})
    section = baseline_file.load(tmp_path, "card").data["backends"]["cuda"]
    assert section["provenance"] == made
    assert section["metrics"]["a.us"]["provenance"] == made and section["metrics"]["b.us"]["provenance"] == remade
    raw = json.loads((tmp_path / "card.json").read_text())["backends"]["cuda"]
    assert "provenance" not in raw["metrics"]["a.us"] and isinstance(raw["metrics"]["b.us"]["provenance"], str)
    baseline_file.update(target, "cuda", device, remade, {"a.us": entry(1.1, remade), "b.us": entry(2.5, remade)})
    assert baseline_file.load(tmp_path, "card").data["backends"]["cuda"]["provenance"] == remade
