"""A tuning kernel's (time, energy) Pareto search (``tuning.pareto.pareto_search``) as the power suite's two
figures: ``power.tuning.<kernel>.front`` (the front's size) and ``.energy_saving`` (the energy-optimal
configuration's saving over the time-optimal one), with every measured point in their info.

A truncated search's front is the front of the N fastest configurations, and N moves with the budget and
the card's speed: that scope is the figures' identity, so fronts of different scopes read incomparable,
never a regression; a truncated saving is a lower bound of the space's."""

from __future__ import annotations

from typing import Any

from ..timing import observers
from ..tuning import pareto


def records(kernel: str, ctx: Any, found: pareto.FrontSearch, idle: Any) -> list[dict[str, Any]]:
    """``gpuperf_record`` arguments of the search ``found`` over ``ctx``'s space (``idle``: the idle-power
    reading it used as its floor, or None)."""
    pts = {c: ctx.ev.points[c] for c in found.energies}
    front = found.front()
    t_best = min(pts, key=lambda c: (pts[c].time_s, c))
    e_best = min(pts, key=lambda c: (pts[c].energy_j, c))
    edp_best = min(pts, key=lambda c: (pareto.score(pts[c].time_s, pts[c].energy_j, "both"), c))
    table = {c.label(): {"us": round(p.time_s * 1e6, 3), "us_lo": round(found.time_lo[c] * 1e6, 3),
                         "mJ": round(p.energy_j * 1e3, 4), "W": p.watts, "throttled": p.throttled}
             for c, p in sorted(pts.items())}
    timed_only = {c.label(): {"us": round(found.times[c] * 1e6, 3), "us_lo": round(found.time_lo[c] * 1e6, 3),
                              "status": "pruned" if c in found.pruned else "undecided"}
                  for c in found.order if c not in pts}
    throttled = any(p.throttled for p in pts.values())
    scope = "" if found.exact else f" of the {found.covered} fastest"
    search = {**found.info(lambda c: c.label()), "p_floor": None if idle is None else idle.info()}
    info = {"gate": "if-stable", "front": [c.label() for c in front], "time_optimal": t_best.label(),
            "energy_optimal": e_best.label(), "edp_optimal": edp_best.label(), "points": table,
            "timed_only": timed_only, "search": search, "scope": f"measured configurations{scope}",
            "energy_k_steps": ctx.ev.energy_k_steps, "power": {"throttled": throttled},
            # the front's size is a count of timed points: it inherits what the test's windows saw
            **observers.inherit(ctx.ev.device, {"power": {"throttled": throttled}})}
    identity = {"front_scope": "exact" if found.exact else f"the {found.covered} fastest of {len(found.order)}"}
    return [
        {"name": f"power.tuning.{kernel}.front", "value": len(front), "unit": "configs", "better": "exact",
         "identity": identity, "info": info},
        {"name": f"power.tuning.{kernel}.energy_saving", "value": pts[t_best].energy_j / pts[e_best].energy_j,
         "unit": "ratio", "better": "higher", "identity": identity, "info": info},
    ]
