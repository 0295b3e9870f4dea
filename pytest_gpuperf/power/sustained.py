"""The card's own state under one standard load: the SM clock it sustains, the power it draws and the
slowdown reasons it reports, read from the board while the same work runs back to back.

Why a figure of its own: a measurement taken while the card slowed itself down is kept out of the gate
(verdict ``throttled``), so a card whose cooling or power cap makes it throttle would otherwise pass
every timing gate. Here the slowdown *is* the figure: a card that sustains a lower clock under the same
load than its baseline did is ``regressed`` — the hardware fault an upgrade gate must catch.

The load runs for a warm-up (clocks leave idle, power settles), then for :data:`SPAN_S` seconds with one
board reading per batch of launches (each batch waited on, so readings are taken under load); the clock
and power figures are medians over those readings, kept as samples for the significance test.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..devices.nvml import decode_throttle, is_slowdown
from ..timing.energy import batched, warm_up

#: seconds of load before the readings count
WARMUP_S = 2.0
#: seconds of readings under load
SPAN_S = 4.0
#: device seconds of one batch of launches (one board reading per batch)
BATCH_S = 0.05
#: the span goes on until this many readings are in: the significance test behind a ``regressed`` verdict
#: needs enough samples on each side (``timing.difference.MIN_SAMPLES`` and well above), whatever the span
MIN_READINGS = 20


@dataclass(frozen=True)
class Sustained:
    """Board readings under the standard load."""

    sm_clock_mhz: list[float]
    power_w: list[float]
    temperature_c: list[float]
    #: slowdown reason → readings that reported it (only reasons that slow the card: ``nvml.is_slowdown``)
    slowdowns: dict[str, int] = field(default_factory=dict)
    span_s: float = 0.0
    slowed: int = 0  # readings that reported any slowdown reason

    @property
    def readings(self) -> int:
        return len(self.sm_clock_mhz)

    @property
    def slowed_share(self) -> float:
        """The share of readings that reported any slowdown reason."""
        return self.slowed / self.readings if self.readings else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"readings": self.readings, "span_s": round(self.span_s, 3),
                "sm_clock_mhz_median": statistics.median(self.sm_clock_mhz),
                "power_w_median": statistics.median(self.power_w),
                "temperature_c_max": max(self.temperature_c), "slowdowns": dict(self.slowdowns),
                "slowed_readings": self.slowed}


def under_load(device: Any, sensor: Any, run_once: Callable[[], Any], timeout_s: float = 10.0,
               warmup_s: float = WARMUP_S, span_s: float = SPAN_S, min_readings: int = MIN_READINGS) -> Sustained:
    """Run ``run_once`` (enqueues one launch) back to back on ``device`` and read ``sensor`` after each batch,
    for ``span_s`` seconds and at least ``min_readings`` readings. Raises RuntimeError when the sensor gives no
    reading (an unreadable board is no figure)."""
    run_batch = batched(device, run_once, timeout_s, BATCH_S)
    warm_up(run_batch, warmup_s)
    clocks: list[float] = []
    watts: list[float] = []
    temps: list[float] = []
    slowdowns: dict[str, int] = {}
    slowed = 0
    start = time.perf_counter()
    attempts = 0
    while time.perf_counter() - start < span_s or (len(clocks) < min_readings and attempts < 4 * min_readings):
        run_batch()
        attempts += 1
        r = sensor.read()
        if r is None:
            continue
        clocks.append(r.sm_clock_mhz)
        watts.append(r.power_w)
        temps.append(r.temperature_c)
        reasons = [x for x in (sensor.reasons(r.throttle_mask) if hasattr(sensor, "reasons")
                               else decode_throttle(r.throttle_mask)) if is_slowdown([x])]
        slowed += bool(reasons)
        for x in reasons:
            slowdowns[x] = slowdowns.get(x, 0) + 1
    if not clocks:
        raise RuntimeError(f"the power sensor gave no reading under load: {getattr(sensor, 'last_error', '')}")
    return Sustained(clocks, watts, temps, slowdowns, time.perf_counter() - start, slowed)


def records(load: str, s: Sustained) -> list[dict[str, Any]]:
    """The figures of one standard load as ``gpuperf_record`` arguments: the sustained SM clock (higher is
    better: a card that slows itself down reads lower), the power drawn for the same work (lower is
    better) — both medians with the readings as samples — and the share of readings with a slowdown."""
    from ..timing.stats import Stats

    info = {"sustained": s.to_json(), "load": load, "warmup_s": WARMUP_S}
    identity = {"load": load, "span_s": SPAN_S}
    clock, power = Stats.of(s.sm_clock_mhz), Stats.of(s.power_w)
    return [
        {"name": f"power.sustained.{load}.sm_clock_mhz", "value": clock.median, "unit": "MHz", "better": "higher",
         "stats": clock, "info": info, "identity": identity},
        {"name": f"power.sustained.{load}.watts", "value": power.median, "unit": "W", "better": "lower",
         "stats": power, "info": info, "identity": identity},
        {"name": f"power.sustained.{load}.slowed_share", "value": s.slowed_share, "unit": "ratio", "better": "lower",
         "tolerance": {"abs": 0.1}, "info": info, "identity": identity},
    ]
