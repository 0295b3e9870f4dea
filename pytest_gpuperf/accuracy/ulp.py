"""The ULP error metric.

Two figures per element, both in units of the target format:

* ``ulp`` — error against the *exact* value x (OpenCL's convention, Goldberg's ulp):
  ``|y − x| / ulp(x)``, ``ulp(x) = 2^(max(⌊log2|x|⌋, emin) − p + 1)``. At a binade edge the ulp is
  the spacing *above* the power of two (so 1 − 2^-25 and 1 + 2^-24 at x = 1 are both 0.5 ulp-of-1
  = 2^-24 apart ... the spacing of [1, 2)); subnormal and zero x use the fixed subnormal spacing
  2^(emin − p + 1). A correctly rounded result scores ≤ 0.5 in round-to-nearest, < 1 in directed modes.
* ``cr`` — distance to the correctly rounded result ``RN(x)`` (or ``RM(x)`` for rounding mode M),
  counted in representable numbers between them (CUDA's convention). Correct rounding scores 0.

An infinite device result against a finite exact value is scored as ±2^(emax+1), the value IEEE
overflow stands for. inf/nan mismatches are a class of their own, never a number: ``NAN_MISMATCH``
when exactly one of y and the exact result is nan, ``INF_MISMATCH`` when y and the correctly rounded
result disagree on being ±inf (or on its sign). Those elements get ``ulp = cr = nan``.
Signed zeros compare equal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fp_formats import Format
from .rounding import LD, round_exact, ulp_of

OK, NAN_MISMATCH, INF_MISMATCH = 0, 1, 2
CLASS_NAMES = {OK: "ok", NAN_MISMATCH: "nan mismatch", INF_MISMATCH: "inf mismatch"}


def ordered_key(x: np.ndarray, fmt: Format) -> np.ndarray:
    """Bit patterns mapped to integers in the order of the values (−0 and +0 both map to 0)."""
    bits = fmt.to_bits(x).astype(np.int64)
    sign = np.int64(1) << (fmt.width - 1)
    if fmt.width == 64:  # int64 arithmetic: the sign bit already makes the value negative
        mag = bits & np.int64(0x7FFFFFFFFFFFFFFF)
        return np.where(bits < 0, -mag, mag)
    mag = bits & (sign - 1)
    return np.where(bits & sign, -mag, mag)


def cr_distance(y: np.ndarray, ref_rounded: np.ndarray, fmt: Format) -> np.ndarray:
    """Number of representable steps between ``y`` and the correctly rounded result (both in ``fmt``)."""
    return np.abs(ordered_key(y, fmt) - ordered_key(np.asarray(ref_rounded).astype(fmt.dtype), fmt))


def widen(v: np.ndarray) -> np.ndarray:
    """``v`` as long doubles, every nan (a signalling one included) a quiet nan: converting a signalling
    nan raises the invalid-operation flag (numpy's "invalid value encountered in cast"). A device may
    return one (PoCL's log1p below -1 does), and a search over all bit patterns draws them as inputs."""
    v = np.asarray(v)
    nan = np.isnan(v)
    return np.where(nan, LD(np.nan), np.where(nan, 0, v).astype(LD))


@dataclass
class UlpErrors:
    ulp: np.ndarray  # float64, error against the exact value; nan for mismatch classes
    cr: np.ndarray  # float64, steps to the correctly rounded result; nan for mismatch classes
    cls: np.ndarray  # int8 class per element (OK / NAN_MISMATCH / INF_MISMATCH)
    rounded: np.ndarray  # correctly rounded reference (long double, representable in fmt)


def ulp_errors(y: np.ndarray, exact: np.ndarray, fmt: Format, sgn: np.ndarray | int = 0,
               mode: str = "rn") -> UlpErrors:
    """Score device results ``y`` (dtype of ``fmt``) against exact values ``exact`` (long double, with
    remainder signs ``sgn``); ``mode`` is the rounding the correct result uses for ``cr``."""
    y = np.asarray(y, dtype=fmt.dtype)
    x = np.asarray(exact, dtype=LD)
    rounded = round_exact(x, sgn, fmt, mode)
    ynan, xnan = np.isnan(y), np.isnan(x)
    yl = widen(y)
    cls = np.zeros(y.shape, np.int8)
    cls[ynan != xnan] = NAN_MISMATCH
    yinf, rinf = np.isinf(yl), np.isinf(rounded)
    inf_bad = ~ynan & ~xnan & ((yinf != rinf) | (yinf & rinf & (np.sign(yl) != np.sign(rounded))))
    cls[inf_bad] = INF_MISMATCH
    bad = cls != OK
    both_nan = ynan & xnan
    both_inf = yinf & rinf & ~inf_bad
    # the elements with a numeric error: finite exact value, a number from the device (an infinite one
    # stands for 2^(emax+1)); both nan, both the same infinity and an infinite exact value score 0
    scored = ~bad & ~ynan & ~both_inf & np.isfinite(x)
    ys = np.where(yinf, np.copysign(np.ldexp(LD(1), fmt.emax + 1), np.where(ynan, LD(0), yl)), yl)
    xs = np.where(scored, x, LD(0))
    err_ld = np.abs(np.where(scored, ys, LD(0)) - xs) / ulp_of(np.abs(xs), fmt)
    # errors beyond float64's range (fp64 results far from tiny exact values: up to 2^2098 ulp) are inf
    huge = err_ld > LD(np.finfo(np.float64).max)
    err = np.where(huge, LD(0), err_ld).astype(np.float64)
    err[huge] = np.inf
    cr = cr_distance(np.where(ynan, 0, y), np.where(np.isnan(rounded), LD(0), rounded), fmt).astype(np.float64)
    cr = np.where(both_nan, 0.0, cr)
    err[bad] = np.nan
    cr[bad] = np.nan
    return UlpErrors(err, cr, cls, rounded)
