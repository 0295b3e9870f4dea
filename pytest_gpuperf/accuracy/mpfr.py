"""MPFR references through gmpy2 (mpmath where MPFR lacks the function).

Two kinds of reference, both one element at a time (so they confirm, they are not the bulk path):

* :func:`correctly_rounded` — the result in the target format itself: the MPFR context has the
  format's precision, exponent range and subnormal emulation (``subnormalize=True``) and the
  requested rounding mode, so MPFR's own single rounding gives the IEEE result.
* :func:`exact_pair` — the value at 256 bits (sums and fma exactly) with an unbounded exponent, as a
  long double and the sign of the remainder (for the ULP-against-exact metric and to decide which side
  of a rounding boundary it falls).
"""

from __future__ import annotations

import warnings
from typing import Callable, Sequence

import gmpy2
import mpmath
import numpy as np

from .fp_formats import Format
from .rounding import LD

ROUND = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero, "ru": gmpy2.RoundUp, "rd": gmpy2.RoundDown}
EXACT_BITS = 256


def target_context(fmt: Format, mode: str = "rn") -> gmpy2.context:
    """MPFR context emulating ``fmt`` exactly: MPFR exponents count significands in [1/2, 1)."""
    return gmpy2.context(precision=fmt.p, emin=fmt.emin - fmt.p + 2, emax=fmt.emax + 1, subnormalize=True,
                         round=ROUND[mode], trap_underflow=False, trap_overflow=False, trap_inexact=False,
                         trap_invalid=False, trap_divzero=False, allow_complex=False)


def exact_context(bits: int = EXACT_BITS) -> gmpy2.context:
    return gmpy2.context(precision=bits, emin=gmpy2.get_emin_min(), emax=gmpy2.get_emax_max(), round=gmpy2.RoundToNearest,
                         trap_underflow=False, trap_overflow=False, trap_inexact=False, trap_invalid=False,
                         trap_divzero=False, allow_complex=False)


def _mpmath(fn: Callable) -> Callable:
    """Wrap an mpmath function so it returns an mpfr of the current gmpy2 context's precision."""
    def call(*args: gmpy2.mpfr) -> gmpy2.mpfr:
        ctx = gmpy2.get_context()
        if any(gmpy2.is_nan(a) for a in args):
            return gmpy2.nan()
        if any(gmpy2.is_infinite(a) for a in args):
            return gmpy2.nan()  # sinpi/cospi(±inf) is nan
        with mpmath.workprec(ctx.precision + 64):
            v = fn(*[mpmath.mpf(a.as_integer_ratio()[0]) / a.as_integer_ratio()[1] for a in args])
            return gmpy2.mpfr(mpmath.nstr(v, int((ctx.precision + 64) * 0.302) + 5, min_fixed=1, max_fixed=0))
    return call


# MPFR-name → callable(x[, y[, z]]) under the active context. Names match functions.MathFunction.mpfr.
MPFR_FUNCS: dict[str, Callable] = {
    "add": gmpy2.add, "sub": gmpy2.sub, "mul": gmpy2.mul, "div": gmpy2.div, "sqrt": gmpy2.sqrt,
    "fma": gmpy2.fma, "rsqrt": gmpy2.rec_sqrt, "cbrt": gmpy2.cbrt, "hypot": gmpy2.hypot,
    "sin": gmpy2.sin, "cos": gmpy2.cos, "tan": gmpy2.tan, "asin": gmpy2.asin, "acos": gmpy2.acos,
    "atan": gmpy2.atan, "atan2": gmpy2.atan2, "sinh": gmpy2.sinh, "cosh": gmpy2.cosh, "tanh": gmpy2.tanh,
    "asinh": gmpy2.asinh, "acosh": gmpy2.acosh, "atanh": gmpy2.atanh, "exp": gmpy2.exp, "exp2": gmpy2.exp2,
    "exp10": gmpy2.exp10, "expm1": gmpy2.expm1, "log": gmpy2.log, "log2": gmpy2.log2, "log10": gmpy2.log10,
    "log1p": gmpy2.log1p, "pow": lambda x, y: gmpy2.mpfr(x) ** y, "erf": gmpy2.erf, "erfc": gmpy2.erfc,
    "tgamma": gmpy2.gamma, "lgamma": lambda x: gmpy2.lgamma(x)[0] if not gmpy2.is_nan(x) else gmpy2.nan(),
    "sinpi": _mpmath(mpmath.sinpi), "cospi": _mpmath(mpmath.cospi), "recip": lambda x: 1 / gmpy2.mpfr(x),
    "fmod": gmpy2.fmod,
}


