"""Suite profiles (``--gpuperf-profile``, ``timing.suite_profiles``).

* ``quick`` collects exactly the headline tests of the shipped suites and reports the rest as deselected;
  every test it names exists in a full collection; the ini key selects it too; a bad name and a quick run
  that would write baselines are usage errors.
* ``full`` collects every test but the studies (``STUDIES``: the application corpus), ``study`` every test;
  a study's baseline entries are measured by ``study`` only, and a full run gated against a baseline that
  holds them deselects the study and reads none of them ``missing``.
* The missing rule: of the sampled model run on a part of the corpus, the metrics a full run records for
  the other kernels (and the leave-one-kernel-out SVR) are left out on purpose, never ``missing``, while
  every figure the part records is expected.
* End to end on PoCL: a quick run gated against a full baseline reads 0 missing, says ``run.profile =
  quick``, and its metrics carry the full run's names and identities (the means over kernels differ only
  in their kernel set, so they read ``incomparable``). The baseline's math entries come from a real full
  run; its sampled-model entries are what a full run of the corpus names (the library's records over all
  24 kernels, with made-up times): fixed entries, so the check is of names and identities alone.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from pytest_gpuperf.baselines import catalog
from pytest_gpuperf.devices import discover
from pytest_gpuperf.studies.sampled import sampled_apps
from pytest_gpuperf.studies.sampled import sampled_corpus as sc
from pytest_gpuperf.corpora.app_kernels import by_name
from pytest_gpuperf.corpora.corpus import CORPUS
from pytest_gpuperf.studies.sampled.sampling import SampledRun, SamplePlan, saturation_point
from pytest_gpuperf.devices.base import DeviceInfo
from pytest_gpuperf.session import strip_device_id
from pytest_gpuperf.timing import suite_profiles
from pytest_gpuperf.timing.measure import Measurement
from pytest_gpuperf.timing.stats import Stats
from suite_support import baseline_folder

SUITES = Path(__file__).resolve().parents[1] / "pytest_gpuperf" / "suites"
HAVE_CL = any(d.backend == "opencl" for d in discover().devices)
needs_cl = pytest.mark.skipif(not HAVE_CL, reason="no OpenCL device (install pocl-opencl-icd)")
SAMPLED = "suites/test_model_error.py::test_sampled_models"
APPS = "suites/test_model_apps.py::test_sampled_app_models"


def _collected(pytester, *args: str) -> tuple[set[str], str]:
    """Device-free canonical ids a collection of the shipped suites yields, and pytest's last line."""
    result = pytester.runpytest("--gpuperf-device=opencl:0", "-p", "no:cacheprovider", "--collect-only", "-q",
                                str(SUITES), *args)
    ids = set()
    for line in result.outlines:
        m = re.match(r"^(?:\S*/)?(test_\w+\.py::\S+)$", line.strip())  # ids are relative to the rootdir
        if m:
            ids.add(strip_device_id("suites/" + m.group(1), "opencl:0"))
    return ids, result.outlines[-1] if result.outlines else ""


@needs_cl
def test_quick_collects_only_the_headline_tests(pytester):
    every, _ = _collected(pytester, "--gpuperf-profile=study")
    quick, last = _collected(pytester, "--gpuperf-profile=quick")
    assert quick == set(suite_profiles.QUICK.tests)
    assert set(suite_profiles.QUICK.tests) <= every  # every test it names exists
    assert f"{len(quick)}/{len(every)} tests collected ({len(every) - len(quick)} deselected)" in last


@needs_cl
def test_full_leaves_out_the_studies_and_study_runs_every_test(pytester):
    full, last = _collected(pytester)
    study, study_last = _collected(pytester, "--gpuperf-profile=study")
    assert APPS in suite_profiles.STUDIES and APPS in study and APPS not in full
    assert study - full == set(suite_profiles.STUDIES)  # the studies, and nothing else
    assert f"{len(full)}/{len(study)} tests collected ({len(study) - len(full)} deselected)" in last
    assert "deselected" not in study_last
    ini = pytester.makeini("[pytest]\ngpuperf_profile = study\n")  # the ini key accepts it too
    assert _collected(pytester, "-c", str(ini))[0] == study


