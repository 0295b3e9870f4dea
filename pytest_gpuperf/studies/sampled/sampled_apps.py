"""Dao's sampled-kernel model (thesis ch. 2) on the application corpus (``app_kernels``), by his protocol.

What is measured, per kernel of the corpus at its GPU size (hundreds of work-groups, ≥ 0.1 s estimated on
an H100): the two samples at Dao's 2nd and 3rd saturation points (``P_sat1 = 2·P_sat``, ``P_sat2 = 3·P_sat``
groups per compute unit, §2.5.1) — the first groups of the same launch, timed alternately — and the full
run; the linear model's error |t_linear − t_full| / t_full and the overhead as Dao defines it (§2.6.4),
(t_P1 + t_P2) / t_full. Each kernel also runs over a quarter and a half of its groups (Dao: "each kernel is
run several times, every time with a different number of work-groups", §2.5.2): those runs are the SVR's
extra training instances, and the SVR is evaluated leave-one-kernel-out (§2.6.1) on the full runs.

The figures form their own metric family, ``model.sampled_apps.*`` / ``model.svr_apps.*``, whose identity
names the corpus version, beside the self-written corpus' ``model.sampled.*`` (``sampled_corpus``).
On a GPU every timed run starts after a copy of twice the last-level cache (the ``sampled_kernel`` fixture's
default flush): these kernels' samples last milliseconds, so the copy's write-back is noise there.

A kernel's size is chosen by an estimate (``app_kernel``), so every kernel is guarded before its
full-length runs: one run of its first :data:`PROBE_SHARE`-th of the groups is timed and extrapolated to
all of them, and every run length is predicted from the longest run measured so far. A kernel predicted
over :func:`run_budget` (:data:`RUN_BUDGET_S`, at most a quarter of the session's watchdog) is not run at
that length: it is left out of the figures, with its instances (so the SVR never trains on it and every
mean's kernel set, its identity, names exactly the kernels measured), and reported
(:attr:`AppsResult.over_budget`, :func:`problems`); the other kernels go on. A kernel whose full run was
predicted within the budget but took longer keeps its figures and is reported too. Each run's watchdog is
derived from its prediction and the budget (:func:`run_timeout`), so a kernel that hangs is named within
seconds (its device is then abandoned, as after any hang).

Every figure's identity names what shapes it (:func:`identity`): Dao's points, the corpus, the run
lengths, the size and cache state, and the reported run's length in waves of the device (its groups over
``P_sat`` × compute units: how far the two samples' slope is extrapolated, which the kernel's occupancy on
the device decides); a mean's names every kernel's.

What still differs from the thesis, and is said wherever the figures are quoted: 40 ported kernels, not
his 70; this family's ML model is the project's RBF SVR on portable features (``svr``). Dao's own ML model,
an ε-SVR on the two samples' hardware counters, is a family of its own on CUDA devices (``dao_ml``:
``model.dao_ml_apps.*``, its counters mapped to Nsight Compute metrics in ``dao_counters``). A CPU device runs the corpus at its PoCL size, warm (:data:`CPU_NOTE`): the procedure
end to end, not Dao's claims.
"""

from __future__ import annotations

import dataclasses

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ...devices.base import Device, DeviceInfo, Kernel, KernelArg
from ...errors import ProbeTimeoutError
from ...util import aggregate
from . import svr
from ...corpora.app_check import upload
from ...corpora.app_kernel import MIN_RUN_S, AppKernel
from ...corpora.app_kernels import APP_KERNELS, CORPUS_VERSION
from .sampled_corpus import WARM_CPU, CorpusResult, Protocol, kernel_records, svr_per_kernel
from .sampling import SampledRun, describe, saturation_point

APPS = Protocol("dao", "model.sampled_apps", "model.svr_apps",
                "Dao §2.5.1/§2.6 on the application corpus: the 2nd and 3rd saturation points, "
                "overhead = sampled time / full run")
#: The run lengths, as divisors of a kernel's groups: a quarter, a half and all of them (the last is reported)
DIVISORS = (4, 2, 1)
#: The sizes a kernel runs at (``AppKernel.gpu``, ``.tiny``): the GPU size, and the PoCL size CPU devices run
SIZES = ("gpu", "tiny")
CPU_NOTE = ("CPU device: the corpus runs at its PoCL size (8 to 64 work-groups a kernel), warm (its data stays in "
            "the host's caches), each kernel whose full run spans more than three waves of one work-group per "
            "core; a CPU's wave lasts microseconds, so its figures time launch jitter as much as the kernels: "
            "they check the procedure end to end, not Dao's claims")
