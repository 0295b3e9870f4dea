"""Alavani's resource-reservation scheduler (thesis §4.4.2–4.4.5): Algorithms 6–8, the memory
penalties (Eq. 4.10, 4.11) and the kernel launch overhead (§3.4), giving

    d_total = d_kernel + l_overhead + gm_penalty + sm_penalty            (Eq. 4.8)
    t_kernel = d_total / v_gpu                                           (Eq. 4.9)

    d_total = d_kernel + l_overhead + gm_penalty + sm_penalty + cm_penalty (Eq. 4.8, full form)

The launch overhead and penalties are times here (seconds), converted at the clock, because they
come from our own dynamic analysis on the device (:class:`Calibration`), not from cycle counts.
The global and shared penalties are Eq. 4.10/4.11 as printed (and repeated as Eq. 5.3/5.4): one access
of ``access_sz`` bytes per ``R[LSU]`` threads (per ``R[LSU]·nSM`` threads for shared memory) at the
whole device's fitted throughput — :func:`global_penalty_s`, :func:`shared_penalty_s` (charging *every*
thread's bytes would count the penalty ``R[LSU]`` times over, on top of the scheduled delay, which already
holds each global access for ``L(gm) + ⌈nTW/R[LSU]⌉ − 1`` cycles per wave).
The cache-miss penalty is the thesis' parameterised Eq. 4.12 (§4.4.5.4): the global accesses of the
whole launch, divided by how many accesses of the kernel's mean size fit in ``waves × L2_sz``, times
the global-memory latency ``L(gm)``, in cycles. ``L(gm)`` is one value per launch, ``LatencyTable.of`` at
the launch's ``nB·nT_b`` threads — the device's fitted §3.3.3 model where measured — and the same value
the scheduler charges each global access (Alg. 6), as the thesis does with Table 3.3.

Deviations, each because the thesis' text is ambiguous or would be wrong on its own terms:

* Algorithm 6 returns the *latest finish* over the block's nodes (the thesis' line 13 assigns the
  last node's finish, which equals it for the single-sink graphs it illustrates).
* Algorithm 7 applies ``nLoop`` to every block of a natural loop (compiled PTX splits loop bodies),
  via :meth:`Cfg.multipliers`; loop trip counts are user input, as in the thesis (§4.4.1).
* Algorithm 8 subtracts the threads actually scheduled per wave (``nTh_sm``) rather than the
  hardware maximum, so occupancy-limited kernels get the right number of waves, and the last wave
  schedules only the threads left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import networkx as nx
import numpy as np

from .cfg import Block, Cfg
from .ptx_latency import LatencyTable
from .ptx import Instruction
from ...devices.architectures import ARCHITECTURES, REFERENCE
from ...devices.occupancy import alavani_threads_per_sm, sm_limits


def units_per_sm(cc: str) -> Mapping[str, int]:
    """Functional units per SM of compute capability ``cc`` (:data:`ARCHITECTURES`' ``units``: SP, INT, DP,
    SFU, LSU and ``M``, one warp-wide dispatch per partition per cycle for moves, branches, barriers and
    parameter loads); the reference architecture's (Hopper) where the table has none for ``cc``."""
    for arch in (ARCHITECTURES.get(cc), ARCHITECTURES[REFERENCE]):
        if arch is not None and arch.units is not None:
            return arch.units
    raise AssertionError(f"the reference architecture {REFERENCE} lacks its functional units")


L_PIPELINE = 1  # "we assume the latency of v is 1 when it is perfectly pipelined" (§4.4.4.2)


def resource_of(klass: str) -> str:
    """``R_map``: the unit an instruction class occupies."""
    if klass.startswith(("ld.", "st.", "atom.")) and klass != "ld.param":
        return "LSU"
    if klass in ("addf", "mulf", "fma"):
        return "SP"
    if klass.startswith("d") and klass not in ("divs", "divf"):
        return "DP"
    if klass in ("div64", "sqrt64"):
        return "DP"
    if klass in ("sfu", "sqrt", "divf"):
        return "SFU"
    if klass in ("adds", "mul", "mads", "and", "setp", "cvt", "divs", "other"):
        return "INT"
    return "M"


