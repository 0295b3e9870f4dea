"""A steady-state energy reading (``timing.energy.Energy``) as the power suite's two figures of one load:
``power.<load>.joules_per_op`` and ``power.<load>.watts``, with the span's readings in their info."""

from __future__ import annotations

from typing import Any, Mapping

#: counter steps of the span of a load read for its own figures only (the device copy, the twelve tuning kernels),
#: half of :data:`pytest_gpuperf.timing.energy.K_STEPS`: re-read over its first 10 steps, every saved span of both
#: cards lands well inside the spread between runs that these figures' bands are set from
#: (``scripts/energy_span_study.py``, docs/power.md). The FMA loads, which the gate check plants and the thesis' J per
#: flop compares, keep the full count.
SHORT_SPAN_STEPS = 10


def records(load: str, e: Any, per: str, extra: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``gpuperf_record`` arguments of ``e`` measured on ``load`` (``per``: what one op is). The energy per op
    keeps the span's NVML readings (the informative ones), from which the figures can be re-derived."""
    info = {"power": e.info(), "per": per, **extra}
    return [
        {"name": f"power.{load}.joules_per_op", "value": e.joules_per_op, "unit": "J/op", "better": "lower",
         "info": {**info, "ops_per_launch": e.joules_per_launch / e.joules_per_op, "nvml_samples": e.samples()}},
        {"name": f"power.{load}.watts", "value": e.watts, "unit": "W", "better": "lower", "info": info},
    ]