#: Dao, thesis §2.6 (70 kernels of 39 OpenCL applications — Parboil, SNU NPB, SHOC, AMD and NVIDIA
#: samples — each with hundreds of work-groups and ≥ 0.1 s; sampled at the 2nd and 3rd saturation points;
#: the ML model evaluated leave-one-kernel-out): GPU, linear and ML mean error %, overhead
DAO_SAMPLED = (("GTX 580 (Fermi)", 5.72, 4.76, "8 % (NVIDIA average)"), ("GTX 280 (Tesla)", 7.19, 6.42, "8 % (NVIDIA average)"),
               ("Radeon HD 6970", 8.10, 7.91, "15 % (AMD average)"))
#: the ML model this study sets beside Dao's (``studies.sampled.svr``)
OUR_ML = "RBF ε-SVR on portable features, no counters"
_GPUS = " / ".join(g for g, *_ in DAO_SAMPLED)
SEED_LINEAR = (f"Dao: linear {' / '.join(f'{lin:.2f}' for _, lin, _, _ in DAO_SAMPLED)} % ({_GPUS}), "
               "70 application kernels, 2nd/3rd saturation points")
SEED_ML = (f"Dao: ML {' / '.join(f'{ml:.2f}' for _, _, ml, _ in DAO_SAMPLED)} % ({_GPUS}), leave-one-kernel-out, "
           "hardware counters")
SEED_OVERHEAD = "Dao: " + ", ".join(dict.fromkeys(ovh for *_, ovh in DAO_SAMPLED))
#: The longest a kernel's full-length run may take, predicted or measured: its measurement repeats it
#: several times at three lengths, so a kernel over this costs the study tens of seconds
RUN_BUDGET_S = 2.0
#: The probe times the first 1/PROBE_SHARE of a kernel's groups once, before any full-length run
PROBE_SHARE = 16
#: A run's watchdog: HANG_FACTOR × its predicted time, at least HANG_BUDGETS × the budget, never over the
#: session's (:func:`run_timeout`)
HANG_FACTOR = 4.0
HANG_BUDGETS = 2.0
SHRINK = "shrink its gpu size in corpora/app_*.py"


def run_budget(session_timeout_s: float, budget_s: float = RUN_BUDGET_S) -> float:
    """The budget of one full-length run: ``budget_s``, at most a quarter of the session's watchdog, so a
    run within it is never near a timeout (which would abandon the device)."""
    return min(budget_s, session_timeout_s / 4)


def run_timeout(predicted_s: float, budget_s: float, session_timeout_s: float) -> float:
    """The watchdog of a run predicted to take ``predicted_s`` under a run budget of ``budget_s``: a hang is
    caught after a few times its prediction instead of the session's whole timeout, while a run within the
    budget is never cut off, however wrong its prediction (an imbalanced kernel's first groups can be far
    lighter than the rest): a watchdog that fires abandons the device, a run that ends over the budget is
    only reported."""
    return min(session_timeout_s, max(HANG_BUDGETS * budget_s, HANG_FACTOR * predicted_s))


@dataclass(frozen=True)
class OverBudget:
    """A kernel whose full-length run was predicted (``measured`` False: it was not run at full length)
    or measured over the budget: ``full_s`` its full run's seconds, ``basis`` what they come from."""

    full_s: float
    budget_s: float
    basis: str
    measured: bool = False

    def message(self, name: str) -> str:
        """The failure's line: the kernel, its time, the budget and the fix."""
        what = "its full run took" if self.measured else "not run at full length: its full run is estimated at"
        return (f"{name}: {what} {self.full_s:.3g} s ({self.basis}), over the budget of {self.budget_s:g} s per "
                f"full-length run; {SHRINK} (its work by about {max(1.0, self.full_s / (2 * MIN_RUN_S)):.0f}× for a "
                f"full run near {2 * MIN_RUN_S:g} s)")


