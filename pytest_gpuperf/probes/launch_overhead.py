"""Kernel-launch overhead: an empty launch's device time, the host's rate of issuing launches, and the
empty kernel's time against the number of threads launched (Alavani ch. 3.4).

On a GPU every device-timed figure here is one span of :data:`GPU_SPAN_LAUNCHES` back-to-back launches
between one pair of device events, divided by their number (:func:`per_launch_us`), as launch-latency
microbenchmarks read it: one launch of 2–3 µs read alone sits within a few ticks of CUDA's event timer
(0.5 µs documented, 32 ns steps), a span of hundreds resolves each launch to a few ns. CPU devices keep one
launch per span: their bands cover a descheduled worker's slow mode, which batching would not remove.

The grid sweep's line ``l_overhead = a·nB·nT_b + b`` is fitted with Theil–Sen (the median of pairwise
slopes), which one point caught in a CPU device's slow launch mode does not drag; its bands are the
launch families of :mod:`pytest_gpuperf.baselines.catalog`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np
from scipy.stats import theilslopes

from ..baselines.classes import PER_SPAN
from ..devices.base import Device, DeviceInfo, KernelArg, Size
from ..devices.dialect import Dialect, per_language
from ..devices.placement import device_placement
from ..timing.profiles import profile
from ..timing.stats import Stats

EMPTY_NAME = "empty_kernel"


def empty_source(language: Dialect) -> str:
    """The empty kernel of the launch figures in ``language`` (one work-item, one unused argument)."""
    return f"{language.entry} void {EMPTY_NAME}(int x) {{ }}"


HOST_LAUNCHES = 2000  # back-to-back launches per host-timed sample
HOST_SAMPLES = 7
#: back-to-back launches per device-event span on a GPU: the event timer's 0.5 µs is shared by all of them
#: (2.5 ns per launch), while staying far below the launches the driver's queue holds behind the timer's
#: blocking kernel (a span that overfills it would take in the host's launching)
GPU_SPAN_LAUNCHES = 200


def span_launches(info: DeviceInfo) -> int:
    """Launches per device-event span: :data:`GPU_SPAN_LAUNCHES` on a GPU, one on a CPU device."""
    return 1 if info.is_cpu else GPU_SPAN_LAUNCHES


def span_identity(launches: int) -> dict[str, Any]:
    """The identity keys of a figure timed over ``launches`` per span (none for one launch per span, the
    method the older baselines were measured with), so a baseline of another method reads incomparable."""
    return {} if launches == 1 else {"timing": "back-to-back launches per event pair", "launches_per_span": launches}


def per_launch_us(device: Device, measurer: Any, kernel: Any, global_size: Size, local_size: Size | None,
                  args: list[KernelArg], launches: int, **reps: Any) -> Stats:
    """Device time per launch (µs): each sample is one device-event span over ``launches`` back-to-back
    launches (:meth:`Device.launch_many`), divided by their number, so the timer's tick is divided too.
    ``measurer``: ``gpu_measure`` or a bound one (its ``enqueue``); ``reps``: its repeat settings."""
    m = measurer.enqueue(lambda: device.launch_many(kernel, launches, global_size, local_size, args), **reps)
    return m.stats.scaled(1e6 / launches)

#: the gate check's ``launch`` plant (:mod:`pytest_gpuperf.gatecheck.plants`): a launch whose first
#: work-item spins ``n`` dependent integer steps (an LCG, which no compiler folds), per kernel language
SPIN = per_language(
    cuda='extern "C" __global__ void planted_spin(int n, unsigned* sink) {\n'
         "  if (blockIdx.x != 0 || threadIdx.x != 0) return;\n"
         "  unsigned a = 1u;\n  for (int i = 0; i < n; ++i) a = a * 1664525u + 1013904223u;\n"
         "  if (a == 0x2545F491u) sink[0] = a;\n}\n",
    opencl="__kernel void planted_spin(int n, __global uint* sink) {\n"
           "  if (get_global_id(0) != 0) return;\n"
           "  uint a = 1u;\n  for (int i = 0; i < n; ++i) a = a * 1664525u + 1013904223u;\n"
           "  if (a == 0x2545F491u) sink[0] = a;\n}\n",
)
SPIN_NAME = "planted_spin"


@dataclass(frozen=True)
class PlantedSpin:
    """The launch plant's kernel, its spin steps and the extra device time they were calibrated to."""

    kernel: Any
    sink: Any
    steps: int
    extra_s: float
    fraction: float

    def args(self) -> list[Any]:
        return [np.int32(self.steps), self.sink]

    def info(self) -> dict[str, Any]:
        return {"planted_slowdown": self.fraction, "planted_spin_steps": self.steps,
                "planted_extra_us": self.extra_s * 1e6}


