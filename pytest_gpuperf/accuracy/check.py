"""Bulk check of a device result vector against a reference, with MPFR confirmation.

The bulk path is whole-array numpy (long double references, :mod:`ulp`). MPFR then re-derives, one
element at a time, the exact value of (a) the ``confirm_top`` worst elements under the metric that is
reported, (b) every element whose exact value lies within 2^-20 ulp of a rounding boundary (where a
long double reference could round the wrong way), capped, and (c) every inf/nan mismatch. The MPFR
figures replace the bulk ones for those elements, so each reported maximum is an MPFR figure; the
number of bulk/MPFR disagreements is reported (it should be 0)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from . import mpfr
from .fp_formats import Format
from .rounding import LD, ulp_of
from .ulp import CLASS_NAMES, OK, UlpErrors, ulp_errors

CONFIRM_TOP = 16
CONFIRM_NEAR_CAP = 256


@dataclass
class Score:
    """Summary of one checked result vector (all figures after MPFR confirmation)."""

    metric: str  # "cr" (steps from the correctly rounded result) or "ulp" (ulps of the exact value)
    max: float
    mean: float
    argmax: int
    n: int
    mismatches: dict = field(default_factory=dict)  # class name -> count
    mismatch_example: Optional[dict] = None
    confirmed: int = 0
    disagreements: int = 0
    errors: Optional[UlpErrors] = None
    other_max: float = 0.0  # the max of the other metric

    def worst(self, args: Sequence[np.ndarray], y: np.ndarray) -> dict:
        i = self.argmax
        return {"input": [float(a[i]) for a in args], "input_hex": [float(a[i]).hex() for a in args],
                "device": float(y[i]), "reference": float(self.errors.rounded[i]) if self.errors is not None else None}


def near_boundary(exact: np.ndarray, fmt: Format, tol: float = 2.0 ** -20) -> np.ndarray:
    """Elements whose exact value is within ``tol`` ulp of a representable number or a midpoint."""
    x = np.abs(np.asarray(exact, LD))
    fin = np.isfinite(x)
    u = ulp_of(np.where(fin, x, 0), fmt)
    with np.errstate(invalid="ignore"):
        t = np.where(fin, x, 0) / u * 2
        d = np.abs(t - np.round(t))
    return fin & (d < tol * 2) & (x != 0)


def _patched(e: UlpErrors, idx: np.ndarray, sub: UlpErrors) -> UlpErrors:
    """``e`` with the elements ``idx`` scored anew (``sub``: :func:`ulp_errors` of those elements alone). Every
    figure of :func:`ulp_errors` depends on its own element only, so this is the full scoring against the
    corrected references, without scoring the unchanged elements twice."""
    out = UlpErrors(e.ulp.copy(), e.cr.copy(), e.cls.copy(), e.rounded.copy())
    out.ulp[idx], out.cr[idx], out.cls[idx], out.rounded[idx] = sub.ulp, sub.cr, sub.cls, sub.rounded
    return out


def score(y: np.ndarray, args: Sequence[np.ndarray], exact: np.ndarray, fmt: Format, fn: str,
          metric: str, sgn: np.ndarray | int = 0, mode: str = "rn", confirm_top: int = CONFIRM_TOP) -> Score:
    """Score ``y`` against ``exact`` (long double, remainder signs ``sgn``), confirm with MPFR function
    ``fn`` (a :data:`mpfr.MPFR_FUNCS` name) and summarise under ``metric``."""
    y = np.asarray(y, fmt.dtype)
    exact = np.array(exact, LD, copy=True)
    sgn = np.array(np.broadcast_to(np.asarray(sgn, np.int8), exact.shape), copy=True)
    e = ulp_errors(y, exact, fmt, sgn, mode)
    vals = e.cr if metric == "cr" else e.ulp
    order = np.argsort(np.where(np.isnan(vals), -1, vals))[::-1][:confirm_top]
    near = np.flatnonzero(near_boundary(exact, fmt))[:CONFIRM_NEAR_CAP]
    bad = np.flatnonzero(e.cls != OK)[:CONFIRM_NEAR_CAP]
    idx = np.unique(np.concatenate([order, near, bad]).astype(np.int64))
    disagree = 0
    if idx.size:
        r, s = mpfr.exact_pairs(fn, [np.asarray(a)[idx] for a in args])
        sub = ulp_errors(y[idx], r, fmt, s, mode)
        before = e.cr[idx].copy()
        both = ~(np.isnan(before) & np.isnan(sub.cr))
        disagree = int(np.count_nonzero(both & (before != sub.cr)) + np.count_nonzero(e.cls[idx] != sub.cls))
        exact[idx], sgn[idx] = r, s
        e = _patched(e, idx, sub)  # scoring is elementwise: the confirmed elements' scores replace theirs
    vals = e.cr if metric == "cr" else e.ulp
    other = e.ulp if metric == "cr" else e.cr
    ok = ~np.isnan(vals)
    argmax = int(np.nanargmax(np.where(ok, vals, -1))) if ok.any() else 0
    mism = {CLASS_NAMES[c]: int(np.count_nonzero(e.cls == c)) for c in np.unique(e.cls) if c != OK}
    ex = None
    if mism:
        j = int(np.flatnonzero(e.cls != OK)[0])
        ex = {"class": CLASS_NAMES[int(e.cls[j])], "input": [float(np.asarray(a)[j]) for a in args],
              "input_hex": [float(np.asarray(a)[j]).hex() for a in args], "device": float(y[j]),
              "reference": float(e.rounded[j])}
    return Score(metric, float(vals[argmax]) if ok.any() else float("nan"), float(np.mean(vals[ok])) if ok.any() else 0.0,
                 argmax, int(y.size), mism, ex, int(idx.size), disagree, e,
                 float(np.nanmax(other)) if ok.any() else float("nan"))


def jsonable(obj):
    """``info`` payloads must be strict JSON: non-finite floats become their repr ("inf", "nan")."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if np.isfinite(f) else repr(f)
    if isinstance(obj, np.integer):
        return int(obj)
    return obj
