"""Memory-hierarchy probes: pointer chasing (Alavani ch. 3.3, Wong et al.), shared-memory latency,
latency under load with the piecewise model (:mod:`.fit`); the memory kernels' program (whose empty
kernel :mod:`.launch_overhead` sweeps over grid sizes, ch. 3.4).

Pointer chase: ``j = a[j]`` over a random cyclic permutation of the lines (``stride`` bytes apart)
of a ``footprint``-byte array — every load depends on the previous one and no prefetcher can guess
the next line. One warm pass touches the whole cycle first (skipped beyond twice the L2, where every
access misses anyway); then two sections of ``n`` and ``2n`` unrolled loads are timed (``clock64()`` on
CUDA, events on OpenCL) and differenced, as for the arithmetic chains.
"""

from __future__ import annotations

import itertools

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..timing.measure import observed
from ..timing.stats import Stats

from ..devices.base import Device
from ..devices.dialect import per_language
from . import sass_proof
from .build import compile_many, function_sass
from .fit import plateaus

KiB, MiB = 1 << 10, 1 << 20
UNROLL = 4
SECTION = 256  # loop iterations of the short section (×UNROLL loads); the long one has twice as many
EVENT_SCALE = 32  # longer sections when timed with events
ROTATE = 8  # distinct start lines per event-timed measurement (≥ warm-up + repeats)
REPEATS = 5  # clock-timed samples per launch (CUDA)
#: On CPU devices a local-memory load takes a few cycles, so the event-timed shared chase's sections are this
#: many times longer: at the GPU length their difference (~30 µs) is of the order of a CPU device's launch
#: jitter, so its median can read negative.
CPU_SHARED_SCALE = 32
ALLOCATIONS = 5  # buffers a gated clock-timed chase footprint is measured on (:func:`chase_allocations`)

def _timed_sections(array: str) -> str:
    """The clock64-timed short and long sections of a chase through ``array`` (global ``a`` or shared
    ``s``), ``reps`` times: the pair whose difference is the latency (one text for both chases)."""
    j = "; ".join(f"j = {array}[j]" for _ in range(UNROLL))
    return (f"  for (int r = 0; r < reps; ++r) {{\n"
            f"    long long t0 = clock64();\n"
            f"    #pragma unroll 1\n"
            f"    for (int i = 0; i < n1; ++i) {{ {j}; }}\n"
            f"    long long t1 = clock64();\n"
            f"    #pragma unroll 1\n"
            f"    for (int i = 0; i < n2; ++i) {{ {j}; }}\n"
            f"    long long t2 = clock64();\n"
            f"    cyc[2 * r] = t1 - t0; cyc[2 * r + 1] = t2 - t1;\n"
            f"  }}\n")


_CUDA = r'''
extern "C" __global__ void gp_chase(const unsigned* a, int warm, int n1, int n2, int reps, unsigned* out,
                                    long long* cyc, unsigned start) {
  unsigned j = start;
  for (int i = 0; i < warm; ++i) j = a[j];
''' + _timed_sections("a") + r'''  out[0] = j;
}

extern "C" __global__ void gp_shared_chase(const unsigned* a, int len, int n1, int n2, int reps, unsigned* out,
                                           long long* cyc) {
  __shared__ unsigned s[4096];
  for (int i = threadIdx.x; i < len; i += blockDim.x) s[i] = a[i];
  __syncthreads();
  if (threadIdx.x != 0) return;
  unsigned j = 0;
''' + _timed_sections("s") + r'''  out[0] = j;
}

extern "C" __global__ void gp_loaded_chase(const unsigned* a, int steps, unsigned spacing, unsigned base,
                                           unsigned n, unsigned* out) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned j = a[(base + t * spacing) % n];
  #pragma unroll 1
  for (int i = 0; i < steps; ++i) { j = a[j]; j = a[j]; j = a[j]; j = a[j]; }
  if (j == 0xffffffffu) out[0] = j;
}

extern "C" __global__ void gp_empty(int x) { }
'''