def planted_spin(device: Device, fraction: float, launch_s: float, timeout_s: float = 30.0,
                 less_s: float = 0.0) -> PlantedSpin:
    """The ``launch`` plant: a kernel whose first work-item spins for ``fraction`` × ``launch_s`` (the
    unplanted launch's measured device time) — extra work per launch. The cost of one step comes from
    timed launches long enough (≥ 1 ms on CPU devices, ≥ 100 µs on GPUs) that launch jitter is small
    beside them, less a launch that does not spin. ``less_s``: extra time the spin's own launch already
    adds where it is appended to other work (the copy plant), taken off the spin (never below 0 steps)."""
    kernel = device.compile(SPIN[device.info.dialect.name], SPIN_NAME)
    sink = device.empty(4)

    def once(n: int) -> float:
        h = device.timed(lambda: device.launch(kernel, (1,), (1,), [np.int32(n), sink]))
        return device.elapsed(h, timeout_s)

    base = float(np.median([once(0) for _ in range(5)]))
    long_s = 1e-3 if device.info.is_cpu else 1e-4
    n = 1 << 12
    while True:
        spun = float(np.median([once(n) for _ in range(5)])) - base
        if spun >= long_s or n >= 1 << 28:
            break
        n *= 4
    extra = fraction * launch_s
    steps = round(max(extra - less_s, 0.0) * n / max(spun, 1e-9))
    return PlantedSpin(kernel, sink, steps if less_s > 0 else max(1, steps), extra, fraction)


def host_launch_us(device: Device, kernel: Any, args: list[Any], launches: int = HOST_LAUNCHES,
                   samples: int = HOST_SAMPLES, plant: float = 0.0) -> Stats:
    """Host wall time per launch (µs) of ``launches`` back-to-back launches, synchronised before and after
    each sample: the rate at which the runtime can issue work, which device events cannot see. ``plant``:
    the gate check's ``launch`` plant, (1 + ``plant``) × ``launches`` issued per sample, credited as ``launches``."""
    issued = launches + round(launches * plant)
    out = []
    for _ in range(samples):
        device.synchronize()
        t0 = time.perf_counter()
        for _ in range(issued):
            device.launch(kernel, (1,), (1,), args)
        device.synchronize()
        out.append((time.perf_counter() - t0) / launches * 1e6)
    return Stats.of(out)


