"""The application corpus of the sampled-kernel model (``models.app_kernels``): every kernel computes what
its NumPy reference computes on PoCL, a launch of its first groups does exactly their share, its CUDA text
compiles with NVRTC, its cost formulas describe the problem it builds, its GPU size meets Dao's two
conditions by the H100 estimate, and Dao's protocol runs the corpus on a real device (PoCL, tiny sizes)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from nvrtc_support import nvrtc_env
from pytest_gpuperf.models import app_check, sampled_apps
from pytest_gpuperf.models.app_kernel import H100_WAVE_ITEMS, MIN_RUN_S, tiled
from pytest_gpuperf.models.app_kernels import APP_KERNELS, CORPUS_VERSION, by_name
from pytest_gpuperf.models.fixtures import SampledKernel
from pytest_gpuperf.timing.measure import MeasureConfig

ROOT = Path(__file__).resolve().parents[1]
NAMES = [k.name for k in APP_KERNELS]


def test_the_corpus_holds_30_or_more_kernels_of_dao_s_suites_or_their_successors():
    suites = Counter(k.origin.suite for k in APP_KERNELS)
    assert len(APP_KERNELS) >= 30 and len(set(NAMES)) == len(NAMES)
    assert set(suites) == {"Parboil", "SHOC", "Rodinia", "PolyBench/GPU"}, suites
    assert all(k.origin.benchmark and k.origin.function and k.differs for k in APP_KERNELS)


def test_the_corpus_includes_imbalanced_atomic_and_warm_up_kernels():
    tags = Counter(t for k in APP_KERNELS for t in k.behaviour)
    assert tags["imbalanced"] >= 5 and tags["atomics"] >= 2 and tags["warm-up"] >= 5, tags
    for name in ("parboil_binning", "parboil_histo", "parboil_gridding", "rodinia_bfs", "parboil_spmv"):
        assert by_name(name).behaviour != ("regular",)


@pytest.mark.parametrize("name", NAMES)
def test_each_kernel_matches_its_numpy_reference_on_pocl(cl_device, name):
    """A full launch against the reference, and (where the groups own their outputs) a launch of the
    first half of the groups: what it wrote is the reference's, and it wrote some but not all."""
    app = by_name(name)
    assert app_check.mismatches(cl_device, app, app.tiny) == []


@pytest.mark.parametrize("name", NAMES)
def test_the_cost_formulas_describe_the_problem_built(name):
    """The estimate at the GPU size rests on these formulas; at the tiny size they are checked exactly."""
    for what, (claimed, built) in app_check.footprint_and_groups(by_name(name), by_name(name).tiny).items():
        assert claimed == built, f"{name}: {what} {claimed} claimed, {built} built"


def test_every_gpu_size_meets_dao_s_conditions_by_the_h100_estimate():
    """Hundreds of work-groups (at least 16 waves even at full occupancy) and ≥ 0.1 s estimated."""
    cost = {k.name: k.cost(**k.gpu) for k in APP_KERNELS}
    short = {n: round(c.estimate_s, 3) for n, c in cost.items() if c.estimate_s < MIN_RUN_S}
    few = {k.name: cost[k.name].groups for k in APP_KERNELS if cost[k.name].groups * k.local_size < 16 * H100_WAVE_ITEMS}
    assert not short and not few, (short, few)
    assert max(c.footprint for c in cost.values()) < 8 << 30


def test_the_check_catches_a_wrong_result(cl_device):
    sgemm = by_name("parboil_sgemm")
    wrong = dataclasses.replace(sgemm, text=sgemm.text.replace("alpha * c[i]", "alpha * c[i] * 1.001f"))
    assert any(m.startswith("C:") for m in app_check.mismatches(cl_device, wrong, wrong.tiny))


def test_the_check_catches_a_share_that_depends_on_the_number_of_groups(cl_device):
    triad = by_name("shoc_triad")
    wrong = dataclasses.replace(triad, text=triad.text.replace("int base = GROUP * chunk;",
                                                               "int base = GROUP * chunk;\n  if (get_num_groups(0) < 16) return;"))
    issues = app_check.mismatches(cl_device, wrong, wrong.tiny)
    assert issues and all(m.startswith("first half of the groups") for m in issues), issues


def test_tiled_inputs_refuse_records_that_are_not_flat():
    with pytest.raises(ValueError, match="flatten"):
        tiled(np.random.default_rng(0), 12, lambda r, m: np.zeros((m, 2)))


def test_every_kernel_s_cuda_text_compiles_with_nvrtc():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "cuda_compile_check.py"), "app."], capture_output=True,
                         text=True, env=nvrtc_env(), cwd=ROOT, timeout=600)
    assert out.returncode == 0 and f"{len(APP_KERNELS)} compiled, 0 failed" in out.stdout, out.stdout + out.stderr


def test_dao_s_protocol_measures_the_corpus_on_a_real_device(cl_device):
    """The suite's procedure on PoCL at the tiny sizes: Dao's 2nd and 3rd saturation points, the SVR's
    instances from the run lengths long enough for the device, and the family's records."""
    kernels = [by_name(n) for n in ("shoc_triad", "rodinia_nn", "polybench_jacobi2d", "parboil_histo")]

    class Measurer:
        config = MeasureConfig(warmup=1, min_repeats=3, max_repeats=3, budget_s=0.01)

    res = sampled_apps.measure(cl_device, SampledKernel(cl_device, Measurer()), {"min_repeats": 3, "max_repeats": 3},
                               kernels=kernels, size="tiny", cold=False)  # PoCL's "L2" is the host's 0.5 GB L3
    assert set(res.runs.main) == {k.name for k in kernels}
    assert all(r.plan.waves == (2, 3) for r in res.runs.main.values())
    assert len(res.runs.instances) == 2 * len(kernels) and res.too_short  # the quarter-length runs are too short
    recs = {r["name"]: r for r in sampled_apps.records(res)}
    assert {"model.sampled_apps.mean_error", "model.sampled_apps.mean_overhead", "model.svr_apps.mean_error"} <= set(recs)
    assert recs["model.sampled_apps.mean_error"]["identity"]["corpus"] == CORPUS_VERSION
    assert all(np.isfinite(r["value"]) for r in recs.values())


def test_the_models_doc_names_every_kernel_of_the_corpus_and_its_version():
    doc = (ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    assert [n for n in NAMES if f"`{n}`" not in doc] == [] and f"corpus: {CORPUS_VERSION}" in doc
