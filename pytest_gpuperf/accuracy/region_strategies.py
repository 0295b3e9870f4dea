"""Hypothesis strategies for the dangerous regions of math functions, drawn as bit patterns of the
target format so shrinking moves towards small patterns (simple inputs) and every region is reachable:

* ``near_pi_over_2`` — within a few ulps of k·π/2 (argument-reduction cancellation), k up to 2^20;
* ``huge`` — trig arguments with |x| ≥ 2^20 (Payne–Hanek reduction);
* ``subnormal`` — the subnormal range (gradual underflow, FTZ);
* ``near(c)`` — within ``spread`` ulps of c (overflow/underflow edges of exp-like functions,
  cancellation of log near 1);
* ``tiny`` — |x| in [2^-40, 2^-5] (cancellation in expm1/log1p, small-argument paths).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from .fp_formats import Format


def _from_bits(fmt: Format, bits: int) -> float:
    return float(fmt.from_bits([bits])[0])


def _bits(fmt: Format, x: float) -> int:
    return int(fmt.to_bits([x])[0])


def near(fmt: Format, c: float, spread: int = 64) -> st.SearchStrategy[float]:
    base = _bits(fmt, c)
    return st.integers(-spread, spread).map(lambda d: _from_bits(fmt, base + d if c >= 0 else base - d))


def near_pi_over_2(fmt: Format, kmax: int = 1 << 20, spread: int = 4) -> st.SearchStrategy[float]:
    def build(k: int, d: int, neg: bool) -> float:
        b = _bits(fmt, k * math.pi / 2) + d
        x = _from_bits(fmt, b)
        return -x if neg else x
    return st.builds(build, st.integers(1, kmax), st.integers(-spread, spread), st.booleans())


def huge(fmt: Format) -> st.SearchStrategy[float]:
    frac = fmt.p - 1
    bias = (1 << (fmt.width - fmt.p - 1)) - 1
    lo = (bias + 20) << frac
    hi = ((2 * bias) << frac) | ((1 << frac) - 1)
    return st.builds(lambda b, neg: -_from_bits(fmt, b) if neg else _from_bits(fmt, b), st.integers(lo, hi), st.booleans())


def subnormal(fmt: Format) -> st.SearchStrategy[float]:
    frac = fmt.p - 1
    return st.builds(lambda b, neg: -_from_bits(fmt, b) if neg else _from_bits(fmt, b),
                     st.integers(1, (1 << frac) - 1), st.booleans())


def tiny(fmt: Format) -> st.SearchStrategy[float]:
    return st.builds(lambda e, m, neg: (-1 if neg else 1) * float(np.array(math.ldexp(1 + m, e), fmt.dtype)),
                     st.integers(-40, -6), st.floats(0, 1, exclude_max=True), st.booleans())


def regions(fmt: Format) -> dict[str, list[tuple[str, st.SearchStrategy[float]]]]:
    """function → [(region name, strategy)]: where each function is known to be hard."""
    big = float(np.log(np.finfo(fmt.dtype).max))
    small = float(np.log(np.finfo(fmt.dtype).tiny))
    sub = float(np.log(np.finfo(fmt.dtype).smallest_subnormal))
    trig = [("near_pi_over_2", near_pi_over_2(fmt)), ("huge", huge(fmt))]
    return {
        "sin": trig, "cos": trig, "tan": trig,
        "exp": [("overflow_edge", near(fmt, big)), ("underflow_edge", near(fmt, small)),
                ("subnormal_result", near(fmt, sub, 1 << 12))],
        "expm1": [("tiny", tiny(fmt)), ("overflow_edge", near(fmt, big))],
        "log1p": [("tiny", tiny(fmt)), ("near_-1", near(fmt, -1.0 + float(np.finfo(fmt.dtype).epsneg) * 64, 64))],
        "log": [("near_1", near(fmt, 1.0, 256)), ("subnormal", subnormal(fmt))],
        "log2": [("near_1", near(fmt, 1.0, 256)), ("subnormal", subnormal(fmt))],
        "cosh": [("overflow_edge", near(fmt, big + math.log(2)))],
        "sqrt": [("subnormal", subnormal(fmt))], "rsqrt": [("subnormal", subnormal(fmt))],
        "cbrt": [("subnormal", subnormal(fmt))],
    }
