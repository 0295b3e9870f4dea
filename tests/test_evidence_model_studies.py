"""The model studies' doc tables (``tools.evidence.model_study_tables``): the application study's table made through
the docs machinery from a real PoCL run of the study beside Dao's rows, and the PTX study's table made from
the records ``studies.ptx_model.ptx_study`` writes for the sweep's launches (no GPU has run it: the 'measured' times
below exist only in this test), each refusing what it cannot show."""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import pytest

from tools.evidence import docsync, markers, runfile
from tools.evidence.model_study_tables import PROCEDURE_CHECK, apps_vs_dao, ptx_study
from tools.evidence.model_tables import DAO_SAMPLED, pct
from tools.evidence.registry import Inputs
from tools.evidence.runfile import EvidenceError
from pytest_gpuperf.studies.ptx_model import ptx_study as study, ptx_sweep, scheduler
from pytest_gpuperf.studies.sampled import svr
from pytest_gpuperf.util import jsonio
from pytest_gpuperf.corpora.app_kernels import APP_KERNELS
from pytest_gpuperf.studies.ptx_model.dwarfs import THESIS_MAPE
from dao_ml_support import cuda_study
from ptx_study_support import fixed_model
from suite_support import app_study_on_pocl

ROOT = Path(__file__).resolve().parents[1]
#: a default run on the H100 that records the project's geometry (``model.sampled_project.*``)
H100_DEFAULT = "results/nvidia-h100-80gb-hbm3/gatecheck-eb31b28/aa-1.json.xz"
APPS = "results/pocl/apps-opencl.json"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _row(lines: list[str], start: str) -> list[str]:
    return _cells(next(line for line in lines if line.startswith(start)))


def _inputs(name: str, root: Path, runs: list[runfile.Run], **options: str) -> Inputs:
    words = " ".join([f"runs={','.join(r.path for r in runs)}"] + [f"{k}={v}" for k, v in options.items()])
    block = markers.parse("t.md", f"<!-- gpuperf:table {name} {words} -->\n<!-- /gpuperf:table -->\n")[0]
    return Inputs(block, {"runs": runs}, root)


# ---- models-apps-dao -----------------------------------------------------------------------------------
def _study_on_pocl(pytester, cl_device) -> Path:
    """The application study run on PoCL through the plugin, its results under ``results/`` of the test's root."""
    if not cl_device.info.is_cpu:
        pytest.skip(f"{cl_device.info.name} is a GPU: the study's GPU size runs for minutes there")
    out = pytester.path / APPS
    out.parent.mkdir(parents=True)
    shutil.copy(app_study_on_pocl(pytester)[0], out)  # the session's one run (the counter model skipped on PoCL)
    assert not [m for m in json.loads(out.read_text())["metrics"] if m["name"].startswith("model.dao_ml_apps")]
    return pytester.path


