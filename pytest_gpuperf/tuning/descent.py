"""Ranked descent over a tuner's survivors: the final pass of ``dao_ranked``.

The thesis ends its filters with an exhaustive pass over whatever survives them. On the H100's 1-D
spaces five sizes survive (every multiple of 32 from 64 to 1024 that divides 2048 reaches 100 %
occupancy) and the pass times all five; on 2-D spaces about twenty shapes. Work-group time over a
family of shapes that share occupancy and coalescing is close to unimodal in the shape's log2 sizes,
so a walk between neighbouring shapes finds the best one with fewer runs — provided it stops only
when no neighbour can be better, and "better" means by more than the timings' own noise (a neighbour
within noise of the best is a tie, not a direction).

The function is pure: it sees configurations only through ``time_of`` (a measurement, charged by the
caller) and ``spread_of`` (that measurement's robust relative spread), so it runs the same on a device
and in a replay of saved measurements (:mod:`.replay`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Hashable, Sequence, TypeVar

C = TypeVar("C", bound=Hashable)


@dataclass(frozen=True)
class Walk:
    """The result: the best configuration, how many moves it took, and why it stopped."""

    best: object
    steps: int
    stopped: str


def shape_of(cfg: object) -> tuple[float, ...]:
    """log2 of a configuration's work-group extents, with the workload variant as an extra axis (a
    merge factor C of the transformed kernel is its own dimension, never a neighbour of a plain shape)."""
    local = getattr(cfg, "local", cfg)
    variant = getattr(cfg, "variant", "")
    return tuple(math.log2(max(int(v), 1)) for v in local) + ((1.0e6,) if variant else ())


def neighbours(cfg: C, pool: Sequence[C]) -> list[C]:
    """The members of ``pool`` next to ``cfg``: in each dimension at most one power of two away, with
    the nearest ones first. In 1-D, where survivors are often not powers of two apart, the nearest
    member on each side and the member nearest an octave away on each side."""
    here = shape_of(cfg)
    others = [c for c in pool if c != cfg and len(shape_of(c)) == len(here)]
    if len(here) == 1:
        x = here[0]
        below = [c for c in others if shape_of(c)[0] < x]
        above = [c for c in others if shape_of(c)[0] > x]
        near: list[C] = []
        for side, sign in ((below, -1.0), (above, 1.0)):
            if side:
                # the next size, and the one nearest an octave away: adjacent sizes of a fine 1-D space
                # (multiples of 8 on a CPU, of 32 on a GPU) often differ by less than the noise
                near.append(min(side, key=lambda c: abs(shape_of(c)[0] - x)))
                octave = min(side, key=lambda c: abs(shape_of(c)[0] - (x + sign)))
                if octave not in near:
                    near.append(octave)
        return near
    close = [c for c in others if all(abs(a - b) <= 1.0 + 1e-9 for a, b in zip(shape_of(c), here))]
    return sorted(close, key=lambda c: sum(abs(a - b) for a, b in zip(shape_of(c), here)))


def descend(pool: Sequence[C], time_of: Callable[[C], float], spread_of: Callable[[C], float],
            rank: Callable[[C], int], start: C | None = None, floor: float = 0.01, max_steps: int = 64) -> Walk:
    """Walk from ``start`` (or the best-ranked member of ``pool``) to a neighbour while one is faster
    than the best by more than the noise, trying neighbours in ``rank`` order and moving at the first
    such one. Noise is the larger robust spread of the two timings compared, at least ``floor``."""
    if not pool:
        raise ValueError("descend needs at least one configuration")
    members = list(pool)
    current = start if start is not None and start in members else min(members, key=rank)
    best_t = time_of(current)
    steps = 0
    while steps < max_steps:
        moved = False
        for n in sorted(neighbours(current, members), key=rank):
            t = time_of(n)
            noise = max(floor, spread_of(current), spread_of(n))
            if t < best_t * (1.0 - noise):
                current, best_t, moved = n, t, True
                steps += 1
                break
        if not moved:
            return Walk(current, steps, "no neighbour faster by more than the noise")
    return Walk(current, steps, f"step limit {max_steps}")


def static_key(occupancy: float | None, transactions_per_item: float | None, cfg: C) -> tuple[float, float, C]:
    """The static model's rank of a survivor: higher theoretical occupancy first, then fewer 128-byte
    transactions per work-item (2-D coalescing, Dao §3.5.2); ties keep the space's order."""
    return (-(occupancy or 0.0), transactions_per_item or 0.0, cfg)


def ranked_pass(pool: Sequence[C], key: Callable[[C], tuple], time_of: Callable[[C], float],
                spread_of: Callable[[C], float], profiled: Sequence[C], floor: float = 0.01) -> Walk:
    """``dao_ranked``'s final pass, on a device or in a replay: rank ``pool`` by ``key``, start from the
    fastest member the filters already ``profiled`` (the best-ranked one when none was), then
    :func:`descend`."""
    order = {c: i for i, c in enumerate(sorted(pool, key=key))}
    start = min((c for c in profiled if c in order), key=time_of, default=None)
    return descend(list(pool), time_of, spread_of, rank=order.__getitem__, start=start, floor=floor)
