"""Sampled kernels and the linear time model (Dao, thesis ch. 2, §2.4–2.5.1).

*Saturation point* ``P_sat``: the number of work-groups one compute unit keeps active at once,
limited by threads, registers, local memory and the block-slot limit (§2.4, "the number of active
work-groups per SM for a given kernel"). One *wave* is ``P_sat × compute units`` work-groups. The
kernel is sampled twice, at ``P_sat1 = 2·P_sat`` and ``P_sat2 = 3·P_sat`` groups per unit (the
thesis: these avoid the warm-up non-linearity of the first groups), and the full run of ``N`` groups
is extrapolated with

    t_linear(N) = t_P1 + (t_P2 − t_P1) / (P2 − P1) × (N − P1)            (thesis, §2.5.1)

where ``P1``/``P2``/``N`` count work-groups over the whole device. Sampling overhead is
``(t_P1 + t_P2) / t_full``: the device time spent sampling relative to the run it predicts.

How a sample runs: the first ``k`` groups of the same kernel (a shorter NDRange). Every corpus
kernel indexes its data from the global id, so those groups do exactly their share of the full run's
work, on both backends, with no global offset (CUDA has none) and no retire-guard in the kernel.
Every timed run (samples and full run) starts from a cold last-level cache (:class:`CacheFlush`),
as the first groups of a real run do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ...baselines.noise import OWN_SE
from ...devices.base import Device, DeviceInfo, Kernel, KernelArg
from ...devices.occupancy import dao_saturation, device_limits
from ...timing.measure import MeasureConfig, Measurement, measure, measure_pair
from ...timing.stats import MAD_TO_SIGMA, Stats

@dataclass(frozen=True)
class Saturation:
    """``p_sat`` groups per compute unit; ``limit`` names what bounds it (for the report)."""

    p_sat: int
    units: int
    limit: str

    @property
    def wave(self) -> int:
        """Work-groups the whole device runs concurrently."""
        return self.p_sat * self.units


def saturation_point(info: DeviceInfo, attributes: Mapping[str, int], local_size: int) -> Saturation:
    """``P_sat`` from occupancy (thesis §2.4). CPU devices: one group per core at a time (PoCL runs a
    work-group as one task on one thread), so ``P_sat = 1``. NVIDIA GPUs: Dao's rules over the device's
    SM limits (:func:`devices.occupancy.dao_saturation`) from the kernel's registers and shared memory
    (CUDA backend attributes; OpenCL reports no register count, so only threads, local memory and block
    slots limit it there). A GPU without an SM table entry raises
    :class:`~pytest_gpuperf.errors.UnsupportedDevice`."""
    if local_size <= 0:
        raise ValueError(f"local size must be positive, got {local_size}")
    units = max(1, int(info.compute_units))
    if info.is_cpu:
        return Saturation(1, units, "cpu: one work-group per core")
    shared = int(attributes.get("shared_size_bytes", attributes.get("local_bytes", 0)))
    p_sat, limit = dao_saturation(device_limits(info), local_size, int(attributes.get("num_regs", 0)), shared,
                                  warp=info.warp_size or 32)
    return Saturation(p_sat, units, limit)


def linear_model(t_p1: float, t_p2: float, p1: int, p2: int, n: int) -> float:
    """Dao's linear model: displacement ``t_P1``, slope ``(t_P2 − t_P1)/(P2 − P1)``, evaluated at ``N``."""
    if p2 <= p1:
        raise ValueError(f"sampling points must increase, got P1={p1}, P2={p2}")
    return t_p1 + (t_p2 - t_p1) / (p2 - p1) * (n - p1)


#: Where the two samples sit, for ``m`` = the plan's ``multiple`` (both spend the same 5m sampled waves,
#: so the same overhead): ``"thesis"`` samples 2m and 3m waves (Dao §2.5.1's 2·P_sat and 3·P_sat, scaled
#: by m); ``"wide"`` keeps the first sample at the thesis' 2 waves and puts the second at 5m − 2 waves.
GEOMETRIES = ("thesis", "wide")
#: The geometry the model suite uses. Why "wide" exists: the prediction extrapolates the slope over
#: A = (N − P1)/(P2 − P1) — for an 800-wave run and m = 5 that is 158× with "thesis" and 38× with
#: "wide" — so the run-to-run noise of the sampled difference t_P2 − t_P1, while the full run is stable,
#: swings one kernel's error four times less with "wide" for the same absolute noise.
GEOMETRY = "thesis"


