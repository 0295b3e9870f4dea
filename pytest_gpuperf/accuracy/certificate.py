"""Exhaustive accuracy certificates: the maximum error of a unary binary32 function over *every* input
of a range, found on the device and confirmed in MPFR.

A maximum over random samples of a function with a large error is no stable statistic (two runs of
``__cosf`` read 71,837 and 797,077 ulp): it depends on which inputs the sample happened to hit. Over
all 2^32 inputs (or all inputs of a documented domain) the maximum is a certificate — the same number
every run on the same device, library and driver, so a change is news. The device sweep
(:mod:`.sweep`) finds the worst input against the binary64 function of the same library; the host
then re-scores that input with MPFR, so the certified figure does not rest on the device's fp64.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from . import check, formats, kernels, mpfr
from .sweep import run_sweep

ALL = ((0, 1 << 32),)


def _bits(x: float) -> int:
    return int(np.array([x], np.float32).view(np.uint32)[0])


def bit_ranges(domain: tuple[float, float] | None) -> tuple[tuple[int, int], ...]:
    """(first bit pattern, count) ranges covering every binary32 value in ``domain`` (both zeros
    included); ``None``: all 2^32 patterns, NaNs and infinities too."""
    if domain is None:
        return ALL
    lo, hi = (float(np.float32(v)) for v in domain)
    out = []
    if hi >= 0:  # +0 … hi: bit patterns increase with the value
        a = _bits(max(lo, 0.0))
        out.append((a, _bits(hi) - a + 1))
    if lo < 0:  # −0 … lo: bit patterns increase with the magnitude
        a = _bits(-0.0) if hi >= 0 else _bits(hi)
        out.append((a, _bits(lo) - a + 1))
    return tuple(out)


@dataclass(frozen=True)
class Certificate:
    """The certified maximum in the requested convention, where it is, and how it was obtained."""

    max: float
    worst: dict[str, Any]
    checked: int
    device_s: float
    device_fp64_error: float  # what the device's fp64 comparison said at the worst input
    confirmed: bool  # MPFR agrees with the device comparison at the worst input
    mismatch_bits: int | None

    def info(self) -> dict[str, Any]:
        return check.jsonable({"inputs": "exhaustive", "checked": self.checked, "device_s": self.device_s,
                               "worst": self.worst, "device_fp64_error": self.device_fp64_error,
                               "mpfr_confirmed": self.confirmed, "mismatch_input_bits": self.mismatch_bits})


def certify(device, fn: str, expr32: str, expr64: str, metric: str, *, domain: tuple[float, float] | None = None,
            options: Sequence[str] = (), plant: bool = False, reference: str | None = None) -> Certificate:
    """Sweep every input of ``domain`` (all 2^32 when None) of ``expr32`` (an expression in ``x0``)
    against ``expr64``; return the maximum error in ``metric`` (``cr`` or ``ulp``), re-scored in MPFR
    with the reference function ``reference`` (default ``fn``)."""
    worst_err, worst_bits, total, secs, mism = -1.0, 0, 0, 0.0, None
    for start, count in bit_ranges(domain):
        r = run_sweep(device, expr32, expr64, 1, count, start=start, options=tuple(options), plant=plant,
                      checked_only=True)
        err, bits = r.worst_cr if metric == "cr" else r.worst_ulp
        if err > worst_err:
            worst_err, worst_bits = err, bits
        total += count
        secs += r.seconds
        mism = r.mismatch_bits if mism is None else mism
    fmt = formats.FP32
    x = np.array([worst_bits], np.uint32).view(np.float32)
    y = kernels.evaluate(device, fmt, expr32 if "x0" in expr32 else f"{expr32}(x0)", [x], options, plant=plant)
    ref = reference or fn
    ex, sgn = mpfr.exact_pairs(ref, [x])
    sc = check.score(y, [x], ex, fmt, ref, metric, sgn)
    confirmed = abs(sc.max - worst_err) <= 0.01 + 1e-6 * abs(worst_err)
    return Certificate(float(sc.max), sc.worst([x], y), total, secs, float(worst_err), confirmed, mism)
