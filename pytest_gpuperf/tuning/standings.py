"""The tuning means over kernels (``tuning.mean.<strategy>.*``, ``tuning.total.<strategy>.device_cost``),
computed from what the session recorded of each kernel's race (:mod:`.race`).

Why from the record: the means are over the kernels whose figures this run's results hold, read back as
they were recorded, so they need no channel of their own between tests and cannot disagree with the
per-kernel figures. The kernels are the figures' identity (``util.aggregate.over``): a ``-k`` subset or
a kernel skipped by the budget is another figure, never a change of the full set's.
"""

from __future__ import annotations

from statistics import mean
from typing import Any, Mapping

from ..util import aggregate
from ..timing import observers
from .kernels import BENCHMARKS
from .race import Standing
from .strategies import REFERENCE, REGISTRY

THESIS = "Dao thesis §3.6.1-3.6.2: 1.06x optimum at 3% of exhaustive cost on GTX Titan X"


def exhaustive_seconds(space_info: Mapping[str, Any], space: int) -> float:
    """Σ kernel time of one run of every configuration of the space (exhaustive search's device cost), from
    the timed points saved in ``tuning.<kernel>.space``'s info (µs to 4 decimals); the workload-transformed
    variants (``wl:``) lie outside the space. ValueError when the points do not cover the space."""
    points = {label: p for label, p in (space_info.get("points") or {}).items() if not label.startswith("wl:")}
    if len(points) != space:
        raise ValueError(f"the space's saved points hold {len(points)} configurations of its {space}: the kernel's "
                         "exhaustive device time cannot be read back; re-run its test_tune case")
    return sum(float(p["us"]) for p in points.values()) / 1e6


def from_recorded(values: Mapping[str, float], infos: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Standing]]:
    """Per kernel and strategy, the :class:`~.race.Standing` read back from the session's recorded values
    (``gpuperf_recorded``) and infos; a kernel counts where its space and a strategy's figures were all
    recorded. Empty when no kernel was tuned in this session."""
    out: dict[str, dict[str, Standing]] = {}
    for bench in BENCHMARKS:
        k = bench.name
        if f"tuning.{k}.space" not in values:
            continue
        d_ex = exhaustive_seconds(infos.get(f"tuning.{k}.space") or {}, int(values[f"tuning.{k}.space"]))
        found = {name: _standing(values, infos, f"tuning.{k}.{name}", d_ex, name == REFERENCE) for name in REGISTRY}
        found = {name: s for name, s in found.items() if s is not None}
        if found:
            out[k] = found
    return out


def _standing(values: Mapping[str, float], infos: Mapping[str, Mapping[str, Any]], prefix: str, d_ex: float,
              reference: bool) -> Standing | None:
    """One strategy's figures on one kernel as recorded (None where any is absent); the reference's costs
    are 1 by definition and are not recorded."""
    if f"{prefix}.quality" not in values:
        return None
    marks = observers.inherit(*(infos.get(f"{prefix}.{x}") for x in ("quality", "cost", "device_cost")))
    if reference:
        return Standing(values[f"{prefix}.quality"], 1.0, 1.0, 1.0, d_ex, d_ex, marks)
    host = (infos.get(f"{prefix}.device_cost") or {}).get("host_time_cost")
    if f"{prefix}.cost" not in values or f"{prefix}.device_cost" not in values or host is None:
        return None
    device_cost = values[f"{prefix}.device_cost"]
    return Standing(values[f"{prefix}.quality"], values[f"{prefix}.cost"], float(host), device_cost,
                    device_cost * d_ex, d_ex, marks)


def records(standings: Mapping[str, Mapping[str, Standing]]) -> list[dict[str, Any]]:
    """The means as ``gpuperf_record`` arguments, each strategy's over the kernels it has a result for (that
    set is the figures' identity); tolerances come from the catalog. ``tuning.total.<strategy>.device_cost``
    reads the thesis' "3 % of the time of the exhaustive search" as one ratio over the whole set (Σ profiled
    kernel time / Σ exhaustive's), which long-running kernels dominate."""
    out: list[dict[str, Any]] = []
    for name in sorted({s for per_kernel in standings.values() for s in per_kernel}):
        kernels = sorted(k for k, per_kernel in standings.items() if name in per_kernel)
        rows = [standings[k][name] for k in kernels]
        scope = aggregate.over(kernels)
        missing = sorted(b.name for b in BENCHMARKS if b.name not in kernels)
        marks = observers.inherit(*(r.marks for r in rows))  # a mean is no more the code's own than its kernels
        out.append({"name": f"tuning.mean.{name}.quality", "value": mean(r.quality for r in rows), "unit": "ratio",
                    "better": "lower", "identity": scope,
                    "info": {"kernels": len(rows), "missing": missing, "thesis": THESIS,
                             "target": "dao ≤ 1.03 at ≤ 5% cost", **marks}})
        if name == REFERENCE:
            continue
        out += [
            {"name": f"tuning.mean.{name}.cost", "value": mean(r.cost for r in rows), "unit": "ratio",
             "better": "lower", "identity": scope, "info": dict(marks)},
            {"name": f"tuning.mean.{name}.time_cost", "value": mean(r.time_cost for r in rows), "unit": "ratio",
             "better": "lower", "identity": scope, "info": {"host_timed": True, **marks}},
            {"name": f"tuning.mean.{name}.device_cost", "value": mean(r.device_cost for r in rows), "unit": "ratio",
             "better": "lower", "identity": scope,
             "info": {"definition": "Dao §3.6.2 (kernel time of the profiled runs / exhaustive's)", **marks}},
            {"name": f"tuning.total.{name}.device_cost", "unit": "ratio", "better": "lower", "identity": scope,
             "value": sum(r.device_s for r in rows) / sum(r.device_ex_s for r in rows),
             "info": {"definition": "Σ over kernels of profiled kernel time / Σ of exhaustive's", "kernels": len(rows),
                      **marks}}]
    return out
