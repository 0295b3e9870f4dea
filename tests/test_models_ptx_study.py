"""The PTX model's study without a GPU (the suite itself runs on CUDA only): the sweep (``studies.ptx_model.ptx_sweep``)
holds Alavani's 108 launches over every dwarf with the held-out kernels apart and the model suite's own
launches among them; each dwarf kernel's shape at a sweep size is the inputs it makes; every configuration
compiles with NVRTC into PTX whose loops its trip counts match, and every variant predicts it; the study's
records (``studies.ptx_model.ptx_study``) pool what their names say with the identity their family demands; the docs
show the sweep as the code has it and its time estimate from the saved H100 runs."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nvrtc_support import nvrtc_env
from pytest_gpuperf.baselines import catalog
from pytest_gpuperf.studies.ptx_model import ptx_study, ptx_sweep, scheduler
from pytest_gpuperf.studies.ptx_model.dwarfs import DWARFS, THESIS_MAPE
from pytest_gpuperf.studies.ptx_model.ptx_latency import GlobalLatencyModel
from pytest_gpuperf.corpora.heldout import DESIGN_KERNELS, HELD_OUT
from ptx_study_support import fixed_model
from pytest_gpuperf.timing import suite_profiles
from pytest_gpuperf.timing.profiles import profile
from pytest_gpuperf.util import jsonio

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "models.md"
STUDY = "suites/test_model_ptx_study.py::test_ptx_model_study"


def test_the_sweep_is_108_launches_of_every_dwarf_with_the_held_out_kernels_apart():
    kernels = ptx_sweep.STUDY_KERNELS
    assert len(ptx_sweep.launches()) == 108
    assert [k.name for k in kernels if not k.held_out] == list(DESIGN_KERNELS)
    assert [k.name for k in kernels if k.held_out] == [h.kernel for h in HELD_OUT]
    for dwarf in THESIS_MAPE:  # every dwarf of Table 4.9 has a design kernel and a held-out one
        assert {k.held_out for k in kernels if k.dwarf == dwarf} == {False, True}, dwarf
    assert all(5 <= len(k.configs) <= 6 for k in kernels)
    one_block = set()
    for k in kernels:  # the problem's size varies, and the block size wherever the text allows another
        shapes = [k.shape(c) for c in k.configs]
        assert len({s.bytes for s in shapes}) > 1 or len({s.trips for s in shapes}) > 1, k.name
        if len({s.block for s in shapes}) == 1:
            one_block.add(k.name)
    # the texts that fix their block: a 16 × 16 tile, 16 threads a tile, 256 keys a block, 1024 keys by 512
    # threads, one thread per key slot of a 256-key node
    assert one_block == {"matrixMulCUDA", "needle_shared", "mergeSortSharedKernel", "bitonicSortShared", "findK"}


def test_the_model_suite_s_own_launch_is_one_of_each_dwarf_kernel_s_configurations():
    for d in DWARFS:
        want = d.shape(1)
        k = ptx_sweep.by_name(d.name)
        assert any(k.shape(c) == want for c in k.configs), d.name


def test_a_dwarf_s_shape_is_the_inputs_it_makes(cl_device):
    """At each dwarf's smallest configuration its inputs on a real device hold the bytes its shape
    claims (the shapes are what the time estimate and the docs read)."""
    for d in DWARFS:
        k = ptx_sweep.by_name(d.name)
        shape = min((k.shape(c) for c in k.configs), key=lambda s: s.bytes)
        bufs = [a for a in d.inputs(cl_device, shape) if not isinstance(a, np.generic)]
        assert sum(b.nbytes for b in bufs) == shape.bytes, d.name


def test_a_launch_or_a_language_the_text_does_not_allow_is_refused():
    with pytest.raises(ValueError, match="its text allows 16"):
        DWARFS[4].shape(1, 32)
    with pytest.raises(ValueError, match="not a positive multiple of 16"):
        DWARFS[2].shape(0.01)
    k = ptx_sweep.by_name("vectorAdd")
    with pytest.raises(ValueError, match="no opencl text, only CUDA C"):
        k.source("opencl", k.shape(k.configs[0]))


CHECK = r"""
import dataclasses, json
from pytest_gpuperf.studies.ptx_model import ptx_sweep
from pytest_gpuperf.studies.ptx_model.dwarfs import Shape
rows = ptx_sweep.check_ptx("90")
k = ptx_sweep.by_name("convolutionRowsKernel")
bad = dataclasses.replace(k.dwarf_kernel, sizing=lambda s, b: Shape(8, 256, (), {"w": 2048, "h": 1}, 0))
try:
    ptx_sweep.check_ptx("90", [dataclasses.replace(k, dwarf_kernel=bad)])
    err = ""
