"""Alavani's global-memory latency microbenchmark and model (thesis §3.3.2–3.3.3, Algorithms 1–2,
Table 3.3/3.4, Fig. 3.2), for the device under test.

The thesis' ``L(gm)`` is not one number: the pointer chase of Algorithm 2 is launched "repeatedly ...
by varying its launch parameters (nB, nT_b)", every thread times its own chain of dependent loads with
``clock()`` and the per-load average is regressed piecewise-linearly on the launch's threads,
``L = a·(nT_b·nB) + b`` per interval (Table 3.3, four intervals on the K20). Chapter 4 then reads
``L(ld)`` for each launch from that model (315 cycles for 13 × 256 threads on the K20).

What runs here, and why:

* **Kernel** (``gp_thread_chase``): every thread walks the same chain from element 0 (Algorithm 2,
  line 3: ``j = 0``; Algorithm 1 builds one array for all threads), through an untimed section of
  ``WARM`` steps, then two timed sections of ``n`` and ``2n`` steps (``clock64`` before, between, after;
  ``UNROLL`` dependent loads per step) and stores ``(T(2n) − T(n)) / (UNROLL·n)`` cycles per load. The
  difference removes what both sections share — the clock read that does not wait for the last load in
  flight — exactly as the probes' single-thread chase does (:mod:`.memory`); ``UNROLL·n`` = 256 loads is
  the appendix listing's ``repeat256`` section. The untimed section absorbs the launch's start-up
  queue: all threads begin at the same line at the same moment, which would otherwise bias ``T(n)``.
* **"We disabled the caching of data"**: the loads are ``__ldcg`` (``ld.global.cg`` — CUDA's
  "non-caching" load, what ``-Xptxas -dlcm=cg`` does to every load), which sm_90 compiles to
  ``LDG.E.STRONG.GPU``: a GPU-scope load that the L1 does not serve. :func:`build` proves that opcode
  holds the three chase loops in the SASS. The L2 cannot be bypassed on any NVIDIA GPU (every global
  access goes through it; ``.cv``/volatile loads only change the coherence scope), so on sm_90, as on
  the K20 whose L1 does not cache global loads by default, "caching disabled" means *served by the L2*.
* **Footprint**: the walk touches ``UNROLL·(WARM + 3n)`` = 1 024 lines of 128 bytes (128 KiB) of a random
  single cycle over :data:`FOOTPRINT` bytes (:func:`memory.chase_array`), warm in the L2 after the first
  (untimed) launch, so every timed load is an L2-served, L1-bypassing access. From the thesis' text: its
  one-thread K20 figure, 221 cycles, sits far under the 400–580 cycles it quotes for (DRAM-bound) global
  loads, and chapter 4 charges L2 misses *separately*, as ``L(gm)`` per expected miss on top of the
  scheduled ``L(gm)`` (Eq. 4.12) — so ``L(gm)`` is the latency of a load the L2 serves. A chain larger
  than the L2 would not change that much anyway: with every thread on one chain, only the leading warp
  misses; the others find the line in flight or in the L2.
* **Load**: a warp's 32 lanes ask for one line (one request per warp); warps, blocks and SMs compete for
  the L1/LSU pipes, the crossbar and the L2 slices. That is the thesis' "additional waiting time due to
  resource constraints" (§3.3) — not bandwidth: the probes' chase over *distinct* lines per thread
  (``memory.global.latency.unloaded`` info) is bandwidth-bound and the PTX model's Eq. 4.10 charges
  bandwidth separately.
* **Sweep** (:func:`plan`): about two launches per octave of ``nT_b·nB`` from one thread to the full
  device (every SM at its thread limit), with rotating block sizes so that equal totals of different
  shapes show whether the total alone explains the latency, plus 2, 4, 8 and 16 full waves (the thesis'
  Table 3.3 reaches 2.2 M threads, 83 waves of the K20; the PTX model's dwarfs launch up to 16 waves).
  Each point: one untimed launch, then :data:`REPEATS` launches; a launch's latency is the mean over its
  threads of their cycles per load, the point's the mean over the launches ("each data point was
  collected by taking an average of recorded time").
* **Fit**: :func:`.fit.piecewise_linear` — least-squares breakpoints (exact search over contiguous
  segments), up to 4 segments like Table 3.3, the count chosen by BIC; Table 3.4's MSE, RMSE, R², RSS and
  RSE from :meth:`.fit.PiecewiseFit.statistics`.

OpenCL has no device clock a work-item can read, and event timing sees a launch's slowest work-item (on
a CPU device, the work-items of a group one after another), never the per-thread average Algorithm 2
regresses: the microbenchmark is CUDA only (:data:`NO_CLOCK`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..devices.base import Device, DeviceInfo
from ..timing import observers
from ..timing.measure import observed
from . import sass_proof
from .build import function_sass
from .fit import PiecewiseFit, piecewise_linear
from .memory import chase_array

#: Alavani Table 3.3 (Tesla K20): (interval start, interval end, a, b) of L = a·(nT_b·nB) + b cycles — the
#: thesis' fitted model, kept once: the K20 fallback of :func:`studies.ptx_model.ptx_latency.global_latency_k20`, the
#: reference in every fit's ``info`` and the tests' ground truth.
K20_TABLE_3_3: tuple[tuple[float, float, float, float], ...] = (
    (0, 4096, 0.02828, 220.0), (4096, 24576, 0.004780, 251.7), (24576, 991232, 0.0001679, 307.8),
    (991232, 2203648, -0.00002529, 501.8))

UNROLL = 4
SECTION = 64  # steps of the first timed section (×UNROLL loads: the appendix listing's repeat256)
WARM = 64  # untimed steps before the timed sections
LINE = 128  # bytes between consecutive elements of the chain (one load per line)
FOOTPRINT = 1 << 20  # bytes of the chain array: 8 192 lines, of which one walk touches 1 024
REPEATS = 3  # timed launches per point (after one untimed launch)
ALLOCATIONS = 5  # chains the one-thread point is measured on (:func:`single_thread`)
BLOCKS = (256, 128, 512, 1024, 64)  # block sizes taken in turn along the sweep
PER_OCTAVE = 2
WAVES_BEYOND = (2, 4, 8, 16)  # whole-device waves past one full wave
MAX_SEGMENTS = 4  # Table 3.3 has four intervals
MIN_POINTS = 3  # a segment's line rests on at least three launches
NO_CLOCK = ("the global-latency model times every thread's own chain with a device clock (Alavani Algorithm 2, "
            "clock()); OpenCL C has none, and event timing sees a launch's slowest work-item (on a CPU device, "
            "a group's work-items one after another), not the per-thread average the thesis regresses")

SOURCE = r'''
extern "C" __global__ void gp_thread_chase(const unsigned* __restrict__ a, int warm, int n, float inv_loads,
                                           float* lat, unsigned* sink) {
  unsigned j = 0;  // Algorithm 2, line 3: every thread starts the same chain at element 0
  #pragma unroll 1
  for (int i = 0; i < warm; ++i) { j = __ldcg(a + j); j = __ldcg(a + j); j = __ldcg(a + j); j = __ldcg(a + j); }
  long long t0 = clock64();
  #pragma unroll 1
  for (int i = 0; i < n; ++i) { j = __ldcg(a + j); j = __ldcg(a + j); j = __ldcg(a + j); j = __ldcg(a + j); }
  long long t1 = clock64();
  #pragma unroll 1
  for (int i = 0; i < 2 * n; ++i) { j = __ldcg(a + j); j = __ldcg(a + j); j = __ldcg(a + j); j = __ldcg(a + j); }
  long long t2 = clock64();
  lat[blockIdx.x * blockDim.x + threadIdx.x] = (float)((t2 - t1) - (t1 - t0)) * inv_loads;
  if (j == 0xffffffffu) sink[0] = j;
}
'''
NAME = "gp_thread_chase"
#: What ``ld.global.cg`` becomes on sm_90 (checked with cuobjdump 13.x): a GPU-scope load, not served by L1.
CG_OPCODE = "LDG.E.STRONG.GPU"


def build(device: Device) -> tuple[Any, dict[str, object]]:
    """Compile the chase and prove from the SASS that its three loops hold ``UNROLL`` dependent L1-bypassing
    loads each (a compiler that merged, hoisted or cached them would make the timing meaningless)."""
    kernel = device.compile(SOURCE, NAME)
    evidence = sass_proof.verify_chain(function_sass(kernel), [(CG_OPCODE,)], [UNROLL, UNROLL, UNROLL],
                                 "global latency chase (ld.global.cg)")
    return kernel, evidence


@dataclass(frozen=True)
class Launch:
    blocks: int  # nB
    threads: int  # nT_b

    @property
    def total(self) -> int:
        return self.blocks * self.threads


def full_device(info: DeviceInfo) -> int:
    """Threads the whole device holds at once: SMs × the SM's thread limit as the driver reports it
    (H100: 132 × 2048 = 270 336)."""
    per_sm = int(info.extra.get("max_threads_per_sm") or 2048)
    return max(1, info.compute_units) * per_sm


def plan(full: int, max_block: int = 1024) -> list[Launch]:
    """(nB, nT_b) from one thread to ``full`` threads, :data:`PER_OCTAVE` totals per doubling (log-spaced), then
    :data:`WAVES_BEYOND` × ``full``. Up to 64 threads: one block of that many; above, the block size rotates through
    :data:`BLOCKS` (halved until it fits the total), ``nB`` the nearest whole number of blocks. The full
    wave is 256-thread blocks, which fill an SM within its thread and block limits on every architecture."""
    octaves = math.log2(full)
    totals = sorted({int(round(2 ** (k / PER_OCTAVE))) for k in range(int(octaves * PER_OCTAVE) + 1)})
    out: list[Launch] = []
    for k, t in enumerate(totals):
        if t <= min(64, max_block):
            out.append(Launch(1, t))
            continue
        b = min(BLOCKS[k % len(BLOCKS)], max_block)
        while b > t:
            b //= 2
        out.append(Launch(max(1, round(t / b)), b))
    wave = Launch(max(1, full // 256), min(256, full)) if full >= 256 else Launch(1, full)
    out.append(wave)
    out += [Launch(wave.blocks * w, wave.threads) for w in WAVES_BEYOND]
    seen: set[tuple[int, int]] = set()
    uniq = []
    for launch in sorted(out, key=lambda l: (l.total, l.threads)):
        if (launch.blocks, launch.threads) not in seen:
            seen.add((launch.blocks, launch.threads))
            uniq.append(launch)
    return uniq


@dataclass
class Point:
    launch: Launch
    per_launch: list[float]  # mean over the launch's threads of their cycles per load, one per timed launch
    thread_p10_p90: tuple[float, float]  # spread over the threads of the last launch

    @property
    def cycles(self) -> float:
        return float(np.mean(self.per_launch))

    def to_json(self) -> dict[str, object]:
        return {"nB": self.launch.blocks, "nT_b": self.launch.threads, "threads": self.launch.total,
                "cycles": round(self.cycles, 2), "per_launch": [round(v, 2) for v in self.per_launch],
                "thread_p10_p90": [round(v, 1) for v in self.thread_p10_p90]}


def measure_point(device: Device, kernel: Any, chain: Any, launch: Launch, timeout_s: float) -> Point:
    """One (nB, nT_b): an untimed launch, then :data:`REPEATS` launches whose per-thread cycles are read back."""
    n = launch.total
    lat, sink = device.empty(4 * n), device.empty(4)
    args = [chain, np.int32(WARM), np.int32(SECTION), np.float32(1.0 / (UNROLL * SECTION)), lat, sink]
    means: list[float] = []
    per_thread = np.zeros(0)
    for r in range(REPEATS + 1):
        h = device.timed(lambda: device.launch(kernel, (n,), (launch.threads,), args))
        device.elapsed(h, timeout_s)
        if r == 0:
            continue
        per_thread = device.to_host(lat, np.float32, n).astype(np.float64)
        if not np.all(np.isfinite(per_thread)):
            raise AssertionError(f"non-finite per-thread latency at nB={launch.blocks}, nT_b={launch.threads}")
        means.append(float(per_thread.mean()))
    p10, p90 = np.percentile(per_thread, [10, 90])
    return Point(launch, means, (float(p10), float(p90)))


@dataclass
class Sweep:
    """The measured curve and its piecewise-linear model, with what produced them (for ``info``)."""

    points: list[Point]
    fit: PiecewiseFit
    evidence: dict[str, object] = field(default_factory=dict)
    #: the one-thread launch's cycles on each of :data:`ALLOCATIONS` chains (:func:`single_thread`)
    single: list[float] = field(default_factory=list)
    #: what the observers saw while the sweep ran (``timing.observers.inherit``): the fit's figures and
    #: the PTX model built on it, in whichever test reads the sweep, inherit it
    marks: dict[str, Any] = field(default_factory=dict)

    def last_within(self, threads: int) -> Point:
        """The largest launch of at most ``threads`` threads (the full wave for :func:`full_device`)."""
        return max((p for p in self.points if p.launch.total <= threads), key=lambda p: p.launch.total)

    def table(self) -> list[dict[str, float]]:
        """The fit as Table 3.3: per segment the threads' range and ``L = a·(nT_b·nB) + b``."""
        return [{"threads_lo": s.x_lo, "threads_hi": s.x_hi, "a": s.slope, "b": s.intercept}
                for s in self.fit.segments]

    def info(self) -> dict[str, object]:
        return {"model": "L = a·(nT_b·nB) + b per interval (Alavani §3.3.3, Table 3.3)",
                "segments": self.table(), **self.fit.statistics(),
                "fit": self.fit.to_json(), "points": [p.to_json() for p in self.points],
                "kernel": {"loads": "__ldcg (ld.global.cg → LDG.E.STRONG.GPU: L1 bypassed, L2-served)",
                           "chain": f"random cycle of {FOOTPRINT // LINE} lines, {LINE} B apart; every thread "
                                    "starts at element 0 (Algorithm 2)",
                           "walk_lines": UNROLL * (WARM + 3 * SECTION), "timed_loads": UNROLL * SECTION,
                           "repeats": REPEATS, "sass": self.evidence},
                "thesis": {"table_3_3_k20": [list(row) for row in K20_TABLE_3_3],
                           "table_3_4": {"mse": 22.95, "rmse": 4.79, "r2": 0.9967, "rss": 32801.69, "rse": 4.80}}}


