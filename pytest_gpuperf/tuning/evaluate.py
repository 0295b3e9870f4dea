"""One evaluation path for every strategy: compile a configuration, time it with
:func:`pytest_gpuperf.timing.measure`, remember the result.

A configuration is a work-group shape of the original kernel, or a merge factor C of the
workload-transformed kernel. Each configuration is measured once per session; strategies "evaluate"
it through :class:`Evaluator`, which charges the strategy for the evaluation (count and host seconds
spent compiling and timing it) the first time *that strategy* asks. So exhaustive search, random
search, the thesis tuner, the static pruner and Kernel Tuner's strategies (replayed in its simulation
mode from the same table, :mod:`.ktsim`) all see the same numbers and pay the same price per point.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..devices.base import Device, Kernel
from ..timing.energy import K_STEPS, steady_state_energy
from ..timing.measure import MeasureConfig, measure
from . import workload
from .kernels import Benchmark, Prepared
from ..devices.dialect import portable
from .pareto import check_objective, pareto_front, score

Local = tuple[int, ...]


@dataclass(frozen=True, order=True)
class Config:
    """``variant`` "" = original kernel at ``local``; "wl" = transformed kernel with C = ``local[1]``."""

    local: Local
    variant: str = ""

    def label(self) -> str:
        shape = "x".join(str(v) for v in self.local)
        return f"wl:{shape}" if self.variant else shape


@dataclass
class Point:
    time_s: float  # median device seconds
    spread: float  # robust relative spread of the samples
    cost_s: float  # host seconds to compile + time this configuration
    energy_j: float | None = None  # joules per launch at steady state, where the device has a power sensor
    watts: float | None = None
    throttled: bool = False  # the card slowed itself down while the energy was measured


@dataclass
class Ledger:
    """What one strategy paid: configurations it evaluated, in order, and the stage that first asked for
    each (``stage`` is set by the strategy as it moves from one filter to the next), so a tuner's cost
    can be read per filter — where the evaluations go is what a cheaper tuner has to change."""

    visited: list[Config] = field(default_factory=list)
    stage: str = "search"
    stages: dict[Config, str] = field(default_factory=dict)

    def charge(self, cfg: Config) -> None:
        if cfg not in self.visited:
            self.visited.append(cfg)
            self.stages[cfg] = self.stage

    def by_stage(self) -> dict[str, int]:
        """Evaluations per stage, in the order the stages first charged."""
        out: dict[str, int] = {}
        for cfg in self.visited:
            stage = self.stages.get(cfg, "search")
            out[stage] = out.get(stage, 0) + 1
        return out


class Evaluator:
    """Times configurations of one benchmark on one device; shared by all strategies."""

    def __init__(self, device: Device, bench: Benchmark, sizes: dict[str, int], config: MeasureConfig,
                 seed: int = 0) -> None:
        self.device = device
        self.bench = bench
        self.sizes = sizes
        self.config = config
        self.rng = np.random.default_rng(seed)
        self.prepared: Prepared = bench.prepare(device, self.rng, sizes)
        # the kernel's figures depend on the text its configurations are generated from: noted once here,
        # while the configurations themselves (which ones a tuning run compiles depends on its cache) are not
        device.note_source(portable(bench.source, device.info.backend), bench.extra_options)
        self.points: dict[Config, Point] = {}
        self.warp = int(device.info.warp_size or 1)
        # Build options every configuration gets (e.g. -cl-nv-maxrregcount, see limits.resolve).
        self.extra_options: tuple[str, ...] = ()
        self.on_point: Callable[[int], None] | None = None  # called with len(points) after each new point
        #: what the strategies minimise (:mod:`.pareto`): "time", "energy" or "both" (energy-delay product)
        self.objective = "time"
        #: the power sensor energy is read from (set by :meth:`set_objective`, or by a caller that wants the
        #: energy of every point recorded while tuning for time); None → points carry no energy
        self.sensor: Any = None
        #: energy loop of each point: the power metrics' count (``timing.energy.K_STEPS``, a 0.6–1.9 % bound),
        #: a shorter warm-up — the points run back to back, the card is already warm
        self.energy_k_steps = K_STEPS
        self.energy_warmup_s = 0.2

    def set_objective(self, objective: str) -> None:
        """Minimise ``objective``; "energy" and "both" need the device's power sensor (ValueError with the
        reason where there is none)."""
        check_objective(objective)
        if objective != "time" and self.sensor is None:
            sensor, why = self.device.power_sensor()
            if sensor is None:
                raise ValueError(f"tuning objective {objective!r} needs energy readings: {why}")
            self.sensor = sensor
        self.objective = objective

    # ------------------------------------------------------------------ compile / launch geometry
    def kernel(self, cfg: Config) -> Kernel:
        src, opts = self.source_options(cfg)
        with self.device.unnoted():  # a configuration of the kernel noted in __init__
            return self.device.compile(src, self.bench.kernel, opts)

    def source_options(self, cfg: Config) -> tuple[str, tuple[str, ...]]:
        backend = self.device.info.backend
        if cfg.variant == "wl":
            src = workload.transform(self.bench.source, self.warp, int(cfg.local[1]))
            return portable(src, backend), self.bench.options((self.warp,)) + self.extra_options
        return portable(self.bench.source, backend), self.bench.options(cfg.local) + self.extra_options

    def geometry(self, cfg: Config) -> tuple[Local, Local, int]:
        """(global, local, launched groups as the kernel sees them)."""
        if cfg.variant == "wl":
            vg = self.virtual_groups()
            return workload.transformed_launch(vg, self.warp, int(cfg.local[1]))
        glob = self.bench.ndrange(self.sizes, cfg.local, self.device)
        return glob, cfg.local, int(np.prod([g // l for g, l in zip(glob, cfg.local)]))

    def virtual_groups(self) -> int:
        if self.bench.groups is None:
            raise ValueError(f"{self.bench.name}: the workload transformation needs a fixed work-group count")
        return int(self.bench.groups(self.sizes, self.device))

    # ------------------------------------------------------------------ timing
    def measure(self, cfg: Config) -> Point:
        """Measure ``cfg`` once per session (compile + warm-up + adaptive repeats)."""
        if cfg in self.points:
            return self.points[cfg]
        t0 = time.perf_counter()
        k = self.kernel(cfg)
        glob, loc, _ = self.geometry(cfg)
        args = self.prepared.args()
        m = measure(self.device, lambda: self.device.launch(k, glob, loc, args), self.config)
        point = Point(m.stats.median, m.stats.rel_spread, time.perf_counter() - t0)
        if self.sensor is not None:
            self._add_energy(point, self.sensor, lambda: self.device.launch(k, glob, loc, args))
        self.points[cfg] = point
        if self.on_point is not None:
            self.on_point(len(self.points))
        return point

    def measure_energy(self, cfg: Config, sensor: Any) -> Point:
        """``cfg``'s point (timed first where it is not) with its steady-state energy on ``sensor``: for a
        caller that chooses which configurations get the expensive energy loop (``tuning.pareto``)."""
        point = self.measure(cfg)
        if point.energy_j is None:
            k = self.kernel(cfg)
            glob, loc, _ = self.geometry(cfg)
            args = self.prepared.args()
            self._add_energy(point, sensor, lambda: self.device.launch(k, glob, loc, args))
        return point

    def _add_energy(self, point: Point, sensor: Any, launch: Callable[[], Any]) -> None:
        """The energy loop of one point (``timing.energy.steady_state_energy`` with this evaluator's count and
        warm-up); its seconds are charged to the point's cost."""
        t0 = time.perf_counter()
        e = steady_state_energy(self.device, sensor, launch, 1.0, self.config.timeout_s,
                                warmup_s=self.energy_warmup_s, k_steps=self.energy_k_steps)
        point.energy_j, point.watts, point.throttled = e.joules_per_launch, e.watts, e.throttled
        point.cost_s += time.perf_counter() - t0

    def evaluate(self, cfg: Config, ledger: Ledger) -> float:
        """The strategies' single entry point: charge ``ledger`` and return the value they minimise — the
        median seconds under the default objective, else the energy or the energy-delay product."""
        ledger.charge(cfg)
        p = self.measure(cfg)
        return score(p.time_s, p.energy_j, self.objective)

    def front(self) -> list[Config]:
        """The Pareto front (time, energy) of the configurations measured so far with an energy."""
        return pareto_front({c: (p.time_s, p.energy_j) for c, p in self.points.items() if p.energy_j is not None})

    def cost(self, ledger: Ledger) -> tuple[int, float]:
        """(evaluations, host seconds) a strategy spent."""
        return len(ledger.visited), sum(self.measure(c).cost_s for c in ledger.visited)

    def device_cost(self, ledger: Ledger) -> float:
        """Kernel execution time of one run of each configuration the strategy visited — the thesis'
        tuning-cost measure (Dao §3.6.2: profiling time, normalised to an exhaustive search that
        executes every work-group size once). Host overheads (compiles, repeats) are left out."""
        return sum(self.measure(c).time_s for c in ledger.visited)

    def remeasure(self, configs: list[Config], rounds: int = 3) -> dict[Config, float]:
        """Final, interleaved re-timing of the chosen configurations (quality = ratio of these), so
        a quality ratio compares two times taken under the same conditions."""
        kernels = {c: (self.kernel(c), *self.geometry(c)[:2]) for c in configs}
        args = self.prepared.args()
        times: dict[Config, list[float]] = {c: [] for c in configs}
        cfg = dataclasses.replace(self.config, warmup=1)
        for _ in range(rounds):
            for c, (k, glob, loc) in kernels.items():
                m = measure(self.device, lambda k=k, glob=glob, loc=loc: self.device.launch(k, glob, loc, args), cfg)
                times[c].append(m.stats.median)
        return {c: float(np.median(v)) for c, v in times.items()}

    # ------------------------------------------------------------------ correctness
    def verify(self, cfg: Config, seed: int) -> None:
        """Run ``cfg`` once on fresh random inputs and compare with NumPy (raises AssertionError)."""
        rng = np.random.default_rng(seed)
        p = self.bench.prepare(self.device, rng, self.sizes)
        k = self.kernel(cfg)
        glob, loc, groups = self.geometry(cfg)
        p.host["launched_groups"] = groups
        self.device.launch(k, glob, loc, p.args())
        self.device.synchronize()
        try:
            self.bench.check(self.device, p, cfg.local)
        except AssertionError as exc:
            raise AssertionError(f"{self.bench.name} at {cfg.label()}: {exc}") from None