except ValueError as exc:
    err = str(exc)
print(json.dumps({"rows": rows, "error": err}))
"""


def test_every_launch_compiles_its_loops_match_its_trip_counts_and_every_variant_predicts_it():
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, env=nvrtc_env(), cwd=ROOT,
                         timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    doc = json.loads(out.stdout)
    rows = doc["rows"]
    assert len(rows) == 108 and all(r["loops_in_ptx"] == len(r["trips"]) for r in rows)
    assert all(np.isfinite(t) and t > 0 for r in rows for t in r["predicted_s"].values())
    assert set(rows[0]["predicted_s"]) == set(scheduler.VARIANTS)
    # the ports keep the original's constant memory: the generator's table and the far field's
    const = {r["kernel"]: r["const_loads"] for r in rows}
    assert const["quasirandomGeneratorKernel"] >= 31 and const["cuda_compute_flux"] > 0 and const["vectorAdd"] == 0
    assert doc["error"].startswith("convolutionRowsKernel scale1.block128: the PTX has 1 loop(s), the sweep gives 0")


def test_the_command_line_check_prints_every_launch():
    out = subprocess.run([sys.executable, "-m", "pytest_gpuperf.studies.ptx_model.ptx_sweep", "--check-ptx", "90"],
                         capture_output=True, text=True, env=nvrtc_env(), cwd=ROOT, timeout=600)
    assert out.returncode == 0 and len(json.loads(out.stdout)) == 108, out.stderr[-2000:]


# ---- the study's records -------------------------------------------------------------------------------



def _result() -> ptx_study.StudyResult:
    """A study over two design and two held-out kernels of two dwarfs, every launch predicted from a
    committed PTX and 'measured' at a known multiple of the thesis variant's prediction."""
    graph, table, cal, rates, model = fixed_model()
    runs = []
    for name, factor in (("vectorAdd", 1.5), ("lud_internal", 2.0), ("sobolGPU_kernel", 0.5),
                         ("quasirandomGeneratorKernel", 1.25)):
        k = ptx_sweep.by_name(name)
        for c in k.configs[:2]:
            s = k.shape(c)
            pred = {v: scheduler.predict(graph, table, cal, grid=s.grid, block=s.block, regs=32, shared=0, trips=[],
                                         n_sm=132, clock_hz=1.98e9, variant=v, rates=rates) for v in scheduler.VARIANTS}
            runs.append(ptx_study.LaunchRun(k.name, k.dwarf, k.held_out, c.label, s, 32, 0, pred,
                                            pred["thesis"].seconds / factor))
    return ptx_study.StudyResult(runs, model, wall_s=12.5)


