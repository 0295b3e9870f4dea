"""Steady-state energy of one kernel launch, from the board's total-energy counter.

Why a loop: NVML's total-energy counter (mJ) does not advance continuously — the firmware adds the energy
of each of its integration periods at once (on recent data-centre cards about every 100 ms; the period a
run measured is in ``info["power"]["counter"]["period_s"]``). A single 50 µs launch is far below one period; its energy is
unobservable. So the launch is repeated, back to back, until the counter has moved by
:data:`K_STEPS` of its own update steps.

Why that count is enough: the span starts at the first reading that shows a counter update and ends at
the first reading that shows the K-th one after it, so the energy delta is exact (whole firmware
periods) and only the span's two ends are uncertain — each by the gap between that reading and the one
before it (one batch of launches, about :data:`BATCH_S`, plus the read). The relative error bound is
``(gap_start + gap_end) / span`` plus the counter's 1 mJ over the delta: at K = 20 and a 100-ms period,
reading gaps of milliseconds over a 2-second span, a few percent at most, inside the metrics' band and
the board sensor's own accuracy (about ±5 %). What a 2-second span does not remove is the kernel's own
power drift: ``drift_rel`` is the relative difference of the span's two halves' power, so a reader sees
whether the span was at steady state.

Steady state: the loop is preceded by a warm-up of :data:`WARMUP_S` seconds of the same launches, long
enough for the clocks to leave idle and the board power to settle (the thesis measures "at steady
state" too, Alavani §5.3).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..devices.nvml import Reading, decode_throttle, is_slowdown

#: the counter must move by this many of its update steps (both ends aligned to an update: the error
#: is the two ends' reading gaps over the span, 0.6–1.9 % measured at 20 steps of 100 ms; see the module text)
K_STEPS = 20
#: warm-up before the measured span (clocks and power settle)
WARMUP_S = 1.0
#: the measured span stops here even if K steps were not reached (the result then says so)
MAX_SPAN_S = 12.0
#: each batch of launches takes about this long (one counter reading per batch)
BATCH_S = 0.005


@dataclass(frozen=True)
class Resolution:
    """The counter's observed granularity: energy per update (J) and time between updates (s)."""

    step_j: float
    period_s: float
    jumps: int  # how many counter changes the estimate rests on

    def to_json(self) -> dict[str, float]:
        return {"step_j": round(self.step_j, 5), "period_s": round(self.period_s, 5), "jumps": self.jumps}


def counter_resolution(readings: Sequence[Reading]) -> Resolution | None:
    """Median positive jump of the energy counter and median time between jumps, from time-ordered
    readings taken while the card is busy; None with fewer than two jumps (too short to say)."""
    jumps: list[float] = []
    times: list[float] = []
    for prev, cur in zip(readings, readings[1:]):
        if cur.energy_mj > prev.energy_mj:
            jumps.append((cur.energy_mj - prev.energy_mj) / 1000.0)
            times.append(cur.t)
    if len(jumps) < 2:
        return None
    gaps = [b - a for a, b in zip(times, times[1:])]
    return Resolution(statistics.median(jumps), statistics.median(gaps), len(jumps))


def _gap_before(readings: Sequence[Reading], k: int) -> float:
    """Time between reading ``k`` and the one before it: how late reading ``k`` can be in seeing its update."""
    return readings[k].t - readings[k - 1].t if k > 0 else 0.0


def error_bound(readings: Sequence[Reading]) -> float:
    """Relative error bound of a span whose ends are counter updates (see the module text): the reading
    gaps at both ends over the span, plus the counter's 1 mJ over the delta. The span's first reading is
    its first update; the gap before it is not kept, so the gap after it (one batch, the same length)
    stands in."""
    first, last = readings[0], readings[-1]
    span = last.t - first.t
    energy_mj = last.energy_mj - first.energy_mj
    if span <= 0 or energy_mj <= 0:
        return float("inf")
    start_gap = _gap_before(readings, 1) if len(readings) > 1 else 0.0
    end = next((k for k in range(len(readings) - 1, 0, -1)
                if readings[k].energy_mj != readings[k - 1].energy_mj), len(readings) - 1)
    end_gap = _gap_before(readings, end) + (last.t - readings[end].t)
    return (start_gap + end_gap) / span + 1.0 / energy_mj


