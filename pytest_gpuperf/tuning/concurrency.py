"""Concurrency tuner (Dao §3.4.1, §3.4.3, §3.5.3): occupancy vs. cache contention.

* Memory intensiveness λ = T_mem / T (Eq. 3.1 context). The thesis derives T_mem from profiler
  counters (#mem · AMAT / P). OpenCL has no counters, so T_mem is the time the kernel's memory
  traffic takes at the rate the calibration micro-benchmark sustains when fully coalesced: the
  thesis' own observation (Fig. 3.4) that "the execution time of the coalesced case is the time spent
  on memory operations".
* λ0 by the thesis' micro-benchmark (Fig. 3.6, ``in[STRIDE·gID + i]`` for 32 consecutive i):
  for STRIDE = 1, 2, 4, 8, 16 sweep the work-group sizes in increasing occupancy; at the first
  step where the time gets worse by more than 10 % record λ at the higher occupancy. λ0 = ∞ when no
  such step exists (the thesis' FirePro W8000 case).
* Filter: profile the lowest- and the highest-occupancy candidates; cache contention is taken to
  occur when the higher occupancy is more than 10 % slower (the thesis compares miss rates, which
  OpenCL does not expose); if it occurs *and* λ > λ0 at either, keep the sizes that minimise
  occupancy, else those that maximise it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..devices.base import Device
from ..devices.occupancy import Occupancy
from ..timing import observers
from ..timing.measure import MeasureConfig, measure
from ..devices.dialect import portable

Local = tuple[int, ...]

MICRO = r"""
__kernel void lambda_micro(__global const float* in, __global float* out, int stride) {
    int gid = get_global_id(0);
    float temp = 0.0f;
    for (int i = 0; i < 32; i++) temp += in[stride * gid + i];
    out[gid] = temp;
}
"""
STRIDES = (1, 2, 4, 8, 16)


@dataclass(frozen=True)
class Calibration:
    """λ0 and the coalesced transaction rate (bytes/s) that turns traffic into T_mem."""

    lambda0: float
    bytes_per_s: float
    stride_at: int  # STRIDE where contention was first seen (0 = never)
    table: dict[int, list[tuple[float, float, float]]]  # stride -> [(occupancy, µs, λ)]
    #: what the observers saw while the micro-benchmark ran (``timing.observers.inherit``): λ0 is computed
    #: once per device and read by later tests, whose figures inherit it
    marks: dict[str, Any] = field(default_factory=dict)

    def figure(self) -> float:
        """λ0 as the suite records it (``tuning.lambda0``): 1.0 where it is infinite — no stride slowed
        down at a higher occupancy, the thesis' FirePro case — which :meth:`record_info` says."""
        return self.lambda0 if self.lambda0 != math.inf else 1.0

    def record_info(self) -> dict[str, Any]:
        """What ``tuning.lambda0`` keeps beside the figure: where contention began, the coalesced rate, the
        sweep (per stride: occupancy, µs, λ) and the thesis' values to compare with."""
        table = {str(s): [[round(o, 3), round(t, 2), round(lam, 3)] for o, t, lam in rows]
                 for s, rows in self.table.items()}
        return {"stride_at": self.stride_at, "infinite": self.lambda0 == math.inf,
                "coalesced_GBps": round(self.bytes_per_s / 1e9, 1), "table": table,
                "thesis": "Table 3.3: GTX 580 0.52, GTX Titan 0.62, GTX Titan X 0.88, FirePro ∞", **self.marks}


