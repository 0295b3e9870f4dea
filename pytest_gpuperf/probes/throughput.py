"""Throughput of independent chains at full occupancy (Alavani ch. 3.2: throughput vs ILP).

Every work-item runs ``ilp`` independent copies of the operation's chain (ILP 1..8); the grid fills
every SM (2,048 resident threads per SM on NVIDIA GPUs). The event-timed kernel time and the SM clock
give operations per clock per SM; the clock is *measured* on CUDA (a ``clock64()`` spin timed with
events, right before the probe, since boost clocks move under load, and again after each sweep: a sweep
whose clock moved by a boost step is measured again at the clock read after it) and taken from the
reported maximum on OpenCL. The saturating ILP is the smallest ILP that reaches 90 % of the best rate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..devices.base import Device
from ..timing import observers
from ..timing.stats import Stats
from . import chain, sass_proof
from .build import compile_many, function_sass
from .ops import Op

ILPS = tuple(range(1, 9))
SATURATION = 0.9
#: where a measured clock came from (a ``clock64()`` spin timed by events)
MEASURED = "measured (clock64 spin vs events)"
#: how far the clock read after a sweep may lie from the one its rates were turned into operations per clock
#: with: a boost step of the SM clock (15 MHz at 2 GHz) lies far beyond the spin's own spread
CLOCK_STEP = 0.003
#: how many times a sweep whose clock moved under it is measured again
CLOCK_RETRIES = 2

_SPIN = ('extern "C" __global__ void gp_spin(long long cycles, long long* out) {\n'
         "  long long t0 = clock64(), t;\n  do { t = clock64(); } while (t - t0 < cycles);\n"
         "  out[0] = t - t0;\n}\n")


def measured_clock_mhz(device: Device, measurer: Callable[..., Any], cycles: int = 4_000_000) -> Stats:
    """SM clock in MHz from a ``clock64()`` spin of ``cycles`` timed with device events (CUDA only)."""
    kernel = device.compile(_SPIN, "gp_spin")
    out = device.empty(8)
    m = measurer(kernel, (1,), (1,), [np.int64(cycles), out])
    spun = int(device.to_host(out, np.int64)[0])
    return m.stats.reciprocal(spun / 1e6)


def geometry(device: Device) -> tuple[int, int]:
    """(global, local) work-items for full occupancy: 2,048 threads per SM on GPUs, 64 per core on CPUs."""
    info = device.info
    local = 64 if info.is_cpu else 256
    per_cu = 64 if info.is_cpu else 2048
    return info.compute_units * per_cu, local


@dataclass
class IlpPoint:
    ilp: int
    ops_per_clk_cu: Stats
    iterations: int


def build(device: Device, op: Op, ilps: Sequence[int] = ILPS):
    """All ILP variants of ``op`` in one program; where the device yields SASS (CUDA), prove each loop
    holds ``ilp`` chains."""
    backend = device.info.backend
    pairs = [chain.throughput_kernel(op, backend, "events", k) for k in ilps]
    src = chain.program(backend, [b for b, _ in pairs], op.type == "double", False, op.uses_half(backend))
    kernels = compile_many(device, src, [ck.name for _, ck in pairs])
    evidence = {}
    if device.info.has_sass:
        for _, ck in pairs:
            evidence[ck.name] = sass_proof.verify_throughput(function_sass(kernels[ck.name]), op.sass_for(False),
                                                       chain.TP_UNROLL, ck.ilp,
                                                       sass_proof.per_step(op.heavy, op.ops_per_step),
                                                       f"{op.name} throughput ILP {ck.ilp}")
            evidence[ck.name]["origin"] = device.sass_origin(kernels[ck.name])
    return [(ck, kernels[ck.name]) for _, ck in pairs], evidence


def planted_iterations(n: int, plant: float) -> int:
    """Iterations a throughput launch runs under the gate check's ``throughput`` plant
    (:mod:`pytest_gpuperf.gatecheck.plants`): (1 + ``plant``) × the ``n`` its rate is credited with, so the
    chains execute more operations than they are counted for and the rate reads 1 / (1 + ``plant``)."""
    return n + (max(1, round(n * plant)) if plant > 0 else 0)


def measure(device: Device, measurer: Callable[..., Any], ck: chain.ChainKernel, kernel, clock_mhz: float,
            target_s: float, timeout_s: float = 10.0, plant: float = 0.0) -> IlpPoint:
    """Operations per clock per compute unit for one ILP variant (iterations calibrated to ``target_s``);
    ``plant``: :func:`planted_iterations`."""
    gsize, lsize = geometry(device)
    data = np.asarray(chain.input_values(ck.op, 4 + 2 * ck.ilp + 4),
                      dtype=np.float64 if ck.op.type == "double" else np.float32)
    buf_in, out, cyc = device.to_device(data), device.empty(gsize * 8), device.empty(8 * 4096)
    n = 16
    for _ in range(6):
        h = device.timed(lambda: device.launch(kernel, (gsize,), (lsize,), [buf_in, out, cyc, np.int32(n),
                                                                              np.int32(-7)]))
        t = device.elapsed(h, timeout_s)
        if t >= target_s / 2 or n >= 1 << 22:
            break
        n = int(min(1 << 22, n * min(64.0, max(2.0, target_s / max(t, 1e-7)))))
    m = measurer(kernel, (gsize,), (lsize,), [buf_in, out, cyc, np.int32(planted_iterations(n, plant)), np.int32(-7)])
    ops = gsize * n * chain.TP_UNROLL * ck.ilp * ck.op.ops_per_step
    rate = m.stats.reciprocal(ops / (clock_mhz * 1e6) / device.info.compute_units)
    return IlpPoint(ck.ilp, rate, n)


def saturating_ilp(points: Sequence[IlpPoint], fraction: float = SATURATION) -> int:
    """Smallest ILP whose median rate reaches ``fraction`` of the best (Alavani's saturation point)."""
    best = max(p.ops_per_clk_cu.median for p in points)
    return min(p.ilp for p in points if p.ops_per_clk_cu.median >= fraction * best)


@dataclass(frozen=True)
class SmClock:
    """The clock that turns a rate into operations per clock, where it came from, and the record of the
    measured clock where this call measured it (once per device and module)."""

    mhz: float
    source: str
    records: tuple[dict[str, Any], ...] = ()
    #: what the observers saw while the clock was measured (``timing.observers.inherit``): every rate the
    #: clock turns into operations per clock inherits it, in the later tests that reuse the clock too
    marks: dict[str, Any] = field(default_factory=dict)


class ClockCache:
    """The SM clock measured once per device (by its spec) and reused, so every throughput test of a module
    does not spin the clock again; owned by a fixture, never by a module."""

    def __init__(self) -> None:
        self._measured: dict[str, Stats] = {}
        self._marks: dict[str, dict[str, Any]] = {}
        self._sources: dict[str, frozenset[str]] = {}  # the spin kernel's digest, noted by every later test

    def of(self, device: Device, measurer: Callable[..., Any]) -> SmClock | None:
        """The clock of ``device``: measured with a ``clock64()`` spin where the device has a cycle counter
        (boost clocks move under load), else the reported maximum; None where it reports none."""
        info = device.info
        if not info.clock_counter:
            return None if info.clock_mhz <= 0 else SmClock(info.clock_mhz, "reported maximum")
        first = info.spec not in self._measured
        if first:
            watched = observers.Capture(device)
            self._measured[info.spec], self._sources[info.spec] = device.sources_during(
                lambda: measured_clock_mhz(device, measurer))
            self._marks[info.spec] = observers.inherit(watched)
        else:  # every rate the clock turns into ops per clock depends on the spin kernel that measured it
            device.replay_sources(self._sources[info.spec])
        st = self._measured[info.spec]
        rec = {"name": "clock.sm.measured_mhz", "value": st.median, "unit": "MHz", "better": "bound", "stats": st,
               "bound": info.clock_mhz * 1.02,
               "info": {"method": "clock64() spin timed by CUDA events", "max_mhz": info.clock_mhz}}
        return SmClock(st.median, MEASURED, (rec,) if first else (), self._marks[info.spec])


@dataclass
class Sweep:
    """One operation's rates over the ILP sweep, with the kernels' SASS evidence."""

    op: Op
    clock: SmClock
    points: list[IlpPoint]
    evidence: dict[str, Any]
    kernel_names: list[str]
    is_cpu: bool
    geometry: tuple[int, int]
    plant: float = 0.0  # the gate check's ``throughput`` plant (:func:`planted_iterations`)
    #: the clocks read before and after each measurement of the sweep, where one moved under it (:func:`sweep`)
    clock_readings: tuple[float, ...] = ()

    def _moved(self) -> dict[str, Any]:
        """The clock readings of a sweep measured again because its clock moved (none where it held), and whether
        the last measurement's clock held."""
        if not self.clock_readings:
            return {}
        return {"clock_readings_mhz": [round(r, 3) for r in self.clock_readings],
                "clock_held": steady(self.clock.mhz, self.clock_readings[-1])}

    def records(self) -> Iterator[dict[str, Any]]:
        """The figures as ``gpuperf_record`` arguments: each ILP's rate, the best ILP's rate and the
        saturating ILP (its band, one ILP step, is the catalog's).

        On CPU devices one ILP point switches between two modes run to run (PoCL's worker threads sharing
        or splitting the work-groups halve or double it), so there a per-ILP point gates only where three
        runs agree (``gate: if-stable``) and the best ILP's rate carries the figure."""
        o, clock = self.op, self.clock
        for p, name in zip(self.points, self.kernel_names):
            meta = {"iterations": p.iterations, "sass": self.evidence.get(name), "clock_mhz": clock.mhz,
                    "clock_source": clock.source, **self._moved(), **clock.marks}
            if self.is_cpu:
                meta["gate"] = "if-stable"
            yield {"name": f"throughput.{o.precision}.{o.short}.ilp{p.ilp}.ops_per_clk_sm",
                   "value": p.ops_per_clk_cu.median, "unit": "ops/clk/SM", "better": "higher",
                   "stats": p.ops_per_clk_cu, "info": meta}
        best = max(self.points, key=lambda p: p.ops_per_clk_cu.median)
        gsize, lsize = self.geometry
        yield {"name": o.metric("throughput", "ops_per_clk_sm"), "value": best.ops_per_clk_cu.median,
               "unit": "ops/clk/SM", "better": "higher", "stats": best.ops_per_clk_cu,
               "info": {"best_ilp": best.ilp, "global": gsize, "local": lsize, "clock_mhz": clock.mhz,
                        "clock_source": clock.source, **self._moved(), **clock.marks,
                        **({"planted_slowdown": self.plant} if self.plant > 0 else {}),
                        "note": o.note or "thread-level operations (half2: one per pair)"}}
        yield {"name": f"throughput.{o.precision}.{o.short}.saturating_ilp", "value": saturating_ilp(self.points),
               "unit": "ilp", "better": "lower",
               "info": {"fraction_of_best": SATURATION, "ilps": [p.ilp for p in self.points], **clock.marks}}


def steady(before: float, after: float) -> bool:
    """Whether the clock read after a sweep is the one read before it, within :data:`CLOCK_STEP`."""
    return abs(after / before - 1.0) <= CLOCK_STEP


def sweep(device: Device, measurer: Callable[..., Any], op: Op, clock: SmClock, plant: float = 0.0) -> Sweep:
    """Measure ``op``'s rate at every ILP of the sweep (1..8 on GPUs; 1, 2, 4, 8 on CPU devices), each
    launch calibrated to 2 ms on GPUs and 5 ms on CPU devices, whose launch jitter is larger; ``plant``: the
    gate check's ``throughput`` plant (:func:`planted_iterations`).

    Where the clock is measured (CUDA), it is read again after the sweep: an SM clock may take another boost step
    between the spin and the sweep's kernels (docs/gating.md names the card that does), which would shift every rate
    by that step. A sweep whose clock moved is measured again at the clock
    read after it, up to :data:`CLOCK_RETRIES` times; the readings are kept with the figures."""
    is_cpu = device.info.is_cpu
    built, evidence = build(device, op, ILPS if not is_cpu else (1, 2, 4, 8))
    target = 5e-3 if is_cpu else 2e-3
    points = [measure(device, measurer, ck, k, clock.mhz, target, plant=plant) for ck, k in built]
    readings: list[float] = [clock.mhz]
    if clock.source == MEASURED:
        for _ in range(CLOCK_RETRIES):
            after = measured_clock_mhz(device, measurer).median
            readings.append(after)
            if steady(clock.mhz, after):
                break
            clock = SmClock(after, clock.source, (), clock.marks)
            points = [measure(device, measurer, ck, k, clock.mhz, target, plant=plant) for ck, k in built]
        else:
            readings.append(measured_clock_mhz(device, measurer).median)
    moved = tuple(readings) if not all(steady(readings[0], r) for r in readings) else ()
    return Sweep(op, clock, points, evidence, [ck.name for ck, _ in built], is_cpu, geometry(device), plant, moved)