_OPENCL = r'''
__kernel void gp_chase(__global const uint* a, int warm, int n1, int n2, int reps, __global uint* out,
                       __global long* cyc, uint start) {
  uint j = start;
  for (int i = 0; i < warm; ++i) j = a[j];
  for (int i = 0; i < n1; ++i) { j = a[j]; j = a[j]; j = a[j]; j = a[j]; }
  for (int i = 0; i < n2; ++i) { j = a[j]; j = a[j]; j = a[j]; j = a[j]; }
  out[0] = j;
}

__kernel void gp_shared_chase(__global const uint* a, int len, int n1, int n2, int reps, __global uint* out,
                              __global long* cyc) {
  __local uint s[4096];
  for (int i = get_local_id(0); i < len; i += get_local_size(0)) s[i] = a[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) != 0) return;
  uint j = 0;
  for (int i = 0; i < n1; ++i) { j = s[j]; j = s[j]; j = s[j]; j = s[j]; }
  for (int i = 0; i < n2; ++i) { j = s[j]; j = s[j]; j = s[j]; j = s[j]; }
  out[0] = j;
}

__kernel void gp_loaded_chase(__global const uint* a, int steps, uint spacing, uint base, uint n,
                              __global uint* out) {
  uint t = get_global_id(0);
  uint j = a[(base + t * spacing) % n];
  for (int i = 0; i < steps; ++i) { j = a[j]; j = a[j]; j = a[j]; j = a[j]; }
  if (j == 0xffffffffu) out[0] = j;
}

__kernel void gp_empty(int x) { }
'''

NAMES = ("gp_chase", "gp_shared_chase", "gp_loaded_chase", "gp_empty")

#: The memory kernels per kernel language (``Dialect.name``): written twice, since the CUDA text reads
#: ``clock64()`` around its sections and the OpenCL one is event-timed.
SOURCES = per_language(cuda=_CUDA, opencl=_OPENCL)


def source(backend: str) -> str:
    """The memory kernels' program in the language of ``backend``."""
    return SOURCES[backend]


def build(device: Device) -> tuple[dict[str, Any], dict[str, object]]:
    """All memory kernels in one program; where the device yields SASS (CUDA), prove the chase loops hold
    their dependent loads."""
    kernels = compile_many(device, source(device.info.backend), list(NAMES))
    evidence: dict[str, object] = {}
    if device.info.has_sass:
        evidence["gp_chase"] = sass_proof.verify_chain(function_sass(kernels["gp_chase"]), [("LDG",)],
                                                 [UNROLL, UNROLL], "global pointer chase")
        evidence["gp_shared_chase"] = sass_proof.verify_chain(function_sass(kernels["gp_shared_chase"]), [("LDS",)],
                                                        [UNROLL, UNROLL], "shared-memory pointer chase")
    return kernels, evidence


