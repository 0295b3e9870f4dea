"""Exhaustive accuracy certificates: the maximum error of a unary binary32 function over *every* input
of a range, found on the device and confirmed in MPFR.

A maximum over random samples of a function with a large error is no stable statistic (two runs of
``__cosf`` read 71,837 and 797,077 ulp): it depends on which inputs the sample happened to hit. Over
all 2^32 inputs (or all inputs of a documented domain) the maximum is a certificate — the same number
every run on the same device, library and driver, so a change is news. The device sweep
(:mod:`.sweep`) finds the worst input against the binary64 function of the same library; the host
then re-scores that input with MPFR, so the certified figure does not rest on the device's fp64.

Two maxima come out of one sweep. The one in the backend's documented convention (``metric``: CUDA's
steps from the correctly rounded result, an integer) is what the documented bound is checked against;
many inputs share its value, so its worst input is a tie-break (the largest bit pattern among them).
The fractional ulp error ``|y − f(x)| / ulp(f(x))`` is what the published exhaustive tables list
(Gladman, Innocente, Mather, Zimmermann, "Accuracy of Mathematical Functions in Single, Double, Double
Extended, and Quadruple Precision"): its maximum (:attr:`Certificate.max_ulp`) is re-scored in MPFR at
its own worst input (:attr:`Certificate.worst_ulp`), the input where the largest error occurs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from . import check, expr_kernels, fp_formats, mpfr
from .sweep import run_sweep

ALL = ((0, 1 << 32),)


def _bits(x: float) -> int:
    return int(np.array([x], np.float32).view(np.uint32)[0])


def _excluded_bits(exclude: tuple[float, float]) -> tuple[int, int]:
    """(first, last) bit patterns of the binary32 values inside the open interval ``exclude`` (which must
    not contain 0: on one side of zero the bit patterns of the values are contiguous)."""
    lo, hi = exclude
    if not lo < hi or lo < 0 < hi:
        raise ValueError(f"excluded interval {exclude} must be non-empty and on one side of zero")
    vals = np.array([lo, hi], np.float32)
    inside = [float(np.nextafter(vals[0], np.float32(np.inf))) if float(vals[0]) <= lo else float(vals[0]),
              float(np.nextafter(vals[1], np.float32(-np.inf))) if float(vals[1]) >= hi else float(vals[1])]
    a, b = sorted(_bits(v) for v in inside)
    return a, b


def bit_ranges(domain: tuple[float, float] | None,
               exclude: tuple[float, float] | None = None) -> tuple[tuple[int, int], ...]:
    """(first bit pattern, count) ranges covering every binary32 value in ``domain`` (both zeros
    included); ``None``: all 2^32 patterns, NaNs and infinities too. ``exclude``: an open interval left
    out (lgamma's, where CUDA documents no bound; only with ``domain=None``)."""
    if exclude is not None:
        if domain is not None:
            raise ValueError("an excluded interval is supported for the full range only")
        a, b = _excluded_bits(exclude)
        return tuple((s, n) for s, n in ((0, a), (b + 1, (1 << 32) - b - 1)) if n > 0)
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
    worst: dict[str, Any]  # input (decimal, hex, bits), device result, MPFR value, error
    checked: int
    device_s: float
    device_fp64_error: float  # what the device's fp64 comparison said at the worst input
    confirmed: bool  # MPFR agrees with the device comparison at the worst input
    mismatch_bits: int | None
    #: mean error over every input without an inf/nan mismatch, against the device's binary64 function
    #: (its own error, < 2^-28 binary32 ulp, is far below the gate's 1e-6); summed in a fixed order
    mean: float
    scored: int  # inputs in that mean
    #: the fractional maximum |y − f(x)| / ulp(f(x)) (Goldberg ulp, binary32 exponent range), MPFR-scored at
    #: the input where the sweep found it, that input (``worst_ulp``), and whether MPFR confirms the sweep there
    max_ulp: float = 0.0
    worst_ulp: dict[str, Any] | None = None
    ulp_confirmed: bool = True

    def info(self) -> dict[str, Any]:
        tie = "" if self.worst.get("metric") == "ulp" else (
            "the largest input bit pattern among those at the maximum (a tie-break: many inputs share an integer "
            "maximum); worst_ulp_fractional is the input with the largest error")
        return check.jsonable({"inputs": "exhaustive", "checked": self.checked, "device_s": self.device_s,
                               "worst": self.worst, "device_fp64_error": self.device_fp64_error,
                               "mpfr_confirmed": self.confirmed, "mismatch_input_bits": self.mismatch_bits,
                               "mean": self.mean, "mean_scored": self.scored,
                               "mean_reference": "the device's binary64 function",
                               "max_ulp_fractional": self.max_ulp, "worst_ulp_fractional": self.worst_ulp,
                               "ulp_fractional_confirmed": self.ulp_confirmed,
                               **({"worst_is": tie} if tie else {})})


#: how far (in the metric's units: ulp, or steps from the correctly rounded result) MPFR's re-score of the
#: worst input may lie from the sweep's own score (against the device's binary64 function) and still
#: confirm it; a larger gap means that reference disagrees with MPFR at the very input the certificate names
CONFIRM_TOLERANCE = 0.01


def confirms(rescored: float, swept: float) -> bool:
    """Whether MPFR's error at the worst input (``rescored``) confirms the sweep's (``swept``): within
    :data:`CONFIRM_TOLERANCE` plus a relative 1e-6 (errors of millions of ulp are not exact in binary64)."""
    return abs(rescored - swept) <= CONFIRM_TOLERANCE + 1e-6 * abs(swept)


def certify(device, fn: str, expr32: str, expr64: str, metric: str, *, domain: tuple[float, float] | None = None,
            exclude: tuple[float, float] | None = None, options: Sequence[str] = (), plant: bool = False,
            reference: str | None = None) -> Certificate:
    """Sweep every input of ``domain`` (all 2^32 when None, less the open interval ``exclude``) of
    ``expr32`` (an expression in ``x0``) against ``expr64``; return the maximum error in ``metric``
    (``cr`` or ``ulp``), re-scored in MPFR with the reference function ``reference`` (default ``fn``),
    and the mean over every input."""
    worst_err, worst_bits, total, secs, mism = -1.0, 0, 0, 0.0, None
    ulp_err, ulp_bits = -1.0, 0
    s_err, scored = 0.0, 0
    for start, count in bit_ranges(domain, exclude):
        r = run_sweep(device, expr32, expr64, 1, count, start=start, options=tuple(options), plant=plant,
                      checked_only=True, sums=True)
        err, bits = r.worst_cr if metric == "cr" else r.worst_ulp
        if err > worst_err:
            worst_err, worst_bits = err, bits
        if r.worst_ulp[0] > ulp_err:
            ulp_err, ulp_bits = r.worst_ulp
        total += count
        secs += r.seconds
        mism = r.mismatch_bits if mism is None else mism
        assert r.sums is not None
        s_err += r.sums[0] if metric == "cr" else r.sums[1]
        scored += r.sums[2]
    ref = reference or fn
    sc, worst = _rescore(device, expr32, options, plant, ref, worst_bits, metric)
    if metric == "ulp":
        u_max, u_worst = float(sc.max), worst
    else:
        u_sc, u_worst = _rescore(device, expr32, options, plant, ref, ulp_bits, "ulp")
        u_max = float(u_sc.max)
    return Certificate(float(sc.max), worst, total, secs, float(worst_err), confirms(float(sc.max), worst_err), mism,
                       s_err / scored if scored else 0.0, scored, u_max, u_worst, confirms(u_max, ulp_err))


def _rescore(device, expr32: str, options: Sequence[str], plant: bool, ref: str, bits: int,
             metric: str) -> tuple[Any, dict[str, Any]]:
    """MPFR's score of the device's result at the input with bit pattern ``bits`` in ``metric``, and that
    input's record (decimal, hex, bits, device result, MPFR value, error)."""
    fmt = fp_formats.FP32
    x = np.array([bits], np.uint32).view(np.float32)
    y = expr_kernels.evaluate(device, fmt, expr32 if "x0" in expr32 else f"{expr32}(x0)", [x], options, plant=plant)
    ex, sgn = mpfr.exact_pairs(ref, [x])
    sc = check.score(y, [x], ex, fmt, ref, metric, sgn)
    worst = {**sc.worst([x], y), "input_bits": f"0x{bits:08x}", "error": float(sc.max), "metric": metric,
             "mpfr": np.format_float_scientific(np.asarray(ex)[0], precision=21)}
    return sc, worst