def drift(readings: Sequence[Reading]) -> float:
    """|P(second half) − P(first half)| / P(span), each half between counter updates: whether the span was
    at steady state (a value near the 20-step window spread, a few %, is a kernel's own power noise)."""
    ticks = [r for k, r in enumerate(readings) if k == 0 or r.energy_mj != readings[k - 1].energy_mj]
    if len(ticks) < 5:
        return float("nan")
    mid = len(ticks) // 2

    def watts(a: Reading, b: Reading) -> float:
        return (b.energy_mj - a.energy_mj) / 1000.0 / (b.t - a.t)

    whole = watts(ticks[0], ticks[-1])
    return abs(watts(ticks[mid], ticks[-1]) - watts(ticks[0], ticks[mid])) / whole if whole > 0 else float("nan")


@dataclass(frozen=True)
class Energy:
    """Energy of one launch at steady state, and how it was obtained."""

    joules_per_launch: float
    joules_per_op: float
    watts: float
    launches: int
    energy_j: float
    span_s: float
    resolution: Resolution | None
    steps: float  # the delta in counter steps (≥ K unless the span hit MAX_SPAN_S)
    error_bound_rel: float = float("nan")  # (gap at the start + gap at the end) / span + 1 mJ / delta
    drift_rel: float = float("nan")  # |power of the span's second half − first half| / power
    throttle_reasons: list[str] = field(default_factory=list)
    sm_clock_mhz: tuple[float, float] = (0.0, 0.0)
    temperature_max_c: float = 0.0
    readings: tuple[Reading, ...] = ()
    k_steps: int = K_STEPS  # the count the loop aimed for

    @property
    def throttled(self) -> bool:
        return is_slowdown(self.throttle_reasons)

    @property
    def enough(self) -> bool:
        """Whether the counter moved by K steps (the 2/K error bound holds)."""
        return self.steps >= self.k_steps

    def info(self) -> dict[str, Any]:
        """For a metric's ``info["power"]`` (``throttled`` there makes the session not gate it)."""
        return {"joules_per_launch": self.joules_per_launch, "launches": self.launches,
                "energy_j": round(self.energy_j, 4), "span_s": round(self.span_s, 4), "watts": round(self.watts, 2),
                "counter": None if self.resolution is None else self.resolution.to_json(),
                "steps": round(self.steps, 1), "k_steps": self.k_steps,
                "error_bound_rel": round(self.error_bound_rel, 5), "drift_rel": round(self.drift_rel, 4),
                "throttle_reasons": self.throttle_reasons, "throttled": self.throttled,
                "sm_clock_min_mhz": self.sm_clock_mhz[0], "sm_clock_max_mhz": self.sm_clock_mhz[1],
                "temperature_max_c": self.temperature_max_c}

    def samples(self) -> list[dict[str, float]]:
        """The span's NVML readings that carry information — the first two (the first gap is the error
        bound's start), the last, every one where the counter or the throttle mask changed, and the one
        just before each update (its gap is the error bound's end) — so :func:`energy_of` on them gives the same figures and a
        test can re-derive a GPU run's energy from its results file (saved NVML samples)."""
        keep: list[Reading] = []
        for k, r in enumerate(self.readings):
            prev = self.readings[k - 1] if k else None
            nxt = self.readings[k + 1] if k + 1 < len(self.readings) else None
            if k <= 1 or nxt is None or r.energy_mj != prev.energy_mj \
                    or r.throttle_mask != prev.throttle_mask or nxt.energy_mj != r.energy_mj:
                keep.append(r)
        return [r.to_json() for r in keep]