def _batches(n_threads: int, units: int) -> int:
    return max(1, math.ceil(n_threads / units))


class _Reservations:
    """``Rsv``: per resource, the busy intervals [start, end), kept sorted."""

    def __init__(self) -> None:
        self.busy: dict[str, list[tuple[float, float]]] = {}

    def earliest(self, res: str, t: float, d: float) -> float:
        """Smallest ``t1 ≥ t`` with ``[t1, t1 + d)`` free on ``res`` (Algorithm 6, line 9)."""
        t1 = t
        for s, e in self.busy.get(res, []):
            if e <= t1:
                continue
            if s >= t1 + d:
                break
            t1 = e
        return t1

    def reserve(self, res: str, t1: float, d: float) -> None:
        lst = self.busy.setdefault(res, [])
        lst.append((t1, t1 + d))
        lst.sort()


#: The variants :func:`predict` offers: the thesis' Algorithm 6; "issue", Algorithm 6 with issue-rate
#: reservations (:func:`schedule_block`); "hopper", the Hopper model (:func:`predict_hopper`); and
#: "launch_once", the Hopper model with its memory stream at the throughput net of the launch overhead
#: (:attr:`Calibration.global_tp_net`), so a launch's fixed cost is paid once.
VARIANTS = ("thesis", "issue", "hopper", "launch_once")
#: the variants :func:`schedule_block` itself knows ("hopper" schedules one warp with "issue")
BLOCK_VARIANTS = ("thesis", "issue")


def issue_resource(klass: str) -> str:
    """The unit an instruction issues on in the "issue" variant: as :func:`resource_of`, except that
    integer multiply(-add) has its own rate — on sm_90 IMAD issues at about half IADD3's rate (the
    ``throughput.int32.{add,mad}`` probes), where the thesis' table has one INT rate."""
    if klass in ("mads", "mul"):
        return "INTMAD"
    return resource_of(klass)


#: throughput probe metric → issue resource (ops/clk/SM), for :func:`issue_rates`
RATE_METRICS: Mapping[str, str] = {
    "SP": "throughput.fp32.fma.ops_per_clk_sm", "INT": "throughput.int32.add.ops_per_clk_sm",
    "INTMAD": "throughput.int32.mad.ops_per_clk_sm", "DP": "throughput.fp64.fma.ops_per_clk_sm",
    "SFU": "throughput.fp32.rsqrt.ops_per_clk_sm"}


def issue_rates(measured: Mapping[str, float], cc: str = "9.0") -> tuple[dict[str, float], dict[str, str]]:
    """Per-unit issue rates (threads per cycle per SM) for the "issue" variant: the device's measured
    throughput (``measured``: metric name → ops/clk/SM) where probed, else the unit count of the
    architecture table; and where each came from."""
    units = units_per_sm(cc)
    rates: dict[str, float] = {k: float(v) for k, v in units.items()}
    rates["INTMAD"] = float(units["INT"])
    sources = {k: f"unit count ({cc} table)" for k in rates}
    for res, name in RATE_METRICS.items():
        value = measured.get(name)
        if value is not None and value > 0:
            rates[res], sources[res] = float(value), f"measured: {name}"
    return rates, sources


def rates_origin(sources: Mapping[str, str]) -> str:
    """Where a set of :func:`issue_rates` came from, in one word for a metric's identity: ``measured``
    (every unit that has a probe, :data:`RATE_METRICS`, was probed this session), ``table`` (none: the
    latency suite did not run), or how many were. The issue variant's figures move with it, so runs that
    differ here are incomparable, not regressions."""
    measured = sum(1 for unit in RATE_METRICS if sources.get(unit, "").startswith("measured"))
    return "measured" if measured == len(RATE_METRICS) else "table" if measured == 0 else \
        f"measured {measured} of {len(RATE_METRICS)}"


