"""The ranked pass along a chain (tuning.descent ``bracket``): 1-D sizes and merge factors.

The numbers of the first two tests are the H100's (results/nvidia-h100-80gb-hbm3/default-5c-cuda.json.xz,
``info.points`` of ``tuning.<kernel>.space``): the survivors of the thesis' filters, with 1024 work-items
already timed by the concurrency tuner's contention check.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pytest_gpuperf.tuning import descent
from pytest_gpuperf.tuning.evaluate import Config

END = Config((1024,))


def _chain(times: dict[int, float]) -> dict[Config, float]:
    return {Config((s,)): t for s, t in times.items()}


def _pass(times: dict[Config, float], rule: str, profiled=(END,), spread=None, floor: float = 0.01):
    """(the walk, the configurations timed in order, the ones the pass timed itself)."""
    seen: list[Config] = []

    def time_of(c: Config) -> float:
        if c not in seen:
            seen.append(c)
        return times[c]

    spreads = spread or {}
    walk = descent.ranked_pass(list(times), lambda c: descent.static_key(1.0, 0.0, c), time_of,
                               lambda c: spreads.get(c, 0.0), profiled=[c for c in profiled if c in times],
                               floor=floor, rule=rule)
    return walk, seen, [c for c in seen if c not in profiled]


# H100 matvec_row: a gentle slope, every step inside the 1 % noise floor, 64 the best survivor (1.013x)
MATVEC_ROW = _chain({64: 141.792, 128: 142.496, 256: 142.528, 512: 143.072, 1024: 147.04})
MATVEC_ROW_SPREAD = dict(zip(MATVEC_ROW, (0.00301, 0.00100, 0.00200, 0.00066, 0.00161)))
# H100 blur1d: optimum 128 in the middle of the chain
BLUR1D = _chain({64: 161.504, 128: 84.448, 256: 89.248, 512: 96.672, 1024: 113.216})


def test_a_tie_is_not_a_stop_the_pass_follows_a_gentle_slope_to_the_best_survivor():
    old, _, _ = _pass(MATVEC_ROW, "walk", spread=MATVEC_ROW_SPREAD)
    assert old.best == Config((512,))  # the old rule: 256 is 0.38 % faster, inside the 1 % floor -> stop
    new, _, timed = _pass(MATVEC_ROW, "bracket", spread=MATVEC_ROW_SPREAD)
    assert new.best == Config((64,))  # what the thesis' exhaustive pass picks
    assert len(timed) == 4  # nothing is a wall on a slope inside the noise: every survivor is timed


def test_an_optimum_in_the_middle_costs_its_two_neighbours_not_the_whole_way_there():
    old, _, old_timed = _pass(BLUR1D, "walk")
    new, _, new_timed = _pass(BLUR1D, "bracket")
    assert old.best == new.best == Config((128,))
    assert [c.local[0] for c in old_timed] == [512, 256, 128, 64]  # walked there from 1024
    # the cheapest proof under unimodality: the best and both its neighbours
    assert sorted(c.local[0] for c in new_timed) == [64, 128, 256]
    total = sum(BLUR1D.values())
    assert sum(BLUR1D[c] for c in new_timed) / total < sum(BLUR1D[c] for c in old_timed) / total


def test_a_wall_bounds_what_lies_beyond_it_a_tie_does_not():
    times = _chain({64: 100.0, 128: 100.5, 256: 130.0, 512: 140.0, 1024: 150.0})
    walk, seen, _ = _pass(times, "bracket", profiled=(Config((128,)),))
    # from 128 the larger stretch is probed first, in its middle: 512 (40 % slower) is a wall, so 1024
    # beyond it is never timed; 256 between them and 64 stay open, and 64 wins
    assert walk.best == Config((64,)) and seen[1] == Config((512,)) and END not in seen
    # 64 within the noise of 128 (0.5 % < 1 %) bounds nothing: 32 beyond it is still timed
    times = _chain({32: 90.0, 64: 100.5, 128: 100.0, 256: 130.0})
    walk, seen, _ = _pass(times, "bracket", profiled=(Config((128,)),))
    assert walk.best == Config((32,)) and Config((32,)) in seen


def test_the_noise_is_the_larger_measured_spread_when_it_exceeds_the_floor():
    times = _chain({64: 100.0, 128: 103.0, 256: 80.0})
    # 128 is 3 % slower than 64: a wall at a 1 % floor, so 256 beyond it is never timed ...
    walk, seen, _ = _pass(times, "bracket", profiled=(Config((64,)),), floor=0.01)
    assert walk.best == Config((64,)) and Config((256,)) not in seen
    # ... but not when 128's own timing spreads by 5 %: then 256 stays open (a non-unimodal case found)
    walk, seen, _ = _pass(times, "bracket", profiled=(Config((64,)),), spread={Config((128,)): 0.05})
    assert walk.best == Config((256,))


def _unimodal(rng: np.random.Generator, n: int) -> dict[Config, float]:
    """A random unimodal chain with steps from 0.01 % (inside any noise floor) to 30 %."""
    m = int(rng.integers(0, n))
    steps = rng.exponential(1.0, size=n) * rng.choice([0.001, 0.01, 0.1], size=n)
    t = np.zeros(n)
    t[m] = 100.0
    for i in range(m - 1, -1, -1):
        t[i] = t[i + 1] * (1.0 + steps[i])
    for i in range(m + 1, n):
        t[i] = t[i - 1] * (1.0 + steps[i])
    return {Config((32 * (i + 1),)): float(v) for i, v in enumerate(t)}


def test_on_unimodal_chains_the_pass_always_returns_the_minimum_and_the_old_walk_does_not():
    rng = np.random.default_rng(18)
    missed = {"walk": 0, "bracket": 0}
    for trial in range(300):
        times = _unimodal(rng, int(rng.integers(1, 33)))
        profiled = (max(times),) if trial % 2 else ()
        for rule in missed:
            walk, seen, _ = _pass(times, rule, profiled=profiled)
            missed[rule] += times[walk.best] != min(times.values())
            assert len(seen) <= len(times)
    assert missed["bracket"] == 0
    assert missed["walk"] > 0  # stops on a tie short of the minimum


@pytest.mark.parametrize("n", [5, 16, 32])
def test_on_a_strictly_unimodal_chain_the_timings_grow_with_log_n(n):
    """Steps of 5 % (beyond the noise): wherever the optimum lies, at most 2*ceil(log2(n+1)) timings, and
    fewer in the worst case than the old walk from the chain's end (4, 9, 15 for n = 5, 16, 32)."""
    sizes = [32 * (k + 1) for k in range(n)]
    worst = {"walk": 0, "bracket": 0}
    for m in range(n):
        times = {Config((s,)): 100.0 * 1.05 ** abs(i - m) for i, s in enumerate(sizes)}
        for rule in worst:
            walk, _, timed = _pass(times, rule, profiled=(Config((sizes[-1],)),))
            assert times[walk.best] == 100.0
            worst[rule] = max(worst[rule], len(timed))
    assert worst["bracket"] <= 2 * math.ceil(math.log2(n + 1))
    assert worst["bracket"] < worst["walk"]


