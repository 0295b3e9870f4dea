"""The tuner race on one benchmark kernel: every strategy of :data:`~.strategies.REGISTRY` on one evaluator
(one measurement per configuration, shared), the picks checked against NumPy on fresh inputs (once per stored table) and re-timed
together, and the figures the tuning suite records as ``tuning.<kernel>.*``.

Why one procedure: the strategies differ only in what they visit, so the race treats them alike — those
that do not search run once, and the thesis tuner's evaluations (at least 3) become the budget of the
searching ones, which run once per seed and are averaged. A stored exhaustive table (:mod:`.reference`)
is replayed when there is one; the picks and the optimum are always timed again, together.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from statistics import mean
from typing import Any

from ..baselines import catalog
from ..devices.base import Device
from ..timing import observers
from . import reference, replay
from .evaluate import Config
from .kernels import Benchmark
from .reference import Reference
from .strategies import REFERENCE, REGISTRY, Context, Outcome
from .tuner import context

SEEDS = (1, 2, 3)  # the seeds every searching strategy runs with
INPUT_SEED = 11  # the inputs every configuration is timed on
VERIFY_SEED = 1000  # the first seed of the fresh inputs the picks are checked on (one per pick)
#: the strategy whose ``quality`` info also keeps the Kernel Tuner runs that raised
ERRORS_ON = "dao"


@dataclass(frozen=True)
class Standing:
    """One strategy's figures on one kernel, means over its seeded runs: ``quality`` (re-timed pick /
    re-timed optimum), ``cost`` (evaluations / the space's), ``time_cost`` (host seconds compiling and
    timing what it visited / exhaustive's), ``device_cost`` (Dao §3.6.2: Σ kernel time of one run of each
    configuration visited / the same over the space) and the two kernel-time sums behind it, in seconds."""

    quality: float
    cost: float
    time_cost: float
    device_cost: float
    device_s: float
    device_ex_s: float
    #: what the observers saw while these figures were measured (``timing.observers.inherit``, read back
    #: with them by :mod:`.standings`): a mean over kernels inherits its kernels' marks
    marks: dict[str, Any] = field(default_factory=dict)


@dataclass
class Race:
    """One kernel's race: ``runs`` per strategy (one outcome per seed; one for a strategy that does not
    search), the Kernel Tuner runs that raised (``errors``, ``<strategy>/seed<n>``), the searching
    strategies' ``budget`` and the re-timed picks (``times``, device seconds)."""

    bench: Benchmark
    ctx: Context
    reference: Reference
    runs: dict[str, list[Outcome]]
    errors: dict[str, str]
    budget: int
    times: dict[Config, float]
    seconds: float = 0.0
    third_party_runs: int = field(default=0)

    @property
    def optimum(self) -> Config:
        return self.runs[REFERENCE][0].best

    def standing(self, strategy: str) -> Standing:
        """``strategy``'s figures on this kernel (:class:`Standing`)."""
        ev, ex = self.ctx.ev, self.runs[REFERENCE][0]
        n_ex, t_ex = ev.cost(ex.ledger)
        d_ex = ev.device_cost(ex.ledger)
        outs = self.runs[strategy]
        costs = [ev.cost(o.ledger) for o in outs]
        d_s = mean(ev.device_cost(o.ledger) for o in outs)
        return Standing(quality=mean(self.times[o.best] / self.times[self.optimum] for o in outs),
                        cost=mean(n for n, _ in costs) / n_ex, time_cost=mean(t for _, t in costs) / t_ex,
                        device_cost=d_s / d_ex, device_s=d_s, device_ex_s=d_ex)

    def third_party_all_failed(self) -> bool:
        """Every Kernel Tuner run raised: some of its population strategies fail on very small (CPU-sized)
        spaces, which the record reports, but all of them failing means the replay itself is broken."""
        return self.third_party_runs > 0 and len(self.errors) >= self.third_party_runs

    def line(self) -> str:
        """One line for the test's captured output."""
        dao = self.runs["dao"][0]
        s = self.standing("dao")
        return (f"\n{self.bench.name}: space {len(self.ctx.space)}, optimum {self.optimum.label()} "
                f"{self.times[self.optimum] * 1e6:.1f} us, dao {dao.best.label()} q={s.quality:.3f} cost={s.cost:.3f} "
                f"pruning={dao.pruning} kt_errors={self.errors} ({self.seconds:.1f} s)")


def run(device: Device, bench: Benchmark, probe_limit: bool = False, retune: bool = False,
        plant: float = 0.0) -> Race:
    """Race every registered strategy on ``bench`` (``probe_limit``: ``--gpuperf-tuning-probe-limit``;
    ``retune``: time the whole space even where a stored table exists; ``plant``: the gate check's ``tuner``
    plant, :func:`.strategies.planted_pick`). Raises AssertionError when a pick computes a wrong result."""
    t0 = time.perf_counter()
    ctx = context(device, bench, seed=INPUT_SEED, probe_limit=probe_limit)
    ctx.plant = plant
    ref = reference.begin(ctx, INPUT_SEED, retune=retune)  # a stored table: the strategies replay it
    runs = {name: [r.run(ctx, 0, 0)] for name, r in REGISTRY.items() if not r.searching}
    budget = max(3, len(runs["dao"][0].ledger.visited))
    errors: dict[str, str] = {}
    third_party = 0
    for name, r in REGISTRY.items():
        if not r.searching:
            continue
        outs = []
        for seed in SEEDS:
            third_party += r.third_party
            try:
                outs.append(r.run(ctx, budget, seed))
            except Exception as exc:  # noqa: BLE001 - one failing third-party strategy must not hide the others
                if not r.third_party:
                    raise
                errors[f"{name.removeprefix('kt_')}/seed{seed}"] = f"{type(exc).__name__}: {exc}"[:200]
        if outs:
            runs[name] = outs
    chosen = sorted({o.best for outs in runs.values() for o in outs})
    fresh = ref.unverified(chosen)
    for i, c in enumerate(chosen):
        if c in fresh:
            ctx.ev.verify(c, seed=VERIFY_SEED + i)
    reference.record_verified(ref, fresh)
    reference.finish(ref, ctx, runs[REFERENCE][0].best)  # a table timed now is stored for the next run
    times = ctx.ev.remeasure(chosen)
    return Race(bench, ctx, ref, runs, errors, budget, times, time.perf_counter() - t0, third_party)


