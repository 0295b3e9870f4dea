"""Ranked final pass over a tuner's survivors: the final pass of ``dao_ranked``.

The thesis ends its filters with an exhaustive pass over whatever survives them: on a 1-D space of a
large GPU a handful of sizes (every multiple of 32 that divides the problem and reaches full occupancy),
on 2-D spaces some twenty shapes. Work-group time over a
family of shapes that share occupancy and coalescing is close to unimodal in the shape's log2 sizes,
so fewer runs find the best one — provided the pass stops only when no untimed survivor can be better,
and "better" means by more than the timings' own noise (a survivor within noise of the best is a tie).

Two rules (``RULES``):

* ``bracket`` (the default). Where the survivors differ along one axis only — a *chain*: every 1-D
  space, and the merge factors C of the workload-transformed kernel — unimodality gives a bound: a timed
  member slower than the best by more than the noise of the two timings is a *wall*, and nothing beyond
  a wall (seen from the best) can be faster than the wall, so nothing there can beat the best. The pass
  times the middle of the largest stretch of untimed members between the two walls nearest the best
  (bisection: with the static rank tied along a chain, as it is on 1-D spaces, nothing
  says where the optimum lies, and halving the stretch bounds the number of timings), and stops when no
  untimed member is left between the walls. A tie is neither a direction nor a stop: it bounds nothing,
  so the members beyond it stay open. Off a chain (2-D shapes) the pass is the neighbour walk below.
* ``walk`` (the rule of the runs before the chain rule; kept so that :mod:`.replay` reproduces them):
  from the fastest survivor the filters profiled, move to a neighbouring shape (one power of two away
  per dimension; in 1-D also the next size) while one is faster than the best by more than the noise,
  and stop at the first best whose neighbours are all ties or slower. On a chain this can stop on a tie,
  short of the optimum, when every step lies inside the noise floor.

Noise is the larger robust spread of the two timings compared, at least ``floor`` (1 %): the spread of
one measuring window misses the drift between windows, and a re-timing of the same configuration can
differ from the first by more than its own spread, rarely by more than 1 %. Under the ``bracket`` rule the
floor only decides what counts as a wall (a larger floor leaves more members open; a tie never stops the
pass), so its picks hardly depend on it; without a floor a flat landscape's wiggles of tenths of a percent
become walls. The ``walk`` rule's picks move with the floor.

The functions are pure: they see configurations only through ``time_of`` (a measurement, charged by the
caller) and ``spread_of`` (that measurement's robust relative spread, asked only of timed members), so
they run the same on a device and in a replay of saved measurements (:mod:`.replay`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Hashable, Sequence, TypeVar

C = TypeVar("C", bound=Hashable)

#: the final-pass rules of :func:`ranked_pass`, the default first
RULES = ("bracket", "walk")


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
            if t < best_t * (1.0 - noise(spread_of, current, n, floor)):
                current, best_t, moved = n, t, True
                steps += 1
                break
        if not moved:
            return Walk(current, steps, "no neighbour faster by more than the noise")
    return Walk(current, steps, f"step limit {max_steps}")


def noise(spread_of: Callable[[C], float], a: C, b: C, floor: float) -> float:
    """Relative noise of comparing the timings of ``a`` and ``b``: their larger robust spread, at least
    ``floor``."""
    return max(floor, spread_of(a), spread_of(b))


def chain_axis(pool: Sequence[C]) -> int | None:
    """The axis of :func:`shape_of` along which the members of ``pool`` differ when they differ along
    exactly one (a chain: 1-D sizes, or the merge factors of the workload variant); None otherwise (2-D
    shapes, plain shapes mixed with variants). A single member is a chain of one."""
    shapes = [shape_of(c) for c in pool]
    if not shapes or len({len(s) for s in shapes}) != 1:
        return None
    varying = [i for i in range(len(shapes[0])) if len({s[i] for s in shapes}) > 1]
    if len(varying) > 1:
        return None
    return varying[0] if varying else 0


def bracket(pool: Sequence[C], time_of: Callable[[C], float], spread_of: Callable[[C], float],
            rank: Callable[[C], int], known: Sequence[C] = (), floor: float = 0.01) -> Walk:
    """The ``bracket`` rule on a chain (see the module's doc): ``known`` members are timed already (the
    filters profiled them); with none, the pass starts at the best-ranked member. Then, until no untimed
    member lies between the two walls nearest the best, time the middle of the largest stretch of untimed
    members there (of two middles, the one nearer the best; of two equal stretches, the nearer one).
    ``steps`` counts the moves of the best."""
    if not pool:
        raise ValueError("bracket needs at least one configuration")
    axis = chain_axis(pool)
    if axis is None:
        raise ValueError("bracket needs a chain: configurations that differ along one axis only")
    chain = sorted(dict.fromkeys(pool), key=lambda c: (shape_of(c)[axis], rank(c)))
    timed: dict[C, float] = {}
    for c in known:
        if c in chain and c not in timed:
            timed[c] = time_of(c)
    if not timed:
        first = min(chain, key=rank)
        timed[first] = time_of(first)

    def best_of() -> C:
        return min(timed, key=lambda c: (timed[c], rank(c)))

    best, steps = best_of(), 0
    while True:
        ib = chain.index(best)
        walls = [j for j, c in enumerate(chain)
                 if c in timed and timed[c] > timed[best] * (1.0 + noise(spread_of, c, best, floor))]
        lo = max((j for j in walls if j < ib), default=-1)
        hi = min((j for j in walls if j > ib), default=len(chain))
        stretches: list[list[int]] = []
        for j in range(lo + 1, hi):
            if chain[j] in timed:
                continue
            if stretches and stretches[-1][-1] == j - 1:
                stretches[-1].append(j)
            else:
                stretches.append([j])
        if not stretches:
            return Walk(best, steps, "no untimed survivor between the walls (timed members slower than the best "
                                     "by more than the noise)")
        run = max(stretches, key=lambda r: (len(r), -min(abs(j - ib) for j in r)))
        mid = (len(run) - 1) / 2.0
        j = min(run, key=lambda j: (abs(run.index(j) - mid), abs(j - ib)))
        timed[chain[j]] = time_of(chain[j])
        new = best_of()
        if new != best:
            best, steps = new, steps + 1


def static_key(occupancy: float | None, transactions_per_item: float | None, cfg: C) -> tuple[float, float, C]:
    """The static model's rank of a survivor: higher theoretical occupancy first, then fewer 128-byte
    transactions per work-item (2-D coalescing, Dao §3.5.2); ties keep the space's order."""
    return (-(occupancy or 0.0), transactions_per_item or 0.0, cfg)


def ranked_pass(pool: Sequence[C], key: Callable[[C], tuple], time_of: Callable[[C], float],
                spread_of: Callable[[C], float], profiled: Sequence[C], floor: float = 0.01,
                rule: str = "bracket") -> Walk:
    """``dao_ranked``'s final pass, on a device or in a replay: rank ``pool`` by ``key``; on a chain under
    the ``bracket`` rule, :func:`bracket` with the members the filters already ``profiled`` as timed;
    otherwise start from the fastest member they profiled (the best-ranked one when none was) and
    :func:`descend`."""
    if rule not in RULES:
        raise ValueError(f"unknown final-pass rule {rule!r}; expected one of {RULES}")
    order = {c: i for i, c in enumerate(sorted(pool, key=key))}
    if rule == "bracket" and pool and chain_axis(pool) is not None:
        return bracket(list(pool), time_of, spread_of, rank=order.__getitem__,
                       known=[c for c in profiled if c in order], floor=floor)
    start = min((c for c in profiled if c in order), key=time_of, default=None)
    return descend(list(pool), time_of, spread_of, rank=order.__getitem__, start=start, floor=floor)
