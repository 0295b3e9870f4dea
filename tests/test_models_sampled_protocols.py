"""The sampled-kernel model's two protocols (``studies.sampled.sampled_corpus``): Dao's 2nd and 3rd saturation
points as the default family, the project's geometry as a separate labelled family; overhead as Dao
defines it; and the corpus measured under both on a real device (PoCL)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.devices.base import DeviceInfo
from pytest_gpuperf.studies.sampled import sampled_corpus as sc
from pytest_gpuperf.corpora.corpus import CORPUS
from pytest_gpuperf.studies.fixtures import SampledKernel
from pytest_gpuperf.studies.sampled.sampling import SampledRun, SamplePlan, saturation_point
from pytest_gpuperf.timing.measure import MeasureConfig, Measurement
from pytest_gpuperf.timing.stats import Stats

H100 = DeviceInfo(backend="cuda", index=0, name="H100", vendor="NVIDIA", key="h100", compute_capability="9.0",
                  compute_units=132, warp_size=32)


def test_dao_samples_the_second_and_third_saturation_points_at_every_run_length():
    sat = saturation_point(H100, {"num_regs": 16}, 256)
    for waves in (200, 400, 800):
        plan = SamplePlan(sat, waves * sat.wave, 256, sc.DAO.multiple(waves, cpu=False))
        assert plan.waves == (2, 3)
    assert sc.PROJECT.multiple(800, cpu=False) == 5 and sc.PROJECT.multiple(800, cpu=True) == 48


def test_the_protocols_are_separate_families_with_separate_identities():
    assert {p.family for p in sc.PROTOCOLS} == {"model.sampled", "model.sampled_project"}
    assert sc.DAO.identity(800) != sc.PROJECT.identity(800)
    assert sc.DAO.identity(800)["saturation_points"] == "2,3"


def _m(xs):
    return Measurement(tuple(xs), Stats.of(xs), True)


def _result() -> sc.CorpusResult:
    sat = saturation_point(H100, {"num_regs": 16}, 256)
    res = sc.CorpusResult(sc.DAO, (200, 400, 800), cpu=False)
    for i, name in enumerate(("a", "b", "c", "d")):
        for waves in (200, 400, 800):
            plan = SamplePlan(sat, waves * sat.wave, 256, 1)
            per_wave = 1e-6 * (1 + i)
            run = SampledRun(plan, _m([2 * per_wave] * 5), _m([3 * per_wave] * 5), _m([waves * per_wave * 1.01] * 5))
            res.instances.append(sc.svr.Instance(name, sat.p_sat, 16.0, 0.0, 256, plan.p1, plan.p2, plan.n_groups,
                                                 run.t_p1.stats.median, run.t_p2.stats.median, run.measured))
            if waves == 800:
                res.main[name] = run
    return res


def test_records_carry_the_protocol_and_dao_s_overhead_definition():
    res = _result()
    recs = {r["name"]: r for r in sc.records(res)}
    assert {"model.sampled.mean_error", "model.sampled.mean_overhead", "model.svr.mean_error"} <= set(recs)
    run = res.main["a"]
    assert recs["model.sampled.a.overhead"]["value"] == pytest.approx((2e-6 + 3e-6) / (800e-6 * 1.01))
    assert recs["model.sampled.a.error"]["value"] == pytest.approx(run.error_rel)
    assert recs["model.sampled.mean_error"]["identity"]["sampling"] == "dao"
    assert all(r["info"]["protocol"] == sc.DAO.label for r in recs.values())


def test_the_corpus_is_measured_under_both_protocols_sharing_each_full_run(cl_device):
    kernels = {k.name: cl_device.compile(k.source("opencl"), k.name) for k in CORPUS[:3]}

    class Measurer:
        config = MeasureConfig(warmup=1, min_repeats=3, max_repeats=3, budget_s=0.01)

    timing = {"min_repeats": 3, "max_repeats": 3, "budget_s": 0.01}
    results = sc.measure(cl_device, kernels, SampledKernel(cl_device, Measurer()), timing, protocols=sc.PROTOCOLS)
    dao, project = results
    assert [r.protocol for r in results] == [sc.DAO, sc.PROJECT]
    for name in kernels:
        assert dao.main[name].t_full is project.main[name].t_full  # one full run, shared
        m = sc.PROJECT.multiple(max(sc.WAVES_CPU), cpu=True)  # 0.30 · 800 / 5 = 48
        assert dao.main[name].plan.waves == (2, 3) and project.main[name].plan.waves == (2 * m, 3 * m) == (96, 144)
    assert len(dao.instances) == len(project.instances) == 3 * len(sc.WAVES_CPU) and all(np.isfinite(dao.errors))


def test_a_cpu_device_is_measured_by_the_project_geometry_only():
    """Dao's one-wave samples on a CPU device time launch jitter: only the project's geometry runs there."""
    assert sc.protocols_for(cpu=True) == (sc.PROJECT,)
    assert sc.protocols_for(cpu=False) == (sc.DAO, sc.PROJECT)


def test_a_gpu_gates_each_kernel_s_linear_figures_and_keeps_the_svr_s_per_kernel_errors_in_its_mean():
    """On a GPU a kernel's error and overhead are gated figures carrying the error's own standard error;
    the SVR's per-kernel errors swing several-fold between unchanged runs, so they live in its mean."""
    res = _result()
    recs = {r["name"]: r for r in sc.records(res)}
    assert not [n for n in recs if n.startswith("model.svr.") and n != "model.svr.mean_error"]
    assert sorted(recs["model.svr.mean_error"]["info"]["per_kernel"]) == ["a", "b", "c", "d"]
    per = recs["model.svr.mean_error"]["info"]["per_kernel"]
    assert recs["model.svr.mean_error"]["value"] == pytest.approx(np.mean([v["error"] for v in per.values()]), abs=1e-5)
    for name in ("model.sampled.a.error", "model.sampled.a.overhead"):
        assert "gate" not in recs[name]["info"], name
    assert recs["model.sampled.a.error"]["info"]["error_se"] >= 0


def test_a_cpu_device_gates_each_kernel_s_figures_only_where_its_runs_agree():
    res = _result()
    res.cpu = True
    recs = sc.records(res)
    per_kernel = [r for r in recs if not r["name"].split(".")[-1].startswith("mean")]
    assert per_kernel and all(r["info"]["gate"] == "if-stable" for r in per_kernel)
