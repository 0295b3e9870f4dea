"""The binary32 sweep of one function on the device (:func:`.sweep.run_sweep`: every input, or every k-th
bit pattern, checked against the device's binary64 function in one pass), its maximum re-derived by MPFR
on the host, and its cost beside a plain one-kernel sweep against the binary64 reference.

Why a mode: all 2^32 inputs take a fraction of a second on a GPU but minutes on a CPU device, so CPU
devices sweep a strided subset unless asked; the mode is part of every sweep metric's identity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..timing.measure import observed
from . import check, expr_kernels, fp_formats, functions, mpfr, sweep
from .outcome import Outcome

#: the functions swept
SWEPT = ["exp", "sin", "log"]
#: the target of the exhaustive sweep: all 2^32 inputs within this many seconds of device time
EXHAUSTIVE_TARGET_S = 6.0
#: the target of the checked sweep: within this factor of the plain one-kernel sweep's device time
OVERHEAD_TARGET = 2.0


@dataclass(frozen=True)
class SweepPlan:
    """Which inputs one sweep checks: all 2^32 (``stride`` 1) or every ``stride``-th bit pattern."""

    exhaustive: bool
    stride: int
    count: int

    @property
    def mode(self) -> str:
        return "exhaustive" if self.exhaustive else f"stride{self.stride}"


def plan(fn: str, is_cpu: bool, exhaustive_option: bool) -> SweepPlan:
    """exp is swept over all 2^32 inputs on GPUs and, with ``--gpuperf-exhaustive``, on CPU devices too; the
    others stay strided (2^18 inputs on CPU devices, 2^24 on GPUs) with an odd stride, so every residue
    class of the exponent field is visited."""
    if fn == "exp" and (not is_cpu or exhaustive_option):
        return SweepPlan(True, 1, 1 << 32)
    count = 1 << (18 if is_cpu else 24)
    return SweepPlan(False, (1 << 32) // count + 1, count)


def overhead_band(exhaustive: bool, is_cpu: bool) -> dict[str, float] | None:
    """The gate's band of ``checked_over_reference``: none in exhaustive mode (the documented target is the
    bound), else one short pass each is noisy — on CPU devices one pass of an unchanged run took 2.2x."""
    if exhaustive:
        return None
    return {"rel": 2.0 if is_cpu else 1.0}


def check_sweep(device: Any, fn: str, exhaustive_option: bool) -> Outcome:
    """Sweep ``fn`` on ``device`` (one timed pass, watched like every measurement: its rate is a device
    figure): its records in recording order and the first problem found — the device's binary64 check
    disagreeing with MPFR, an inf/nan mismatch, or the documented bound exceeded."""
    info = device.info
    p = plan(fn, info.is_cpu, exhaustive_option)
    fn32, fn64 = fn + info.dialect.libm_float_suffix, fn  # the C library's names (``expf``, ``exp``)
    r = observed(device, lambda: sweep.run_sweep(device, fn32, fn64, p.stride, p.count))
    f = functions.FUNCTIONS[fn]
    bound = f.bound(info.backend, "fp32")
    metric = f.metric(info.backend, "fp32")
    err, bits = r.worst_cr if metric == "cr" else r.worst_ulp
    fmt = fp_formats.FP32
    x = np.array([bits], np.uint32).view(np.float32)
    y = expr_kernels.evaluate(device, fmt, f.expr(info.backend, "fp32", ["x0"]), [x])
    ex, sgn = mpfr.exact_pairs(fn, [x])
    sc = check.score(y, [x], ex, fmt, fn, metric, sgn)
    ident = {"inputs": p.mode, "checked": int(r.count)}
    base = f"accuracy.sweep.fp32.{fn}"
    records = [
        {"name": f"{base}.max_ulp", "value": sc.max, "unit": "ulp", "better": "bound", "bound": float(bound),
         "info": check.jsonable({"citation": f.citation(info.backend, "fp32"), "metric": metric,
                                 "mode": p.mode, "checked": r.count, "device_fp64_error": err,
                                 "worst": sc.worst([x], y), "mismatch_input_bits": r.mismatch_bits}),
         "identity": ident},
        {"name": f"{base}.checked_per_s", "value": r.count / r.seconds, "unit": "1/s", "better": "higher",
         "info": check.jsonable({"mode": p.mode, "checked": r.count, "device_s": r.seconds, "single_pass": True,
                                 "plain_sweep_per_s": r.count / r.plain_seconds,
                                 "checked_over_plain_time": r.seconds / r.plain_seconds,
                                 "reference_sweep_per_s": r.count / r.ref_seconds,
                                 "checked_over_reference_time": r.seconds / r.ref_seconds}), "identity": ident},
        # the yardstick: a plain one-kernel sweep against the fp64 reference (evaluate, compare, max)
        {"name": f"{base}.checked_over_reference", "value": r.seconds / r.ref_seconds, "unit": "x",
         "better": "bound" if p.exhaustive else "lower", "bound": OVERHEAD_TARGET if p.exhaustive else None,
         "tolerance": overhead_band(p.exhaustive, info.is_cpu),
         "info": check.jsonable({"target": "checked sweep within 2x of a plain one-kernel sweep "
                                           "against an fp64 reference on the device", "mode": p.mode,
                                 "checked_s": r.seconds, "reference_s": r.ref_seconds,
                                 "evaluate_only_s": r.plain_seconds,
                                 # inf where an fp32 result overflows below a finite fp64 reference
                                 "reference_max_ulp": r.ref_max_ulp}), "identity": ident},
    ]
    if p.exhaustive:
        records.append({"name": f"{base}.exhaustive_s", "value": r.seconds, "unit": "s", "better": "bound",
                        "bound": EXHAUSTIVE_TARGET_S,
                        "info": {"target": "all 2^32 inputs in <= 6 s", "plain_s": r.plain_seconds,
                                 "reference_s": r.ref_seconds}, "identity": ident})
    problem = None
    if not abs(sc.max - err) <= 0.01 + 1e-6 * err:
        problem = (f"device fp64 check says {err} but MPFR says {sc.max} at x={x[0]!r}: the fp64 reference is "
                   "not good enough")
    elif r.mismatch_bits is not None:
        problem = (f"{fn}: inf/nan mismatch at "
                   f"x={float(np.array([r.mismatch_bits], np.uint32).view(np.float32)[0])!r}")
    elif not sc.max <= bound:
        problem = f"{fn} fp32 sweep: {sc.max} ulp ({metric}) > documented {bound} at {sc.worst([x], y)}"
    return Outcome(records, problem)
