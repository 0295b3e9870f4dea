"""Error measures against the double-precision original, the acceptance threshold, and the thesis' cost.

The original program is the ground truth (thesis §6.3, §7.4.1). Two error measures of a tuned output
``y`` against the original's ``r`` (both float64 arrays):

* ``ulp`` — max over elements of |y − r| / ulp(r), ulp of binary64 (``np.spacing``); elements where
  both are exactly equal score 0 (also at r = 0);
* ``rel`` — normwise: max |y − r| / max |r| (elementwise relative error is meaningless at outputs
  near zero, which eliminations produce).

Cost (§7.4.3): ``cost = correctness + performance``, correctness the maximum absolute error of the
tuned output against the original, performance the inverse of the speedup (t_tuned / t_original);
the original costs 1. As in the thesis, the error term is the raw maximum absolute error, so with
outputs of order one (those of our kernels) it only separates programs of equal speed; the threshold,
not the cost, is what keeps a program accurate. ``error_weight`` scales it for outputs of other sizes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

KINDS = ("ulp", "rel")
#: binary32 machine epsilon 2^-23: the suites' default threshold (normwise relative): a mix may lower what keeps
#: the output within about one single-precision ulp of the double original — every all-float variant of
#: our six kernels misses it on some inputs (PoCL run: 6.6e-8 for LU up to 6.2e-7 for LavaMD), so the
#: search has to decide.
EPS32 = 2.0 ** -23


@dataclass(frozen=True)
class Threshold:
    """Accept a program whose error (``kind``) is at most ``value``."""

    kind: str
    value: float

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"threshold kind {self.kind!r} is not one of {KINDS}")
        if not (self.value > 0 and math.isfinite(self.value)):
            raise ValueError(f"threshold {self.value!r} must be finite and > 0")

    def describe(self) -> str:
        return f"{self.value:g} ulp (binary64)" if self.kind == "ulp" else f"{self.value:g} relative (normwise)"


def errors(y: np.ndarray, ref: np.ndarray) -> dict[str, float]:
    """``ulp``, ``rel`` and ``abs`` (max absolute) error of ``y`` against ``ref``; a non-finite output
    where the reference is finite is an infinite error."""
    y = np.asarray(y, dtype=np.float64).ravel()
    r = np.asarray(ref, dtype=np.float64).ravel()
    if y.shape != r.shape:
        raise ValueError(f"output has {y.size} elements, the reference {r.size}")
    if not np.all(np.isfinite(r)):
        raise ValueError("the double-precision reference holds non-finite values; pick other inputs")
    if not np.all(np.isfinite(y)):
        return {"ulp": math.inf, "rel": math.inf, "abs": math.inf}
    diff = np.abs(y - r)
    if diff.size == 0:
        return {"ulp": 0.0, "rel": 0.0, "abs": 0.0}
    ulp = np.where(diff == 0, 0.0, diff / np.spacing(np.abs(r)))
    scale = float(np.max(np.abs(r)))
    rel = float(np.max(diff)) / scale if scale > 0 else (0.0 if float(np.max(diff)) == 0 else math.inf)
    return {"ulp": float(np.max(ulp)), "rel": rel, "abs": float(np.max(diff))}


def cost(abs_error: float, time_s: float, time0_s: float, error_weight: float = 1.0) -> float:
    """The thesis' cost of a program: error term + time term (the original: 0 + 1 = 1)."""
    if abs_error < 0 or time_s <= 0 or time0_s <= 0:
        raise ValueError(f"impossible inputs to the cost: error {abs_error}, times {time_s}, {time0_s}")
    return error_weight * abs_error + time_s / time0_s