def sample_waves(multiple: int, geometry: str = "thesis") -> tuple[int, int]:
    """(P1, P2) in waves for ``multiple`` = m and a geometry of :data:`GEOMETRIES`."""
    if multiple < 1:
        raise ValueError(f"the sampling multiple must be at least 1, got {multiple}")
    if geometry == "thesis":
        return 2 * multiple, 3 * multiple
    if geometry == "wide":
        return 2, max(3, 5 * multiple - 2)
    raise ValueError(f"unknown sampling geometry {geometry!r}; known: {', '.join(GEOMETRIES)}")


@dataclass(frozen=True)
class SamplePlan:
    """Where to sample: ``p1``/``p2`` work-groups (:func:`sample_waves` waves) for a run of ``n_groups``."""

    sat: Saturation
    n_groups: int
    local_size: int
    multiple: int = 1  # m: 5m sampled waves in all (Fig. 2.15 varies the sampling point)
    geometry: str = "thesis"

    @property
    def waves(self) -> tuple[int, int]:
        return sample_waves(self.multiple, self.geometry)

    @property
    def p1(self) -> int:
        return self.waves[0] * self.sat.wave

    @property
    def p2(self) -> int:
        return self.waves[1] * self.sat.wave

    @property
    def amplification(self) -> float:
        """(N − P1)/(P2 − P1): how much a shift of t_P2 − t_P1 is magnified in the prediction."""
        return (self.n_groups - self.p1) / (self.p2 - self.p1)

    def check(self) -> None:
        if self.n_groups <= self.p2:
            raise ValueError(f"{self.n_groups} work-groups is not more than the second sampling point "
                             f"{self.p2} ({self.waves[1]} waves of P_sat {self.sat.p_sat} × {self.sat.units} "
                             "units); use a larger problem or there is nothing to predict")


def waves_for_overhead(max_overhead: float, multiple: int = 1) -> int:
    """Smallest run length in waves for which 2m+3m sampled waves cost ≤ ``max_overhead`` of the run
    (assuming linear scaling): ``5m / W ≤ max_overhead``."""
    if not 0 < max_overhead < 1:
        raise ValueError(f"overhead target must be in (0, 1), got {max_overhead}")
    return math.ceil(5 * multiple / max_overhead)


