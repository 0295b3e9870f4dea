"""Correct rounding of exact values to a target format, vectorized in long double.

An exact real value is carried as a pair ``(r, sgn)``: ``r`` is the value rounded to nearest in x87
long double (64-bit significand), ``sgn`` ∈ {-1, 0, +1} the sign of the remainder ``exact − r``.
Every rounding decision point of binary16/32/64 (a representable number or a midpoint between two)
has at most 54 significant bits, so it is itself a long double; if ``r`` differs from a decision
point, the exact value lies on the same side of it as ``r`` does, and if ``r`` equals it, ``sgn``
says on which side the exact value lies. That makes the rounding below exact in every mode, for
normal and subnormal results and on overflow, without a Python loop.
"""

from __future__ import annotations

import numpy as np

from .fp_formats import Format

MODES = ("rn", "rz", "ru", "rd")
LD = np.longdouble


def ulp_of(a: np.ndarray, fmt: Format) -> np.ndarray:
    """Goldberg ulp in ``fmt`` of magnitudes ``a`` ≥ 0: 2^(max(⌊log2 a⌋, emin) − p + 1).

    Zero gets the subnormal spacing; beyond the largest binade the top-binade spacing continues
    (values there are scored as if the exponent were unbounded)."""
    a = np.asarray(a, dtype=LD)
    finite = np.isfinite(a)
    _, e = np.frexp(np.where(finite, a, LD(1)))
    e = np.where(a == 0, fmt.emin, e.astype(np.int64) - 1)
    e = np.clip(e, fmt.emin, fmt.emax)
    return np.ldexp(LD(1), (e - fmt.p + 1).astype(np.int32))


def _ulp_below(a: np.ndarray, fmt: Format) -> np.ndarray:
    """Spacing just below magnitude ``a`` (half the ulp at a normal power of two)."""
    u = ulp_of(a, fmt)
    m, e = np.frexp(a)
    pow2 = (m == LD(0.5)) & (e.astype(np.int64) - 1 > fmt.emin)
    return np.where(pow2, u / 2, u)


def round_exact(r: np.ndarray, sgn: np.ndarray | int, fmt: Format, mode: str) -> np.ndarray:
    """Round the exact values ``r + (tiny with sign sgn)`` to ``fmt`` in ``mode``; returns long doubles
    that are exactly representable in ``fmt`` (or ±inf / nan)."""
    if mode not in MODES:
        raise ValueError(f"unknown rounding mode {mode!r}; use one of {MODES}")
    r = np.asarray(r, dtype=LD)
    sgn = np.broadcast_to(np.sign(np.asarray(sgn)).astype(np.int8), r.shape)
    s = np.where(np.signbit(r), -1, 1).astype(np.int8)
    a = np.abs(r)
    special = ~np.isfinite(a)
    a = np.where(special, LD(0), a)
    sg = sgn * s  # > 0: exact magnitude slightly larger than a
    u = ulp_of(a, fmt)
    lo = np.floor(a / u) * u
    on = lo == a
    down = np.where(on & (sg < 0), a - _ulp_below(a, fmt), lo)
    up = np.where(on, np.where(sg > 0, a + u, a), lo + u)
    down = np.where(on & (sg >= 0), a, down)
    if mode == "rz":
        res, grow = down, np.zeros(a.shape, bool)
    elif mode == "ru":
        grow = s > 0
        res = np.where(grow, up, down)
    elif mode == "rd":
        grow = s < 0
        res = np.where(grow, up, down)
    else:
        mid = (down + up) / 2
        k = np.fmod(down / ulp_of(down, fmt), 2)
        even_down = k == 0
        tie_up = np.where(sg > 0, True, np.where(sg < 0, False, ~even_down))
        res = np.where(a > mid, up, np.where(a < mid, down, np.where(tie_up, up, down)))
        grow = np.ones(a.shape, bool)
    over = res > fmt.max
    res = np.where(over, np.where(grow, LD(np.inf), fmt.max), res)
    out = s * res
    return np.where(special, r, out)
