"""The application corpus of the sampled-kernel model (``corpora.app_kernels``): every kernel computes what
its NumPy reference computes on PoCL, a launch of its first groups does exactly their share, its CUDA text
compiles with NVRTC, its cost formulas describe the problem it builds, its GPU size meets Dao's two
conditions by the H100 estimate, no work-item of gridding loops for a large share of its run, Dao's protocol
runs the corpus on a real device (PoCL, tiny sizes), and its guard leaves out and names a kernel over its
budget, and names a kernel that hangs."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from nvrtc_support import nvrtc_env
from suite_support import finish_within
from pytest_gpuperf.baselines import catalog
from pytest_gpuperf.corpora import app_check
from pytest_gpuperf.studies.sampled import sampled_apps, svr
from pytest_gpuperf.corpora.app_kernel import H100_WAVE_ITEMS, MIN_RUN_S, tiled
from pytest_gpuperf.studies.sampled.sampled_apps import RUN_BUDGET_S
from pytest_gpuperf.corpora.app_kernels import APP_KERNELS, CORPUS_VERSION, by_name
from pytest_gpuperf.studies.fixtures import SampledKernel
from pytest_gpuperf.timing.measure import MeasureConfig

ROOT = Path(__file__).resolve().parents[1]
NAMES = [k.name for k in APP_KERNELS]


def test_the_corpus_holds_30_or_more_kernels_of_dao_s_suites_or_their_successors():
    suites = Counter(k.origin.suite for k in APP_KERNELS)
    assert len(APP_KERNELS) >= 30 and len(set(NAMES)) == len(NAMES)
    assert set(suites) == {"Parboil", "SHOC", "Rodinia", "PolyBench/GPU"}, suites
    assert all(k.origin.benchmark and k.origin.function and k.differs for k in APP_KERNELS)


def test_the_corpus_includes_imbalanced_atomic_and_warm_up_kernels():
    """The hard cases Dao names; ``imbalanced`` only where the algorithm makes the first groups atypical
    (the inputs of the data-dependent kernels spread their work as the benchmarks' do:
    ``test_app_inputs_spread``)."""
    tags = Counter(t for k in APP_KERNELS for t in k.behaviour)
    assert tags["imbalanced"] >= 3 and tags["atomics"] >= 2 and tags["warm-up"] >= 5, tags
    assert {"parboil_gridding", "rodinia_particlefilter", "polybench_covariance"} <= {
        k.name for k in APP_KERNELS if "imbalanced" in k.behaviour}
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
    """Hundreds of work-groups (at least 16 waves even at full occupancy) and ≥ 0.1 s by the H100 bound, except
    the kernels that say why they run far from it (their size is set by their measured run; the study reports
    any full run under 0.1 s); no kernel's bound exceeds the study's per-run budget."""
    cost = {k.name: k.cost(**k.gpu) for k in APP_KERNELS}
    short = {k.name: round(cost[k.name].estimate_s, 3) for k in APP_KERNELS
             if cost[k.name].estimate_s < MIN_RUN_S and not k.far_from_bound}
    few = {k.name: cost[k.name].groups for k in APP_KERNELS if cost[k.name].groups * k.local_size < 16 * H100_WAVE_ITEMS}
    long = {n: round(c.estimate_s, 3) for n, c in cost.items() if c.estimate_s > RUN_BUDGET_S}
    assert not short and not few and not long, (short, few, long)
    assert max(c.footprint for c in cost.values()) < 8 << 30


def test_a_kernel_sized_away_from_its_bound_says_so_in_its_provenance():
    """The reason travels with every figure of the kernel (``info.kernel``), and only kernels whose bound is
    below 0.1 s carry one: a kernel at its bound needs no excuse."""
    for k in APP_KERNELS:
        if k.far_from_bound:
            assert k.describe()["far_from_bound"] == k.far_from_bound
            assert k.cost(**k.gpu).estimate_s < MIN_RUN_S, f"{k.name}: meets the bound, drop far_from_bound"
        else:
            assert "far_from_bound" not in k.describe()


def test_no_gridding_work_item_gathers_more_than_a_quarter_of_a_thread_slot_s_share_of_the_run():
    """Each work-item of gridding loops over every sample of its 27 neighbouring bins, so the densest point's
    loop is the run's critical path. At the GPU grid its gathers stay within a quarter of what one H100
    thread slot (``H100_WAVE_ITEMS`` of them) gathers over the whole run on average. Counted from the built
    problem over 1/32 of the samples: the ratio to the mean does not depend on how many there are."""
    app = by_name("parboil_gridding")
    params = {**app.gpu, "samples": app.gpu["samples"] // 32, "reps": 1}
    problem = app.problem(params)
    nb = params["grid"] // 2
    per_bin = np.pad(np.diff(problem.inputs["binStart"]).reshape(nb, nb, nb).astype(np.int64), 1)
    gathers = sum(per_bin[a:a + nb, b:b + nb, c:c + nb] for a in range(3) for b in range(3) for c in range(3))
    items_per_slot = problem.groups * app.local_size / H100_WAVE_ITEMS
    assert gathers.max() / gathers.mean() <= items_per_slot / 4, (gathers.max(), gathers.mean(), items_per_slot)


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
    assert set(res.runs.main) == {k.name for k in kernels} and res.over_budget == {} and sampled_apps.problems(res) == []
    assert all(r.plan.waves == (2, 3) for r in res.runs.main.values())
    assert len(res.runs.instances) == 2 * len(kernels) and res.too_short  # the quarter-length runs are too short
    recs = {r["name"]: r for r in sampled_apps.records(res)}
    assert {"model.sampled_apps.mean_error", "model.sampled_apps.mean_overhead", "model.svr_apps.mean_error"} <= set(recs)
    assert recs["model.sampled_apps.mean_error"]["identity"]["corpus"] == CORPUS_VERSION
    assert all(np.isfinite(r["value"]) for r in recs.values())
    # every figure holds the identity keys its catalog family demands (the session refuses one without them)
    assert {n: catalog.missing_identity(n, r["identity"]) for n, r in recs.items()} == {n: [] for n in recs}
    for name, run in res.runs.main.items():  # waves: the reported run's groups over the device's wave
        for fig in ("error", "overhead"):
            ident = recs[f"model.sampled_apps.{name}.{fig}"]["identity"]
            assert ident["waves"] == round(run.plan.n_groups / run.plan.sat.wave, 2) and ident["sampling"] == "dao"
            assert (ident["size"], ident["cache"]) == ("tiny", "warm")
    every = ",".join(f"{n}={round(r.plan.n_groups / r.plan.sat.wave, 2)}" for n, r in sorted(res.runs.main.items()))
    for mean in ("model.sampled_apps.mean_error", "model.sampled_apps.mean_overhead", "model.svr_apps.mean_error"):
        assert recs[mean]["identity"]["waves"] == every, mean
    # the SVR's training instances travel in its record: fitted again from them, it gives the recorded errors
    info = recs["model.svr_apps.mean_error"]["info"]
    again = [svr.Instance(**d) for d in info["instances"]]
    assert again == list(res.runs.instances)
    for name, preds in svr.leave_one_kernel_out(again).items():
        inst, t_ml = max(preds, key=lambda p: p[0].n)
        assert round(abs(t_ml - inst.t_full) / inst.t_full, 6) == info["per_kernel"][name]["error"], name


class _Measurer:
    config = MeasureConfig(warmup=1, min_repeats=3, max_repeats=3, budget_s=0.01)


def test_the_guard_leaves_out_and_names_every_kernel_over_its_budget_and_goes_on(cl_device):
    """A budget of 0 s: every kernel's probe predicts a full run over it. None is run at full length, none is
    silently dropped: each is reported with its estimate and the fix, the loop goes on to the next, and no
    instance of a kernel left out reaches the SVR."""
    kernels = [by_name(n) for n in ("shoc_triad", "rodinia_nn")]
    res = sampled_apps.measure(cl_device, SampledKernel(cl_device, _Measurer()), {"min_repeats": 3, "max_repeats": 3},
                               kernels=kernels, size="tiny", cold=False, budget_s=0.0)
    assert set(res.over_budget) == {"shoc_triad", "rodinia_nn"} and not res.runs.main and not res.runs.instances
    lines = sampled_apps.problems(res)
    assert len(lines) == 2
    for line, (name, over) in zip(lines, sorted(res.over_budget.items())):
        assert not over.measured and over.full_s > 0 and "extrapolated from a run of its first" in over.basis
        assert line.startswith(f"{name}: not run at full length: its full run is estimated at {over.full_s:.3g} s")
        assert "shrink its gpu size in corpora/app_*.py" in line


def test_a_kernel_left_out_leaves_the_means_over_the_kernels_measured(cl_device):
    """The means carry their kernel set as identity: with a kernel left out (over its budget) they name the
    kernels measured, so a baseline over the whole corpus reads them ``incomparable``; the kernel left out is
    named in the mean's ``info``. Fewer kernels measured than the SVR trains on: its figures are not recorded,
    the linear model's still are."""
    sampler = SampledKernel(cl_device, _Measurer())
    timing = {"min_repeats": 3, "max_repeats": 3}
    measured = [by_name(n) for n in ("shoc_triad", "rodinia_nn", "polybench_jacobi2d")]
    res = sampled_apps.measure(cl_device, sampler, timing, kernels=measured, size="tiny", cold=False)
    left = sampled_apps.measure(cl_device, sampler, timing, kernels=[by_name("parboil_histo")], size="tiny", cold=False,
                                budget_s=0.0)
    res.over_budget.update(left.over_budget)
    recs = {r["name"]: r for r in sampled_apps.records(res)}
    for mean in ("model.sampled_apps.mean_error", "model.sampled_apps.mean_overhead", "model.svr_apps.mean_error"):
        assert recs[mean]["identity"]["kernels"] == "polybench_jacobi2d,rodinia_nn,shoc_triad", mean
    assert list(recs["model.sampled_apps.mean_error"]["info"]["over_budget"]) == ["parboil_histo"]
    assert not [n for n in recs if "parboil_histo" in n]
    two = sampled_apps.measure(cl_device, sampler, timing, kernels=measured[:2], size="tiny", cold=False)
    names = {r["name"] for r in sampled_apps.records(two)}
    assert "model.sampled_apps.mean_error" in names and not [n for n in names if n.startswith("model.svr_apps")]


