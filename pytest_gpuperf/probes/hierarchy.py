"""The memory-hierarchy suite's procedures over the probes of :mod:`.memory`: the probe setup (kernels,
SASS evidence, the clock that turns time into cycles), the pointer-chase sweep with its detected levels,
and latency under load with Alavani's piecewise model (:mod:`.fit`).

Each returns or yields ``gpuperf_record`` arguments; a generator measures each figure when it is asked
for, so a figure is recorded right after its own measurement.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from ..devices.base import Device, DeviceInfo
from ..timing import observers
from ..timing.measure import observed
from ..timing.profiles import profile
from ..timing.stats import Stats
from . import cache_edges, chase_windows, fit, memory
from .bound_measurer import BoundMeasurer
from .throughput import measured_clock_mhz

MiB = 1 << 20
CHASE_STRIDE = 128  # bytes between the chased lines of the gated curve
WIDE_STRIDE = 1024  # the second curve's stride where a device clock makes it cheap (``info`` only)
CLOCK_TIMEOUT_S = 30.0  # watchdog of one clock-timed chase launch


@dataclass
class Probe:
    """This device's memory kernels, their SASS evidence, the clock (MHz) that turns time into cycles and
    where it came from, and ``gpu_measure`` bound to the ``memory_probe`` profile."""

    kernels: dict[str, Any]
    evidence: dict[str, object]
    clock: float
    source: str
    meas: BoundMeasurer


def probe(device: Device, measurer: Any) -> Probe | None:
    """Build the memory kernels and take the clock: measured with a ``clock64()`` spin where the device has
    a cycle counter, else the reported maximum; None where the device reports no clock."""
    info = device.info
    meas = BoundMeasurer(measurer, profile("memory_probe", info.is_cpu))
    kernels, evidence = memory.build(device)
    if info.clock_counter:
        return Probe(kernels, evidence, measured_clock_mhz(device, meas).median, "measured (clock64 spin vs events)",
                     meas)
    if info.clock_mhz <= 0:
        return None
    return Probe(kernels, evidence, info.clock_mhz, "reported maximum", meas)


def cache_bytes(info: DeviceInfo) -> int:
    """The L2 size the sweeps reach past: NVIDIA's OpenCL reports 4 MiB for the H100's 50 MiB L2, so at
    least 64 MiB on a GPU whose reported size is unreliable; a CPU's, clamped to 2–16 MiB."""
    if info.is_cpu:
        return int(min(max(info.l2_bytes, 2 * MiB), 16 * MiB))
    return max(info.l2_bytes, info.l2_bytes if info.l2_bytes_reliable else 64 * MiB)


def warm_pass_limit(cache: int) -> int:
    """The largest footprint a chase warms up before it is timed: past twice the cache every access misses
    anyway, so those are chased cold (and only bound the curve, :func:`memory.levels`)."""
    return 2 * cache