def _call(name: str, args: Sequence[float]) -> gmpy2.mpfr:
    fn = MPFR_FUNCS.get(name)
    if fn is None:
        raise ValueError(f"no MPFR reference for {name!r}; known: {sorted(MPFR_FUNCS)}")
    return fn(*[gmpy2.mpfr(float(a)) for a in args])


def correctly_rounded(name: str, args: Sequence[float], fmt: Format, mode: str = "rn") -> float:
    """``name(args)`` correctly rounded to ``fmt`` in ``mode`` by MPFR (a Python float holding the value)."""
    with gmpy2.context(target_context(fmt, mode)) as ctx:
        # inputs are exact in the wider exact context first; the op rounds once into the target context
        with gmpy2.context(exact_context()):
            xs = [gmpy2.mpfr(float(a)) for a in args]
        fn = MPFR_FUNCS[name]
        if name in ("sinpi", "cospi"):
            with gmpy2.context(exact_context()):
                hi = fn(*xs)
            v = ctx.plus(hi)
        else:
            v = fn(*xs)
        v = gmpy2.check_range(v)
        return float(v)


#: sums and fused multiply-adds of binary64 operands can need ~4300 bits to be exact (operand exponents
#: from 2^-2148 to 2^2048); at 256 bits MPFR would round 1e300 + 1e-300 to 1e300 and lose the remainder
#: sign that directed rounding depends on. Basic operations are therefore evaluated exactly.
EXACT_OP_BITS = {"add": 4400, "sub": 4400, "fma": 4400, "fmod": 2200, "hypot": 4400}


def exact_pair(name: str, args: Sequence[float], bits: int = EXACT_BITS) -> tuple[np.longdouble, int]:
    """``name(args)`` as the long double pair ``(r, sgn)`` of :mod:`rounding`: ``r`` the value rounded
    to nearest long double, ``sgn`` the sign of the remainder (MPFR at ``bits`` bits decides it; sums
    and fma at :data:`EXACT_OP_BITS`, where they are exact)."""
    bits = max(bits, EXACT_OP_BITS.get(name, 0))
    with gmpy2.context(exact_context(bits)):
        v = _call(name, args)
        if gmpy2.is_nan(v):
            return LD(np.nan), 0
        if gmpy2.is_infinite(v):
            return (LD(np.inf) if v > 0 else LD(-np.inf)), 0
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = LD(str(v)) if v != 0 else LD(0)
        if not np.isfinite(r) or (r == 0 and v != 0):  # beyond long double's range: keep the sign only
            return r, 0
        num, den = r.as_integer_ratio()
        rem = v - gmpy2.mpq(num, den)
        return r, int(gmpy2.sign(rem))


def exact_pairs(name: str, args: Sequence[np.ndarray], bits: int = EXACT_BITS) -> tuple[np.ndarray, np.ndarray]:
    """:func:`exact_pair` over arrays — the per-element MPFR loop used only for confirmation and for the
    (smaller) binary64 samples of functions no long double library provides (erf, erfc, tgamma, lgamma)."""
    cols = [np.asarray(a, dtype=np.float64) for a in args]
    n = len(cols[0])
    r = np.empty(n, LD)
    s = np.zeros(n, np.int8)
    for i in range(n):
        r[i], s[i] = exact_pair(name, [c[i] for c in cols], bits)
    return r, s