def schedule_block(block: Block, lat: Callable[[Instruction], float], units: Mapping[str, float], ntw: int,
                   variant: str = "thesis") -> float:
    """Algorithm 6: list-schedule the block's data-flow graph under precedence and resource constraints;
    returns the block's delay in cycles for ``ntw`` threads of one SM.

    ``variant="thesis"``: an instruction holds its unit for its whole latency plus one cycle per extra
    batch of ``units[R]`` threads (Alg. 6 as printed) — so two independent global loads of a wave
    queue one behind the other for ~L(gm) each. ``variant="issue"`` (Hopper): the unit is
    busy only while it issues the instruction for the wave, ``⌈nTW / rate⌉`` cycles at the unit's
    measured rate (:func:`issue_rates`), and the latency delays only the instruction's dependents:
    pipelined units overlap the latencies of independent instructions, memory latency included."""
    if variant not in BLOCK_VARIANTS:
        raise ValueError(f"unknown scheduling variant {variant!r}; choose one of {', '.join(BLOCK_VARIANTS)}")
    thesis = variant == "thesis"
    unit_of = resource_of if thesis else issue_resource
    g = block.dependence_graph()
    ins = block.instructions
    finish: dict[int, float] = {}
    rsv = _Reservations()
    delay = 0.0
    for v in nx.lexicographical_topological_sort(g):
        t = max((finish[u] for u in g.predecessors(v)), default=0.0)
        res = unit_of(ins[v].klass)
        # thesis: the unit is held for the latency plus one cycle per extra batch; issue: only while issuing
        busy = (lat(ins[v]) + L_PIPELINE * (_batches(ntw, int(units[res])) - 1) if thesis
                else max(1.0, math.ceil(ntw / units[res])))
        t1 = rsv.earliest(res, t, busy)
        rsv.reserve(res, t1, busy)
        finish[v] = t1 + busy if thesis else t1 + busy - 1 + lat(ins[v])
        delay = max(delay, finish[v])
    return delay


def schedule_cfg(cfg: Cfg, lat: Callable[[Instruction], float], units: Mapping[str, float], ntw: int,
                 trips: Sequence[float], variant: str = "thesis") -> float:
    """Algorithm 7: longest path through the CFG (back edges removed), each block's delay multiplied by
    the trip counts of the loops containing it; every branch is assumed taken by some thread (§4.4.1)."""
    mult = cfg.multipliers(trips)
    dag = cfg.dag()
    delay: dict[int, float] = {}
    for b in nx.topological_sort(dag):
        d = max((delay[p] for p in dag.predecessors(b)), default=0.0)
        delay[b] = d + schedule_block(cfg.blocks[b], lat, units, ntw, variant) * mult[b]
    return max(delay.values(), default=0.0)


@dataclass(frozen=True)
class Occupancy:
    threads_per_sm: int  # nTh_sm after the register, shared-memory and block limits (Alg. 8 lines 4–8)
    limit: str


def occupancy(cc: str, block: int, regs: int, shared: int) -> Occupancy:
    """Algorithm 8 lines 4–8: threads one SM holds per wave (:func:`devices.occupancy.alavani_threads_per_sm`
    over the SM table; an unknown ``cc`` raises :class:`~pytest_gpuperf.errors.UnsupportedDevice`)."""
    threads, limit = alavani_threads_per_sm(sm_limits(cc), block, regs, shared)
    return Occupancy(threads, limit)


def memory_counts(cfg: Cfg, trips: Sequence[float]) -> tuple[float, float, float, float]:
    """Per thread: global memory instructions ``nGM``, their bytes, shared instructions ``nShM``, their bytes
    (counted with loop multipliers, as the thesis counts them while scheduling)."""
    mult = cfg.multipliers(trips)
    ngm = gbytes = nsm = sbytes = 0.0
    for b, m in zip(cfg.blocks, mult):
        for ins in b.instructions:
            k = ins.klass
            if k in ("ld.global", "st.global", "atom.global", "ld.generic", "st.generic", "atom.generic"):
                ngm += m
                gbytes += m * access_bytes(ins)
            elif k in ("ld.shared", "st.shared", "atom.shared"):
                nsm += m
                sbytes += m * access_bytes(ins)
    return ngm, gbytes, nsm, sbytes