@dataclass
class ChaseSweep:
    """The pointer chase's latency-vs-footprint curves (per stride), the gated curve's samples per
    footprint, and the cache levels detected on it."""

    probe: Probe
    cache: int
    clock_counter: bool
    is_cpu: bool
    curves: dict[int, list[tuple[int, float]]]
    samples_at: dict[int, list[float]]
    levels: list[memory.Level]
    #: each named level's edge chased on the fine grid (:mod:`.cache_edges`), by level name
    edges: dict[str, cache_edges.Refinement] = field(default_factory=dict)
    plant: float = 0.0  # the gate check's ``chase`` plant (:func:`memory.planted_long`)

    @property
    def main(self) -> list[tuple[int, float]]:
        return self.curves[CHASE_STRIDE]

    def meta(self) -> dict[str, Any]:
        """The curves, the clock and the detected levels: the level figures' ``info``."""
        p = self.probe
        out = {"clock_mhz": p.clock, "clock_source": p.source, "timing": "clock64" if self.clock_counter else "events",
               "curve_stride128": self.main, "levels": [vars(x) for x in self.levels],
               "edges": {name: r.to_json() for name, r in self.edges.items()},
               "sass": p.evidence.get("gp_chase"), **({"planted_slowdown": self.plant} if self.plant > 0 else {})}
        for stride in sorted(self.curves)[1:]:
            out[f"curve_stride{stride}"] = self.curves[stride]
        return out

    def anchor(self, device: Device, footprint: int) -> tuple[list[float], dict[str, int], dict[str, Any]]:
        """One gated footprint's samples, identity and what its ``info`` adds: an event-timed CPU device's
        pairs pooled over several windows (:func:`chase_windows.pooled`, its noise is the host's
        neighbours'); otherwise :func:`memory.anchor_figure` (a device clock's allocations, a GPU's event
        samples), with nothing added."""
        p = self.probe
        kernel, warm_limit = p.kernels["gp_chase"], warm_pass_limit(self.cache)
        if self.is_cpu and not self.clock_counter:
            pool = chase_windows.pooled(lambda: memory.chase_events(device, p.meas, kernel, footprint, CHASE_STRIDE,
                                                                    warm_limit, p.clock, self.plant),
                                        self.samples_at[footprint])
            return pool.samples, {}, pool.info()
        xs, identity = observed(device, lambda: memory.anchor_figure(device, kernel, footprint, CHASE_STRIDE, warm_limit,
                                                                     CLOCK_TIMEOUT_S, self.samples_at[footprint],
                                                                     plant=self.plant))
        return xs, identity, {}

    def records(self, device: Device) -> Iterator[dict[str, Any]]:
        """The gated figures as ``gpuperf_record`` arguments: the chase latency at the fixed footprints
        (:func:`memory.anchors`, each measured further when asked for, :meth:`anchor`: over separate
        allocations with a device clock, over several paired windows on a CPU device), then each named
        level's latency and, on GPUs, its size (the catalog's one-grid-step band).

        A level's latency is the median of its plateau's footprints, with no samples of its own (pooling
        the footprints' samples would measure the plateau's slope, not the figure's noise), so it is judged
        over runs. A CPU's L1 boundary moves between runs on a loaded host, so there its size stays in
        ``info``; GPUs detect it reproducibly and gate it."""
        p = self.probe
        for f in memory.anchors([x for x, _ in self.main], self.is_cpu):
            xs, identity, windows = self.anchor(device, f)
            st = Stats.of(xs)
            yield {"name": f"memory.chase.{memory.footprint_label(f)}.latency.cycles", "value": st.median,
                   "unit": "cycles", "better": "lower", "stats": st, "identity": identity,
                   "info": {"footprint_bytes": f, "stride_bytes": CHASE_STRIDE, "sass": p.evidence.get("gp_chase"),
                            **windows, **({"planted_slowdown": self.plant} if self.plant > 0 else {})}}
        meta = self.meta()
        for level in memory.recorded_levels(self.levels, self.is_cpu):
            estimate = "warmed plateau median" if level.name == "dram" else "plateau median"
            yield {"name": f"memory.{level.name}.latency.cycles", "value": level.latency, "unit": "cycles",
                   "better": "lower", "info": meta, "identity": {"estimate": estimate}}
            if level.name != "dram" and not self.is_cpu:  # a step of the chase's curve: it inherits the chase's marks
                yield self.size_record(level, meta, observers.inherit(device))

    def size_record(self, level: memory.Level, meta: dict[str, Any], marks: dict[str, Any] | None = None
                    ) -> dict[str, Any]:
        """``memory.<level>.size.bytes``: the edge found on the fine grid (:mod:`.cache_edges`), or, where the
        fine chase found no crossing, the sweep's own size under an identity that says so; ``marks``: what the
        chases it was read from saw (:func:`observers.inherit`), which it inherits."""
        r = self.edges.get(level.name)
        fine = r is not None and r.size is not None
        grid = (f"{2 * (cache_edges.EDGE_POINTS + 1)} footprints per doubling across the edge" if fine
                else "2 footprints per doubling")
        return {"name": f"memory.{level.name}.size.bytes", "value": r.size if fine else level.size, "unit": "bytes",
                "better": "exact", "identity": {"edge": grid},
                "info": {"grid": grid, "levels": meta["levels"], "edge": r.to_json() if r is not None else None,
                         **(marks or {})}}