@pytest.mark.xdist_group("app-study-on-pocl")  # the worker whose run tests/test_models_app_study.py made
def test_the_app_study_s_table_marks_a_pocl_run_a_procedure_check_beside_dao_s_rows(pytester, cl_device):
    root = _study_on_pocl(pytester, cl_device)
    (root / H100_DEFAULT).parent.mkdir(parents=True)
    jsonio.write_xz(root / H100_DEFAULT, jsonio.read_bytes(ROOT / H100_DEFAULT))  # whole: a delta's base stays behind
    (root / "docs").mkdir()
    doc = root / "docs" / "t.md"
    doc.write_text(f"<!-- gpuperf:table models-apps-dao runs={APPS},{H100_DEFAULT} -->\n<!-- /gpuperf:table -->\n")
    assert docsync.write(root) == (1, ["docs/t.md"])
    assert docsync.check(root) == (1, [])  # made through the registry, and stable
    lines = [line for line in doc.read_text().splitlines() if line.startswith("|")]
    run = runfile.load(root, APPS)
    for gpu, lin, ml, _ in DAO_SAMPLED:
        dao = next(_cells(line) for line in lines if _cells(line)[:2] == ["Dao thesis §2.6", gpu])
        assert dao[5:7] == [f"{lin:.2f} %", f"{ml:.2f} %"] and dao[2].startswith("70 kernels of 39 OpenCL applications")
    ours = _row(lines, "| ours (`apps-opencl`)")
    kernels = run.info("model.sampled_apps.mean_error")["kernels"]
    assert ours[2].startswith(f"{kernels} ported application kernels")
    assert ours[5:8] == [pct(run.value(n)) for n in ("model.sampled_apps.mean_error", "model.svr_apps.mean_error",
                                                      "model.sampled_apps.mean_overhead")]
    assert "tiny size, warm cache" in ours[3] and ours[8] == PROCEDURE_CHECK
    project = _row(lines, "| ours, the project's geometry (`gatecheck-eb31b28/aa-1`")
    h100 = runfile.load(ROOT, H100_DEFAULT)
    assert project[1] == "H100 80GB HBM3, cuda" and project[5] == pct(h100.value("model.sampled_project.mean_error"))
    assert project[8] == "no: another corpus and other sampling points"
    differs = _row(lines, "| what differs")
    assert f"ours: {len(APP_KERNELS)} kernels" in differs[2] and "Dao: 70 kernels" in differs[2]
    assert "portable features" in differs[4] and "hardware counters" in differs[4]
    # the study's file without one of the means it shows is refused, naming the metric
    for name in ("model.sampled_apps.mean_overhead", "model.svr_apps.mean_error"):
        with pytest.raises(EvidenceError, match=rf"results/pocl/cut\.json lacks {name.replace('.', '[.]')}"):
            apps_vs_dao(_inputs("models-apps-dao", root, [_cut(root, name)]))
    # … except the SVR's mean where the run measured fewer kernels than it trains on (the suite records none)
    few = _cut(root, "model.svr_apps.mean_error", kernels=svr.MIN_KERNELS - 1)
    assert _row(apps_vs_dao(_inputs("models-apps-dao", root, [few])), "| ours")[6] == (
        f"not recorded ({svr.MIN_KERNELS - 1} kernels; it trains on {svr.MIN_KERNELS} or more)")


def _cut(root: Path, name: str, kernels: int | None = None) -> runfile.Run:
    """The study's results without the metric ``name`` (and with ``kernels`` measured, where given)."""
    data = json.loads((root / APPS).read_text())
    data["metrics"] = [m for m in data["metrics"] if m["name"] != name]
    if kernels is not None:
        next(m for m in data["metrics"] if m["name"] == "model.sampled_apps.mean_error")["info"]["kernels"] = kernels
    (root / "results" / "pocl" / "cut.json").write_text(json.dumps(data))
    return runfile.load(root, "results/pocl/cut.json")


def _cuda_study(root: Path) -> runfile.Run:
    """A CUDA run of the application study as its records name it — the linear and SVR families and the counter
    model's — over three kernels with made-up times and counters (test data only: the table's cells are the
    point, and no GPU figure of this file is quoted anywhere)."""
    from pytest_gpuperf.studies.sampled import dao_ml, sampled_apps

    res, sample = cuda_study()
    recs = sampled_apps.records(res) + dao_ml.records(res, sample)
    return _save(root, "results/h100/apps-cuda.json", "NVIDIA H100 80GB HBM3",
                 json.loads(json.dumps(recs, default=str)))