def access_bytes(ins: Instruction) -> int:
    """Bytes one thread moves: element width × vector width (``ld.global.v4.f32`` → 16)."""
    width = 4
    vec = 1
    for p in ins.parts:
        if p in ("v2", "v4", "v8"):
            vec = int(p[1:])
        elif len(p) >= 2 and p[0] in "fubs" and p[1:].isdigit():
            width = int(p[1:]) // 8
    return max(1, width) * vec


def exp_growth(n: Any, a: float, b: float, c: float) -> Any:
    """The thesis' throughput model ``TP = a (b − e^{−c n})`` (Table 4.5); ``n`` a number or an array (the
    suite fits this very function to its measured points)."""
    return a * (b - np.exp(-c * n))


@dataclass(frozen=True)
class Calibration:
    """Dynamic analysis of one GPU (thesis §3.4, §4.4.5), measured by the suite's microbenchmarks:
    launch overhead ``l0 + l1·threads`` (seconds), and global/shared throughput ``a (b − e^{−c n})`` in
    bytes/s of the whole device over ``n`` thread-level memory requests of the launch (the thesis' Table 4.5
    fits are device-wide too: their saturations, read as MB/s, are 38–54 % of each GPU's vendor bandwidth)."""

    launch: tuple[float, float]
    global_tp: tuple[float, float, float]
    shared_tp: tuple[float, float, float]
    source: str = "measured on this device by the suite's microbenchmarks"
    #: the global throughput fitted to the same copies' times less the launch intercept ``l0``
    #: (:func:`.ptx_calibration.net_fit`): what the "launch_once" variant streams at; None where not measured
    global_tp_net: tuple[float, float, float] | None = None


@dataclass
class Prediction:
    seconds: float
    d_kernel_cycles: float
    waves: int
    launch_s: float
    gm_penalty_s: float
    sm_penalty_s: float
    occupancy: Occupancy
    counts: tuple[float, float, float, float]
    cm_penalty_s: float = 0.0
    resources: dict[str, int] = field(default_factory=dict)
    parts: dict[str, Any] = field(default_factory=dict)  # the hopper variant's limits and which one bound it
    gm_latency_cycles: float = 0.0  # L(gm) of this launch (Alg. 6 per global access, Eq. 4.12 per miss)

    def info(self) -> dict[str, object]:
        """Everything the prediction was built from, for the metric's ``info`` (regs and occupancy per kernel)."""
        return {"d_kernel_cycles": round(self.d_kernel_cycles, 1), "waves": self.waves,
                "launch_s": self.launch_s, "gm_penalty_s": self.gm_penalty_s, "sm_penalty_s": self.sm_penalty_s,
                "cm_penalty_s": self.cm_penalty_s, "gm_latency_cycles": round(self.gm_latency_cycles, 1),
                "threads_per_sm": self.occupancy.threads_per_sm, "occupancy_limit": self.occupancy.limit,
                **self.resources, "nGM_per_thread": self.counts[0], "nShM_per_thread": self.counts[2],
                **({"parts": self.parts} if self.parts else {})}


def cache_miss_cycles(threads_total: int, ngm: float, gbytes: float, waves: int, l2_bytes: int,
                      gm_latency: float) -> float:
    """Eq. 4.12: ``cm = (nT_b·nB·nGM) / (waves·L2_sz / access_sz) × L(gm)`` cycles, ``access_sz`` the
    kernel's mean bytes per global access (``gbytes / nGM`` per thread). 0 without global accesses or L2."""
    if ngm <= 0 or l2_bytes <= 0 or waves <= 0:
        return 0.0
    access = gbytes / ngm
    return threads_total * ngm / (waves * l2_bytes / access) * gm_latency