def energy_of(readings: Sequence[Reading], launches: int, ops_per_launch: float,
              reasons: Callable[[int], list[str]] = decode_throttle, k_steps: int = K_STEPS) -> Energy:
    """The figures of a measured span (pure: the tests feed it saved NVML samples). ``readings`` span the
    launches: the first taken before the first of them, the last after the last had finished."""
    if len(readings) < 2 or launches <= 0:
        raise ValueError("an energy span needs two readings and at least one launch")
    first, last = readings[0], readings[-1]
    energy = (last.energy_mj - first.energy_mj) / 1000.0
    span = last.t - first.t
    if energy <= 0 or span <= 0:
        raise ValueError(f"the energy counter did not advance over {span:.3f} s ({launches} launches): "
                         "the span is shorter than one counter update")
    res = counter_resolution(readings)
    steps = energy / res.step_j if res is not None and res.step_j > 0 else 0.0
    mask = 0
    for r in readings:
        mask |= int(r.throttle_mask)
    per_launch = energy / launches
    return Energy(per_launch, per_launch / ops_per_launch if ops_per_launch > 0 else float("nan"), energy / span,
                  launches, energy, span, res, steps, error_bound(readings), drift(readings), sorted(reasons(mask)),
                  (min(r.sm_clock_mhz for r in readings), max(r.sm_clock_mhz for r in readings)),
                  max(r.temperature_c for r in readings), tuple(readings), k_steps)


@dataclass(frozen=True)
class Batch:
    """About ``batch_s`` device seconds of one launch, enqueued back to back and waited for: a board
    reading taken after a call is taken with the batch's launches finished."""

    device: Any
    run_once: Callable[[], Any]
    launches: int
    timeout_s: float

    def __call__(self) -> None:
        for _ in range(self.launches):
            self.run_once()
        self.device.synchronize(self.timeout_s)


def batched(device: Any, run_once: Callable[[], Any], timeout_s: float, batch_s: float) -> Batch:
    """A :class:`Batch` of ``run_once`` sized from one timed launch to about ``batch_s`` device seconds
    (each wait at most ``timeout_s``)."""
    one = device.elapsed(device.timed(run_once), timeout_s)
    return Batch(device, run_once, max(1, int(batch_s / max(one, 1e-7))), timeout_s)


def warm_up(run_batch: Callable[[], None], seconds: float) -> None:
    """Run batches back to back for ``seconds``: clocks leave idle and power settles before readings count."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        run_batch()


def reached(readings: Sequence[Reading], k_steps: int) -> bool:
    """Whether a span's readings so far (the first one at a counter update) show ``k_steps`` of the counter's update
    steps, the step measured from these readings: the rule that ends :func:`steady_state_energy`'s span."""
    res = counter_resolution(readings)
    return res is not None and (readings[-1].energy_mj - readings[0].energy_mj) / 1000.0 >= k_steps * res.step_j


def steady_state_energy(device: Any, sensor: Any, run_once: Callable[[], Any], ops_per_launch: float,
                        timeout_s: float = 10.0, warmup_s: float = WARMUP_S, max_span_s: float = MAX_SPAN_S,
                        k_steps: int = K_STEPS) -> Energy:
    """Loop ``run_once`` (enqueues one launch) on ``device`` until ``sensor``'s energy counter moved by
    ``k_steps`` of its update steps, after a warm-up; joules per launch, per operation and watts.

    Batches of launches (about :data:`BATCH_S` of device time each) are followed by a synchronize and a
    counter reading, so every reading is taken with the batch's launches finished."""
    run_batch = batched(device, run_once, timeout_s, BATCH_S)
    warm_up(run_batch, warmup_s)
    # start the span right after a counter update, so its first reading is not already part-way into a step
    start = sensor.read()
    t_wait = time.perf_counter() + 1.0
    while start is not None and time.perf_counter() < t_wait:
        run_batch()
        r = sensor.read()
        if r is not None and r.energy_mj != start.energy_mj:
            start = r
            break
    if start is None:
        raise RuntimeError(f"the power sensor stopped answering: {getattr(sensor, 'last_error', '')}")
    readings = [start]
    launches = 0
    deadline = start.t + max_span_s
    while True:
        run_batch()
        launches += run_batch.launches
        r = sensor.read()
        if r is None:  # a failed reading: the span still ends at its deadline, never in an endless loop
            if time.perf_counter() > deadline:
                raise RuntimeError(f"the power sensor stopped answering during the span: "
                                   f"{getattr(sensor, 'last_error', '')}")
            continue
        readings.append(r)
        if reached(readings, k_steps):
            break
        if r.t > deadline:
            break
    return energy_of(readings, launches, ops_per_launch, getattr(sensor, "reasons", decode_throttle), k_steps)


