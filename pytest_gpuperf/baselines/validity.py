"""Physically impossible values are errors, never verdicts — the one rule for every figure a run records, every
baseline entry a builder makes and every entry a baseline file holds.

A negative latency, a bandwidth above the device's theoretical peak or a negative ULP error is
not a regression or an improvement — it is a broken measurement (a fit through noise, a timer
misread, a wrong byte count), and a gate that reports it as ``improved`` or ``pass`` is lying.

* :func:`problem`: a figure's value (negative in a unit of :data:`.classes.NON_NEGATIVE`, infinite, above
  the device's peak bandwidth, outside the metric's own range); the session raises it as a test failure,
  ``gpuperf compare`` reads it as ``error``.
* :func:`sample_problem`: its raw samples. A non-finite sample is impossible; so is a negative one of a
  non-negative unit, except in a *differenced* figure (:func:`differenced`: a difference of two timings,
  :data:`.catalog.DIFFERENCED` for the shipped suites, ``info["differenced"]`` for a user's own), whose single
  pairs may go negative on a noisy host while its median may not.
* :func:`samples_problem`: a value that lies outside its own samples.
* :func:`figure_problem`: all of them, and a NaN value, for one measured figure — what a run refuses to
  record (the session: the test fails with it, an error, never a verdict); :func:`metric_problem`: the same
  for one metric of a results document — what ``gpuperf baseline from-results``, ``init``
  (:mod:`.contention`), a fleet's baseline and ``--gpuperf-update-baselines`` refuse to make an entry from;
  :func:`entry_problem`: the same for a stored entry, which writing and loading a baseline file refuse
  (:mod:`.problems`).
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Mapping, Sequence

from . import catalog
from .classes import NON_NEGATIVE

#: the key of a metric's ``info`` (kept in its baseline entry) by which a figure of one's own declares itself
#: differenced: ``gpuperf_record(..., info={"differenced": True})``
DIFFERENCED = "differenced"

#: what to do about an impossible figure, said with every one
FIX = ("run it again alone (nothing else on the host or the card); if it stays impossible the measurement is broken "
       "— a kernel timing below the timer's resolution, a fit through noise, a wrong byte count — fix that")


#: the keys a tolerance may hold (the baseline schema's): relative and absolute band, k × the measured spread
#: a band's terms; ``step`` names the grid a point-valued figure lies on (detection power: any move of one step)
TOLERANCE_KEYS = ("rel", "abs", "k", "spread", "step")
#: other spellings of the units the checks know, and the spelling to write instead (a time spelled "usec" would
#: escape the negative-time check and the timing classes)
UNIT_SPELLINGS = {"sec": "s", "secs": "s", "second": "s", "seconds": "s", "msec": "ms", "millisecond": "ms",
                  "milliseconds": "ms", "usec": "us", "µs": "us", "μs": "us", "microsecond": "us", "microseconds": "us",
                  "nsec": "ns", "nanosecond": "ns", "nanoseconds": "ns", "cycle": "cycles", "clk": "cycles",
                  "clocks": "cycles", "ulps": "ulp", "byte": "bytes", "GBps": "GB/s", "gb/s": "GB/s"}


def tolerance_problem(tolerance: Any) -> str | None:
    """Why ``tolerance`` cannot be a metric's band, or None: a mapping of :data:`TOLERANCE_KEYS` to finite numbers
    of at least 0 (``{"rel": 0.05}`` is ±5 %)."""
    if tolerance is None:
        return None
    example = "e.g. tolerance={'rel': 0.05} (±5 %) or {'abs': 0.5} (± 0.5 in the metric's unit)"
    if not isinstance(tolerance, Mapping):
        return f"tolerance={tolerance!r} is not a mapping of {', '.join(TOLERANCE_KEYS)} to numbers: {example}"
    unknown = sorted(str(k) for k in tolerance if k not in TOLERANCE_KEYS)
    if unknown:
        return f"tolerance key(s) {', '.join(unknown)} unknown: use {', '.join(TOLERANCE_KEYS)}, {example}"
    bad = {k: v for k, v in tolerance.items() if _number(v) is None or _number(v) < 0}
    if bad:
        return f"tolerance {bad} must be finite numbers of at least 0: {example}"
    return None


def unit_problem(unit: str) -> str | None:
    """Why ``unit`` is spelled so the checks would not know it, with the spelling to use, or None."""
    known = UNIT_SPELLINGS.get(unit) or UNIT_SPELLINGS.get(unit.lower())
    return None if known is None or known == unit else f"unit {unit!r}: write {known!r}, the spelling the gate's checks know"


def problem(name: str, value: float, unit: str, *, peak_bandwidth_gbs: float | None = None,
            valid: tuple[float, float] | None = None, info: Mapping[str, Any] | None = None) -> str | None:
    """Why ``value`` cannot be a real measurement of ``name``, or None.

    ``valid``: the metric's own physical range, when the test knows one (e.g. a fraction in [0, 1]).
    NaN is not judged here (a comparison reads it ``regressed``/``worse``); a run refuses to record one and
    no baseline entry is made from one (:func:`figure_problem`)."""
    if math.isnan(value):
        return None
    if math.isinf(value):
        return f"impossible value: {name} = {value} {unit} is infinite; {FIX}"
    if unit in NON_NEGATIVE and value < 0:
        return (f"impossible value: {name} = {value:.6g} {unit} is negative — a figure in {unit} cannot be; "
                f"the measurement or its fit is broken (noise larger than the effect?); {FIX}")
    if unit == "GB/s" and peak_bandwidth_gbs and value > peak_bandwidth_gbs * 1.001:
        return (f"impossible value: {name} = {value:.6g} GB/s exceeds the device's theoretical peak "
                f"{peak_bandwidth_gbs:.6g} GB/s (memory clock × bus width); the byte count or the timing is wrong")
    if valid is not None:
        lo, hi = valid
        if not lo <= value <= hi:
            return f"impossible value: {name} = {value:.6g} {unit} is outside its physical range [{lo:g}, {hi:g}]"
    return None


def differenced(name: str, declared: Mapping[str, Any] | None = None) -> bool:
    """Whether ``name`` is a difference of two timings, whose single samples may be negative: a shipped suite's
    figure named in :data:`.catalog.DIFFERENCED`, or one whose ``info`` (or baseline entry) ``declared`` it
    (:data:`DIFFERENCED`)."""
    return bool(isinstance(declared, Mapping) and declared.get(DIFFERENCED)) or catalog.differenced(name) is not None


def _number(x: Any) -> float | None:
    """A sample or value as a float: a number, or the text a results file writes a non-finite one as
    (``"nan"``, ``"inf"``, ``"-inf"``); None for anything else."""
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str):
        try:
            y = float(x)
        except ValueError:
            return None
        return y if not math.isfinite(y) else None
    return None


def sample_problem(name: str, unit: str, samples: Sequence[Any] | None, *, differenced: bool) -> str | None:
    """Why the raw samples of ``name`` cannot all be measurements, or None: a sample that is not a finite
    number; in a unit of :data:`.classes.NON_NEGATIVE`, a negative sample — or, for a ``differenced`` figure
    (:func:`differenced`), a negative median of them (one pair of two timings may come out negative on a
    noisy host; the figure, their median, cannot)."""
    xs = [y for y in map(_number, () if samples is None else samples) if y is not None]
    if not xs:
        return None
    bad = [x for x in xs if not math.isfinite(x)]
    if bad:
        return (f"impossible value: {name}: {len(bad)} of its {len(xs)} samples are not finite numbers ({bad[0]}) — "
                f"a measured {unit} figure is finite; {FIX}")
    if unit not in NON_NEGATIVE or min(xs) >= 0:
        return None
    if differenced:
        median = statistics.median(xs)
        if median < 0:
            return (f"impossible value: {name}: the median of its {len(xs)} samples is {median:.4g} {unit}, negative "
                    "— a difference of two timings may be negative in one pair, never at its median (noise larger "
                    f"than the effect); {FIX}")
        return None
    neg = [x for x in xs if x < 0]
    return (f"impossible value: {name}: {len(neg)} of its {len(xs)} samples are negative (lowest {min(neg):.4g} "
            f"{unit}) — a {unit} figure cannot be; {FIX}. A figure that is a difference of two timings says so "
            f"(info['{DIFFERENCED}'], or its row of DIFFERENCED in baselines/catalog.py): then only its median must "
            "not be negative")


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


def figure_problem(name: str, value: float, unit: str, samples: Sequence[Any] | None = None,
                   info: Mapping[str, Any] | None = None, *, peak_bandwidth_gbs: float | None = None,
                   valid: tuple[float, float] | None = None) -> str | None:
    """Why a measured figure — its value, its raw samples, its ``info`` (which may declare it differenced) —
    cannot be a measurement, or None: a value that is not a number, or any problem of :func:`problem`,
    :func:`sample_problem` or :func:`samples_problem`. What a run refuses to record and every builder of a
    baseline entry refuses to make one from (:func:`metric_problem`)."""
    if math.isnan(value):
        return f"impossible value: {name} = nan {unit} is not a number — a measured figure is finite; {FIX}"
    return (problem(name, value, unit, peak_bandwidth_gbs=peak_bandwidth_gbs, valid=valid)
            or sample_problem(name, unit, samples, differenced=differenced(name, info))
            or samples_problem(name, value, unit, samples))


def metric_problem(metric: Mapping[str, Any], peak_bandwidth_gbs: float | None = None) -> str | None:
    """:func:`figure_problem` of one metric of a results document (``name``, ``value``, ``unit``,
    ``stats.samples``, ``info``; a results file writes a non-finite value as ``"nan"``, ``"inf"``). A metric
    without a value (None) is not a measured figure and is not judged here."""
    value = _number(metric.get("value"))
    if value is None:
        return None
    stats = metric.get("stats")
    info = metric.get("info")
    return figure_problem(str(metric.get("name")), value, str(metric.get("unit")),
                          stats.get("samples") if isinstance(stats, Mapping) else None,
                          info if isinstance(info, Mapping) else None, peak_bandwidth_gbs=peak_bandwidth_gbs)


def entry_problem(name: str, entry: Mapping[str, Any]) -> str | None:
    """Why a baseline entry holds a value no measurement can take, or None: its value (:func:`problem`) or its
    stored samples (:func:`sample_problem`; a differenced figure by its name or the entry's own
    :data:`DIFFERENCED`). A value or sample that is not a number at all is the file's format problem
    (:mod:`.problems`), not judged here."""
    value = entry.get("value")
    unit = str(entry.get("unit"))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return None
    samples = entry.get("samples")
    samples = samples if isinstance(samples, list) else None
    return problem(name, float(value), unit) or sample_problem(name, unit, samples,
                                                               differenced=differenced(name, entry))
