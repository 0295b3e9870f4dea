"""Alavani's piecewise-linear global-memory latency model (thesis ch. 3.3.3, Table 3.3).

Latency under load is linear in the number of requesting threads ``nT_b·nB`` within each of a few
intervals, ``L = a·(nT_b·nB) + b``, with breakpoints between. The thesis found them by inspection; we
find them by least squares: an exact dynamic programme over contiguous segments minimises the total
squared error for each segment count, and the count is chosen by BIC (so noise does not buy segments).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class Segment:
    x_lo: float
    x_hi: float
    slope: float
    intercept: float

    def __call__(self, x: float) -> float:
        return self.slope * x + self.intercept


@dataclass(frozen=True)
class PiecewiseFit:
    segments: tuple[Segment, ...]
    sse: float
    r2: float
    n: int = 0  # points fitted (0: unknown, e.g. a fit read from an older results file)

    def predict(self, x: float) -> float:
        for s in self.segments:
            if x <= s.x_hi:
                return s(x)
        return self.segments[-1](x)

    @property
    def breakpoints(self) -> list[float]:
        return [s.x_hi for s in self.segments[:-1]]

    def statistics(self) -> dict[str, float]:
        """The goodness-of-fit figures of the thesis' Table 3.4: MSE = RSS/n, RMSE, R², RSS and the residual
        standard error RSE = √(RSS/(n − p)) with p = 2 parameters (slope, intercept) per segment."""
        n = max(self.n, 1)
        dof = max(n - 2 * len(self.segments), 1)
        return {"mse": self.sse / n, "rmse": math.sqrt(self.sse / n), "r2": self.r2, "rss": self.sse,
                "rse": math.sqrt(self.sse / dof), "n": self.n}

    def to_json(self) -> dict[str, object]:
        return {"segments": [{"x_lo": s.x_lo, "x_hi": s.x_hi, "slope": s.slope, "intercept": s.intercept}
                             for s in self.segments], "sse": self.sse, "r2": self.r2, "n": self.n}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> "PiecewiseFit":
        """Inverse of :meth:`to_json` (a fit recorded in a results file's ``info``)."""
        segs = tuple(Segment(float(s["x_lo"]), float(s["x_hi"]), float(s["slope"]), float(s["intercept"]))
                     for s in data["segments"])  # type: ignore[union-attr]
        if not segs:
            raise ValueError("a piecewise fit needs at least one segment")
        return cls(segs, float(data.get("sse", 0.0)), float(data.get("r2", float("nan"))),  # type: ignore[arg-type]
                   int(data.get("n", 0)))  # type: ignore[arg-type]


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Least-squares line and its squared error."""
    if len(x) == 1 or np.ptp(x) == 0:
        b = float(np.mean(y))
        return 0.0, b, float(np.sum((y - b) ** 2))
    a, b = np.polyfit(x, y, 1)
    return float(a), float(b), float(np.sum((y - (a * x + b)) ** 2))


def piecewise_linear(xs: Sequence[float], ys: Sequence[float], max_segments: int = 4,
                     min_points: int = 3) -> PiecewiseFit:
    """Best piecewise-linear fit with up to ``max_segments`` segments of ≥ ``min_points`` points each."""
    order = np.argsort(np.asarray(xs, dtype=float))
    x = np.asarray(xs, dtype=float)[order]
    y = np.asarray(ys, dtype=float)[order]
    n = len(x)
    if n < min_points:
        raise ValueError(f"a piecewise fit needs at least {min_points} points, got {n}")
    cost = np.full((n, n + 1), np.inf)
    for i in range(n):
        for j in range(i + min_points, n + 1):
            cost[i, j] = _line(x[i:j], y[i:j])[2]
    kmax = max(1, min(max_segments, n // min_points))
    best = np.full((kmax + 1, n + 1), np.inf)
    back = np.zeros((kmax + 1, n + 1), dtype=int)
    best[0, 0] = 0.0
    for k in range(1, kmax + 1):
        for j in range(1, n + 1):
            for i in range(0, j):
                c = best[k - 1, i] + cost[i, j]
                if c < best[k, j]:
                    best[k, j], back[k, j] = c, i
    sst = float(np.sum((y - y.mean()) ** 2)) or 1e-300

    def bic(k: int) -> float:
        sse = max(best[k, n], 1e-12 * sst)
        return n * math.log(sse / n) + (3 * k - 1) * math.log(n)

    k = min((k for k in range(1, kmax + 1) if np.isfinite(best[k, n])), key=bic)
    bounds, j = [], n
    for kk in range(k, 0, -1):
        i = back[kk, j]
        bounds.append((i, j))
        j = i
    segs = []
    for i, j in reversed(bounds):
        a, b, _ = _line(x[i:j], y[i:j])
        segs.append(Segment(float(x[i]), float(x[j - 1]), a, b))
    sse = float(best[k, n])
    return PiecewiseFit(tuple(segs), sse, 1.0 - sse / sst, n)


def plateaus(lat: Sequence[float], jump: float = 1.25) -> list[tuple[int, int]]:
    """Index ranges of latency plateaus along a curve over increasing footprints (a new level starts where the
    latency exceeds the running plateau median by ``jump``×; transitional points join the next level)."""
    out: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(lat)):
        ref = float(np.median(lat[start:i]))
        if lat[i] > jump * ref:
            out.append((start, i))
            start = i
    out.append((start, len(lat)))
    return out
