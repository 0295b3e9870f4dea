"""Time–energy trade-off of a tuning space: the objective a strategy minimises, and the Pareto front.

A work-group size that is 2 % slower can draw 10 % less power (fewer resident warps keep fewer units
busy, lower clocks under a power cap), so "the best configuration" depends on what is paid for. The
tuner takes an objective (:data:`OBJECTIVES`):

* ``time`` — median device seconds per launch (the default, the thesis' objective);
* ``energy`` — joules per launch at steady state (``power.energy``);
* ``both`` — the strategies minimise the energy-delay product (J·s), one scalar that weighs both, and
  the suite reports the whole Pareto front (:func:`pareto_front`): every configuration no other beats
  in both time and energy.
"""

from __future__ import annotations

from typing import Hashable, Mapping, TypeVar

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
