"""Test support: the application study's result on a CUDA device over three kernels with made-up times and
counters, and the counters Dao's model would read — test data only (the records' names, identities and the
tables' cells are the point; no GPU figure of it is quoted anywhere)."""

from __future__ import annotations

from pytest_gpuperf.devices.base import DeviceInfo
from pytest_gpuperf.studies.sampled import dao_counters as dc, sampled_apps, sampled_corpus as sc, svr
from pytest_gpuperf.corpora.app_kernels import APP_KERNELS
from pytest_gpuperf.studies.sampled.sampling import SampledRun, SamplePlan, saturation_point
from pytest_gpuperf.timing.measure import Measurement
from pytest_gpuperf.timing.stats import Stats


def _measured(x: float) -> Measurement:
    return Measurement((x,) * 5, Stats.of([x] * 5), True)


def cuda_study(kernels: int = 3) -> tuple[sampled_apps.AppsResult, dc.SampleCounters]:
    """The study's result over the corpus' first ``kernels`` kernels on an H100-like device, and their
    samples' counters (every metric of :data:`.dao_counters.METRIC_NAMES`, ncu 2025.3.1.0)."""
    h100 = DeviceInfo(backend="cuda", index=0, name="H100", vendor="NVIDIA", key="h100", compute_capability="9.0",
                      compute_units=132, warp_size=32)
    sat = saturation_point(h100, {"num_regs": 16}, 256)
    res = sampled_apps.AppsResult(sc.CorpusResult(sampled_apps.APPS, (), False))
    counters = {}
    for i, app in enumerate(APP_KERNELS[:kernels]):
        per_wave = 1e-4 * (1 + i)
        for d in sampled_apps.DIVISORS:
            plan = SamplePlan(sat, 64 * sat.wave // d, 256)
            run = SampledRun(plan, _measured(2 * per_wave), _measured(3 * per_wave),
                             _measured(64 / d * per_wave * (1.01 + 0.02 * i)))
            res.runs.instances.append(svr.Instance(app.name, sat.p_sat, 16.0, 0.0, 256, plan.p1, plan.p2, plan.n_groups,
                                                   run.t_p1.stats.median, run.t_p2.stats.median, run.measured))
        res.runs.main[app.name] = run
        res.kernels[app.name] = app
        counters[app.name] = {"p1": {m: 2e5 * (1 + i) for m in dc.METRIC_NAMES},
                              "p2": {m: 3e5 * (1 + i) * (1 + 0.1 * j) for j, m in enumerate(dc.METRIC_NAMES)}}
    return res, dc.SampleCounters(counters, list(dc.METRIC_NAMES), version="2025.3.1.0", wall_s=12.0)
