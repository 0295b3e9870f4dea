"""Test inputs: stratified over every binade of the format (so subnormals, huge and tiny arguments get
the same weight as [1, 2)), the special values, and a dense sample of the function's useful domain.

Generated from bit patterns, so each binade's significands are uniform and every exponent field
value (subnormal range included) appears ``per_binade`` times per sign."""

from __future__ import annotations

from typing import Optional

import numpy as np

from .fp_formats import Format
from .functions import EXCLUDE, MathFunction

#: values per binade and sign in a math function's seeded set, per format (before the device's factor)
PER_BINADE = {"fp32": 4, "fp64": 1}
#: size of the dense sample of the function's useful domain, per format (before the device's factor)
DENSE = {"fp32": 2000, "fp64": 1000}


def specials(fmt: Format) -> np.ndarray:
    """±0, ±inf, nan, the extremes of the subnormal and normal ranges, and neighbours of ±1."""
    one = np.array(1, fmt.dtype)
    vals = [0.0, np.inf, np.nan, float(fmt.min_subnormal), float(fmt.min_normal - fmt.min_subnormal),
            float(fmt.min_normal), float(fmt.max), 1.0, float(np.nextafter(one, np.array(2, fmt.dtype))),
            float(np.nextafter(one, np.array(0, fmt.dtype))), 2.0, 0.5]
    v = np.array(vals, np.float64)
    return np.concatenate([v, -v]).astype(fmt.dtype)


def stratified(fmt: Format, per_binade: int, rng: np.random.Generator) -> np.ndarray:
    """``per_binade`` random values in every binade (each exponent field, subnormals included), both signs."""
    nexp = (1 << (fmt.width - fmt.p)) - 1  # exponent fields 0 .. 2^k - 2 (all finite binades)
    frac_bits = fmt.p - 1
    e = np.repeat(np.arange(nexp, dtype=np.uint64), per_binade * 2)
    s = np.tile(np.repeat(np.array([0, 1], np.uint64), per_binade), nexp)
    f = rng.integers(0, 1 << frac_bits, e.size, dtype=np.uint64)
    bits = (s << np.uint64(fmt.width - 1)) | (e << np.uint64(frac_bits)) | f
    return fmt.from_bits(bits)


def dense(fmt: Format, lo: float, hi: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` values uniform in [lo, hi] (log-uniform in magnitude when the interval spans decades)."""
    if lo > 0 and hi / lo > 1e3:
        v = np.exp(rng.uniform(np.log(lo), np.log(min(hi, float(fmt.max))), n))
    else:
        lo_, hi_ = max(lo, -float(fmt.max)), min(hi, float(fmt.max))
        v = rng.uniform(lo_, hi_, n)
    return v.astype(fmt.dtype)


def sample(fmt: Format, arity: int, per_binade: int, n_dense: int, domain: tuple, rng: np.random.Generator,
           exclude: Optional[tuple] = None) -> list[np.ndarray]:
    """The argument columns for one function: all-binade stratification of every argument (independently
    shuffled), the special-value grid (all pairs for binary functions), and the dense domain sample."""
    cols = []
    sp = specials(fmt)
    strat = stratified(fmt, per_binade, rng)
    for k in range(arity):
        parts = [rng.permutation(strat), dense(fmt, domain[0], domain[1], n_dense, rng)]
        if arity == 1:
            parts.append(sp)
        else:  # the full grid of specials × specials for the first two arguments
            parts.append(np.repeat(sp, sp.size) if k == 0 else np.tile(sp, sp.size) if k == 1
                         else rng.choice(sp, sp.size * sp.size))
        cols.append(np.concatenate(parts).astype(fmt.dtype))
    if exclude is not None:
        with np.errstate(invalid="ignore"):
            keep = ~((cols[0] > exclude[0]) & (cols[0] < exclude[1]))
        cols = [c[keep] for c in cols]
    return cols


def function_sample(fmt: Format, f: MathFunction, scale: float, rng: np.random.Generator) -> list[np.ndarray]:
    """The seeded input set of math function ``f`` in ``fmt`` at size factor ``scale``: :func:`sample` with
    the sizes of :data:`PER_BINADE` and :data:`DENSE` and without the interval its bound leaves out
    (``functions.EXCLUDE``). One definition, so the project's build and the libraries users call are
    checked on sets drawn the same way."""
    return sample(fmt, f.arity, max(1, int(PER_BINADE[fmt.name] * scale)), int(DENSE[fmt.name] * scale), f.domain,
                  rng, EXCLUDE.get(f.name, {}).get(fmt.name))


def sample_factor(device) -> float:
    """The fixed size multiplier of the math suites' seeded input sets: 8 on GPUs, 1 on CPU devices
    (CI's time share). Fixed per device type — never an option — so a set is the same every run."""
    return 1.0 if device.info.is_cpu else 8.0
