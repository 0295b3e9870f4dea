"""Work-group scheduling microbenchmark (Dao thesis §2.4, Figs. 2.5-2.8): how the GPU hands work-groups to
its compute units, and in what order resident groups progress.

Every work-group's first work-item records the SM it runs on (``%smid``), the device time at its start,
after 20/40/60/80 % of its loop and at its end (``%globaltimer``, after a barrier, so the group's slowest
warp is in). The loop is a dependent chain of binary32 additions (``fp32``: no contention, Dao's Fig. 2.6a)
or binary64 ones (``fp64``: contention on the binary64 units, Fig. 2.6b, where he saw the *staircase*).
The launch has more groups than fit at once, so later groups wait for free slots.

From the trace (:func:`analyse`):

* ``first_round_distinct_sms`` — distinct SMs among the first ``n_sm`` groups over ``n_sm`` (Dao: the first
  16 groups go one to each of the GTX 580's 16 SMs, then the next 16 again, so 1.0);
* ``groups_per_sm_first_wave`` — median number of groups an SM starts before any group ends (P_sat);
* ``refill_fraction`` — share of the groups started after the first wave that start on an SM within
  :data:`REFILL_GAP` of a group's end on that SM (Dao's assumption 1: a new group as soon as one ends);
* ``staircase_ratio`` — median over SMs of the first-wave groups' longest / shortest duration (1 without
  a staircase; Dao's nbody: about 2);
* ``id_order`` — over every pair of one SM's first-wave groups, (pairs where the lower id ends first − pairs
  where it ends last) / pairs (Kendall's τ pooled over SMs; Dao's refined assumption 2: under contention
  the lowest id runs first, so near 1; without contention the ends tie or scatter, near 0).

``%smid`` and ``%globaltimer`` are CUDA's; OpenCL has neither an SM id nor a device-wide timer a kernel
can read, so the suite skips there with that reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

CITATION = ("Dao thesis §2.4 (GTX 580): the first groups go one per SM round-robin, a new group starts as soon "
            "as one ends (assumption 1); under contention the lowest group id progresses first (staircase)")
KINDS = ("fp32", "fp64")
#: a refill within this much device time after an end on the same SM counts as "as soon as one ends"
REFILL_GAP = 2e-6
FIELDS = 7  # sm, start, p20, p40, p60, p80, end

SOURCE = r"""
__device__ __forceinline__ unsigned long long gp_now() {
  unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ unsigned int gp_smid() {
  unsigned int s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }
template <typename T>
__device__ void gp_trace(int iters, T step, T* sink, unsigned long long* out) {
  __shared__ unsigned long long marks[FIELDS_N];
  if (threadIdx.x == 0) { marks[0] = gp_smid(); marks[1] = gp_now(); }
  T a = (T)threadIdx.x, b = step;
  int fifth = iters / 5;
  for (int q = 1; q <= 5; ++q) {
    for (int i = 0; i < fifth; ++i) { a = a + b; b = b - a; }
    __syncthreads();
    if (threadIdx.x == 0) marks[1 + q] = gp_now();
  }
  if (threadIdx.x == 0) for (int k = 0; k < FIELDS_N; ++k) out[(unsigned long long)blockIdx.x * FIELDS_N + k] = marks[k];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = a + b;
}
extern "C" __global__ void gp_sched_fp32(int iters, float step, float* sink, unsigned long long* out) {
  gp_trace<float>(iters, step, sink, out); }
extern "C" __global__ void gp_sched_fp64(int iters, double step, double* sink, unsigned long long* out) {
  gp_trace<double>(iters, step, sink, out); }
""".replace("FIELDS_N", str(FIELDS))

#: threads per group, groups per SM launched (more than fit at once at 256 threads), loop length
LOCAL = 256
GROUPS_PER_SM = 24
ITERS = {"fp32": 20000, "fp64": 4000}


@dataclass(frozen=True)
class Schedule:
    """The figures of one trace (see the module doc)."""

    first_round_distinct_sms: float
    groups_per_sm_first_wave: float
    refill_fraction: float
    staircase_ratio: float
    id_order: float
    groups: int
    sms: int


def analyse(trace: np.ndarray, n_sm: int) -> Schedule:
    """The figures of a trace: one row per group in id order, columns ``sm, start, p20..p80, end`` (ns)."""
    sm = trace[:, 0].astype(np.int64)
    start, end = trace[:, 1].astype(np.float64) * 1e-9, trace[:, 6].astype(np.float64) * 1e-9
    n = trace.shape[0]
    first = sm[: min(n_sm, n)]
    distinct = len(set(first.tolist())) / max(1, first.size)
    first_end = end.min()
    wave = start < first_end
    per_sm = np.bincount(sm[wave], minlength=n_sm)
    used = per_sm[per_sm > 0]
    later = np.flatnonzero(~wave)
    refilled = 0
    for g in later:
        ends = end[(sm == sm[g]) & (end <= start[g] + 1e-12)]
        refilled += int(ends.size > 0 and start[g] - ends.max() <= REFILL_GAP)
    ratios, agree, pairs = [], 0, 0
    for s in np.unique(sm[wave]):
        members = np.flatnonzero(wave & (sm == s))  # in id order
        d = end[members] - start[members]
        if members.size > 1:
            ratios.append(d.max() / d.min())
            e = end[members]
            later_ends = np.sign(e[None, :] - e[:, None])[np.triu_indices(members.size, 1)]
            agree += int(later_ends.sum())
            pairs += later_ends.size
    order = agree / pairs if pairs else 0.0
    return Schedule(distinct, float(np.median(used)) if used.size else 0.0,
                    refilled / later.size if later.size else 1.0,
                    float(np.median(ratios)) if ratios else 1.0, order, n, int(np.unique(sm).size))


def measure(device: Any, kind: str) -> Schedule:
    """Launch the ``kind`` trace kernel over ``GROUPS_PER_SM`` groups per SM on a CUDA ``device`` and
    analyse it."""
    info = device.info
    groups = info.compute_units * GROUPS_PER_SM
    kernel = device.compile(SOURCE, f"gp_sched_{kind}", ("-std=c++17",))
    dtype = np.float32 if kind == "fp32" else np.float64
    sink = device.empty(groups * LOCAL * np.dtype(dtype).itemsize)
    out = device.empty(groups * FIELDS * 8)
    args = [np.int32(ITERS[kind]), dtype(0.5), sink, out]
    device.launch(kernel, (groups * LOCAL,), (LOCAL,), args)  # warm-up: module load, clocks up
    device.synchronize(60.0)
    device.launch(kernel, (groups * LOCAL,), (LOCAL,), args)
    device.synchronize(60.0)
    trace = device.to_host(out, np.uint64, groups * FIELDS).reshape(groups, FIELDS)
    return analyse(trace, info.compute_units)


def records(kind: str, s: Schedule, inherited: dict[str, Any]) -> list[dict[str, Any]]:
    """The suite's records of one trace: ``sched.<kind>.<figure>``."""
    ident = {"local": LOCAL, "groups_per_sm": GROUPS_PER_SM, "iters": ITERS[kind]}
    info = {"citation": CITATION, "groups": s.groups, "sms_seen": s.sms, **inherited}
    figures = (("first_round_distinct_sms", "ratio", "higher"), ("groups_per_sm_first_wave", "count", "higher"),
               ("refill_fraction", "ratio", "higher"), ("staircase_ratio", "x", "lower"), ("id_order", "ratio", "higher"))
    return [{"name": f"sched.{kind}.{f}", "value": float(getattr(s, f)), "unit": unit, "better": better,
             "identity": ident, "info": info} for f, unit, better in figures]