def global_penalty_s(threads_total: int, ngm: float, gbytes: float, r_lsu: int,
                     tp: tuple[float, float, float]) -> float:
    """Eq. 4.10: ``gm = (nB·nT_b / R[LSU]) × (accessGm_sz / TP(gm)) × nGM`` (seconds; TP in bytes/s of the
    whole device, evaluated at the launch's ``nB·nT_b·nGM`` global requests as the Table 4.5 fits are).

    The thesis counts one access per ``R[LSU]`` threads ("the number of memory accesses using load-store
    units", §4.4.5.2 step 3; also Eq. 5.3), each of ``accessGm_sz`` bytes — the bytes of one thread's
    access (the same ``access_sz`` that Eq. 4.12 divides the L2 size by). So the penalty is the launch's
    global bytes over ``R[LSU]·TP``, not all bytes over ``TP``: the scheduled delay (Alg. 6, each global
    access at ``L(gm) + ⌈nTW/R[LSU]⌉ − 1`` cycles per wave) carries the rest. 0 without global accesses."""
    return global_stream_s(threads_total, ngm, gbytes, tp) / r_lsu


def shared_penalty_s(threads_total: int, nshm: float, sbytes: float, r_lsu: int, n_sm: int,
                     tp: tuple[float, float, float]) -> float:
    """Eq. 4.11: ``sm = (nB·nT_b / (R[LSU]·nSM)) × (access_sm_sz / TP(sm)) × nShM`` (seconds; TP in bytes/s
    of the whole device at the launch's shared requests): shared instructions are scheduled per SM, so the
    thesis divides the access count by ``nSM`` as well (§4.4.5.3 step 2; also Eq. 5.4)."""
    if nshm <= 0 or threads_total <= 0:
        return 0.0
    access = sbytes / nshm
    rate = exp_growth(nshm * threads_total, *tp)
    return threads_total / (r_lsu * n_sm) * access / max(rate, 1.0) * nshm


def _resources(cc: str, occ: Occupancy, **launch: int) -> dict[str, Any]:
    """A prediction's launch resources for its ``info``: registers, shared memory, block, grid, occupancy."""
    return {"regs_per_thread": launch["regs"], "shared_bytes_per_block": launch["shared"], "block": launch["block"],
            "grid": launch["grid"], "occupancy": round(occ.threads_per_sm / sm_limits(cc).max_threads, 3)}