def size_for(info: DeviceInfo) -> str:
    """The size a device runs the corpus at: the GPU size, or on a CPU device the PoCL size (:data:`CPU_NOTE`)."""
    return "tiny" if info.is_cpu else "gpu"


def run_waves(run: SampledRun) -> float:
    """The length of ``run`` in waves of its device (groups over ``P_sat`` × compute units), to 1/100."""
    return round(run.plan.n_groups / run.plan.sat.wave, 2)


def identity(size: str = "gpu", cold: bool = True) -> dict[str, str]:
    """What every figure of the family was measured under: Dao's points, the corpus, the run lengths, the
    size and whether every timed run started from a flushed cache. A figure adds its run's :func:`run_waves`."""
    return {"sampling": "dao", "saturation_points": "2,3", "corpus": CORPUS_VERSION,
            "run_lengths": ",".join(f"1/{d}" if d > 1 else "1" for d in DIVISORS), "size": size,
            "cache": "cold" if cold else "warm"}


def waves_over(runs: Mapping[str, SampledRun]) -> dict[str, str]:
    """A mean's ``waves``: each kernel's reported run in waves, ``name=waves`` sorted by name
    (:func:`.aggregate.over`'s spelling), so a kernel whose occupancy changed makes the mean incomparable."""
    return aggregate.over((f"{name}={run_waves(run)}" for name, run in runs.items()), key="waves")


@dataclass
class AppsResult:
    """The corpus' runs (``runs.main``: each kernel's full-length run; ``runs.instances``: the SVR's),
    which run lengths were too short for the device's waves, each kernel's provenance, the kernels whose
    full run was predicted (left out) or measured (kept) over the run budget, and how it was measured:
    the size, the cache state and the device's compute units."""

    runs: CorpusResult
    too_short: dict[str, list[int]] = field(default_factory=dict)
    kernels: dict[str, AppKernel] = field(default_factory=dict)
    over_budget: dict[str, OverBudget] = field(default_factory=dict)
    size: str = "gpu"
    cold: bool = True
    compute_units: int = 0


Compile = Callable[[str, str], Kernel]
Sampler = Callable[..., SampledRun]