def chase_array(footprint: int, stride: int, seed: int = 7) -> np.ndarray:
    """uint32 array of ``footprint`` bytes: a random single cycle through its lines ``stride`` bytes apart."""
    n = footprint // 4
    step = max(1, stride // 4)
    lines = max(1, n // step)
    order = np.random.default_rng(seed).permutation(lines).astype(np.uint64)
    a = np.zeros(n, dtype=np.uint32)
    nxt = np.roll(order, -1)
    a[(order * step).astype(np.int64)] = (nxt * step).astype(np.uint32)
    return a


def footprints(lo: int, hi: int, per_octave: int = 2) -> list[int]:
    """1 KiB … ``hi`` at ``per_octave`` points per doubling (rounded to 1 KiB)."""
    out, k = [], 0
    while True:
        f = int(round(lo * 2 ** (k / per_octave) / KiB)) * KiB
        if f > hi:
            return out
        if not out or f != out[-1]:
            out.append(f)
        k += 1


def planted_long(n: int, plant: float) -> int:
    """Iterations of a chase's long section under the gate check's ``chase`` plant: ``2n`` plus ``plant`` × the
    ``n`` the latency is credited with (:mod:`pytest_gpuperf.gatecheck.plants`): more dependent loads than
    divided by, at the same level, so the latency reads (1 + ``plant``) × the true one."""
    return 2 * n + (round(n * plant) if plant > 0 else 0)


def chase_clock(device: Device, kernel, footprint: int, stride: int, warm_limit: int, timeout_s: float,
                buf: Any = None, plant: float = 0.0) -> list[float]:
    """Cycles per dependent load (CUDA clock64), ``REPEATS`` samples from one launch (over ``buf``, a chain
    of this footprint and stride already on the device, or a new one); ``plant``: :func:`planted_long`."""
    if buf is None:
        buf = device.to_device(chase_array(footprint, stride))
    out, cyc = device.empty(8), device.empty(16 * REPEATS)
    lines = max(1, footprint // max(stride, 4))
    warm = lines if footprint <= warm_limit else 0
    h = device.timed(lambda: device.launch(kernel, (1,), (1,), [buf, np.int32(warm), np.int32(SECTION),
                                                                  np.int32(planted_long(SECTION, plant)),
                                                                  np.int32(REPEATS), out, cyc,
                                                                  np.uint32(0)]))
    device.elapsed(h, timeout_s)
    c = device.to_host(cyc, np.int64, 2 * REPEATS).reshape(REPEATS, 2)
    return [float(b - a) / (SECTION * UNROLL) for a, b in c]


def chase_allocations(device: Device, kernel, footprint: int, stride: int, warm_limit: int, timeout_s: float,
                      first: Sequence[float], allocations: int = ALLOCATIONS, plant: float = 0.0) -> list[float]:
    """The chase's cycles per load on ``allocations`` separate buffers, one median each: ``first`` (the
    samples of the buffer the curve was measured on) and ``allocations − 1`` new ones, all held at once so
    that each is memory of its own (a freed buffer's block would come back from the pool). Which L2
    partition and slices a chain's lines land in follows the buffer's physical placement, so one buffer's
    figure moves between runs by more than its own samples spread: the unit of that noise is the
    allocation, and the gated figure is the median over them."""
    held = [device.to_device(chase_array(footprint, stride)) for _ in range(allocations - 1)]
    medians = [float(np.median(first))]
    medians += [float(np.median(chase_clock(device, kernel, footprint, stride, warm_limit, timeout_s, buf, plant)))
                for buf in held]
    return medians


def anchor_figure(device: Device, kernel, footprint: int, stride: int, warm_limit: int, timeout_s: float,
                  samples: Sequence[float], plant: float = 0.0) -> tuple[list[float], dict[str, int]]:
    """What a gated chase footprint is judged on, and its identity: with a device clock, the medians over
    :func:`chase_allocations`; with event timing on a GPU (no placement effect resolved), the curve's own
    samples. (An event-timed CPU device pools several windows instead: :mod:`.chase_windows`.)"""
    if not device.info.clock_counter:
        return list(samples), {}
    return (chase_allocations(device, kernel, footprint, stride, warm_limit, timeout_s, samples, plant=plant),
            {"allocations": ALLOCATIONS})


def loaded_chase(measurer: Callable[..., Any], kernel, buf: Any, out: Any, elements: int, footprint: int,
                 threads: int, local: int, steps: int, clock_mhz: float) -> Stats:
    """Cycles per access of ``threads`` threads each chasing its own stretch of one chain (``buf``, a
    :func:`chase_array` of ``elements`` uint32 over ``footprint`` bytes), every launch from other lines."""
    lines, step = elements // 32, 32
    spacing = max(step, (lines // threads) * step)
    m = measurer(kernel, (threads,), (local,),
                 rotate=[[buf, np.int32(steps), np.uint32(spacing), np.uint32(b), np.uint32(elements), out]
                         for b in starts(footprint, 128)])
    return m.stats.scaled(clock_mhz * 1e6 / (steps * UNROLL))


def loaded_allocations(device: Device, measurer: Callable[..., Any], kernel, out: Any, footprint: int,
                       threads: int, local: int, steps: int, clock_mhz: float, first: Stats,
                       allocations: int = ALLOCATIONS) -> tuple[list[float], dict[str, int]]:
    """A gated end of the loaded-latency curve over separate chains (as :func:`chase_allocations`: the
    DRAM pages and L2 slices a chain lands on follow its buffer), with its identity; ``first``: the
    curve's own chain. A CPU device (no placement effect resolved by its event timing) keeps the curve's
    samples."""
    if device.info.is_cpu:
        return list(first.samples), {}
    arr = chase_array(footprint, 128)
    held = [device.to_device(arr) for _ in range(allocations - 1)]
    medians = [first.median] + [loaded_chase(measurer, kernel, buf, out, arr.size, footprint, threads, local, steps,
                                             clock_mhz).median for buf in held]
    return medians, {"allocations": allocations}


def starts(footprint: int, stride: int, count: int = ROTATE) -> list[int]:
    """Element indices of ``count`` lines spread over the array: launches that start from different
    lines walk different stretches of the random cycle, so a repeated launch does not re-read lines the
    previous one left in the cache (which made a cold footprint look like an L2 hit)."""
    step = max(1, stride // 4)
    lines = max(1, footprint // max(stride, 4))
    return [((k * 104_729) % lines) * step for k in range(count)]


def shared_section(device: Device) -> int:
    """Loop iterations (of :data:`UNROLL` loads) of the event-timed shared chase's short section; the long one
    has twice as many."""
    return 16 * SECTION * (CPU_SHARED_SCALE if device.info.is_cpu else 1)


def shared_latency(device: Device, kernels: dict[str, Any], clock_mhz: float, measurer: Any,
                   timeout_s: float = 30.0) -> list[float]:
    """Cycles per dependent shared-memory load (``gp_shared_chase`` over a 16 KiB ring, one warp): on CUDA
    from ``clock64()`` around the short and long sections (``REPEATS`` samples of one launch); elsewhere
    from alternating event-timed launches of the long and the short section, differenced pair by pair, at
    ``clock_mhz`` (sections of :func:`shared_section`). One home for the figure the memory-hierarchy suite
    gates and the PTX model's ``ld.shared`` latency."""
    arr = chase_array(16 * 1024, 4)
    buf, out = device.to_device(arr), device.empty(8)
    cyc = device.empty(16 * REPEATS)
    n = SECTION
    args = [buf, np.int32(arr.size)]
    kernel = kernels["gp_shared_chase"]
    if device.info.clock_counter:  # one clock-timed launch, watched like any measurement (timing.observers)
        observed(device, lambda: device.elapsed(device.timed(lambda: device.launch(
            kernel, (32,), (32,), [*args, np.int32(n), np.int32(2 * n), np.int32(REPEATS), out, cyc])), timeout_s))
        c = device.to_host(cyc, np.int64, 2 * REPEATS).reshape(-1, 2)
        return [float(b - a) / (n * UNROLL) for a, b in c]
    iters = shared_section(device)
    short = [*args, np.int32(iters), np.int32(0), np.int32(1), out, cyc]
    long = [*args, np.int32(0), np.int32(2 * iters), np.int32(1), out, cyc]
    # alternating launches, differenced pair by pair (as chase_events): two separately timed blocks let
    # the host's drift between them read as a negative latency on a CPU device
    m1, m2 = measurer.pair(lambda: device.launch(kernel, (32,), (32,), short),
                           lambda: device.launch(kernel, (32,), (32,), long))
    return [(t2 - t1) * clock_mhz * 1e6 / (iters * UNROLL) for t1, t2 in zip(m1.samples, m2.samples)]


def chase_events(device: Device, measurer: Callable[..., Any], kernel, footprint: int, stride: int,
                 warm_limit: int, clock_mhz: float, plant: float = 0.0) -> list[float]:
    """Cycles per dependent load from event-timed launches with only the short / only the long section,
    rotating over start lines (see :func:`starts`); ``plant``: :func:`planted_long`."""
    buf = device.to_device(chase_array(footprint, stride))
    out, cyc = device.empty(8), device.empty(16)
    lines = max(1, footprint // max(stride, 4))
    warm = np.int32(lines if footprint <= warm_limit else 0)
    n = EVENT_SCALE * SECTION  # event timing needs ≫ launch jitter (µs) per section
    s0 = starts(footprint, stride)
    short = itertools.cycle([[buf, warm, np.int32(n), np.int32(0), np.int32(1), out, cyc, np.uint32(s)] for s in s0])
    long = itertools.cycle([[buf, warm, np.int32(0), np.int32(planted_long(n, plant)), np.int32(1), out, cyc,
                             np.uint32(s)]
                            for s in s0])
    # the short and long runs alternate (timing.measure_pair): timed as two blocks, the host's drift
    # between them once made a 1 MiB difference negative on PoCL; each pair differences the same state
    m1, m2 = measurer.pair(lambda: device.launch(kernel, (1,), (1,), next(short)),
                           lambda: device.launch(kernel, (1,), (1,), next(long)))
    return [(t2 - t1) * clock_mhz * 1e6 / (n * UNROLL) for t1, t2 in zip(m1.samples, m2.samples)]


#: On CPU devices, footprints in this range land in the host's shared last-level cache, whose share
#: depends on the other tenants' traffic: four PoCL runs on a 2-core CI host read −420 to 1,113 cycles
#: at 16 MiB (vs 3.5 at 16 KiB and 385–415 at 64 MiB), and later local runs −68, 34 and 438 cycles at
#: 4 MiB with no code change. Such a point gates nothing, so it is not a metric (both ends: 4 MiB
#: included, 64 MiB — past the LLC — kept).
CPU_SHARED_LLC = (4 * MiB, 64 * MiB)


def anchors(sizes: Sequence[int], is_cpu: bool = False) -> list[int]:
    """The swept footprints that are 1 KiB × 4^k: fixed per device (the sweep's range depends only on the
    reported cache size), so their latencies can be metrics with the same names in every run; on CPU
    devices without the points strictly inside :data:`CPU_SHARED_LLC`."""
    lo, hi = CPU_SHARED_LLC
    return [f for f in sizes if f >= KiB and f % KiB == 0 and (f // KiB) & (f // KiB - 1) == 0
            and ((f // KiB).bit_length() - 1) % 2 == 0 and not (is_cpu and lo <= f < hi)]


def footprint_label(footprint: int) -> str:
    """``4KiB``, ``16MiB``: the footprint part of ``memory.chase.<label>.latency.cycles``."""
    return f"{footprint // MiB}MiB" if footprint >= MiB and footprint % MiB == 0 else f"{footprint // KiB}KiB"


def recorded_levels(found: Sequence["Level"], is_cpu: bool) -> list["Level"]:
    """The detected levels that become named metrics. A GPU's curve (clock64 or long event sections on an
    idle device) has clean L1 → L2 → DRAM steps. On a CPU OpenCL device only the first step (L1) is
    sharp: beyond it, shared cores, L2/L3 slices and event jitter on a loaded host move the detected
    boundaries and even the number of levels from run to run, so naming them (``l2``/``dram``) would give a
    different metric set each run and the gate would report metrics as missing. There the levels stay
    in ``info`` and the per-footprint latencies (:func:`anchors`) carry the curve."""
    return list(found[:1]) if is_cpu else list(found)


@dataclass
class Level:
    name: str
    latency: float
    size: int  # largest footprint still at this level's latency (the detected capacity)
    points: int


#: a warmed footprint whose latency is within this factor of the largest warmed footprint's is at the DRAM
#: level: the step from a far L2 partition to DRAM (H100: 1.14–1.32×) straddles the plateaus' 1.25× jump,
#: so a running median does not find it in every run; DRAM's own warmed footprints lie within 1.03× of
#: each other
DRAM_NEAR = 1.12
#: DRAM's latency is read only at footprints this many times the last L2 footprint: just past the L2 a chain
#: stays partly resident, so a DRAM change moves it by only part of the change and would dilute the level
#: (docs/probes.md names the runs that showed it)
DRAM_CLEAR = 1.5


def levels(sizes: Sequence[int], lat: Sequence[float], jump: float = 1.25,
           warm_limit: int | None = None) -> list[Level]:
    """Cache levels from a latency-vs-footprint curve: the first plateau is L1; DRAM starts at the first
    footprint past it within :data:`DRAM_NEAR` of the largest warmed footprint's latency and ends there
    (footprints past ``warm_limit`` were chased cold, a transient, and only bound the curve); everything
    between is L2 (H100's L2 shows a near and a far partition: latency of the first, size of the last).
    DRAM's latency is the median of its footprints at least :data:`DRAM_CLEAR` × the L2's size (the last
    warmed one where none is), so a chain still partly in L2 does not dilute it."""
    warmed = [i for i, f in enumerate(sizes) if warm_limit is None or f <= warm_limit] or list(range(len(sizes)))
    last = warmed[-1]
    first = _merged_spans(plateaus(lat[:last + 1], jump))[0]
    out = [Level("l1", _body_median(lat, *first), int(sizes[first[1] - 1]), first[1] - first[0])]
    if first[1] > last:
        return out
    dram = next(i for i in range(first[1], last + 1) if lat[i] * DRAM_NEAR >= lat[last])
    if dram > first[1]:
        near = _merged_spans(plateaus(lat[first[1]:dram], jump))[0]
        out.append(Level("l2", _body_median(lat, first[1] + near[0], first[1] + near[1]), int(sizes[dram - 1]),
                         dram - first[1]))
    clear = [i for i in range(dram, last + 1) if dram == first[1] or sizes[i] >= DRAM_CLEAR * sizes[dram - 1]]
    clear = clear or [last]
    out.append(Level("dram", float(np.median([lat[i] for i in clear])), int(sizes[last]), len(clear)))
    return out


def _merged_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A one-point "plateau" before the last is a transition between two levels: it joins the next one."""
    merged: list[tuple[int, int]] = []
    pending = None
    for k, (i, j) in enumerate(spans):
        if j - i == 1 and k < len(spans) - 1:
            pending = i if pending is None else pending
            continue
        merged.append((i, j) if pending is None else (pending, j))
        pending = None
    return merged


def _body_median(lat: Sequence[float], i: int, j: int) -> float:
    """A plateau's latency: the median of its points without the transitional first one (when it has more
    than two)."""
    return float(np.median(lat[i + 1:j] if j - i > 2 else lat[i:j]))
