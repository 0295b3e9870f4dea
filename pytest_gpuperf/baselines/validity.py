"""Physically impossible values are errors, never verdicts.

A negative latency, a bandwidth above the device's theoretical peak or a negative ULP error is
not a regression or an improvement — it is a broken measurement (a fit through noise, a timer
misread, a wrong byte count), and a gate that reports it as ``improved`` or ``pass`` is lying.
:func:`problem` names the metric and the value; the session raises it as a test failure.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

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