def predict(cfg: Cfg, table: LatencyTable, cal: Calibration, *, grid: int, block: int, regs: int, shared: int,
            trips: Sequence[float], n_sm: int, clock_hz: float, cc: str = "9.0", l2_bytes: int = 0,
            variant: str = "thesis", rates: Mapping[str, float] | None = None,
            memory_bytes: float | None = None) -> Prediction:
    """Algorithm 8 plus Eq. 4.8–4.12: predicted kernel time in seconds (``l2_bytes`` 0 leaves out Eq. 4.12).

    ``variant`` chooses Algorithm 6's scheduling (:func:`schedule_block`); "issue" takes the unit issue
    rates ``rates`` (:func:`issue_rates`; the architecture table's unit counts when None). Everything
    else — waves, launch overhead, penalties — is the thesis' in both."""
    if grid <= 0 or block <= 0:
        raise ValueError(f"grid and block must be positive, got {grid}, {block}")
    if variant not in VARIANTS:
        raise ValueError(f"unknown scheduling variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    if variant in ("hopper", "launch_once"):
        return predict_hopper(cfg, table, cal, grid=grid, block=block, regs=regs, shared=shared, trips=trips,
                              n_sm=n_sm, clock_hz=clock_hz, cc=cc, rates=rates, launch_once=variant == "launch_once",
                              memory_bytes=memory_bytes)
    if memory_bytes is not None:
        raise ValueError(f"memory_bytes is the Hopper variants' (hopper, launch_once), not {variant!r}'s")
    units: Mapping[str, float] = units_per_sm(cc)
    if variant == "issue":
        units = rates if rates is not None else issue_rates({}, cc)[0]
    threads_total = grid * block

    def lat(ins: Instruction) -> float:
        return table.of(ins.klass, threads_total)

    occ = occupancy(cc, block, regs, shared)
    n_sched = math.ceil(grid / n_sm) * block  # Alg. 8 line 2
    d_kernel, waves = 0.0, 0
    memo: dict[int, float] = {}
    while n_sched > 0:  # Alg. 8 lines 9–13
        ntw = min(occ.threads_per_sm, n_sched)
        if ntw not in memo:
            memo[ntw] = schedule_cfg(cfg, lat, units, ntw, trips, variant)
        d_kernel += memo[ntw]
        n_sched -= occ.threads_per_sm
        waves += 1
    counts = memory_counts(cfg, trips)
    ngm, gbytes, nsm, sbytes = counts
    launch = cal.launch[0] + cal.launch[1] * threads_total
    gm = global_penalty_s(threads_total, ngm, gbytes, units["LSU"], cal.global_tp)
    sm = shared_penalty_s(threads_total, nsm, sbytes, units["LSU"], n_sm, cal.shared_tp)
    l_gm = table.of("ld.global", threads_total)  # the same per-launch L(gm) the scheduler charged above
    cm = cache_miss_cycles(threads_total, ngm, gbytes, waves, l2_bytes, l_gm) / clock_hz
    seconds = d_kernel / clock_hz + launch + gm + sm + cm
    resources = _resources(cc, occ, regs=regs, shared=shared, block=block, grid=grid)
    return Prediction(seconds, d_kernel, waves, launch, gm, sm, occ, counts, cm, resources, gm_latency_cycles=l_gm)


#: warp instructions one SM issues per cycle, whatever their unit: four partitions, one dispatch each
#: (sm_70 and later). The fp32 throughput probe saturates just below it.
ISSUE_SLOTS_PER_SM = 4


def issue_cycles(cfg: Cfg, units: Mapping[str, float], ntw: int, trips: Sequence[float]) -> dict[str, float]:
    """Per unit, the cycles one SM spends issuing every instruction the kernel executes for ``ntw`` threads
    (``⌈ntw / rate⌉`` per instruction, loop multipliers applied), and under ``"ISSUE"`` the cycles its
    :data:`ISSUE_SLOTS_PER_SM` dispatch slots need for all of them: the throughput bounds of a wave. (The
    slots matter for mixed code: ``sobolGPU_kernel``'s integer and move instructions fit their units in
    parallel but not the dispatch — ncu shows it issue-bound, 70 % of issue slots busy.)"""
    busy: dict[str, float] = {}
    for b, m in zip(cfg.blocks, cfg.multipliers(trips)):
        for ins in b.instructions:
            unit = issue_resource(ins.klass)
            busy[unit] = busy.get(unit, 0.0) + m * max(1.0, math.ceil(ntw / units[unit]))
    executed = sum(m * len(b.instructions) for b, m in zip(cfg.blocks, cfg.multipliers(trips)))
    busy["ISSUE"] = executed * math.ceil(ntw / 32) / ISSUE_SLOTS_PER_SM
    return busy


def global_stream_s(threads_total: int, ngm: float, gbytes: float, tp: tuple[float, float, float]) -> float:
    """Seconds to move the launch's global bytes (every thread's, ``gbytes`` each) at the device's fitted
    global throughput ``TP`` at the launch's ``nB·nT_b·nGM`` requests (the same Table 4.5 fit as Eq. 4.10).
    No reuse is assumed: bytes a stencil's neighbours share in L1/L2 are charged again — the variant's
    known over-estimate for Structured Grid kernels (docs/models.md)."""
    if ngm <= 0 or threads_total <= 0:
        return 0.0
    return threads_total * gbytes / max(float(exp_growth(ngm * threads_total, *tp)), 1.0)


def predict_hopper(cfg: Cfg, table: LatencyTable, cal: Calibration, *, grid: int, block: int, regs: int,
                   shared: int, trips: Sequence[float], n_sm: int, clock_hz: float, cc: str = "9.0",
                   rates: Mapping[str, float] | None = None, launch_once: bool = False,
                   memory_bytes: float | None = None) -> Prediction:
    """The Hopper variant: three limits a launch runs against at once, each one a measurement
    the project already makes, and the time is the largest of them after the fixed launch cost::

        t = l0 + max(l1·nB·nT_b,  Σ_waves max(issue(wave), chain),  bytes / TP(gm))

    * **execution**, per wave: the SM's 64 resident warps interleave, so a wave takes the longer of issuing
      all its instructions at the units' *measured* rates and through the SM's four dispatch slots
      (:func:`issue_cycles`; ``throughput.*`` probes, :func:`issue_rates`) and one warp's dependent chain through the CFG (Alg. 7 with the "issue"
      schedule of 32 threads: latencies from the latency probes). The thesis (Alg. 6) instead holds a unit
      for each instruction's whole latency and ends every basic block before the next starts, so each
      block's latency tail is paid by every wave — what overestimates ``scanExclusiveShared`` and
      ``mergeSortSharedKernel`` 2×.
    * **memory**: the launch's global bytes at the fitted device throughput (:func:`global_stream_s`),
      overlapped with execution rather than added (the thesis' Eq. 4.10–4.12 penalties are not charged).
    * **dispatch**: the launch-vs-grid fit's per-thread slope ``l1`` (block dispatch of an empty kernel),
      overlapped with execution; ``l0`` (the fit's intercept) is the launch's fixed cost, paid once.

    ``launch_once``: the memory stream at :attr:`Calibration.global_tp_net`, the copies' throughput with ``l0``
    taken out of their times. ``TP(gm)`` as the thesis fits it holds each calibration copy's launch, so a
    small launch paid ``l0`` twice: once as the fixed cost, once inside its memory time.

    ``memory_bytes``: the launch's global traffic where it is known otherwise than from the PTX's byte counts
    (:func:`.ptx_trace.traced_bytes`: the sectors its blocks touch); None streams every thread's bytes.
    """
    if grid <= 0 or block <= 0:
        raise ValueError(f"grid and block must be positive, got {grid}, {block}")
    units = rates if rates is not None else issue_rates({}, cc)[0]
    threads_total = grid * block

    def lat(ins: Instruction) -> float:
        return table.of(ins.klass, threads_total)

    occ = occupancy(cc, block, regs, shared)
    chain = schedule_cfg(cfg, lat, units, 32, trips, "issue")  # one warp's dependent path (no contention)
    n_sched = math.ceil(grid / n_sm) * block
    d_kernel, waves, issue_total = 0.0, 0, 0.0
    memo: dict[int, float] = {}
    while n_sched > 0:
        ntw = min(occ.threads_per_sm, n_sched)
        if ntw not in memo:
            memo[ntw] = max(issue_cycles(cfg, units, ntw, trips).values(), default=0.0)
        issue_total += memo[ntw]
        d_kernel += max(memo[ntw], chain)
        n_sched -= occ.threads_per_sm
        waves += 1
    counts = memory_counts(cfg, trips)
    if launch_once and cal.global_tp_net is None:
        raise ValueError("the launch_once variant needs the calibration's net global throughput (global_tp_net)")
    tp = cal.global_tp_net if launch_once and cal.global_tp_net is not None else cal.global_tp
    memory_s = global_stream_s(threads_total, counts[0], counts[1], tp)
    if memory_bytes is not None and counts[0] > 0:
        memory_s = memory_bytes / max(float(exp_growth(counts[0] * threads_total, *tp)), 1.0)
    dispatch_s = cal.launch[1] * threads_total
    execution_s = d_kernel / clock_hz
    seconds = cal.launch[0] + max(dispatch_s, execution_s, memory_s)
    bound = max((("dispatch", dispatch_s), ("execution", execution_s), ("memory", memory_s)), key=lambda kv: kv[1])[0]
    resources = _resources(cc, occ, regs=regs, shared=shared, block=block, grid=grid)
    parts = {"launch_fixed_s": cal.launch[0], "dispatch_s": dispatch_s, "execution_s": execution_s,
             "memory_s": memory_s, "issue_s": issue_total / clock_hz, "chain_s": chain * waves / clock_hz}
    return Prediction(seconds, d_kernel, waves, cal.launch[0], 0.0, 0.0, occ, counts, 0.0, resources,
                      {**parts, "bound": bound}, gm_latency_cycles=table.of("ld.global", threads_total))