def test_the_records_pool_what_their_names_say_with_their_family_s_identity():
    res = _result()
    listed = ptx_study.records(res)
    recs = {r["name"]: r for r in listed}
    assert len(recs) == len(listed)  # the session refuses a second record of one name
    for v in scheduler.VARIANTS:
        base = f"model.ptx.study.{v}"
        want = {f"{base}.{k}.error" for k in ("vectorAdd", "lud_internal", "sobolGPU_kernel", "quasirandomGeneratorKernel")}
        want |= {f"{base}.dwarf.{d}.mape" for d in ("dense_linear_algebra", "monte_carlo")}
        want |= {f"{base}.held_out.dwarf.{d}.mape" for d in ("dense_linear_algebra", "monte_carlo")}
        want |= {f"{base}.held_out.mape", f"{base}.design.mape", f"{base}.mape"}
        assert {n for n in recs if n.startswith(base + ".")} == want, v
    # thesis variant: each launch 'measured' at prediction / factor → error |factor − 1|
    assert recs["model.ptx.study.thesis.vectorAdd.error"]["value"] == pytest.approx(0.5)
    assert recs["model.ptx.study.thesis.held_out.mape"]["value"] == pytest.approx((1.0 + 0.25) / 2)
    assert recs["model.ptx.study.thesis.design.mape"]["value"] == pytest.approx((0.5 + 0.5) / 2)
    assert recs["model.ptx.study.thesis.dwarf.monte_carlo.mape"]["value"] == pytest.approx((0.5 + 0.25) / 2)
    assert recs["model.ptx.study.thesis.held_out.mape"]["info"]["mpe"] == pytest.approx((1.0 + 0.25) / 2)
    held = recs["model.ptx.study.hopper.held_out.mape"]  # the Hopper variant judged on the held-out kernels alone
    assert held["identity"]["kernels"] == "lud_internal,quasirandomGeneratorKernel"
    assert held["identity"]["configurations"] == ",".join(sorted(r.name for r in res.runs if r.held_out))
    assert held["value"] == pytest.approx(np.mean([r.error("hopper") for r in res.runs if r.held_out]))
    assert held["identity"]["issue_rates"] == scheduler.rates_origin(res.model.rate_sources)
    assert "issue_rates" not in recs["model.ptx.study.thesis.mape"]["identity"]
    assert recs["model.ptx.study.thesis.dwarf.dense_linear_algebra.mape"]["info"]["thesis_mape_pct"]["K20"] == 29.95
    launches = recs["model.ptx.study.hopper.lud_internal.error"]["info"]["launches"]
    assert [r["config"] for r in launches] == [c.label for c in ptx_sweep.by_name("lud_internal").configs[:2]]
    assert {"grid", "block", "trips", "predicted_s", "measured_s", "bound"} <= set(launches[0])
    for name, r in recs.items():  # what the session checks of a shipped suite's metric, and the catalog's band
        assert re.fullmatch(r"[A-Za-z0-9_.\-\[\]=:+]+", name), name
        assert catalog.missing_identity(name, r["identity"]) == [], name
        assert r["identity"]["sweep"] == ptx_sweep.SWEEP_VERSION and r["identity"]["latencies"] == "probed in session"
        assert (r["unit"], r["better"]) == ("ratio", "lower") and catalog.tolerance(name, False) == {"abs": 0.05, "rel": 0.2}
        json.dumps(r, allow_nan=False)


def test_the_study_is_a_study_with_repeat_settings_of_its_own():
    assert STUDY in suite_profiles.STUDIES and not suite_profiles.FULL.selects(STUDY)
    assert suite_profiles.STUDY.selects(STUDY)
    assert profile("ptx_study", False)["budget_s"] <= 0.5  # a launch is timed no longer than the model suite's


# ---- the docs ------------------------------------------------------------------------------------------

def _section() -> str:
    text = DOC.read_text()
    return text[text.index("## 2. Static PTX model"):text.index("## 3. ")]


def test_the_docs_show_the_sweep_and_the_ports_as_the_code_has_them():
    assert "\n".join(ptx_sweep.configurations_table()) in _section()
    assert "\n".join(ptx_sweep.ports_table()) in _section()