def empty_records(device: Device, measurer: Any, kernel: Any, plant: float = 0.0, launches: int | None = None
                  ) -> Iterator[dict[str, Any]]:
    """``launch.empty.device_us`` (device time per empty launch of one work-item, :func:`per_launch_us` over
    ``launches`` per span, default :func:`span_launches`) and ``launch.empty.host_us`` (:func:`host_launch_us`,
    informational by its catalog row) as ``gpuperf_record`` arguments, each measured when asked for;
    ``measurer``: the test's ``gpu_measure``. ``plant``: the gate check's ``launch`` plant — the device figure
    is the :func:`planted_spin` launch's, the host figure issues more launches than it counts."""
    n = span_launches(device.info) if launches is None else int(launches)
    arg = [np.int32(0)]
    us = per_launch_us(device, measurer, kernel, (1,), (1,), arg, n)
    info: dict[str, Any] = {PER_SPAN: n}
    if not device.info.is_cpu:
        info["placement"] = device_placement(device.info.extra.get("pci_bus_id"))
    if plant > 0:
        spin = planted_spin(device, plant, us.median * 1e-6)
        us = per_launch_us(device, measurer, spin.kernel, (1,), (1,), spin.args(), n)
        info.update(spin.info())
    yield {"name": "launch.empty.device_us", "value": us.median, "unit": "us", "better": "lower", "stats": us,
           "info": info, "identity": span_identity(n)}
    host = host_launch_us(device, kernel, arg, plant=plant)
    yield {"name": "launch.empty.host_us", "value": host.median, "unit": "us", "better": "lower", "stats": host,
           "info": {"launches_per_sample": HOST_LAUNCHES, "host_timed": True,
                    **({"planted_slowdown": plant} if plant > 0 else {})}}


#: launches captured into one device-side graph (:meth:`Device.launch_graph`): one graph launch per event
#: pair, so no launch queue limits it and the graph's own start is shared by all of them
GRAPH_LAUNCHES = 1000


def graph_identity(launches: int) -> dict[str, Any]:
    """The identity keys of a figure timed as one device-side graph of ``launches`` launches per event pair."""
    return {"timing": "one device-side graph of back-to-back launches per event pair", "launches_per_graph": launches}


def graph_us(device: Device, measurer: Any, kernel: Any, args: list[KernelArg], launches: int,
             global_size: Size = (1,), local_size: Size = (1,)) -> Stats:
    """Device time per launch (µs) inside a graph of ``launches`` launches (one work-item unless a geometry is
    given), each sample one event span over one graph launch, divided by their number."""
    replay = device.launch_graph(kernel, launches, global_size, local_size, args)
    return measurer.enqueue(replay).stats.scaled(1e6 / launches)


#: spin lengths the graph launch plant may try before its spin launch costs at least the planted time in a graph
GRAPH_PLANT_ATTEMPTS = 4


def graph_plant_steps(own_us: Callable[[int], float], target_us: float, start: int,
                      most: int | None = None) -> tuple[int, float]:
    """The spin steps of the graph launch plant and what one spin launch of them costs in a graph beyond an empty
    one (``own_us(steps)``, measured): from ``start`` (the steps calibrated on single launches, at least 1), longer
    — in proportion, then by the cost per step of the last two — until that cost reaches ``target_us`` (at most
    :data:`GRAPH_PLANT_ATTEMPTS` measurements), never past ``most`` steps. A
    spin's cost in a graph is not proportional to its steps near zero — entering the loop at all costs several
    times a step — so the plant measures the cost of the steps it then uses rather than extrapolating. Where the
    spin hides behind a large grid's other work-groups its measured cost is noise near zero, and a step in
    proportion to noise would grow it without bound (a thousand such launches once outlived the watchdog):
    ``most`` is a spin that alone outlasts the whole launch, which no grid hides."""
    cap = None if most is None else max(1, int(most))
    steps = max(1, int(start)) if cap is None else min(max(1, int(start)), cap)
    cost = own_us(steps)
    before: tuple[int, float] | None = None
    for _ in range(GRAPH_PLANT_ATTEMPTS - 1):
        if cost >= target_us or (cap is not None and steps >= cap):
            break
        if before is not None and cost > before[1]:  # the cost of a step, from the last two: past the loop's entry
            per_step = (cost - before[1]) / (steps - before[0])
            nxt = steps + math.ceil(1.1 * (target_us - cost) / per_step)
        else:
            nxt = math.ceil(steps * 1.25 * target_us / cost) if cost > 0 else steps * 4
        before, steps = (steps, cost), max(steps + 1, nxt)
        if cap is not None:
            steps = min(steps, cap)
        cost = own_us(steps)
    return steps, cost


