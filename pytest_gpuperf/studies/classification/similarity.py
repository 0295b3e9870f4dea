"""Lim's control-flow subgraph matching (dissertation ch. IV), on the PTX CFG.

* Transition-probability matrix: a right-stochastic matrix over basic blocks (row ``i``: the
  probability of moving from block ``i`` to each successor). Lim normalises observed transition
  counts; we derive them statically: a loop's back edge carries ``trip / (trip + 1)`` (its exit the
  rest), other conditional branches split evenly; exit blocks are absorbing (self-loop 1).
* Scaling: both matrices are interpolated bilinearly to the larger size (Lim: "spline interpolation
  ... a spline on a two-order polynomial performs bilinear interpolation").
* Pairwise comparison with the distance measures of Lim's Table 9 (Euclidean, Manhattan, Cosine,
  Jaccard); ``sim(G, G) = 0``, larger is further apart.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
from scipy.ndimage import zoom

from ..ptx_model.cfg import Cfg


def transition_matrix(cfg: Cfg, trips: Sequence[float] | None = None) -> np.ndarray:
    """Right-stochastic matrix of block-to-block transition probabilities."""
    n = len(cfg.blocks)
    m = np.zeros((n, n))
    trip_of: dict[int, float] = {}
    for loop, trip in zip(cfg.loops, trips or [8.0] * len(cfg.loops)):
        trip_of[min(loop)] = float(trip)
    back = set(cfg.back_edges)
    for u in range(n):
        succ = sorted(cfg.graph.successors(u))
        if not succ:
            m[u, u] = 1.0
            continue
        backs = [v for v in succ if (u, v) in back]
        if backs and len(succ) > 1:
            t = trip_of.get(backs[0], 8.0)
            p_back = t / (t + 1.0)
            for v in succ:
                m[u, v] = p_back / len(backs) if v in backs else (1 - p_back) / (len(succ) - len(backs))
        else:
            for v in succ:
                m[u, v] = 1.0 / len(succ)
    return m


def scale(m: np.ndarray, size: int) -> np.ndarray:
    """Bilinear interpolation of ``m`` to ``size × size``."""
    if m.shape[0] == size:
        return m.copy()
    return zoom(m, size / m.shape[0], order=1, mode="nearest", grid_mode=False)[:size, :size]


def distance(a: np.ndarray, b: np.ndarray, measure: str = "euclidean") -> float:
    """Lim Table 9 distances between two transition matrices scaled to the same size."""
    size = max(a.shape[0], b.shape[0])
    x, y = scale(a, size).ravel(), scale(b, size).ravel()
    if measure == "euclidean":
        return float(np.sqrt(np.sum((x - y) ** 2)))
    if measure == "manhattan":
        return float(np.sum(np.abs(x - y)))
    if measure == "cosine":
        den = math.sqrt(float(np.dot(x, x)) * float(np.dot(y, y)))
        return 0.0 if den == 0 else 1.0 - float(np.dot(x, y)) / den
    if measure == "jaccard":
        num = float(np.sum((x - y) ** 2))
        den = float(np.dot(x, x) + np.dot(y, y) - np.dot(x, y))
        return 0.0 if den == 0 else num / den
    raise ValueError(f"unknown measure {measure!r}: euclidean, manhattan, cosine or jaccard")


def most_similar(query: np.ndarray, known: Mapping[str, np.ndarray], measure: str = "euclidean") -> tuple[str, float]:
    """The known kernel nearest to ``query`` and its distance."""
    if not known:
        raise ValueError("no known kernels to match against")
    best = min(known, key=lambda k: distance(query, known[k], measure))
    return best, distance(query, known[best], measure)