def chase_sweep(device: Device, p: Probe, plant: float = 0.0) -> ChaseSweep:
    """Chase footprints 1 KiB … 4 × :func:`cache_bytes` (two per doubling) at a 128-byte stride, and at
    1 KiB too where the device clock makes it cheap; clock-timed on CUDA, event-timed elsewhere. ``plant``:
    the gate check's ``chase`` plant, in every chase of the sweep (:func:`memory.planted_long`)."""
    info = device.info
    cache = cache_bytes(info)
    warm_limit = warm_pass_limit(cache)
    sizes = memory.footprints(1024, 4 * cache)
    strides = (CHASE_STRIDE, WIDE_STRIDE) if info.clock_counter else (CHASE_STRIDE,)
    curves: dict[int, list[tuple[int, float]]] = {}
    samples_at: dict[int, list[float]] = {}
    for stride in strides:
        pts = []
        for f in sizes:
            if f < 2 * stride:
                continue
            if info.clock_counter:  # one launch, timed by the device clock: watched like any measurement
                s = observed(device, lambda f=f, stride=stride: memory.chase_clock(device, p.kernels["gp_chase"], f, stride,
                                                                                   warm_limit, CLOCK_TIMEOUT_S, plant=plant))
            else:
                s = memory.chase_events(device, p.meas, p.kernels["gp_chase"], f, stride, warm_limit, p.clock, plant)
            pts.append((f, float(np.median(s))))
            if stride == CHASE_STRIDE:
                samples_at[f] = s
        curves[stride] = pts
    main = curves[CHASE_STRIDE]
    lv = memory.levels([x for x, _ in main], [y for _, y in main], warm_limit=warm_limit)

    def chase(f: int) -> float:
        """One fine footprint's latency, measured as the sweep measured its own (the plant included)."""
        if info.clock_counter:  # watched like the sweep's own chases
            return float(np.median(observed(device, lambda: memory.chase_clock(device, p.kernels["gp_chase"], f,
                                                                               CHASE_STRIDE, warm_limit,
                                                                               CLOCK_TIMEOUT_S, plant=plant))))
        return float(np.median(memory.chase_events(device, p.meas, p.kernels["gp_chase"], f, CHASE_STRIDE, warm_limit,
                                                   p.clock, plant)))

    named = [x.name for x in memory.recorded_levels(lv, info.is_cpu)]
    edges = cache_edges.refine(lv, main, named, chase, granule=CHASE_STRIDE)
    return ChaseSweep(p, cache, info.clock_counter, info.is_cpu, curves, samples_at, lv, edges, plant)


def loaded_records(device: Device, p: Probe) -> Iterator[dict[str, Any]]:
    """Per-access global latency as the number of chasing threads (outstanding requests) grows, over one
    chain of min(4 × :func:`cache_bytes`, 256 MiB): the ends of the curve (one thread, every resident
    thread) over separate allocations, each measured when asked for, and the piecewise-linear model's R²
    (its band, the catalog's, is wider on CPU devices, where one jittery point lowers the fit)."""
    info = device.info
    cache = cache_bytes(info)
    foot = min(4 * cache, 256 * MiB)
    arr = memory.chase_array(foot, CHASE_STRIDE)
    buf, out = device.to_device(arr), device.empty(8)
    full = info.compute_units * (64 if info.is_cpu else 2048)
    counts = [1, 32] + [1 << k for k in range(6, 20) if (1 << k) < full] + [full]
    steps = 16 if info.is_cpu else 64
    kernel = p.kernels["gp_loaded_chase"]
    xs: list[int] = []
    ys: list[float] = []
    stats: dict[int, Stats] = {}
    for t in counts:
        local = min(256 if not info.is_cpu else 64, t)
        if t % local:
            continue
        stats[t] = memory.loaded_chase(p.meas, kernel, buf, out, arr.size, foot, t, local, steps, p.clock)
        xs.append(t)
        ys.append(stats[t].median)
    model = fit.piecewise_linear(xs, ys, max_segments=4, min_points=3)
    meta = {"threads": xs, "cycles": ys, "piecewise_fit": model.to_json(), "footprint_bytes": foot,
            "clock_mhz": p.clock, "clock_source": p.source,
            "model": "L = a·(nT_b·nB) + b per interval (Alavani thesis Table 3.3)"}
    for name, t in (("unloaded", xs[0]), ("loaded", xs[-1])):
        per, identity = memory.loaded_allocations(device, p.meas, kernel, out, foot, t,
                                                  min(256 if not info.is_cpu else 64, t), steps, p.clock, stats[t])
        st = Stats.of(per)
        yield {"name": f"memory.global.latency.{name}.cycles", "value": st.median, "unit": "cycles", "better": "lower",
               "stats": st, "identity": identity, "info": meta if name == "unloaded" else {"threads": t}}
    yield {"name": "memory.global.latency_model.r2", "value": model.r2, "unit": "R²", "better": "higher", "info": meta}