def calibrate(device: Device, occupancy_of: Callable[[int, object], float], sizes: list[int],
              work_items: int, config: MeasureConfig) -> Calibration:
    """Run the thesis' micro-benchmark. ``occupancy_of(threads, kernel)`` is the calculator for this
    device applied to the compiled micro-benchmark; ``sizes`` the 1-D work-group sizes to sweep."""
    watched = observers.Capture(device)
    k = device.compile(portable(MICRO, device.info.backend), "lambda_micro")
    kernel_max = int(k.attributes.get("max_threads_per_block", 0) or 0)
    if kernel_max:
        sizes = [s for s in sizes if s <= kernel_max]
    n = int(work_items)
    pad = max(sizes)
    buf_in = device.to_device(np.random.default_rng(3).random(STRIDES[-1] * (n + pad) + 64, dtype=np.float32))
    buf_out = device.empty(4 * (n + pad))
    by_occ: dict[float, int] = {}
    for s in sizes:  # one representative (the smallest) size per occupancy level
        occ = occupancy_of(s, k)
        if occ > 0:
            by_occ.setdefault(round(occ, 4), s)
    levels = sorted(by_occ)
    table: dict[int, list[tuple[float, float, float]]] = {}
    t1 = None
    lambda0, found = math.inf, 0
    for stride in STRIDES:
        rows = []
        for occ in levels:
            s = by_occ[occ]
            m = measure(device, lambda s=s: device.launch(k, (-(-n // s) * s,), (s,), [buf_in, buf_out, np.int32(stride)]), config)
            rows.append((occ, m.stats.median))
        if stride == 1:
            t1 = min(t for _, t in rows)
        assert t1 is not None
        table[stride] = [(o, t * 1e6, min(1.0, stride * t1 / t)) for o, t in rows]
        if not found:
            for (o_lo, t_lo), (o_hi, t_hi) in zip(rows, rows[1:]):
                if t_hi > 1.10 * t_lo:
                    lambda0, found = min(1.0, stride * t1 / t_hi), stride
                    break
    # Stride-1 traffic: each work-item's 32 loads share one 128-byte line with its neighbours, so the
    # coalesced kernel moves ~(n + 32) floats in and n floats out.
    bytes_per_s = (8.0 * n) / t1 if t1 else math.inf
    return Calibration(lambda0, bytes_per_s, found, table, observers.inherit(watched))


def memory_intensiveness(bytes_moved: float, time_s: float, cal: Calibration) -> float:
    """λ = T_mem / T with T_mem = traffic / calibrated coalesced rate (clamped to [0, 1])."""
    if time_s <= 0 or not math.isfinite(cal.bytes_per_s):
        return 0.0
    return max(0.0, min(1.0, bytes_moved / cal.bytes_per_s / time_s))


@dataclass(frozen=True)
class ConcurrencyDecision:
    kept: list
    mode: str  # "max-occupancy" | "min-occupancy" | "no SM model"
    contention: bool
    lam: float
    occupancies: dict


def concurrency_filter(candidates: list, occupancy: Callable[[object], Occupancy | None],
                       profile: Callable[[object], float], bytes_moved: float, cal: Calibration | None
                       ) -> ConcurrencyDecision:
    """The thesis' concurrency tuner over ``candidates`` (configs). ``occupancy(cfg)`` from the
    calculator (None without an SM model → nothing is pruned); ``profile(cfg)`` times a config through
    the shared evaluator (these two runs are charged to the tuner)."""
    occs = {c: occupancy(c) for c in candidates}
    if not candidates or any(o is None for o in occs.values()) or cal is None:
        return ConcurrencyDecision(list(candidates), "no SM model", False, 0.0, {})
    valid = [c for c in candidates if occs[c].blocks > 0]  # type: ignore[union-attr]
    if not valid:
        raise ValueError("no candidate work-group size fits on an SM (registers or local memory exceed the limits)")
    occ = {c: occs[c].occupancy for c in valid}  # type: ignore[union-attr]
    lo_val, hi_val = min(occ.values()), max(occ.values())
    lo = min((c for c in valid if occ[c] == lo_val), key=_size)
    hi = max((c for c in valid if occ[c] == hi_val), key=_size)
    t_lo, t_hi = profile(lo), profile(hi)
    contention = hi_val > lo_val and t_hi > 1.10 * t_lo
    lam = max(memory_intensiveness(bytes_moved, t_lo, cal), memory_intensiveness(bytes_moved, t_hi, cal))
    if contention and lam > cal.lambda0:
        mode, target = "min-occupancy", lo_val
    else:
        mode, target = "max-occupancy", hi_val
    kept = [c for c in valid if math.isclose(occ[c], target)]
    return ConcurrencyDecision(kept, mode, contention, lam, {str(c): round(v, 4) for c, v in occ.items()})


def _size(cfg: object) -> int:
    local = getattr(cfg, "local", cfg)
    return int(np.prod(local))