def test_merge_factors_of_the_workload_variant_are_a_chain_and_2d_shapes_are_not():
    wl = [Config((32, c), "wl") for c in (2, 4, 8, 16, 32)]
    assert descent.chain_axis(wl) == 1
    assert descent.chain_axis([Config((s,)) for s in (64, 128)]) == 0
    assert descent.chain_axis([Config((64,))]) == 0
    assert descent.chain_axis([Config((32, 4)), Config((64, 4)), Config((32, 8))]) is None
    assert descent.chain_axis([Config((32, 4)), Config((64, 4))]) == 0  # 2-D shapes on one line
    assert descent.chain_axis([Config((64,)), Config((32, 2), "wl")]) is None
    # a flat chain of merge factors (spreads 1-3 % on the H100) is timed whole, the pick is its minimum
    times = dict(zip(wl, (26.976, 26.848, 26.976, 27.040, 27.456)))
    walk, _, _ = _pass(times, "bracket", profiled=(Config((32, 32), "wl"),),
                       spread=dict(zip(wl, (0.019, 0.016, 0.016, 0.009, 0.005))))
    assert walk.best == Config((32, 4), "wl")


def test_off_a_chain_the_default_rule_is_the_neighbour_walk():
    pool = [Config((a, b)) for a in (8, 16, 32, 64) for b in (1, 2, 4, 8) if a * b >= 64]
    times = {c: 100.0 + abs(math.log2(c.local[0]) - 5) * 7 + abs(math.log2(c.local[1]) - 2) * 3 for c in pool}
    a, seen_a, _ = _pass(times, "bracket", profiled=(Config((64, 8)),))
    b, seen_b, _ = _pass(times, "walk", profiled=(Config((64, 8)),))
    assert a == b and seen_a == seen_b


def test_the_pass_is_deterministic_and_rejects_an_unknown_rule():
    times = _chain({64: 100.0, 128: 100.0, 256: 100.0, 512: 100.0})  # all tied: rank (space order) decides
    runs = [_pass(times, "bracket", profiled=())[0] for _ in range(3)]
    assert runs[0] == runs[1] == runs[2] and runs[0].best == Config((64,))
    with pytest.raises(ValueError, match="unknown final-pass rule"):
        descent.ranked_pass(list(times), lambda c: (0.0, 0.0, c), times.__getitem__, lambda c: 0.0, [], rule="greedy")
    with pytest.raises(ValueError, match="at least one"):
        descent.bracket([], times.__getitem__, lambda c: 0.0, rank=lambda c: 0)