def multiple_for(waves: int, max_overhead: float) -> int:
    """Largest ``m ≥ 1`` whose two samples (2m + 3m waves) stay within ``max_overhead`` of a
    ``waves``-wave run: longer slopes are less sensitive to timer noise at the same overhead."""
    return max(1, int(max_overhead * waves // 5))


@dataclass(frozen=True)
class SampledRun:
    """The three measurements of one kernel and the linear prediction."""

    plan: SamplePlan
    t_p1: Measurement
    t_p2: Measurement
    t_full: Measurement | None

    @property
    def predicted(self) -> float:
        return linear_model(self.t_p1.stats.median, self.t_p2.stats.median, self.plan.p1, self.plan.p2,
                            self.plan.n_groups)

    @property
    def measured(self) -> float:
        if self.t_full is None:
            raise ValueError("the full run was not measured")
        return self.t_full.stats.median

    @property
    def error_rel(self) -> float:
        return abs(self.predicted - self.measured) / self.measured

    @property
    def overhead(self) -> float:
        return (self.t_p1.stats.median + self.t_p2.stats.median) / self.measured

    def noise(self) -> dict[str, float]:
        """What the next run's reader needs to tell a model change from timing noise: each point's
        robust spread and repeats, the sampled difference t_P2 − t_P1 (medians, and the median of the
        alternating pairs' differences), the plan's amplification and the error's standard error
        implied by the pairs' scatter (A · σ(t_P2,i − t_P1,i)/√n / t_full)."""
        d = [b - a for a, b in zip(self.t_p1.samples, self.t_p2.samples)]
        ds = Stats.of(d)
        out = {"t_p1_s": self.t_p1.stats.median, "t_p2_s": self.t_p2.stats.median,
               "t_p1_rel_spread": round(self.t_p1.stats.rel_spread, 5),
               "t_p2_rel_spread": round(self.t_p2.stats.rel_spread, 5), "n_pairs": len(d),
               "diff_s": self.t_p2.stats.median - self.t_p1.stats.median, "paired_diff_s": ds.median,
               "amplification": round(self.plan.amplification, 2)}
        if self.t_full is not None:
            out["full_rel_spread"] = round(self.t_full.stats.rel_spread, 5)
            out[OWN_SE] = (self.plan.amplification * MAD_TO_SIGMA * ds.mad / math.sqrt(len(d))
                               / self.t_full.stats.median)
        return out


class CacheFlush:
    """Evicts the last-level cache between timed runs: a device copy of twice its size (at least
    ``floor`` bytes), enqueued *before* the timed region on the same in-order queue.

    Why: a sample touches only a few waves' data (tens of MiB on a large GPU — inside its L2), so
    repeating it for statistics would time a warm cache, while the sampled groups of a real run (and
    the full run) read cold data: warm samples under-predict streaming kernels.
    """

    def __init__(self, device: Device, floor: int = 64 << 20) -> None:
        self.device = device
        self.nbytes = max(2 * int(device.info.l2_bytes or 0), floor)
        self.src = device.empty(self.nbytes)
        self.dst = device.empty(self.nbytes)

    def __call__(self) -> None:
        self.device.copy(self.dst, self.src, self.nbytes)


def steady_state_flush(device: Device, kernel: Kernel, local_size: int, args: Sequence[KernelArg]) -> Callable[[], None]:
    """An untimed pre-run of *the same kernel* over other buffers (``args``: scratch buffers of at least
    twice the last-level cache, same signature): it evicts the sampled data like :class:`CacheFlush`,
    but leaves the cache in the kernel's own steady state (its mix of clean read lines and dirty
    written lines) instead of a copy's 1:1 mix.

    Why: in a real run the sampled groups follow other groups of the same kernel. After a copy flush,
    kernels that read two arrays and write one sample slower per wave than their full run (they evict the
    copy's dirty lines), while a copy-like kernel samples close to it."""
    n = int(args[-1])
    groups = max(1, n // local_size)

    def run() -> None:
        device.launch(kernel, (groups * local_size,), (local_size,), args)
    return run


def run_groups(device: Device, kernel: Kernel, groups: int, local: int, args: Sequence[KernelArg],
               config: MeasureConfig, flush: Callable[[], None] | None = None) -> Measurement:
    """Time the first ``groups`` work-groups of ``kernel`` (a shorter 1-D NDRange), cold if ``flush``."""
    return measure(device, lambda: device.launch(kernel, (groups * local,), (local,), args), config, before_each=flush)


def run_pair(device: Device, kernel: Kernel, p1: int, p2: int, local: int, args: Sequence[KernelArg],
             config: MeasureConfig, flush: Callable[[], None] | None = None) -> tuple[Measurement, Measurement]:
    """Time the two sampling points *alternately* (P1, P2, P1, P2, …; :func:`measure_pair`), each run
    cold if ``flush``.

    Why: the model extrapolates the slope (t_P2 − t_P1)/(P2 − P1) over (N − P1)/(P2 − P1), some 160× on a
    large GPU, so any shift of one point against the other is magnified; alternating runs see the same
    device state. This alone does not make one kernel's error stable across runs, so the per-kernel errors
    are gated only once baseline runs agree (``verdicts.stability``)."""
    def one(groups: int) -> Callable[[], Any]:
        return lambda: device.launch(kernel, (groups * local,), (local,), args)

    return measure_pair(device, one(p1), one(p2), config, before_each=flush)


def planted_p2(plan: SamplePlan, plant: float) -> int:
    """Work-groups the second sample runs under the gate check's ``model`` plant
    (:mod:`pytest_gpuperf.gatecheck.plants`): ``P2 + plant·(P2 − P1)`` (at most the full run's), while the
    model still credits it with ``P2`` — the sampled slope, so the extrapolated prediction, grows by ``plant``."""
    if plant <= 0:
        return plan.p2
    return min(plan.n_groups, plan.p2 + max(1, round(plant * (plan.p2 - plan.p1))))


def sample(device: Device, kernel: Kernel, plan: SamplePlan, args: Sequence[KernelArg], config: MeasureConfig,
           full: bool = True, flush: Callable[[], None] | None = None, plant: float = 0.0) -> SampledRun:
    """Measure the two sampling points (alternately, :func:`run_pair`) and, for evaluation, the full
    run, each from a cold cache when ``flush`` is given; ``plant``: :func:`planted_p2`."""
    plan.check()
    t1, t2 = run_pair(device, kernel, plan.p1, planted_p2(plan, plant), plan.local_size, args, config, flush)
    tf = run_groups(device, kernel, plan.n_groups, plan.local_size, args, config, flush) if full else None
    return SampledRun(plan, t1, t2, tf)


def describe(plan: SamplePlan) -> dict[str, Any]:
    return {"p_sat": plan.sat.p_sat, "limit": plan.sat.limit, "units": plan.sat.units, "p1_groups": plan.p1,
            "p2_groups": plan.p2, "multiple": plan.multiple, "geometry": plan.geometry,
            "amplification": round(plan.amplification, 2), "n_groups": plan.n_groups, "local_size": plan.local_size}
