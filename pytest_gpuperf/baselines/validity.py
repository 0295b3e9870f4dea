"""Physically impossible values are errors, never verdicts.

A negative latency, a bandwidth above the device's theoretical peak or a negative ULP error is
not a regression or an improvement — it is a broken measurement (a fit through noise, a timer
misread, a wrong byte count), and a gate that reports it as ``improved`` or ``pass`` is lying.
:func:`problem` names the metric and the value; the session raises it as a test failure.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from .classes import NON_NEGATIVE


def problem(name: str, value: float, unit: str, *, peak_bandwidth_gbs: float | None = None,
            valid: tuple[float, float] | None = None, info: Mapping[str, Any] | None = None) -> str | None:
    """Why ``value`` cannot be a real measurement of ``name``, or None.

    ``valid``: the metric's own physical range, when the test knows one (e.g. a fraction in [0, 1]).
    NaN is not judged here: it stays a ``regressed`` verdict with its own message."""
    if math.isnan(value):
        return None
    if math.isinf(value):
        return f"impossible value: {name} = {value} {unit} is infinite"
    if unit in NON_NEGATIVE and value < 0:
        return (f"impossible value: {name} = {value:.6g} {unit} is negative — a {unit} figure cannot be; "
                "the measurement or its fit is broken (noise larger than the effect?)")
    if unit == "GB/s" and peak_bandwidth_gbs and value > peak_bandwidth_gbs * 1.001:
        return (f"impossible value: {name} = {value:.6g} GB/s exceeds the device's theoretical peak "
                f"{peak_bandwidth_gbs:.6g} GB/s (memory clock × bus width); the byte count or the timing is wrong")
    if valid is not None:
        lo, hi = valid
        if not lo <= value <= hi:
            return f"impossible value: {name} = {value:.6g} {unit} is outside its physical range [{lo:g}, {hi:g}]"
    return None


#: how far (relative to the samples' largest magnitude) a value may lie outside its samples' range: the
#: results file rounds the samples it keeps to seven digits
SAMPLES_SLACK = 1e-3


def samples_problem(name: str, value: float, unit: str, samples: Sequence[Any] | None) -> str | None:
    """Why a value and the raw samples recorded with it cannot both be true, or None: a value is the median
    (or another statistic) of its samples, so it lies within their range; a value of 0 GB/s beside samples
    near 900 GB/s, or samples that are all NaN, mean the figure or its samples are broken, and a comparison
    that tested the samples alone would call it ``same``."""
    if not samples:
        return None
    xs = [float(x) for x in samples if isinstance(x, (int, float)) and not isinstance(x, bool)]
    finite = [x for x in xs if math.isfinite(x)]
    if not finite:
        return (f"impossible value: {name}: none of its {len(samples)} samples is a finite number — the "
                "measurement is broken (all NaN or infinite)")
    if math.isnan(value):
        return None
    lo, hi = min(finite), max(finite)
    slack = SAMPLES_SLACK * max(abs(lo), abs(hi))
    if not lo - slack <= value <= hi + slack:
        return (f"impossible value: {name} = {value:.6g} {unit} lies outside its own samples "
                f"[{lo:.6g}, {hi:.6g}] — the value or its samples are wrong")
    return None
