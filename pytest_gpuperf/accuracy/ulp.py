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
    yl = y.astype(LD)
    cls = np.zeros(y.shape, np.int8)
    ynan, xnan = np.isnan(yl), np.isnan(x)
    cls[ynan != xnan] = NAN_MISMATCH
    yinf, rinf = np.isinf(yl), np.isinf(rounded)
    inf_bad = ~ynan & ~xnan & ((yinf != rinf) | (yinf & rinf & (np.sign(yl) != np.sign(rounded))))
    cls[inf_bad] = INF_MISMATCH
    both_nan = ynan & xnan
    both_inf = yinf & rinf & ~inf_bad
    finite_x = np.isfinite(x)
    ys = np.where(yinf, np.copysign(np.ldexp(LD(1), fmt.emax + 1), yl), yl)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(ys - np.where(finite_x, x, LD(0))) / ulp_of(np.abs(np.where(finite_x, x, LD(0))), fmt)
    err = np.where(both_nan | both_inf | ~finite_x, LD(0), err).astype(np.float64)
    with np.errstate(invalid="ignore"):
        cr = cr_distance(np.where(ynan, 0, y), np.where(np.isnan(rounded), 0, rounded), fmt).astype(np.float64)
    cr = np.where(both_nan, 0.0, cr)
    bad = cls != OK
    err[bad] = np.nan
    cr[bad] = np.nan
    return UlpErrors(err, cr, cls, rounded)