def measure(dev: Device, sampled_kernel: Sampler, timing: Mapping[str, Any], compile: Compile | None = None,
            kernels: Sequence[AppKernel] = APP_KERNELS, size: str = "gpu", cold: bool = True,
            budget_s: float = RUN_BUDGET_S) -> AppsResult:
    """Every kernel at its ``size`` (:data:`SIZES`: "gpu"; "tiny", what a CPU device runs, :func:`size_for`)
    over each run length of :data:`DIVISORS` whose groups exceed the second sampling point, each timed run
    after the cache flush unless ``cold`` is false (a CPU device runs warm), each kernel guarded by :func:`run_budget` of ``budget_s``
    (the module's docstring). Each kernel's buffers are uploaded, measured and released before the next
    kernel's (the largest hold 6.4 GB)."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(map(repr, SIZES))}, got {size!r}")
    build = compile or dev.compile
    out = AppsResult(CorpusResult(APPS, (), dev.info.is_cpu), size=size, cold=cold,
                     compute_units=int(dev.info.compute_units))
    limit = run_budget(dev.timeout_s, budget_s)
    for app in kernels:
        kern = build(app.source(dev.info.backend), app.name)
        problem = app.problem(app.gpu if size == "gpu" else app.tiny)
        launched = upload(dev, problem, fill_outputs=False)
        _kernel(dev, app, kern, problem.groups, launched.args, sampled_kernel, timing, cold, limit, out)
        del launched, problem
        dev.release_pooled_memory()
    return out


def _kernel(dev: Device, app: AppKernel, kern: Kernel, groups: int, args: Sequence[KernelArg], sampled_kernel: Sampler,
            timing: Mapping[str, Any], cold: bool, limit: float, out: AppsResult) -> None:
    """One kernel's probe and run lengths into ``out``: its instances and full run only when it completes
    within ``limit``, else its :class:`OverBudget` entry."""
    sat = saturation_point(dev.info, kern.attributes, app.local_size)
    attrs = kern.attributes
    n_probe = max(1, groups // PROBE_SHARE)
    t_probe = _timed_once(dev, app, kern, n_probe, groups, args, dev.timeout_s, "its probe")
    full_s = t_probe * groups / n_probe
    basis = f"extrapolated from a run of its first {n_probe} of {groups} work-groups"
    instances: list[svr.Instance] = []
    for d in DIVISORS:
        n_groups = groups // d
        if n_groups <= 3 * sat.wave:
            out.too_short.setdefault(app.name, []).append(n_groups)
            continue
        if full_s > limit:
            out.over_budget[app.name] = OverBudget(full_s, limit, basis)
            return
        predicted = full_s * n_groups / groups
        timeout = run_timeout(predicted, limit, dev.timeout_s)
        try:
            run = sampled_kernel(kern, app.local_size, args, n_groups, multiple=1, full=True, cold=cold,
                                 **{**timing, "timeout_s": timeout})
        except ProbeTimeoutError as exc:
            raise ProbeTimeoutError(_hang(app, n_groups, groups, timeout, predicted, basis)) from exc
        instances.append(svr.Instance(
            app.name, sat.p_sat, float(attrs.get("num_regs", 0)),
            float(attrs.get("shared_size_bytes", attrs.get("local_bytes", 0))), app.local_size, run.plan.p1,
            run.plan.p2, n_groups, run.t_p1.stats.median, run.t_p2.stats.median, run.measured))
        if run.measured * groups / n_groups > full_s:
            full_s = run.measured * groups / n_groups
            basis = f"scaled from its run of {n_groups} of {groups} work-groups"
        if d == 1:
            out.runs.main[app.name] = run
            out.kernels[app.name] = app
            if run.measured > limit:
                out.over_budget[app.name] = OverBudget(run.measured, limit, "the median of its timed full runs",
                                                       measured=True)
    out.runs.instances.extend(instances if app.name in out.runs.main else ())


def _timed_once(dev: Device, app: AppKernel, kern: Kernel, n_groups: int, groups: int, args: Sequence[KernelArg],
                timeout: float, what: str) -> float:
    """Device seconds of one run of the first ``n_groups`` groups; a hang names the kernel."""
    try:
        return dev.elapsed(dev.timed(lambda: dev.launch(kern, (n_groups * app.local_size,), (app.local_size,), args)),
                           timeout)
    except ProbeTimeoutError as exc:
        raise ProbeTimeoutError(_hang(app, n_groups, groups, timeout, None, what)) from exc


def _hang(app: AppKernel, n_groups: int, groups: int, timeout: float, predicted: float | None, basis: str) -> str:
    """The message of a run that outlived its watchdog: which kernel, which run, what was expected, the fix."""
    expected = f"predicted {predicted:.3g} s, {basis}" if predicted is not None else basis
    return (f"{app.name}: a run of (up to) its first {n_groups} of {groups} work-groups did not finish within "
            f"{timeout:g} s ({expected}); the device was abandoned. A kernel whose loops end only on data or on "
            f"other work-groups can hang: fix the kernel, or {SHRINK}")


def problems(res: AppsResult) -> list[str]:
    """Why kernels of the corpus have no figure, or cost the study more than its budget, one line each
    (empty when every kernel was measured within it): the suite fails with these lines. On a CPU device a
    kernel whose PoCL size spans too few waves of its cores is left out on purpose (:func:`left_out`); only a
    run that measured none of them is a problem there."""
    out = [ob.message(name) for name, ob in sorted(res.over_budget.items())]
    if res.runs.cpu:
        short = left_out(res)
        if not res.runs.main and short:
            lengths = sorted({n for v in short.values() for n in v})
            out.append(f"no kernel of the corpus spans more than three waves of this CPU's {res.compute_units} compute "
                       f"units at its PoCL size ({lengths[0]} to {lengths[-1]} work-groups a run, one work-group per "
                       "core a wave): run the study on a GPU, or on a PoCL device of fewer threads "
                       "(POCL_MAX_PTHREAD_COUNT)")
        return out
    for name, lengths in sorted(res.too_short.items()):
        if name not in res.runs.main and name not in res.over_budget:
            out.append(f"{name}: no run length exceeds three waves of its work-groups (groups per length: {lengths}); "
                       "grow its gpu size in corpora/app_*.py")
    return out


def left_out(res: AppsResult) -> dict[str, list[int]]:
    """The kernels a CPU device left out on purpose, with the work-groups of each run length: at its PoCL size
    none of its runs spans more than three waves of the device's cores (empty on a GPU, where such a kernel is
    a problem of its size, :func:`problems`)."""
    if not res.runs.cpu:
        return {}
    return {n: v for n, v in sorted(res.too_short.items()) if n not in res.runs.main and n not in res.over_budget}


def _by_behaviour(res: AppsResult) -> dict[str, float]:
    """The linear model's mean error over the kernels carrying each behaviour tag (Dao §2.6.2 explains his
    errors by such classes: imbalance, warm-up, short kernels)."""
    tags = sorted({t for k in res.kernels.values() for t in k.behaviour})
    out = {}
    for t in tags:
        errs = [r.error_rel for n, r in res.runs.main.items() if t in res.kernels[n].behaviour]
        out[t] = round(float(np.mean(errs)), 5)
    return out


def records(res: AppsResult) -> list[dict[str, Any]]:
    """The family's figures as ``gpuperf_record`` keyword sets: per kernel
    (:func:`~.sampled_corpus.kernel_records`) and the means over the kernels, each with Dao's figure beside it
    in ``info``. Every identity holds the catalog's keys of its family: :func:`identity`, and the reported
    run's :func:`run_waves` (per kernel) or every kernel's (:func:`waves_over`, the means, beside their kernel set)."""
    p, ident = APPS, identity(res.size, res.cold)
    main = res.runs.main
    if not main:
        raise ValueError("no kernel of the application corpus was measured: nothing to record")
    out: list[dict[str, Any]] = []
    for name, run in main.items():
        app = res.kernels[name]
        prov = {**app.describe(), "measured_full_s": run.measured, "under_min_run": run.measured < MIN_RUN_S}
        meta = {**describe(run.plan), "predicted_s": run.predicted, "measured_s": run.measured,
                "model": "Dao thesis §2.5.1 linear model", "protocol": p.label, "kernel": prov}
        kernel = dict(unit="ratio", better="lower", identity={**ident, "waves": run_waves(run)})  # bands: baselines/catalog.py
        out += kernel_records(p, name, run, kernel, res.runs.cpu, meta)
    # fewer kernels than the SVR trains on only when the guard left most out: the run fails naming them
    svr_err = res.runs.svr_errors() if len(main) >= svr.MIN_KERNELS else {}
    scope = {**ident, **aggregate.over(main), **waves_over(main)}
    mean = dict(unit="ratio", better="lower")
    short = sorted(n for n, r in main.items() if r.measured < MIN_RUN_S)
    out.append(dict(name=f"{p.family}.mean_error", value=float(np.mean(res.runs.errors)), identity=scope, **mean,
                    info={"kernels": len(main), "protocol": p.label, "seed": SEED_LINEAR,
                          "by_behaviour": _by_behaviour(res), "too_short_run_lengths": res.too_short,
                          "left_out_on_this_cpu": left_out(res), "full_runs_under_0.1s": short,
                          "over_budget": {n: {"full_s": o.full_s, "budget_s": o.budget_s, "basis": o.basis,
                                              "measured": o.measured} for n, o in sorted(res.over_budget.items())}}))
    out.append(dict(name=f"{p.family}.mean_overhead", value=float(np.mean([r.overhead for r in main.values()])),
                    identity=scope, **mean,
                    info={"protocol": p.label, "seed": SEED_OVERHEAD,
                          "definition": "(t_P1 + t_P2) / t_full per kernel, mean over kernels",
                          "cold_cache": "a copy of twice the last-level cache before every timed run" if res.cold
                          else WARM_CPU}))
    if svr_err:
        trained = {n: main[n] for n in svr_err}
        out.append(dict(name=f"{p.svr_family}.mean_error", value=float(np.mean([e[0] for e in svr_err.values()])),
                        identity={**ident, **aggregate.over(svr_err), **waves_over(trained)}, **mean,
                        info={**svr.split_report(res.runs.instances), "features": list(svr.FEATURES), "protocol": p.label,
                              "per_kernel": svr_per_kernel(svr_err),
                              # every training instance as measured: the model can be fitted again from the record
                              "instances": [dataclasses.asdict(i) for i in res.runs.instances],
                              "seed": SEED_ML, "model": OUR_ML}))
    return out
