"""The single timing path: warm up, then repeat device-timed runs until the noise criterion or the
budget is met, and summarise robustly.

``run_once`` is any callable that enqueues device work and returns a timing handle (the value of
``Device.timed``); :func:`measure` waits on it with the watchdog and reads device seconds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from itertools import cycle
from typing import Any, Callable, Sequence, TypeVar

from ..devices.base import Device, Kernel, KernelArg, Size
from ..errors import ImpossibleValueError
from .observers import RETRIES, HostLoad, PowerWatch, TenantWatch, contended
from .stats import Stats

T = TypeVar("T")


@dataclass(frozen=True)
class MeasureConfig:
    """How hard to try. Defaults suit GPU kernels of 10 µs – 100 ms; the CLI can scale them."""

    warmup: int = 3
    min_repeats: int = 10
    max_repeats: int = 200
    target_rel_spread: float = 0.01  # stop when robust CV of the samples falls below this …
    budget_s: float = 2.0  # … or when this much wall time has been spent (after min_repeats)
    timeout_s: float = 10.0  # watchdog per single run


@dataclass(frozen=True)
class Measurement:
    """Samples (device seconds) and their summary; ``converged`` says whether the noise target was met."""

    samples: tuple[float, ...]
    stats: Stats
    converged: bool


def measure(device: Device, run_once: Callable[[], Any], config: MeasureConfig = MeasureConfig(),
            before_each: Callable[[], Any] | None = None) -> Measurement:
    """Time ``run_once`` on ``device`` with warm-up, adaptive repeats and the watchdog.

    ``before_each`` is enqueued untimed before every run, warm-ups included (a cache flush or a
    pre-run that sets the cache state the measurement is about)."""
    prepare = before_each or (lambda: None)
    for _ in range(config.warmup):
        prepare()
        device.elapsed(device.timed(run_once), config.timeout_s)

    def window() -> tuple[list[float], bool]:
        samples: list[float] = []
        start = time.perf_counter()
        while len(samples) < config.max_repeats:
            prepare()
            samples.append(device.elapsed(device.timed(run_once), config.timeout_s))
            if len(samples) >= config.min_repeats:
                if Stats.of(samples).rel_spread <= config.target_rel_spread:
                    return samples, True
                if time.perf_counter() - start > config.budget_s:
                    break
        return samples, False

    samples, converged = _observed(device, window)
    stats = Stats.of(samples)
    resolution = device.info.timer_resolution_s
    if stats.median < resolution:
        raise ImpossibleValueError(
            f"impossible timing: median {stats.median * 1e9:.4g} ns of {len(samples)} runs is below {device.info.name}'s "
            f"timer resolution ({resolution * 1e9:.4g} ns); time more work per run (a longer loop or a larger problem)")
    return Measurement(tuple(samples), stats, converged)


def measure_kernel(device: Device, kernel: Kernel, global_size: Size, local_size: Size | None,
                   arg_sets: Sequence[Sequence[KernelArg]], config: MeasureConfig = MeasureConfig()) -> Measurement:
    """Time one kernel launch; with several ``arg_sets`` the launches rotate among them so repeated runs
    do not all hit a cache that the previous run warmed."""
    if not arg_sets:
        raise ValueError("arg_sets needs at least one argument tuple")
    rotation = cycle(arg_sets)
    return measure(device, lambda: device.launch(kernel, global_size, local_size, next(rotation)), config)


def measure_pair(device: Device, run_a: Callable[[], Any], run_b: Callable[[], Any],
                 config: MeasureConfig = MeasureConfig(), before_each: Callable[[], Any] | None = None
                 ) -> tuple[Measurement, Measurement]:
    """Time two runs *alternately* (A, B, A, B, …) for a figure made from their difference or ratio.

    Every differenced figure — a chain's two sections, a chase's short and long run, the sampled
    model's two points — magnifies a shift of one against the other. Timed as two separate blocks, the
    device's state moving between the blocks (clocks, a CPU host's other tenants, worker threads going
    to sleep) lands in one side only: a chase's long-minus-short difference can come out negative, and a
    small shift between the sampled model's blocks becomes a larger prediction error. Alternating runs see the same state, so a drift moves both alike and cancels."""
    prepare = before_each or (lambda: None)
    for _ in range(config.warmup):
        for run in (run_a, run_b):
            prepare()
            device.elapsed(device.timed(run), config.timeout_s)

    def window() -> tuple[tuple[list[float], list[float]], bool]:
        a: list[float] = []
        b: list[float] = []
        start = time.perf_counter()
        while len(a) < config.max_repeats:
            prepare()
            a.append(device.elapsed(device.timed(run_a), config.timeout_s))
            prepare()
            b.append(device.elapsed(device.timed(run_b), config.timeout_s))
            if len(a) >= config.min_repeats:
                if max(Stats.of(a).rel_spread, Stats.of(b).rel_spread) <= config.target_rel_spread:
                    return (a, b), True
                if time.perf_counter() - start > config.budget_s:
                    break
        return (a, b), False

    (a, b), converged = _observed(device, window)
    return Measurement(tuple(a), Stats.of(a), converged), Measurement(tuple(b), Stats.of(b), converged)


def _observed(device: Device, window: Callable[[], tuple[T, bool]], retries: int = RETRIES) -> tuple[T, bool]:
    """Run one sampling window under the observers; take it again (at most ``retries`` times — the
    decision reads the machine, not the samples) when another process was on the card (any device with
    an NVML sensor) or, on a CPU device, when other work held the host's cores.

    Each window's host load is appended to ``device.observations`` and, where the device has a sensor
    (``Device.power_sensor``), its other processes to ``device.tenant_observations``, for the test's
    metrics; the kept window's board readings go to ``device.power_observations`` (a throttled window is
    kept and marked: the session does not gate it; a discarded window's energy is not the figure's)."""
    load = HostLoad()
    sensor = device.power_sensor()[0]
    for attempt in range(retries + 1):
        watch = PowerWatch(sensor) if sensor is not None else None
        tenants = TenantWatch(sensor) if sensor is not None else None
        load.start()
        if tenants is not None:
            tenants.start()
        if watch is not None:
            watch.start()
        try:
            result = window()
        finally:
            power = watch.stop() if watch is not None else None
        shared_seen = tenants.stop() if tenants is not None else None
        seen = load.stop()
        busy = contended(seen)
        shared = bool(shared_seen and shared_seen["shared"])
        kept = not ((busy and device.info.is_cpu) or shared) or attempt == retries
        if seen is not None:
            # "busy": this window was contended; "contended": its samples are the ones kept regardless
            device.observations.append({**seen.to_json(), "remeasured": int(attempt > 0), "busy": int(busy),
                                        "contended": int(busy and kept)})
        if shared_seen is not None:
            device.tenant_observations.append({**shared_seen, "remeasured": int(attempt > 0),
                                               "contended": int(shared and kept)})
        if kept:
            if power is not None:
                device.power_observations.append(power)
            return result
    raise AssertionError("unreachable")


def observed(device: Device, run: Callable[[], T]) -> T:
    """Run ``run`` — device work timed outside :func:`measure` (a one-pass sweep, say) — under the same
    observers, once: its window's host load, board readings and the card's other processes reach the
    test's metrics like any measurement's (a shared card's window, or a CPU device's contended one, then
    reads ``contended``), but a pass that cannot be repeated cheaply is not taken again."""
    result, _ = _observed(device, lambda: (run(), True), retries=0)
    return result