def test_a_cpu_leaves_out_and_names_a_kernel_too_short_for_its_cores_and_fails_when_none_is_left(cl_device):
    """shoc_triad at exactly three waves of the device's cores (its full run must exceed them): a CPU device
    leaves it out on purpose, names it in the mean's ``info`` and its kernel set, and records the others;
    measured alone, nothing is left to record and the run fails naming the cause. On a GPU the same kernel is
    a problem of its size."""
    units = int(cl_device.info.compute_units)
    triad = by_name("shoc_triad")
    short = dataclasses.replace(triad, tiny={**triad.tiny, "groups": 3 * units})
    sampler, timing = SampledKernel(cl_device, _Measurer()), {"min_repeats": 3, "max_repeats": 3}
    others = [by_name(n) for n in ("rodinia_nn", "polybench_jacobi2d", "parboil_histo")]
    res = sampled_apps.measure(cl_device, sampler, timing, kernels=[short, *others], size="tiny", cold=False)
    assert sampled_apps.left_out(res) == {"shoc_triad": [3 * units // 4, 3 * units // 2, 3 * units]}
    assert sampled_apps.problems(res) == [] and set(res.runs.main) == {k.name for k in others}
    recs = {r["name"]: r for r in sampled_apps.records(res)}
    assert list(recs["model.sampled_apps.mean_error"]["info"]["left_out_on_this_cpu"]) == ["shoc_triad"]
    assert "shoc_triad" not in recs["model.sampled_apps.mean_error"]["identity"]["kernels"]
    alone = sampled_apps.measure(cl_device, sampler, timing, kernels=[short], size="tiny", cold=False)
    (line,) = sampled_apps.problems(alone)
    assert line.startswith(f"no kernel of the corpus spans more than three waves of this CPU's {units} compute units")
    res.runs.cpu = False  # the rule for a GPU's result: a kernel its size leaves without a long enough run
    assert sampled_apps.left_out(res) == {}
    assert [m for m in sampled_apps.problems(res) if m.startswith("shoc_triad: no run length exceeds three waves")]


def test_a_run_s_budget_and_watchdog_follow_the_session_s_timeout():
    assert sampled_apps.run_budget(10.0) == sampled_apps.RUN_BUDGET_S == 2.0
    assert sampled_apps.run_budget(4.0) == 1.0  # a quarter of the watchdog at most
    # a run within the budget is never cut off, whatever its prediction; a longer one after a few times it
    assert sampled_apps.run_timeout(0.001, 2.0, 10.0) == 2.0 * sampled_apps.HANG_BUDGETS
    assert sampled_apps.run_timeout(1.5, 2.0, 10.0) == 1.5 * sampled_apps.HANG_FACTOR
    assert sampled_apps.run_timeout(5.0, 2.0, 10.0) == 10.0  # never past the session's


#: shoc_triad's signature, one work-item of the groups ``SPIN_FROM`` on spinning on an input nobody changes
HANG = textwrap.dedent('''
    import dataclasses, os, sys
    from pytest_gpuperf.devices import discover, open_device
    from pytest_gpuperf.errors import ProbeTimeoutError
    from pytest_gpuperf.studies.sampled import sampled_apps, svr
    from pytest_gpuperf.corpora.app_kernels import by_name
    from pytest_gpuperf.studies.fixtures import SampledKernel
    from pytest_gpuperf.timing.measure import MeasureConfig

    SPIN = """
    KERNEL void shoc_triad(GLOBAL const float* A, GLOBAL const float* B, GLOBAL float* C, float s, int chunk, int reps) {
      volatile GLOBAL const float* a = A;
      if (GROUP >= SPIN_FROM && LID == 0) while (a[0] < 2.0f) { C[GID] += 1.0f; }
    }
    """.replace("SPIN_FROM", sys.argv[1])

    class Measurer:
        config = MeasureConfig(warmup=1, min_repeats=3, max_repeats=3, budget_s=0.01)

    dev = open_device([d for d in discover().devices if d.backend == "opencl"][0])
    dev.timeout_s = float(sys.argv[2])
    spin = dataclasses.replace(by_name("shoc_triad"), text=SPIN)
    try:
        sampled_apps.measure(dev, SampledKernel(dev, Measurer()), {}, kernels=[spin], size="tiny", cold=False,
                             budget_s=float(sys.argv[3]))
    except ProbeTimeoutError as exc:
        print(f"ABANDONED={dev.abandoned is not None} {exc}", flush=True)
    os._exit(0)  # the spinning work-item would keep the interpreter from exiting
''')


def _hang(tmp_path: Path, spin_from: int, timeout_s: float, budget_s: float) -> str:
    """The output of :data:`HANG` in a subprocess (its work-item spins until the process dies)."""
    (tmp_path / "hang.py").write_text(HANG)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, str(tmp_path / "hang.py"), str(spin_from), str(timeout_s), str(budget_s)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    return finish_within(proc, limit_s=120)


def test_a_kernel_that_hangs_in_its_probe_is_named_with_its_run_and_the_fix(cl_device, tmp_path):
    """Group 0 spins: the probe (its first of 16 groups) outlives the session's watchdog; the error names the
    kernel, the run and the fix, and the device is abandoned."""
    out = _hang(tmp_path, 0, 1.0, sampled_apps.RUN_BUDGET_S)
    assert "ABANDONED=True shoc_triad: a run of (up to) its first 1 of 16 work-groups did not finish within 1 s" in out, out
    assert "(its probe)" in out and "shrink its gpu size in corpora/app_*.py" in out, out


def test_a_full_run_that_hangs_is_caught_by_a_watchdog_derived_from_its_prediction(cl_device, tmp_path):
    """Groups 12 on spin: the probe and the half-length run finish, the full run hangs. Its watchdog is a few
    times its predicted time, at least twice the run budget (0.25 s here; the prediction is microseconds),
    not the session's 60 s."""
    out = _hang(tmp_path, 12, 60.0, 0.25)
    floor = f"{0.25 * sampled_apps.HANG_BUDGETS:g} s"
    assert (f"ABANDONED=True shoc_triad: a run of (up to) its first 16 of 16 work-groups did not finish within {floor} "
            "(predicted ") in out, out
