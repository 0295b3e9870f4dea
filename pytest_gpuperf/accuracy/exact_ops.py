"""Exact results of the basic operations as long double pairs ``(r, sgn)`` (see :mod:`rounding`).

Error-free transformations in x87 long double (64-bit significand, exponent range far beyond
binary64's, so nothing over- or underflows for binary16/32/64 operands):

* TwoSum (Knuth) gives ``a + b = s + e`` exactly.
* TwoProduct (Dekker, splitting at 2^32 + 1) gives ``a · b = p + e`` exactly.
* ÷ and sqrt: ``q = RN_ld(a / b)``; the sign of the remainder ``a − q·b`` (computed exactly with
  TwoProduct) is the sign of ``a/b − q`` (times sign b); likewise ``a − q²`` for sqrt.

A Python loop never runs here: these are whole-array numpy operations.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .rounding import LD

SPLIT = LD(2.0 ** 32 + 1)
OPS = ("add", "sub", "mul", "div", "sqrt", "fma")
ARITY = {"add": 2, "sub": 2, "mul": 2, "div": 2, "sqrt": 1, "fma": 3}


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = SPLIT * a
    hi = c - (c - a)
    return hi, a - hi


def two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def _clean(r: np.ndarray, sgn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Non-finite results carry no remainder (the EFT terms are nan there)."""
    fin = np.isfinite(r)
    sgn = np.where(fin & np.isfinite(sgn), np.sign(sgn), 0).astype(np.int8)
    return r, sgn


def exact_op(op: str, *args: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(r, sgn)`` of ``op(*args)`` for operands given in any of the binary formats."""
    if op not in OPS:
        raise ValueError(f"unknown basic operation {op!r}; use one of {OPS}")
    xs = [np.asarray(a).astype(LD) for a in args]
    if len(xs) != ARITY[op]:
        raise ValueError(f"{op} takes {ARITY[op]} operands, got {len(xs)}")
    with np.errstate(all="ignore"):
        r, sgn = _IMPL[op](*xs)
        # where the plain long double evaluation is inf/nan (an infinite or nan operand, inf − inf), the
        # error-free terms are nan: the plain value is the exact IEEE result there
        plain = _PLAIN[op](*xs)
        bad = ~np.isfinite(plain)
        r = np.where(bad, plain, r)
        return _clean(r, np.where(bad, 0, sgn))


def _add(a, b):
    return two_sum(a, b)


def _sub(a, b):
    return two_sum(a, -b)


def _mul(a, b):
    return two_prod(a, b)


def _div(a, b):
    q = a / b
    p, e = two_prod(q, b)
    rem = (a - p) - e  # a − p is exact (Sterbenz); the sign of the sum is right
    return q, np.sign(rem) * np.sign(b)


def _sqrt(a):
    q = np.sqrt(a)
    p, e = two_prod(q, q)
    return q, np.sign((a - p) - e)


def _fma(a, b, c):
    p, e1 = two_prod(a, b)
    s, e2 = two_sum(p, c)
    t, e4 = two_sum(e2, e1)
    r, e3 = two_sum(s, t)
    rem = np.where(e3 != 0, np.sign(e3), np.sign(e4))
    return r, rem


_PLAIN: dict[str, Callable] = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
                               "div": lambda a, b: a / b, "sqrt": np.sqrt, "fma": lambda a, b, c: a * b + c}
_IMPL: dict[str, Callable] = {"add": _add, "sub": _sub, "mul": _mul, "div": _div, "sqrt": _sqrt, "fma": _fma}