#: idle power: wait this long after the last launch finished before reading (the board's 1-s averaged power
#: reading and the counter's last period may still hold the previous kernel's energy) …
IDLE_SETTLE_S = 0.3
#: … then read the idle board for this long (≈ 10 counter updates of a 100-ms counter)
IDLE_SPAN_S = 1.0


@dataclass(frozen=True)
class IdlePower:
    """Board power with nothing launched: a lower bound on the power while any kernel runs (tuning.pareto).

    ``watts`` is the smaller of two readings of the same idle span — the energy counter's rate between its
    first and last update, over the longest interval those updates can be apart (so never overstated by the
    reading gaps), and the lowest of NVML's power-usage readings — so a slow-decaying average of a previous
    kernel's power can only raise one of them."""

    watts: float
    counter_w: float | None  # counter delta / (last update reading − the reading before the first update)
    reading_min_w: float | None  # lowest nvmlDeviceGetPowerUsage reading
    span_s: float
    readings: int
    temperature_c: float

    def info(self) -> dict[str, Any]:
        return {"watts": round(self.watts, 2),
                "counter_w": None if self.counter_w is None else round(self.counter_w, 2),
                "reading_min_w": None if self.reading_min_w is None else round(self.reading_min_w, 2),
                "span_s": round(self.span_s, 3), "readings": self.readings, "temperature_c": self.temperature_c,
                "method": "GPU idle (synchronized, nothing launched): min(energy-counter rate between its first "
                          "and last update over the widest interval they can span, lowest NVML power reading)"}


def idle_floor(readings: Sequence[Reading]) -> IdlePower | None:
    """The idle power of time-ordered readings taken with nothing launched (pure: tests feed readings);
    None without a reading."""
    rs = [r for r in readings if r is not None]
    if not rs:
        return None
    ticks = [k for k in range(1, len(rs)) if rs[k].energy_mj != rs[k - 1].energy_mj]
    counter_w = None
    if len(ticks) >= 2:
        a, b = ticks[0], ticks[-1]
        # update a happened after reading a-1, update b no later than reading b: the delta's periods span at
        # most rs[b].t - rs[a-1].t, so this rate is a lower bound of the counter's power
        width = rs[b].t - rs[a - 1].t
        delta_j = (rs[b].energy_mj - rs[a].energy_mj) / 1000.0
        if width > 0 and delta_j > 0:
            counter_w = delta_j / width
    powers = [r.power_w for r in rs if r.power_w > 0]
    reading_min = min(powers) if powers else None
    candidates = [w for w in (counter_w, reading_min) if w is not None]
    if not candidates:
        return None
    return IdlePower(min(candidates), counter_w, reading_min, rs[-1].t - rs[0].t, len(rs),
                     max(r.temperature_c for r in rs))


def idle_power(device: Any, sensor: Any, span_s: float = IDLE_SPAN_S, settle_s: float = IDLE_SETTLE_S,
               interval_s: float = 0.01, timeout_s: float = 10.0,
               sleep: Callable[[float], None] = time.sleep) -> IdlePower | None:
    """Read ``sensor`` for ``span_s`` with ``device`` idle (synchronized first, then ``settle_s`` of nothing);
    None when the sensor gave no usable reading (the caller then has no floor and must not prune)."""
    device.synchronize(timeout_s)
    sleep(settle_s)
    readings: list[Reading] = []
    t_end = time.perf_counter() + span_s
    while time.perf_counter() < t_end:
        r = sensor.read()
        if r is not None:
            readings.append(r)
        sleep(interval_s)
    return idle_floor(readings)