def graph_plant_layout(launches: int, target_us: float, own_us: float) -> frozenset[int]:
    """Which of a graph's ``launches`` launches the launch plant makes spin launches, each costing ``own_us`` more
    than an empty one, so that the mean launch takes ``target_us`` longer: that share of them (at least one, at
    most all), spread evenly."""
    if own_us <= 0:
        return frozenset(range(launches))
    k = max(1, min(launches, round(launches * target_us / own_us)))
    return frozenset(int(j * launches // k) for j in range(k))


def planted_graph_us(device: Device, measurer: Any, kernel: Any, arg: list[KernelArg], us: Stats, plant: float,
                     launches: int, global_size: Size = (1,), local_size: Size = (1,)
                     ) -> tuple[Stats, dict[str, Any]]:
    """The gate check's ``launch`` plant on a graph of ``launches`` launches at one geometry, whose unplanted
    per-launch time is ``us``: :func:`planted_spin` launches (the first work-item spins, the rest return) at the
    same geometry, their cost in a graph measured (:func:`graph_plant_steps`) — at large grids the spin runs
    beside the other work-groups and costs less than alone — and placed among the empty ones
    (:func:`graph_plant_layout`) so the per-launch time grows by ``plant`` × the unplanted one. Returns the
    planted per-launch time and what the plant did."""
    spin = planted_spin(device, plant, us.median * 1e-6)
    target = plant * us.median

    def own(steps: int) -> float:
        spun_us = graph_us(device, measurer, spin.kernel, [np.int32(steps), spin.sink], launches,
                           global_size, local_size).median
        return max(spun_us - us.median, 0.0)

    # a spin that alone lasts the unplanted launch and the target over again is on every grid's critical path
    most = math.ceil(1.25 * spin.steps * (1.0 + 1.0 / plant))
    steps, cost = graph_plant_steps(own, target, spin.steps, most)
    spun = graph_plant_layout(launches, target, cost)
    spin_args = [np.int32(steps), spin.sink]
    seq = [(spin.kernel, spin_args) if i in spun else (kernel, arg) for i in range(launches)]
    planted = measurer.enqueue(device.launch_graph_of(seq, global_size, local_size)).stats.scaled(1e6 / launches)
    return planted, {**spin.info(), "planted_spin_steps": steps, "planted_spun_launches": len(spun),
                     "planted_spin_own_us": cost}


def graph_records(device: Device, measurer: Any, kernel: Any, plant: float = 0.0,
                  launches: int = GRAPH_LAUNCHES) -> Iterator[dict[str, Any]]:
    """``launch.graph.empty.device_us``: the device's own kernel-to-kernel time for empty launches replayed
    from a graph (:func:`graph_us`), where the stream figure (``launch.empty.device_us``) also takes in how
    fast the device fetches each launch's commands from host memory. ``plant``: the gate check's ``launch``
    plant (:func:`planted_graph_us`)."""
    arg: list[KernelArg] = [np.int32(0)]
    us = graph_us(device, measurer, kernel, arg, launches)
    info: dict[str, Any] = {PER_SPAN: launches}  # one event span over the graph: the timer's tick divided by them
    if plant > 0:
        us, planted = planted_graph_us(device, measurer, kernel, arg, us, plant, launches)
        info.update(planted)
    yield {"name": "launch.graph.empty.device_us", "value": us.median, "unit": "us", "better": "lower", "stats": us,
           "info": info, "identity": graph_identity(launches)}


def graph_grid_records(device: Device, measurer: Any, kernel: Any, plant: float = 0.0,
                       launches: int = GRAPH_LAUNCHES) -> Iterator[dict[str, Any]]:
    """``launch.graph.grid.<blocks>x256.device_us``: the empty kernel's device time per launch at every GPU grid
    of :func:`grid_blocks`, each replayed from one graph of ``launches`` launches (:func:`graph_us`). The stream
    sweep's points (``launch.grid.*``) take in how fast the device fetches each launch's commands from host
    memory, which moves from one process to the next; a graph's launches sit in device memory. ``plant``: the
    gate check's ``launch`` plant, on every grid at that grid's geometry (:func:`planted_graph_us`)."""
    local = 256
    arg: list[KernelArg] = [np.int32(0)]
    for b in grid_blocks(device.info.compute_units, False):
        geometry = ((b * local,), (local,))
        us = graph_us(device, measurer, kernel, arg, launches, *geometry)
        info: dict[str, Any] = {PER_SPAN: launches}
        if plant > 0:
            us, planted = planted_graph_us(device, measurer, kernel, arg, us, plant, launches, *geometry)
            info.update(planted)
        yield {"name": f"launch.graph.grid.{b}x{local}.device_us", "value": us.median, "unit": "us",
               "better": "lower", "stats": us, "info": info, "identity": graph_identity(launches)}


def grid_blocks(compute_units: int, is_cpu: bool) -> list[int]:
    """Work-groups per point of the sweep: 1, one per compute unit, and multiples of that. A CPU device's
    point carries a worker wake-up of up to ~20 µs, so its grid reaches thousands of groups per core,
    where the work outweighs it (over a few groups its fit is noise); GPUs go to 256 per SM."""
    mults = (16, 256, 1024, 4096) if is_cpu else (4, 16, 64, 256)
    return [1, compute_units] + [compute_units * k for k in mults]


def launch_intercept(xs: Sequence[float], ys: Sequence[float], slope: float, points: int = 3) -> float:
    """The launch overhead at zero threads: the median of ``y − slope·x`` over the ``points`` smallest
    grids, where the work term is a fraction of a µs. Theil–Sen's own intercept (the median over every
    grid) is dragged by the largest grids' residuals, where a lost core on a CPU host once made it
    negative, an impossible value."""
    order = np.argsort(np.asarray(xs, float))[:points]
    return float(np.median([ys[i] - slope * xs[i] for i in order]))


#: planted sweeps the grid plant may take to bring the fitted intercept to (1 + F) × the unplanted one
GRID_PLANT_ATTEMPTS = 4
#: how close (relative to F) a planted sweep's intercept must come to the target to stop calibrating
GRID_PLANT_CLOSE = 0.1


@dataclass
class _Sweep:
    """One pass over the grids: each point's per-launch stats, the fitted points, slope and intercept."""

    blocks: list[int]
    stats: list[Stats]
    xs: list[int]
    ys: list[float]
    fit: Any
    slope: float
    intercept: float


def _grid_sweep(device: Device, measurer: Any, kernel: Any, args: list[Any], n: int, local: int) -> _Sweep:
    """Every grid of :func:`grid_blocks` timed (:func:`per_launch_us`) and the line fitted through them."""
    info = device.info
    reps = profile("launch_grid", info.is_cpu)
    blocks = grid_blocks(info.compute_units, info.is_cpu)
    stats = [per_launch_us(device, measurer, kernel, (b * local,), (local,), args, n, **reps) for b in blocks]
    xs = [b * local for b in blocks]
    ys = [float(np.percentile(us.samples, 25)) if info.is_cpu else us.median for us in stats]
    fit = theilslopes(np.asarray(ys, float), np.asarray(xs, float))
    a = float(fit.slope)
    b0 = launch_intercept(xs, ys, a) if info.is_cpu else float(fit.intercept)
    return _Sweep(blocks, stats, xs, ys, fit, a, b0)


def planted_grid(device: Device, measurer: Any, kernel: Any, plant: float, n: int, local: int,
                 ) -> tuple[PlantedSpin, dict[str, Any]]:
    """The ``launch`` plant on the grid sweep, calibrated on the figure it targets: the spin of one work-item
    runs beside the grid's other work-groups, so at large grids it hides behind them and a spin of F × the
    smallest grid's time moves the fitted intercept by well under F. So an unplanted sweep is fitted first,
    then the spin is lengthened (or shortened) in proportion to what a planted sweep's intercept moved, until
    the intercept reads (1 + F) × the unplanted one within :data:`GRID_PLANT_CLOSE` × F (at most
    :data:`GRID_PLANT_ATTEMPTS` sweeps) — real extra work per launch, sized by its effect on the intercept.
    The recorded sweep is a fresh one with the spin chosen (never a calibration sweep: no reading is picked)."""
    base = _grid_sweep(device, measurer, kernel, [np.int32(0)], n, local)
    target = plant * base.intercept
    spin = planted_spin(device, plant, base.ys[0] * 1e-6)
    tried: list[dict[str, float]] = []
    for _ in range(GRID_PLANT_ATTEMPTS):
        got = _grid_sweep(device, measurer, spin.kernel, spin.args(), n, local).intercept - base.intercept
        tried.append({"spin_steps": spin.steps, "moved_us": got})
        if target <= 0 or abs(got - target) <= GRID_PLANT_CLOSE * target:
            break
        scale = min(4.0, max(0.25, target / got if got > 0 else 4.0))
        spin = PlantedSpin(spin.kernel, spin.sink, max(1, round(spin.steps * scale)), spin.extra_s * scale,
                           spin.fraction)
    return spin, {"planted_intercept_unplanted_us": base.intercept, "planted_calibration": tried}


def grid_records(device: Device, measurer: Any, kernel: Any, plant: float = 0.0, launches: int | None = None
                 ) -> Iterator[dict[str, Any]]:
    """The empty kernel's device time per launch at every grid of :func:`grid_blocks` (:func:`per_launch_us`
    over ``launches`` per span, default :func:`span_launches`), then the fitted intercept (µs) and slope (ns
    per 1,000 threads), as ``gpuperf_record`` arguments. ``measurer`` times the launches (the probe's bound
    ``gpu_measure``).

    On a CPU device a launch that finds a PoCL worker descheduled reads a slow mode (several times the fast
    one), and a median in that mode pulls the slope; so there each point takes the ``launch_grid``
    profile's many launches and the fit goes through their lower quartile (the device's cost while its
    workers hold the cores), robust while under three launches in four are slowed. GPUs keep the median.

    ``plant``: the gate check's ``launch`` plant — every point launches the :func:`planted_spin` kernel, its
    spin calibrated so that the fitted intercept reads (1 + ``plant``) × the unplanted one (:func:`planted_grid`)."""
    info = device.info
    n = span_launches(info) if launches is None else int(launches)
    local = 64 if info.is_cpu else 256
    point = "q25" if info.is_cpu else "median"
    span = span_identity(n)
    args: list[Any] = [np.int32(0)]
    planted: dict[str, Any] = {}
    if plant > 0:
        spin, calibration = planted_grid(device, measurer, kernel, plant, n, local)
        kernel, args, planted = spin.kernel, spin.args(), {**spin.info(), **calibration}
    sw = _grid_sweep(device, measurer, kernel, args, n, local)
    for b, us in zip(sw.blocks, sw.stats):
        yield {"name": f"launch.grid.{b}x{local}.device_us", "value": us.median, "unit": "us", "better": "lower",
               "stats": us, "info": {PER_SPAN: n}, "identity": span}
    meta = {"threads": sw.xs, "us": sw.ys, "model": "l_overhead = a·nB·nT_b + b (Alavani ch. 3.4)", "fit": "Theil–Sen",
            "point": point, **planted,
            "slope_interval_ns_per_kthread": [float(sw.fit.low_slope) * 1e6, float(sw.fit.high_slope) * 1e6],
            PER_SPAN: n}
    ident = {"fit_point": point, **span} if info.is_cpu else dict(span)
    yield {"name": "launch.overhead.intercept_us", "value": float(sw.intercept), "unit": "us", "better": "lower",
           "info": meta, "identity": {**ident, "intercept": "3 smallest grids"} if info.is_cpu else ident}
    yield {"name": "launch.overhead.slope_ns_per_kthread", "value": float(sw.slope) * 1e6, "unit": "ns/kthread",
           "better": "lower", "info": meta, "identity": ident}