def test_the_app_study_s_table_sets_the_counter_model_beside_dao_s_ml_figures(tmp_path):
    from pytest_gpuperf.studies.sampled import dao_ml

    run = _cuda_study(tmp_path)
    lines = apps_vs_dao(_inputs("models-apps-dao", tmp_path, [run]))
    ours = _row(lines, "| ours (`apps-cuda`)")
    counter = _row(lines, "| ours, counter model (`apps-cuda`, a separate family)")
    assert counter[1] == "H100 80GB HBM3, cuda" and counter[2].startswith("3 ported application kernels")
    assert counter[2].endswith("9 runs") and "Nsight Compute 2025.3.1.0" in counter[3]
    assert counter[4] == dao_ml.MODEL and counter[5] == ours[5] == pct(run.value("model.sampled_apps.mean_error"))
    assert counter[6] == pct(run.value("model.dao_ml_apps.mean_error"))
    # Dao's ML figures are in the same column as ours
    dao = next(_cells(line) for line in lines if _cells(line)[:2] == ["Dao thesis §2.6", DAO_SAMPLED[0][0]])
    assert dao[6] == f"{DAO_SAMPLED[0][2]:.2f} %"
    assert dao_ml.MODEL in _row(lines, "| what differs")[4]
    # a run without the counter model (a CPU device's, or ncu missing) has no counter row
    data = json.loads((tmp_path / "results/h100/apps-cuda.json").read_text())
    data["metrics"] = [m for m in data["metrics"] if not m["name"].startswith("model.dao_ml_apps")]
    (tmp_path / "results/h100/no-counters.json").write_text(json.dumps(data))
    plain = apps_vs_dao(_inputs("models-apps-dao", tmp_path, [runfile.load(tmp_path, "results/h100/no-counters.json")]))
    assert not [line for line in plain if "counter model" in line]
    # a run of the counter model's test alone has its row, without a linear figure it did not record
    data = json.loads((tmp_path / "results/h100/apps-cuda.json").read_text())
    data["metrics"] = [m for m in data["metrics"] if m["name"].startswith("model.dao_ml_apps")]
    (tmp_path / "results/h100/dm-cuda.json").write_text(json.dumps(data))
    both = apps_vs_dao(_inputs("models-apps-dao", tmp_path, [run, runfile.load(tmp_path, "results/h100/dm-cuda.json")]))
    alone = _row(both, "| ours, counter model (`dm-cuda`, a separate family)")
    assert alone[5].startswith("– (not in this run") and alone[6] == counter[6]
    assert not [line for line in both if line.startswith("| ours (`dm-cuda`)")]


def test_the_app_study_s_table_refuses_files_without_the_study():
    default = runfile.load(ROOT, H100_DEFAULT)
    with pytest.raises(EvidenceError, match="no file named records the application study"):
        apps_vs_dao(_inputs("models-apps-dao", ROOT, [default]))
    probes = runfile.load(ROOT, "results/nvidia-h100-80gb-hbm3/probes-cuda.json.xz")
    with pytest.raises(EvidenceError, match="probes-cuda.json.xz record neither the application study"):
        apps_vs_dao(_inputs("models-apps-dao", ROOT, [default, probes]))


# ---- models-ptx-study ----------------------------------------------------------------------------------


def _study(factor: dict[str, float], left_out: str = "") -> study.StudyResult:
    """Every launch of the sweep (its real kernels, dwarfs and shapes; the kernel ``left_out`` not, as the
    study leaves out one that fails its reference check), predicted from a committed PTX by every variant and
    'measured' at the thesis variant's prediction over the dwarf's factor: test data only."""
    graph, table, cal, rates, model = fixed_model()
    runs = []
    for k, c in ptx_sweep.launches():
        if k.name == left_out:
            continue
        s = k.shape(c)
        pred = {v: scheduler.predict(graph, table, cal, grid=s.grid, block=s.block, regs=32, shared=0, trips=[],
                                     n_sm=132, clock_hz=1.98e9, variant=v, rates=rates) for v in scheduler.VARIANTS}
        runs.append(study.LaunchRun(k.name, k.dwarf, k.held_out, c.label, s, 32, 0, pred,
                                    pred["thesis"].seconds / factor[k.dwarf]))
    problems = [f"{left_out}: differs from its NumPy reference — left out of the study's figures"] if left_out else []
    return study.StudyResult(runs, model, problems, wall_s=60.0)


#: per dwarf, the thesis variant's error on every launch: |factor − 1|
FACTORS = {d: 1.0 + 0.05 * (i + 1) for i, d in enumerate(THESIS_MAPE)}


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return study.records(_study(FACTORS))


def _save(root: Path, rel: str, device: str, recs: list[dict]) -> runfile.Run:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema": "pytest-gpuperf/1", "device": {"name": device, "backend": "cuda"},
                                "metrics": recs}, allow_nan=False))
    return runfile.load(root, rel)