def records(race: Race) -> list[dict[str, Any]]:
    """The race's figures as ``gpuperf_record`` arguments: the optimum, the space (with every timed point,
    so a change of a strategy can be replayed on this run's numbers, :mod:`.replay`), each strategy's
    quality, cost and device cost, where the thesis tuner's evaluations go, and what each filter pruned.
    Tolerances come from the catalog, except the evaluations' (one configuration of this space)."""
    ctx, ev, k = race.ctx, race.ctx.ev, race.bench.name
    space = len(ctx.space)
    out: list[dict[str, Any]] = [
        {"name": f"tuning.{k}.optimum_us", "value": race.times[race.optimum] * 1e6, "unit": "us", "better": "lower",
         "info": {"config": race.optimum.label(), "space": space, "reference": race.reference.info()}},
        {"name": f"tuning.{k}.space", "value": space, "unit": "configs", "better": "exact",
         "info": {"limits": ctx.kernel_limit.info, "max_total": ctx.limits.max_total,
                  "max_dims": list(ctx.limits.max_dims), "build_options": list(ev.extra_options),
                  "points": replay.points(ctx),
                  # the (time, energy) Pareto front where the points carry energy (tuning.pareto)
                  **({"pareto": [c.label() for c in ev.front()]} if ev.front() else {})}}]
    for name, runs in race.runs.items():
        out += _strategy_records(race, name, runs)
    for name, runs in race.runs.items():
        out += _stage_records(k, name, runs[0], space)
    if ctx.cal is not None and ctx.cal.marks:  # the tuner's λ0, measured once per device (perhaps in another test)
        for r in out:
            if r["name"] != f"tuning.{k}.space":  # the space's size is a count of the limits, not of a timing
                r["info"] = {**(r.get("info") or {}), **observers.inherit(r.get("info") or {}, ctx.cal.marks)}
    return out


def _strategy_records(race: Race, name: str, runs: list[Outcome]) -> list[dict[str, Any]]:
    """``tuning.<kernel>.<strategy>.{quality,cost,device_cost}``; the reference's cost is 1 by definition.
    The host-seconds ratio is kept in ``device_cost``'s info, not gated per kernel: each configuration's host
    time is one wall-clock reading, so a one-off host stall can move one kernel's ratio several-fold; the mean
    over kernels dilutes it and stays gated."""
    reg, s, prefix = REGISTRY[name], race.standing(name), f"tuning.{race.bench.name}.{name}"
    info: dict[str, Any] = {"picks": [o.best.label() for o in runs], "budget": race.budget if reg.searching else None}
    if reg.prunes:
        info["pruning"] = runs[0].pruning
    if name == ERRORS_ON:
        info["kernel_tuner_errors"] = race.errors  # strategies of Kernel Tuner that raised
    if name == "dao" and race.ctx.plant > 0:
        info["planted_slowdown"] = race.ctx.plant
        if race.ctx.planted is not None:
            info["planted_pick"] = race.ctx.planted
    out = [{"name": f"{prefix}.quality", "value": s.quality, "unit": "ratio", "better": "lower", "info": info}]
    if name != REFERENCE:
        out += [{"name": f"{prefix}.cost", "value": s.cost, "unit": "ratio", "better": "lower"},
                {"name": f"{prefix}.device_cost", "value": s.device_cost, "unit": "ratio", "better": "lower",
                 "info": {"definition": "Dao §3.6.2: Σ kernel time of the visited configurations / Σ over the "
                                        "whole space", "host_time_cost": s.time_cost}}]
    return out


def _stage_records(kernel: str, name: str, out: Outcome, space: int) -> list[dict[str, Any]]:
    """Where a tuner's evaluations go, per stage as a fraction of the space (its final pass is most of its
    cost; band: the configurations of the space its catalog row counts, :func:`.catalog.space_band`), and the
    share of the space each of its reported filters left out."""
    reg, prefix = REGISTRY[name], f"tuning.{kernel}.{name}"
    recs: list[dict[str, Any]] = [
        {"name": f"{prefix}.evals.{stage}", "value": n / space, "unit": "fraction", "better": "lower",
         "tolerance": catalog.space_band(f"{prefix}.evals.{stage}", space),
         "info": {"evaluations": n, "space": space}}
        for stage, n in (out.pruning.get("evaluations") or {}).items() if not reg.searching]
    for stage in reg.filters:
        if stage in out.pruning:
            recs.append({"name": f"{prefix}.pruned.{stage.removeprefix('after_')}",
                         "value": 1.0 - out.pruning[stage] / space, "unit": "fraction", "better": "higher",
                         **({"info": {"pruning": out.pruning}} if reg.filters_info else {})})
    return recs