@needs_cl
def test_the_ini_key_selects_a_profile_and_bad_values_are_usage_errors(pytester):
    ini = pytester.makeini("[pytest]\ngpuperf_profile = quick\n")  # -c: the suites' own folder has another
    quick, _ = _collected(pytester, "-c", str(ini))
    assert quick == set(suite_profiles.QUICK.tests)
    ini = pytester.makeini("[pytest]\ngpuperf_profile = fast\n")
    result = pytester.runpytest("--gpuperf-device=opencl:0", "-p", "no:cacheprovider", "-c", str(ini), "--collect-only",
                                str(SUITES))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*gpuperf_profile='fast': must be one of quick, full*"])
    result = pytester.runpytest("--gpuperf-device=opencl:0", "-p", "no:cacheprovider", "--gpuperf-profile=quick",
                                "--gpuperf-update-baselines", str(SUITES / "test_memory.py"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--gpuperf-profile=quick measures part of the suites; a baseline is made by a full run*"])


def test_an_unknown_profile_name_says_which_exist():
    with pytest.raises(ValueError, match="quick, full"):
        suite_profiles.get("fast")


def test_a_profile_selects_among_the_shipped_suites_only():
    assert not suite_profiles.QUICK.selects("suites/test_memory.py::test_copy_bandwidth[16MiB]")
    assert suite_profiles.QUICK.selects("tests/test_mine.py::test_my_kernel")  # a user's own test runs
    assert suite_profiles.FULL.selects("suites/test_memory.py::test_copy_bandwidth[16MiB]")
    assert suite_profiles.FULL.selects("tests/test_model_apps.py::test_sampled_app_models")  # a user's, same name


def test_a_study_is_selected_and_measured_by_the_study_profile_only():
    """Its entries are expected of ``study`` runs alone: under ``full`` and ``quick`` none reads ``missing``,
    whatever the test's parameters."""
    names = ("model.sampled_apps.parboil_sgemm.error", "model.sampled_apps.mean_error", "model.svr_apps.mean_error")
    for test in (APPS, APPS + "[x]"):
        assert suite_profiles.STUDY.selects(test) and all(suite_profiles.STUDY.measures(test, n) for n in names)
        for other in (suite_profiles.FULL, suite_profiles.QUICK):
            assert not other.selects(test) and not any(other.measures(test, n) for n in names), other.name
    assert suite_profiles.STUDY.tests is None and not suite_profiles.STUDY.parts  # full's tests, whole
    assert all(t.startswith(suite_profiles.SUITES_PREFIX) and "[" not in t for t in suite_profiles.STUDIES)
    assert suite_profiles.get("study") is suite_profiles.STUDY


def _corpus_result(names: tuple[str, ...], part: bool, cpu: bool = False) -> sc.CorpusResult:
    """A corpus result of made-up times over ``names`` (the records' names and identities are the point),
    with the run lengths of a GPU or a CPU device."""
    h100 = DeviceInfo(backend="cuda", index=0, name="H100", vendor="NVIDIA", key="h100", compute_capability="9.0",
                      compute_units=132, warp_size=32)
    sat = saturation_point(h100, {"num_regs": 16}, 256)
    res = sc.CorpusResult(sc.PROJECT, sc.waves_for(cpu), cpu=cpu, part=part)
    for i, name in enumerate(names):
        for waves in res.waves:
            plan = SamplePlan(sat, waves * sat.wave, 256, sc.PROJECT.multiple(waves, cpu=cpu))
            per_wave = 1e-6 * (1 + i)

            def m(x: float) -> Measurement:
                return Measurement((x,) * 5, Stats.of([x] * 5), True)

            run = SampledRun(plan, m(plan.waves[0] * per_wave), m(plan.waves[1] * per_wave), m(waves * per_wave * 1.01))
            res.instances.append(sc.svr.Instance(name, sat.p_sat, 16.0, 0.0, 256, plan.p1, plan.p2, plan.n_groups,
                                                 run.t_p1.stats.median, run.t_p2.stats.median, run.measured))
            if waves == max(res.waves):
                res.main[name] = run
    return res


def test_the_part_left_out_of_the_sampled_model_is_not_missing():
    quick = suite_profiles.QUICK
    part = quick.part(SAMPLED)
    assert part is not None and set(part.kernels) < {k.name for k in CORPUS}
    full = {r["name"]: r for r in sc.records(_corpus_result(tuple(k.name for k in CORPUS), part=False))}
    some = {r["name"]: r for r in sc.records(_corpus_result(part.kernels, part=True))}
    assert set(some) <= set(full)  # the same names
    assert all(quick.measures(SAMPLED, n) for n in some)  # what the part records is expected
    left = set(full) - set(some)
    assert left and not any(quick.measures(SAMPLED, n) for n in left)  # what it leaves out is not missing
    assert not [n for n in some if n.startswith("model.svr")]  # leave-one-kernel-out over a part: another model
    for name, rec in some.items():  # per kernel: the same identity; the means: another kernel set
        mine, theirs = dict(rec.get("identity") or {}), dict(full[name].get("identity") or {})
        assert mine.pop("kernels", None) == (",".join(sorted(part.kernels)) if ".mean_" in name else None)
        theirs.pop("kernels", None)
        assert mine == theirs, name
    assert suite_profiles.FULL.measures(SAMPLED, "model.svr_project.mean_error")


def _as_results_metric(rec: dict, test: str = SAMPLED) -> dict:
    """A record of ``sampled_corpus.records`` (or ``sampled_apps.records``) as a metric of a results document."""
    return {"test": test, "name": rec["name"], "value": float(rec["value"]), "unit": rec["unit"],
            "better": rec["better"], "stats": None, "baseline": None, "verdict": "new",
            "info": json.loads(json.dumps(rec.get("info") or {}, default=str)), "tolerance": catalog.tolerance(rec["name"], True),
            "identity": dict(rec.get("identity") or {})}


@needs_cl
def test_a_quick_run_gates_against_a_full_baseline_with_nothing_missing(pytester):
    """The baseline: a real full run of ``test_math_function[sin-*]``, and the sampled model's entries as a full
    run names them — the library's records over the whole corpus (made-up times: nothing here is judged on
    them: fixed entries, so only names and identities are checked)."""
    math_nodes = [f"{SUITES / 'test_accuracy_math.py'}::test_math_function[opencl:0-sin-fp32]",
                  f"{SUITES / 'test_accuracy_math.py'}::test_math_function[opencl:0-sin-fp64]"]
    folder = baseline_folder(pytester.path, "bl")
    common = ("--gpuperf-device=opencl:0", "-p", "no:cacheprovider", f"--gpuperf-baseline-dir={folder}")
    full_json, quick_json = pytester.path / "full.json", pytester.path / "quick.json"
    made = pytester.runpytest(*common, "--gpuperf-update-baselines", f"--gpuperf-json={full_json}", *math_nodes)
    made.assert_outcomes(passed=2)
    full_doc = json.loads(full_json.read_text())
    corpus = [_as_results_metric(r) for r in sc.records(_corpus_result(tuple(k.name for k in CORPUS), False, cpu=True))]
    assert any(n["name"].startswith("model.svr_project.") for n in corpus)
    (pytester.path / "corpus.json").write_text(json.dumps({**full_doc, "metrics": corpus, "missing": [], "tests": []}))
    from pytest_gpuperf.cli import main as gpuperf

    assert gpuperf(["baseline", "from-results", str(pytester.path / "corpus.json"), "--dir", str(folder)]) == 0

    result = pytester.runpytest(*common, "--gpuperf-profile=quick", f"--gpuperf-json={quick_json}", *math_nodes,
                                f"{SUITES / 'test_model_error.py'}::test_sampled_models[opencl:0]")
    result.assert_outcomes(passed=2, deselected=1)
    assert result.ret == pytest.ExitCode.OK
    doc = json.loads(quick_json.read_text())
    assert doc["run"]["profile"] == "quick" and doc["missing"] == []
    full = {m["name"]: m for m in full_doc["metrics"] + corpus}
    quick = {m["name"]: m for m in doc["metrics"]}
    part = suite_profiles.QUICK.part(SAMPLED)
    assert {n.split(".")[2] for n in quick if n.startswith("model.sampled_project.") and ".mean_" not in n} \
        == set(part.kernels)
    assert set(quick) <= set(full) and not [n for n in quick if n.startswith("model.svr")]
    for name, m in quick.items():
        if name.startswith("model.sampled") and ".mean_" in name:  # over the quick kernels: never judged on all
            assert m["verdict"] == "incomparable" and "kernels" in m["baseline"]["reason"], m
            assert {**m["identity"], "kernels": ""} == {**full[name]["identity"], "kernels": ""}
        else:
            assert m["identity"] == full[name]["identity"], name


def _measured(x: float) -> Measurement:
    return Measurement((x,) * 5, Stats.of([x] * 5), True)


def _apps_result(names: tuple[str, ...]) -> sampled_apps.AppsResult:
    """The application corpus' result over ``names`` with made-up times at every run length (the records'
    names and identities are the point)."""
    h100 = DeviceInfo(backend="cuda", index=0, name="H100", vendor="NVIDIA", key="h100", compute_capability="9.0",
                      compute_units=132, warp_size=32)
    sat = saturation_point(h100, {"num_regs": 16}, 256)
    res = sampled_apps.AppsResult(sc.CorpusResult(sampled_apps.APPS, (), False))
    for i, name in enumerate(names):
        per_wave = 1e-4 * (1 + i)
        for d in sampled_apps.DIVISORS:
            plan = SamplePlan(sat, 64 * sat.wave // d, 256)
            run = SampledRun(plan, _measured(2 * per_wave), _measured(3 * per_wave), _measured(64 / d * per_wave * 1.01))
            res.runs.instances.append(sc.svr.Instance(name, sat.p_sat, 16.0, 0.0, 256, plan.p1, plan.p2, plan.n_groups,
                                                      run.t_p1.stats.median, run.t_p2.stats.median, run.measured))
        res.runs.main[name] = run
        res.kernels[name] = by_name(name)
    return res


@needs_cl
def test_a_full_run_reads_no_entry_of_a_study_as_missing(pytester):
    """The baseline: a real run of ``test_math_function[sin-fp32]`` and the application corpus' entries as a
    study run names them (``sampled_apps.records``, made-up times). A full run of both tests deselects the
    study and gates the rest with nothing missing."""
    node = f"{SUITES / 'test_accuracy_math.py'}::test_math_function[opencl:0-sin-fp32]"
    folder = baseline_folder(pytester.path, "bl")
    common = ("--gpuperf-device=opencl:0", "-p", "no:cacheprovider", f"--gpuperf-baseline-dir={folder}")
    made_json, full_json = pytester.path / "made.json", pytester.path / "full.json"
    pytester.runpytest(*common, "--gpuperf-update-baselines", f"--gpuperf-json={made_json}", node).assert_outcomes(passed=1)
    apps = [_as_results_metric(r, APPS) for r in
            sampled_apps.records(_apps_result(("parboil_sgemm", "shoc_triad", "rodinia_nn")))]
    (pytester.path / "apps.json").write_text(json.dumps({**json.loads(made_json.read_text()), "metrics": apps,
                                                         "missing": [], "tests": []}))
    from pytest_gpuperf.cli import main as gpuperf

    assert gpuperf(["baseline", "from-results", str(pytester.path / "apps.json"), "--dir", str(folder)]) == 0
    stored = json.dumps(json.loads(next(folder.glob("*.json")).read_text()))
    assert all(m["name"] in stored for m in apps)  # the study's entries are in the baseline

    result = pytester.runpytest(*common, "--gpuperf-profile=full", f"--gpuperf-json={full_json}", node,
                                f"{SUITES / 'test_model_apps.py'}::test_sampled_app_models[opencl:0]")
    result.assert_outcomes(passed=1, deselected=1)
    assert result.ret == pytest.ExitCode.OK
    doc = json.loads(full_json.read_text())
    assert doc["run"]["profile"] == "full" and doc["missing"] == []
    assert not [m for m in doc["metrics"] if m["name"].startswith(("model.sampled_apps", "model.svr_apps"))]
