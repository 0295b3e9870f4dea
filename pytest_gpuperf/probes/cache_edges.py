"""A cache level's size to one step of a fine footprint grid: the pure half of the refinement.

The pointer-chase sweep (:func:`.hierarchy.chase_sweep`) steps footprints by √2, so a size read off it is
one of two grid points 41 % apart. After the sweep has found the levels, each level's edge is bracketed by
the two sweep footprints its latency crosses a threshold between, and :data:`EDGE_POINTS` footprints in
geometric steps between them are chased; the size is the last footprint, coarse or fine, before the
latency reaches the threshold (:func:`edge`, counted so that one noisy point moves it one step at most). The threshold sits halfway between the level's plateau and the next one
(the steepest part of the step, where a few cycles of noise move the crossing least), except at the edge
into DRAM: an H100's far L2 partition reads 548–565 cycles against DRAM's 680, above the halfway point from
the near partition's 282, so there DRAM's own rule holds (:data:`.memory.DRAM_NEAR`: within 1.12× of DRAM).

The grid is fixed: a bracket is two adjacent sweep footprints (1 KiB × 2^(k/2)), so every run that finds an
edge between the same two chases the same fine footprints and reads a size on the same grid of
``2 × (EDGE_POINTS + 1)`` points per doubling; its band is one such step (``catalog``'s size row).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..baselines.catalog import CACHE_EDGE_POINTS as EDGE_POINTS
from .memory import DRAM_NEAR, Level

Curve = Sequence[tuple[int, float]]  # (footprint bytes, latency), footprints increasing


def threshold(low: float, high: float, into_dram: bool) -> float:
    """The latency at which a footprint counts as past the edge between plateaus ``low`` and ``high``:
    halfway between them, or, into DRAM, DRAM's own rule (``high`` / DRAM_NEAR)."""
    if high <= low:
        raise ValueError(f"no step to refine: the next plateau ({high:g}) is not above this one ({low:g})")
    return high / DRAM_NEAR if into_dram else 0.5 * (low + high)


def bracket(curve: Curve, limit: float) -> tuple[int, int] | None:
    """The two adjacent footprints of ``curve`` the latency crosses ``limit`` between (the last below, the
    first at or above it), or None where it never does or starts above it."""
    for i, (f, lat) in enumerate(curve):
        if lat >= limit:
            return (int(curve[i - 1][0]), int(f)) if i > 0 else None
    return None


def fine_grid(lo: int, hi: int, points: int = EDGE_POINTS, granule: int = 128) -> list[int]:
    """``points`` footprints in geometric steps strictly between ``lo`` and ``hi``, each rounded to
    ``granule`` bytes (a chase's line stride), without repeats."""
    if hi <= lo:
        raise ValueError(f"an empty bracket: {lo} .. {hi} bytes")
    out: list[int] = []
    for k in range(1, points + 1):
        f = int(round(lo * (hi / lo) ** (k / (points + 1)) / granule)) * granule
        if lo < f < hi and (not out or f != out[-1]):
            out.append(f)
    return out


def edge(points: Curve, limit: float) -> int | None:
    """The size on one bracket's points (its two ends and the fine footprints between, any order): with ``k``
    of them below ``limit``, the ``k``-th smallest footprint — on a rising curve the last footprint before
    the first at or above the limit, and where noise puts one point on the wrong side of it, one step off,
    never more (None where all or none are below)."""
    pts = sorted(points)
    below = sum(1 for _, lat in pts if lat < limit)
    return int(pts[below - 1][0]) if 0 < below < len(pts) else None


@dataclass
class Refinement:
    """One level's edge chased on the fine grid: the coarse bracket, the threshold, the fine curve and the
    size found (None where the fine chase did not cross, then the coarse size stands)."""

    level: str
    coarse: tuple[int, int]
    limit: float
    fine: list[tuple[int, float]] = field(default_factory=list)
    size: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "coarse_bracket": list(self.coarse), "threshold": self.limit,
                "fine_curve": [list(p) for p in self.fine], "size": self.size}


def refine(levels: Sequence[Level], curve: Curve, names: Sequence[str], chase: Callable[[int], float],
           points: int = EDGE_POINTS, granule: int = 128) -> dict[str, Refinement]:
    """Refine the edges of the levels named in ``names`` (not ``dram``, the sweep's end): bracket each on
    ``curve`` (the sweep's (footprint, latency) points), ``chase`` (footprint → latency, the sweep's own
    measurement) the fine footprints between, and place the size on the coarse and fine points together.
    A level without a next plateau or without a crossing keeps its coarse size (absent from the result)."""
    out: dict[str, Refinement] = {}
    for i, level in enumerate(levels[:-1]):
        if level.name not in names or level.name == "dram":
            continue
        nxt = levels[i + 1]
        if nxt.latency <= level.latency:
            continue
        limit = threshold(level.latency, nxt.latency, nxt.name == "dram")
        coarse = bracket(curve, limit)
        if coarse is None:
            continue
        r = Refinement(level.name, coarse, limit)
        r.fine = [(f, float(chase(f))) for f in fine_grid(*coarse, points=points, granule=granule)]
        # the bracket's ends are on either side by construction (the sweep's own readings of them)
        r.size = edge([(coarse[0], float("-inf")), *r.fine, (coarse[1], float("inf"))], limit)
        out[level.name] = r
    return out
