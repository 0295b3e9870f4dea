"""The lowering search of the thesis' precision analysis pass (§7.4.2.2–7.4.2.3, §7.4.3.1), device-free.

Start from the all-double original. Each iteration lowers the next levels of the data-flow graph to
single precision and validates the program on the test inputs (``validate``: error within threshold):

* **step size** (§7.4.2.3.1): lower ``step`` levels at once (initially 8); when validation fails, go
  back to the last program that passed and halve the step (8 → 4 → 2 → 1); a step once reduced stays
  reduced (the thesis names no regrowth);
* a candidate identical to one that already failed (a halved step that adds the same operations, as in a
  block shallower than the step) is not validated again and costs no iteration;
* at step 1, a level that still fails is tried one operation at a time, and the operations that fail
  alone are skipped (kept in double) — "the tuner … goes ahead with the tuning by skipping the
  instructions which caused a higher error" (§7.4.3);
* **cut points** (§7.4.2.3.2): the blocks (:mod:`.graph`) advance together, one candidate per
  iteration that lowers the next step of every block; after the first failure the search falls back to
  one block per iteration (each with its own step);
* **best programs** (§7.4.3.1): every program that passes is timed (``timer``) and costed; a pool of
  ``pool_size`` keeps the cheapest (the highest-cost member is replaced by a cheaper newcomer); the
  answer is the pool's cheapest, the original (cost 1) included.

``validate`` and ``timer`` are callbacks, so the search is exercised in the unit tests with synthetic
errors and times, and on devices with real compiled programs (:mod:`.runner`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .cost import cost
from .graph import Dataflow



@dataclass(frozen=True)
class Validation:
    """Outcome of running one candidate on the test inputs."""

    ok: bool
    error: float  # in the threshold's unit
    abs_error: float


@dataclass(frozen=True)
class Candidate:
    lowered: frozenset[str]
    error: float
    abs_error: float
    time_s: float
    cost: float


@dataclass
class Trace:
    """What the search did: every validation in order (``(lowered ops, passed, step, mode)``)."""

    steps: list[tuple[tuple[str, ...], bool, int, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    fell_back: bool = False

    @property
    def iterations(self) -> int:
        return len(self.steps)


@dataclass
class Outcome:
    best: Candidate
    furthest: Candidate  # the last program that passed (most operations lowered)
    pool: list[Candidate]
    trace: Trace
    original: Candidate


class Pool:
    """The best tuned programs by cost, at most ``size`` (§7.4.3.1)."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("the pool holds at least one program")
        self.size = size
        self.members: list[Candidate] = []

    def offer(self, c: Candidate) -> bool:
        if len(self.members) < self.size:
            self.members.append(c)
            return True
        worst = max(self.members, key=lambda m: m.cost)
        if c.cost < worst.cost:
            self.members[self.members.index(worst)] = c
            return True
        return False

    def best(self) -> Candidate:
        return min(self.members, key=lambda m: (m.cost, -len(m.lowered)))


def lower(graph: Dataflow, validate: Callable[[frozenset[str]], Validation],
          timer: Callable[[frozenset[str]], float], *, step: int = 8, cut_points: bool = True,
          pool_size: int = 4, error_weight: float = 1.0, max_iterations: int = 200) -> Outcome:
    """Run the search; see the module docstring."""
    if step < 1:
        raise ValueError("step size must be ≥ 1")
    t0 = timer(frozenset())
    if t0 <= 0:
        raise ValueError(f"impossible time {t0} s of the original program")
    original = Candidate(frozenset(), 0.0, 0.0, t0, cost(0.0, t0, t0, error_weight))
    pool = Pool(pool_size)
    pool.offer(original)
    trace = Trace()
    lowered: frozenset[str] = frozenset()
    furthest = original
    blocks = list(graph.blocks)
    pos = {b: 1 for b in blocks}  # next level to lower, per block
    steps = {b: step for b in blocks}
    skipped: set[str] = set()
    failed: set[frozenset[str]] = set()
    parallel = cut_points and len(blocks) > 1

    def done(b: tuple[str, ...]) -> bool:
        return pos[b] > graph.block_depth(b)

    def next_ops(b: tuple[str, ...]) -> list[str]:
        return [n for n in graph.ops_at(pos[b], pos[b] + steps[b], b) if n not in skipped and n not in lowered]

    def attempt(ops: list[str], mode: str, st: int) -> bool:
        nonlocal lowered, furthest
        if trace.iterations >= max_iterations:
            raise RuntimeError(f"the search exceeded {max_iterations} validations")
        cand = lowered | frozenset(ops)
        if cand in failed:  # a halved step that adds the same operations: the same program, known to fail
            return False
        v = validate(cand)
        if v.error < 0 or v.abs_error < 0:
            raise ValueError(f"impossible negative error {v.error} / {v.abs_error}")
        trace.steps.append((tuple(sorted(cand - lowered)), v.ok, st, mode))
        if not v.ok:
            failed.add(cand)
            return False
        t = timer(cand)
        if t <= 0:
            raise ValueError(f"impossible time {t} s")
        c = Candidate(cand, v.error, v.abs_error, t, cost(v.abs_error, t, t0, error_weight))
        pool.offer(c)
        lowered, furthest = cand, c
        return True

    while True:
        todo = [b for b in blocks if not done(b)]
        if not todo:
            break
        if parallel:
            batch = {b: next_ops(b) for b in todo}
            ops = [n for b in todo for n in batch[b]]
            if not ops:
                for b in todo:
                    pos[b] += steps[b]
                continue
            if attempt(ops, "cut-points", step):
                for b in todo:
                    pos[b] += steps[b]
                continue
            parallel = False  # fall back to the previous program, one block per iteration
            trace.fell_back = True
            continue
        b = todo[0]
        ops = next_ops(b)
        if not ops:
            pos[b] += steps[b]
            continue
        if attempt(ops, "block", steps[b]):
            pos[b] += steps[b]
        elif steps[b] > 1:
            steps[b] //= 2
        else:  # one level fails: keep the operations that pass alone, skip the others
            if len(ops) > 1:
                for n in ops:
                    if not attempt([n], "single", 1):
                        skipped.add(n)
                        trace.skipped.append(n)
            else:
                skipped.add(ops[0])
                trace.skipped.append(ops[0])
            pos[b] += 1
    return Outcome(pool.best(), furthest, sorted(pool.members, key=lambda m: m.cost), trace, original)