def test_the_docs_time_estimate_comes_from_the_saved_h100_runs_it_names():
    """The estimate quotes the shortest and longest PTX-test duration of the runs it names and the
    study time ``estimate_s`` gives for each; all well under five minutes."""
    section = _section()
    para = section[section.index("<!-- ptx-study-estimate -->"):section.index("<!-- /ptx-study-estimate -->")]
    files = re.findall(r"`(results/nvidia-h100-80gb-hbm3/[^`]+\.json\.xz)`", para)
    assert len(files) >= 3
    durations = []
    for f in files:
        tests = {t["test"]: t for t in jsonio.read_json(ROOT / f)["tests"]}
        durations.append(tests["suites/test_model_error.py::test_ptx_model"]["duration_s"])
    lo, hi = min(durations), max(durations)
    est = (ptx_sweep.estimate_s(lo), ptx_sweep.estimate_s(hi))
    assert f"{lo:.1f}–{hi:.1f} s" in para and f"{est[0]:.0f}–{est[1]:.0f} s" in para, (lo, hi, est)
    assert est[1] < 300


def test_a_saved_study_holds_what_a_replay_needs_to_predict_every_launch_again():
    res = _result()
    fitted = dataclasses.replace(res.model.table, global_model=GlobalLatencyModel(res.model.sweep.fit, "fitted here"))
    res = dataclasses.replace(res, model=dataclasses.replace(res.model, table=fitted))
    # the records carry the whole table, the fitted L(gm) model included, through JSON as a results file does
    info = json.loads(json.dumps({r["name"]: r for r in ptx_study.records(res)}["model.ptx.study.thesis.mape"]["info"]))
    table = ptx_study.table_from_info(info)
    assert table.global_model is not None and table.global_model.source == "fitted here"
    assert table.of("ld.global", 4096) == pytest.approx(fitted.of("ld.global", 4096))
    graph, _, cal, rates, _ = fixed_model()
    for r in res.runs:
        s = r.shape
        for v in scheduler.VARIANTS:
            kw = dict(grid=s.grid, block=s.block, regs=32, shared=0, trips=[], n_sm=132, clock_hz=1.98e9,
                      variant=v, rates=rates)
            again = scheduler.predict(graph, table, cal, **kw).seconds
            assert again == pytest.approx(scheduler.predict(graph, fitted, cal, **kw).seconds, rel=1e-12), (r.name, v)
    # a run made before the fit was recorded says so, and a replay cannot take a model it does not have
    del info["global_latency_fit"]
    with pytest.raises(ValueError, match="global_latency_fit"):
        ptx_study.table_from_info(info)