def test_the_ptx_study_s_table_sets_every_dwarf_and_the_held_out_kernels_beside_table_4_9(tmp_path, records):
    runs = [_save(tmp_path, f"results/h100/ptx-study-{i}.json", "NVIDIA H100 80GB HBM3", records) for i in (1, 2)]
    lines = ptx_study(_inputs("models-ptx-study", tmp_path, runs))
    assert "108 launch configurations" in lines[0] and "`alavani-sweep-1` (21 kernels, 108 launches" in lines[0]
    head = _cells(lines[2])
    assert head[-4:] == ["ours, thesis variant", "ours, issue variant", "ours, hopper variant", "ours, launch_once variant"]
    for dwarf, thesis in THESIS_MAPE.items():
        row = _row(lines, f"| {dwarf} |")
        assert row[2:6] == [f"{t:.2f} %" for t in thesis]
        assert row[-4] == " / ".join([pct(FACTORS[dwarf] - 1)] * 2)  # the thesis variant, both runs
        held = _row(lines, f"| {dwarf}, held-out kernels only |")
        n_held = sum(k.held_out for k in ptx_sweep.STUDY_KERNELS if k.dwarf == dwarf)
        assert held[1].startswith(f"{n_held} kernel{'s' * (n_held > 1)},") and held[2:7] == [""] * 5 and held[-4] == row[-4]
    assert _row(lines, "| all launches")[2:6] == [f"{t:.2f} %" for t in study.THESIS_OVERALL_MAPE]
    assert _row(lines, "| all launches")[1] == "21 kernels, 108 launches"
    assert _row(lines, "| design kernels, all dwarfs")[1].startswith("12 kernels, ")
    assert _row(lines, "| held-out kernels, all dwarfs")[1].startswith("9 kernels, ")
    below = sum(FACTORS[d] - 1 <= statistics.median(t) / 100 for d, t in THESIS_MAPE.items())
    assert 0 < below < 8 and _row(lines, "| dwarfs at or below")[-4] == f"{below} of 8 / {below} of 8"
    assert len(_row(lines, "| dwarfs at or below")) == len(head)


def test_the_ptx_study_s_table_refuses_other_devices_missing_figures_and_other_runs(tmp_path, records):
    h100 = _save(tmp_path, "results/h100/ptx-study.json", "NVIDIA H100 80GB HBM3", records)
    h200 = _save(tmp_path, "results/h200/ptx-study.json", "NVIDIA H200", records)
    with pytest.raises(EvidenceError, match=r"different devices \(NVIDIA H100 80GB HBM3, NVIDIA H200\)"):
        ptx_study(_inputs("models-ptx-study", tmp_path, [h100, h200]))
    cut = [r for r in records if r["name"] != "model.ptx.study.hopper.dwarf.monte_carlo.mape"]
    part = _save(tmp_path, "results/h100/part.json", "NVIDIA H100 80GB HBM3", cut)
    with pytest.raises(EvidenceError, match=r"part\.json lacks model\.ptx\.study\.hopper\.dwarf\.monte_carlo\.mape"):
        ptx_study(_inputs("models-ptx-study", tmp_path, [part]))
    # the thesis variant alone needs only its own figures
    assert ptx_study(_inputs("models-ptx-study", tmp_path, [part], variants="thesis"))
    with pytest.raises(EvidenceError, match="unknown variant wide"):
        ptx_study(_inputs("models-ptx-study", tmp_path, [h100], variants="thesis,wide"))
    held = [r for r in records if r["name"] != "model.ptx.study.thesis.held_out.dwarf.monte_carlo.mape"]
    with pytest.raises(EvidenceError, match=r"lacks model\.ptx\.study\.thesis\.held_out\.dwarf\.monte_carlo\.mape"):
        ptx_study(_inputs("models-ptx-study", tmp_path, [_save(tmp_path, "results/h100/held.json", "H100", held)]))
    default = runfile.load(ROOT, "results/nvidia-h100-80gb-hbm3/default-7c-cuda.json.xz")
    with pytest.raises(EvidenceError, match="records no figure of the PTX study"):
        ptx_study(_inputs("models-ptx-study", ROOT, [default]))


def test_a_held_out_kernel_left_out_by_its_reference_check_reads_as_missing_and_is_named(tmp_path):
    """The study leaves out a held-out kernel that computes something else and records why (``mape``'s
    ``info["problems"]``); its dwarf's held-out row then has no figure, and the table names the problem."""
    res = _study(FACTORS, left_out="quasirandomGeneratorKernel")
    run = _save(tmp_path, "results/h100/left.json", "H100", study.records(res))
    lines = ptx_study(_inputs("models-ptx-study", tmp_path, [run]))
    assert _row(lines, "| Monte Carlo, held-out kernels only")[1:] == ["–"] + [""] * 5 + ["–"] * len(scheduler.VARIANTS)
    assert _row(lines, "| Monte Carlo |")[1] == "1 kernel, 5 launches"
    assert lines[-1] == f"Left out of the figures: `left`: {res.problems[0]}"