def fit_points(points: Sequence[Point]) -> PiecewiseFit:
    """Least-squares segmented regression of the points' latency on ``nT_b·nB`` (up to 4 segments)."""
    return piecewise_linear([p.launch.total for p in points], [p.cycles for p in points],
                            max_segments=MAX_SEGMENTS, min_points=MIN_POINTS)


def sweep(device: Device, timeout_s: float = 30.0) -> Sweep:
    """Measure the whole curve on ``device`` and fit it (CUDA: needs a device clock)."""
    if not device.info.clock_counter:
        raise ValueError(f"{device.info.spec}: {NO_CLOCK}")
    kernel, evidence = build(device)
    chain = device.to_device(chase_array(FOOTPRINT, LINE))
    launches = plan(full_device(device.info), device.info.max_work_group_size or 1024)
    points = [measure_point(device, kernel, chain, launch, timeout_s) for launch in launches]
    return Sweep(points, fit_points(points), evidence, single_thread(device, kernel, points[0], timeout_s))


def single_thread(device: Device, kernel: Any, first: Point, timeout_s: float,
                  allocations: int = ALLOCATIONS) -> list[float]:
    """The one-thread point on ``allocations`` chains: the sweep's (``first``) and ``allocations − 1`` new
    ones, all held at once so each is memory of its own. Which L2 partition serves a chain follows its
    buffer's physical placement, so one chain's figure moves between runs far more than its launches
    spread; the gated single-thread latency is the median over chains."""
    held = [device.to_device(chase_array(FOOTPRINT, LINE)) for _ in range(allocations - 1)]
    return [first.cycles] + [measure_point(device, kernel, chain, first.launch, timeout_s).cycles for chain in held]


def measured(device: Device, timeout_s: float = 30.0) -> Sweep:
    """:func:`sweep`, once per device and session: the model-error suite records the fit in one test and
    the PTX model uses it in another (whichever runs first measures)."""
    def measure() -> Sweep:  # clock-timed launches: watched as one window, like any measurement
        watched = observers.Capture(device)
        sw = observed(device, lambda: sweep(device, timeout_s))
        sw.marks = observers.inherit(watched)
        return sw

    return device.once("global_latency_sweep", measure)  # a later test notes the sweep's kernels