def test_the_saved_studies_replay_offline_as_the_docs_table_says():
    """``scripts/ptx_offline.py --study`` on the two saved studies: each prediction the run recorded comes out
    again within 1 % (the L(gm) model from an A/A run of the same card), and every variant's MAPE — the
    ``launch_once`` variant's, which no study recorded, included — is the one the committed replay holds (its
    ``traced`` variant needs the minutes of ``--trace``: one launch's trace is checked below)."""
    out = subprocess.run(
        [sys.executable, "scripts/ptx_offline.py", "--study", "results/nvidia-h100-80gb-hbm3/study-6036ccb/ps-cuda.json.xz",
         "results/nvidia-h200/study-bbc20d4/ps-cuda.json.xz",
         "--donor", "results/nvidia-h100-80gb-hbm3/gatecheck-6036ccb/aa-1.json.xz",
         "--donor", "results/nvidia-h200/gatecheck-0d8cce4/aa-2.json.xz", "--json", "/dev/stdout"],
        capture_output=True, text=True, env=nvrtc_env(), cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    fresh = json.loads(out.stdout[out.stdout.index("{"):out.stdout.rindex("}") + 1])
    saved = jsonio.read_json(ROOT / "results" / "offline" / "ptx-study-replay.json.xz")
    for now, then in zip(fresh["runs"], saved["runs"], strict=True):
        assert now["worst_reproduction"] < 0.01 and len(now["launches"]) == 108
        assert set(then["mape"]["all"]) == set(now["mape"]["all"]) | {"traced"}  # traced: only with --trace
        for part, by in then["mape"].items():
            assert now["mape"][part] == pytest.approx({v: x for v, x in by.items() if v != "traced"}, rel=1e-9), part
        # counting the launch once only ever shortens the Hopper variant's memory stream
        assert all(r["launch_once"]["predicted_s"] <= r["hopper"]["predicted_s"] * (1 + 1e-12) for r in now["launches"])


def test_the_traced_replay_of_some_kernels_gives_the_committed_rows():
    """``--study --trace --kernels``: the whole traced path (compile, trace every launch, predict the traced variant)
    on two kernels of both saved studies gives, launch by launch, the bytes and predictions the committed replay
    holds; the parts with no launch of those kernels are left out, not averaged over nothing."""
    names = ("transposeNaive", "vectorAdd")
    out = subprocess.run(
        [sys.executable, "scripts/ptx_offline.py", "--study", "results/nvidia-h100-80gb-hbm3/study-6036ccb/ps-cuda.json.xz",
         "results/nvidia-h200/study-bbc20d4/ps-cuda.json.xz",
         "--donor", "results/nvidia-h100-80gb-hbm3/gatecheck-6036ccb/aa-1.json.xz",
         "--donor", "results/nvidia-h200/gatecheck-0d8cce4/aa-2.json.xz", "--trace", "--kernels", ",".join(names),
         "--json", "/dev/stdout"], capture_output=True, text=True, env=nvrtc_env(), cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "RuntimeWarning" not in out.stderr
    fresh = json.loads(out.stdout[out.stdout.index("{"):out.stdout.rindex("}") + 1])
    saved = jsonio.read_json(ROOT / "results" / "offline" / "ptx-study-replay.json.xz")
    for now, then in zip(fresh["runs"], saved["runs"], strict=True):
        assert set(now["mape"]) == {"all", "design"} and "traced" in now["mape"]["all"]
        rows = {(r["kernel"], r["config"]): r for r in then["launches"] if r["kernel"] in names}
        assert len(now["launches"]) == len(rows) > 0
        for r in now["launches"]:
            before = rows[(r["kernel"], r["config"])]
            assert r["trace"] == pytest.approx(before["trace"])
            assert r["traced"]["predicted_s"] == pytest.approx(before["traced"]["predicted_s"], rel=1e-9)
    bad = subprocess.run([sys.executable, "scripts/ptx_offline.py", "--study", "results/nvidia-h200/study-bbc20d4/ps-cuda.json.xz",
                          "--kernels", "noSuchKernel"], capture_output=True, text=True, env=nvrtc_env(), cwd=ROOT,
                         timeout=120)
    assert bad.returncode != 0 and "no study kernel noSuchKernel" in bad.stderr


def test_the_committed_replay_s_trace_of_a_launch_is_what_the_trace_gives_now():
    """The traced variant's bytes for one launch (a naive transpose: a sector per lane for its store), traced again
    from the committed PTX of the same text, are the ones the replay the docs cite holds."""
    from pytest_gpuperf.studies.ptx_model import ptx_trace  # noqa: PLC0415

    k = ptx_sweep.by_name("transposeNaive")
    conf = next(c for c in k.configs if c.label == "scale0.5.block256")
    now = ptx_trace.traced_bytes(k, conf, (ROOT / "tests" / "data" / "models" / "transposeNaive.ptx").read_text())
    saved = jsonio.read_json(ROOT / "results" / "offline" / "ptx-study-replay.json.xz")
    for run in saved["runs"]:
        row = next(r for r in run["launches"] if r["kernel"] == k.name and r["config"] == conf.label)
        assert row["trace"] == pytest.approx(now)
        assert now["unique_sector_bytes"] == pytest.approx(now["requested_bytes"] * 36 / 8)
