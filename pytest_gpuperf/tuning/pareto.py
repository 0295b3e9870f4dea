"""Time–energy trade-off of a tuning space: the objective a strategy minimises, and the Pareto front.

A work-group size that is 2 % slower can draw 10 % less power (fewer resident warps keep fewer units
busy, lower clocks under a power cap), so "the best configuration" depends on what is paid for. The
tuner takes an objective (:data:`OBJECTIVES`):

* ``time`` — median device seconds per launch (the default, the thesis' objective);
* ``energy`` — joules per launch at steady state (``timing.energy``);
* ``both`` — the strategies minimise the energy-delay product (J·s), one scalar that weighs both, and
  the suite reports the whole Pareto front (:func:`pareto_front`): every configuration no other beats
  in both time and energy.

The power suite's fronts come from :func:`search_front` (:func:`pareto_search` on a tuning context): every
configuration timed first, energies measured fastest first, and a configuration left unmeasured only when a
measured lower bound on its energy (idle board power × its time) proves it dominated — or, past a per-kernel
budget, reported as undecided ("front over the N fastest of M configurations"), never as exhaustive.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Hashable, Mapping, TypeVar

OBJECTIVES = ("time", "energy", "both")
K = TypeVar("K", bound=Hashable)


def check_objective(objective: str) -> str:
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown tuning objective {objective!r}; choose one of {', '.join(OBJECTIVES)}")
    return objective


def score(time_s: float, energy_j: float | None, objective: str) -> float:
    """The value a strategy minimises under ``objective`` (ValueError when energy is asked for and absent)."""
    check_objective(objective)
    if objective == "time":
        return time_s
    if energy_j is None:
        raise ValueError(f"objective {objective!r} needs an energy per launch, and this device has no power sensor")
    return energy_j if objective == "energy" else time_s * energy_j


def pareto_front(points: Mapping[K, tuple[float, float]]) -> list[K]:
    """Keys of the non-dominated (time, energy) points, fastest first. A point is dominated when another
    is no worse in both and strictly better in one; equal points are all kept."""
    items = sorted(points.items(), key=lambda kv: (kv[1][0], kv[1][1]))
    front: list[K] = []
    best_energy = float("inf")
    last: tuple[float, float] | None = None
    for key, (t, e) in items:
        if e < best_energy or (last is not None and (t, e) == last):
            front.append(key)
            best_energy = min(best_energy, e)
            last = (t, e)
    return front


# ---------------------------------------------------------------------------------------------------------------
# Pruned, measurement-based search of the front (the power suite's ``power.tuning.<kernel>.front``)

#: a configuration's time for the bound: the median lowered by TIME_Z robust standard deviations of its samples,
#: and by at least TIME_MIN_REL (timer quantisation, drift between the timing pass and the energy loop)
TIME_Z = 3.0
TIME_MIN_REL = 0.02
#: measured energies may read this much low (counter bound 0.6–1.9 % plus a kernel's own power noise between
#: 2-s spans, 0.6–3.7 %: timing/energy.py): the bound must clear it before it prunes
ENERGY_MARGIN = 0.05
#: per-kernel wall-clock budget of a search (timing pass + idle reading + energies): ~18 energies of 2.3 s
BUDGET_S = 45.0


def time_lower(median_s: float, spread: float, z: float = TIME_Z, min_rel: float = TIME_MIN_REL) -> float:
    """A lower bound of a configuration's device time per launch: ``median × (1 − max(z·spread, min_rel))``
    (``spread``: the samples' robust relative standard deviation), never below 0."""
    return median_s * max(0.0, 1.0 - max(z * max(spread, 0.0), min_rel))


@dataclass
class FrontSearch(Generic[K]):
    """What :func:`search_front` did. ``order``: every configuration, fastest (median) first; the front is
    drawn from ``energies`` (measured) with the median times, the same (time, energy) pairs an exhaustive
    search would have measured."""

    order: list[K]
    times: dict[K, float]  # median seconds per launch
    time_lo: dict[K, float]  # the bound's time (time_lower)
    energies: dict[K, float] = field(default_factory=dict)  # joules per launch, in the order measured
    watts: dict[K, float | None] = field(default_factory=dict)
    pruned: list[K] = field(default_factory=list)  # proved dominated without an energy
    unreached: list[K] = field(default_factory=list)  # neither measured nor proved dominated: the budget ran out
    floor_w: float = 0.0  # the power floor the bound used at the end (0: pruning was off or switched off)
    floor_measured_w: float | None = None  # the floor the search was given
    violations: list[tuple[K, str]] = field(default_factory=list)  # measured points below the bound (pruning off)
    budget_s: float | None = None
    elapsed_s: float = 0.0
    energy_margin: float = ENERGY_MARGIN
    time_z: float = TIME_Z
    time_min_rel: float = TIME_MIN_REL

    @property
    def truncated(self) -> bool:
        return bool(self.unreached)

    @property
    def exact(self) -> bool:
        """Every configuration was measured or proved dominated: the front is the exhaustive search's."""
        return not self.unreached

    @property
    def covered(self) -> int:
        """N of "the front over the N fastest configurations": every one of the N fastest was measured or
        proved dominated (all of them when exact)."""
        first = {k: i for i, k in enumerate(self.order)}
        return min((first[k] for k in self.unreached), default=len(self.order))

    def front(self) -> list[K]:
        return pareto_front({k: (self.times[k], e) for k, e in self.energies.items()})

    def slack(self) -> float | None:
        """min over measured points of E / (P_floor · t_lo): how far the bound stayed below the measured
        energies (≥ 1 − margin, or the floor was switched off; None without a floor)."""
        f = self.floor_measured_w or 0.0
        ratios = [e / (f * self.time_lo[k]) for k, e in self.energies.items() if f > 0 and self.time_lo[k] > 0]
        return min(ratios) if ratios else None

    def summary(self) -> str:
        m, n_e = len(self.order), len(self.energies)
        if self.truncated:
            return (f"front over the {self.covered} fastest of {m} configurations (budget {self.budget_s:g} s spent "
                    f"after {n_e} energies; {len(self.unreached)} configurations undecided)")
        if self.pruned:
            return (f"exact: {n_e} energies of {m} configurations, the other {len(self.pruned)} proved dominated "
                    f"by the power-floor bound ({self.floor_w:.1f} W)")
        return f"exhaustive: all {m} configurations measured"

    def info(self, label: Callable[[K], str] = str) -> dict[str, Any]:
        """For a metric's ``info["search"]``."""
        slack = self.slack()
        return {"result": self.summary(), "exact": self.exact, "truncated": self.truncated,
                "candidates_timed": len(self.order), "energies_measured": len(self.energies),
                "pruned": len(self.pruned), "undecided": len(self.unreached), "covered_fastest": self.covered,
                "p_floor_w": None if self.floor_measured_w is None else round(self.floor_measured_w, 2),
                "p_floor_used_w": round(self.floor_w, 2), "bound_slack_min": None if slack is None else round(slack, 3),
                "violations": [f"{label(k)}: {why}" for k, why in self.violations],
                "time_lower": {"z": self.time_z, "min_rel": self.time_min_rel}, "energy_margin": self.energy_margin,
                "budget_s": self.budget_s, "elapsed_s": round(self.elapsed_s, 2),
                "pruned_configs": [label(k) for k in self.pruned],
                "undecided_configs": [label(k) for k in self.unreached]}


def search_front(times: Mapping[K, tuple[float, float]], measure_energy: Callable[[K], tuple[float, float | None]],
                 floor_w: float | None, budget_s: float | None = BUDGET_S, *,
                 clock: Callable[[], float] = time.monotonic, start: float | None = None,
                 z: float = TIME_Z, min_rel: float = TIME_MIN_REL, energy_margin: float = ENERGY_MARGIN,
                 min_energies: int = 1) -> FrontSearch[K]:
    """The (time, energy) Pareto front with as few energy measurements as a measured bound allows.

    ``times``: every configuration's (median seconds per launch, robust relative spread) — the cheap timing
    pass, done first. ``measure_energy(k)`` → (joules per launch, average watts of its span or None) — the
    expensive one. ``floor_w``: P_floor, a measured lower bound on the board power while any kernel runs
    (None or 0: nothing is pruned).

    Energies are measured in order of increasing median time, so a point that could dominate c is measured
    before c. One launch's energy is at least ``P_floor · t_c`` (the board never draws less than idle, and the
    energy loop's wall time per launch is at least the launch's device time); when the lowest energy so far is
    below ``P_floor · t_lo(c) · (1 − energy_margin)``, c is dominated and skipped, so the front and the
    energy- and EDP-optimal configurations are the exhaustive search's. ``t_lo`` (:func:`time_lower`) and the
    margin keep a median read high or an energy read low from pruning a point of the front. Every measured
    point checks the bound; a *violation* (a floor measured too high, a throttling card) switches pruning off
    and puts the pruned configurations back in the queue; ``slack()`` reports how far measured points stayed
    from the bound.

    ``budget_s`` (wall seconds from ``start``, default now; None: no budget) is a hard cap: an energy is not
    started when the average cost so far would overrun it (at least ``min_energies`` are measured). What the
    bound cannot rule out then is ``unreached``, and the result is the front over the N fastest of M
    configurations — exact on that prefix (up to exact ties of two medians), silent on the slower tail.
    """
    t0 = clock() if start is None else start
    order = sorted(times, key=lambda k: (times[k][0], times[k][1]))
    rank = {k: i for i, k in enumerate(order)}
    t_med = {k: float(times[k][0]) for k in order}
    t_lo = {k: time_lower(times[k][0], times[k][1], z, min_rel) for k in order}
    floor = float(floor_w) if floor_w and floor_w > 0 else 0.0
    out: FrontSearch[K] = FrontSearch(order, t_med, t_lo, floor_w=floor, floor_measured_w=floor_w, budget_s=budget_s,
                                      energy_margin=energy_margin, time_z=z, time_min_rel=min_rel)
    keep = 1.0 - energy_margin
    e_min = float("inf")
    pending = list(order)
    spent_on_energy = 0.0

    def dominated(k: K) -> bool:
        return floor > 0 and e_min <= floor * t_lo[k] * keep

    while pending:
        k = pending.pop(0)
        if dominated(k):
            out.pruned.append(k)
            continue
        n = len(out.energies)
        if budget_s is not None and n >= min_energies:
            if clock() - t0 + (spent_on_energy / n if n else 0.0) > budget_s:
                pending.insert(0, k)
                break
        t_start = clock()
        e, w = measure_energy(k)
        spent_on_energy += clock() - t_start
        out.energies[k], out.watts[k] = float(e), w
        if floor > 0:
            bad = []
            if e < floor * t_lo[k] * keep:
                bad.append(f"E={e:.4g} J < P_floor·t_lo = {floor * t_lo[k]:.4g} J")
            if w is not None and w < floor * keep:
                bad.append(f"P={w:.1f} W < P_floor = {floor:.1f} W")
            if bad:
                out.violations.append((k, "; ".join(bad) + " — pruning switched off"))
                floor = 0.0
                pending = sorted(pending + out.pruned, key=rank.__getitem__)
                out.pruned = []
        e_min = min(e_min, float(e))
    for k in pending:  # the budget ran out: what the bound still rules out is decided, the rest is not
        (out.pruned if dominated(k) else out.unreached).append(k)
    out.pruned.sort(key=rank.__getitem__)
    out.floor_w = floor
    out.elapsed_s = clock() - t0
    return out


def pareto_search(ctx: Any, sensor: Any, budget_s: float | None = BUDGET_S, *, floor: Any = "idle",
                  clock: Callable[[], float] = time.monotonic) -> tuple[FrontSearch, Any]:
    """:func:`search_front` on a tuning context: the idle board power (``timing.energy.idle_power``, unless
    ``floor`` is given: an ``IdlePower`` or None for no pruning), then every configuration of ``ctx.space``
    timed through the evaluator, then energies through the evaluator's ``measure_energy`` (its energy
    loop's count and warm-up); each measured energy is stored on the evaluator's point (so ``ctx.ev.front()`` is the
    front). The context must be built with objective "time" — else the timing pass would measure every energy.
    The budget counts from before the idle reading; the timing pass always completes (the order needs every
    time; it is the evaluator's short tuning profile, well under a second per configuration, so even a
    space of a few hundred shapes is timed in seconds).
    Returns (the search, the idle reading)."""
    from ..timing.energy import idle_power

    ev = ctx.ev
    if ev.sensor is not None:
        raise ValueError("pareto_search times every configuration first: build the context with objective 'time'")
    start = clock()
    idle = idle_power(ev.device, sensor, timeout_s=ev.config.timeout_s) if floor == "idle" else floor
    times = {}
    for c in ctx.space:
        p = ev.measure(c)
        times[c] = (p.time_s, p.spread)

    def energy(c: Any) -> tuple[float, float | None]:
        p = ev.measure_energy(c, sensor)
        return p.energy_j, p.watts

    found = search_front(times, energy, None if idle is None else idle.watts, budget_s, clock=clock, start=start)
    return found, idle
