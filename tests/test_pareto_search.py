"""The pruned (time, energy) front search (tuning/pareto.py search_front, pareto_search) and its power floor
(timing/energy.py idle_floor) on synthetic tables: the same front as an exhaustive search when the floor is a
true lower bound, early stops, a truncation that says so, time noise that cannot prune a front point."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.devices.nvml import Reading
from pytest_gpuperf.timing.energy import idle_floor
from pytest_gpuperf.tuning.pareto import FrontSearch, pareto_front, search_front, time_lower


class Table:
    """A synthetic space: median time, spread, true device time and the energy an exhaustive search would
    measure, per configuration; ``measure`` counts the energies asked for and advances a fake clock."""

    def __init__(self, rows: dict, cost_s: float = 2.3):
        self.rows = rows  # key -> (median_s, spread, energy_j, watts)
        self.asked: list = []
        self.now = 0.0
        self.cost_s = cost_s

    def times(self) -> dict:
        return {k: (r[0], r[1]) for k, r in self.rows.items()}

    def measure(self, k):
        self.asked.append(k)
        self.now += self.cost_s
        return self.rows[k][2], self.rows[k][3]

    def clock(self) -> float:
        return self.now

    def front(self) -> list:
        return pareto_front({k: (r[0], r[2]) for k, r in self.rows.items()})

    def search(self, floor, budget=None, **kw) -> FrontSearch:
        return search_front(self.times(), self.measure, floor, budget, clock=self.clock, **kw)


def random_table(seed: int, n: int = 120, floor: float = 70.0, p_max: float = 4.0, t_span: float = 20.0,
                 w_max: float = 2.5) -> Table:
    """Powers in [floor, p_max·floor], loop seconds per launch w ≥ t: E = P·w ≥ floor·t (the bound holds)."""
    rng = np.random.default_rng(seed)
    rows = {}
    for i in range(n):
        t = 50e-6 * float(np.exp(rng.uniform(0, np.log(t_span))))
        p = floor * float(rng.uniform(1.0, p_max))
        w = t * float(rng.uniform(1.0, w_max))
        rows[f"c{i}"] = (t, float(rng.uniform(0, 0.01)), p * w, p)
    return Table(rows)


@pytest.mark.parametrize("seed", range(8))
def test_a_true_floor_gives_the_exhaustive_front(seed):
    table = random_table(seed)
    found = table.search(70.0)
    assert found.exact and not found.truncated and not found.violations
    assert found.front() == table.front()
    assert len(table.asked) == len(found.energies) == len(table.rows) - len(found.pruned)
    assert found.pruned, "the table is built so the bound prunes: a search that measures all proves nothing"
    # every configuration left unmeasured is dominated by a measured one, in the exhaustive numbers
    for k in found.pruned:
        t, _, e, _ = table.rows[k]
        assert any(table.rows[m][0] <= t and table.rows[m][2] <= e for m in found.energies), k
    # the optima an exhaustive search picks are among the measured
    assert min(table.rows, key=lambda k: table.rows[k][2]) in found.energies
    assert min(table.rows, key=lambda k: table.rows[k][0] * table.rows[k][2]) in found.energies
    assert found.slack() is not None and found.slack() >= 1.0


def test_power_far_above_a_wide_time_range_stops_early():
    """Every configuration at 5× the floor, times over two decades: past 5 / (0.98 · 0.95) = 5.37× the fastest's
    time (t_lo's 2 %, the energy margin's 5 %) nothing can beat the fastest's energy, so the search measures
    the 22 configurations below that and proves the other 38 dominated, exactly."""
    ts = np.geomspace(1e-4, 1e-2, 60)
    table = Table({f"c{i}": (float(t), 0.0, 350.0 * float(t) * (1 + 0.3 * ((i * 7) % 5) / 5), 350.0)
                   for i, t in enumerate(ts)})
    found = table.search(70.0)
    assert found.exact and found.front() == table.front()
    limit = 5.0 / (0.98 * 0.95) * ts[0]
    assert table.asked == [f"c{i}" for i, t in enumerate(ts) if t < limit] and len(table.asked) == 22
    assert len(found.pruned) == 38 and all(table.rows[k][0] >= limit for k in found.pruned)
    assert "exact" in found.summary() and f"{len(table.asked)} energies of 60" in found.summary()


def test_without_a_floor_everything_is_measured():
    table = random_table(3)
    found = table.search(None)
    assert not found.pruned and len(table.asked) == len(table.rows)
    assert found.summary() == f"exhaustive: all {len(table.rows)} configurations measured"
    assert found.front() == table.front()


def test_the_floor_is_weak_when_loop_power_is_far_above_it():
    """What the saved H100 searches look like (pareto-1/2: idle floor 121–132 W, E/(P_floor·t_lo) ≥ 2.9):
    E ≈ 500 W · t against a 125 W floor, times within 4×: the bound proves nothing dominated (every energy is
    measured) — the budget is what stops such a search."""
    ts = np.linspace(50e-6, 200e-6, 40)
    table = Table({f"c{i}": (float(t), 0.005, 500.0 * float(t) * (1.0 + 0.05 * (i % 3)), 230.0)
                   for i, t in enumerate(ts)})
    found = table.search(125.0)
    assert not found.pruned and len(table.asked) == 40 and found.exact


def test_a_spent_budget_truncates_and_says_so():
    table = random_table(5, floor=70.0, p_max=40.0, t_span=3.0)  # floor far below: the bound prunes little
    found = table.search(70.0, budget=12.0)  # 2.3 s per energy: 5 energies fit, a 6th would overrun
    assert len(table.asked) == 5 and found.truncated and not found.exact
    n = found.covered
    assert 5 <= n < len(table.rows)
    assert found.summary().startswith(f"front over the {n} fastest of {len(table.rows)} configurations")
    info = found.info()
    assert info["truncated"] and not info["exact"] and info["energies_measured"] == 5
    assert info["undecided"] == len(found.unreached) > 0 and info["candidates_timed"] == len(table.rows)
    # the N fastest are all decided, and the front over them is the true front's part among them
    first_n = set(found.order[:n])
    assert first_n <= set(found.energies) | set(found.pruned)
    assert found.front() == [k for k in table.front() if k in first_n]
    assert found.elapsed_s <= 12.0


def test_the_budget_still_measures_the_fastest():
    table = random_table(6, n=10)
    found = table.search(70.0, budget=0.0)
    assert len(table.asked) == 1 and table.asked[0] == found.order[0]
    assert found.truncated and found.covered == 1


def test_time_lower_uses_the_spread_and_a_minimum():
    assert time_lower(1.0, 0.0) == pytest.approx(0.98)  # never the bare median
    assert time_lower(1.0, 0.05) == pytest.approx(0.85)  # 3 robust standard deviations
    assert time_lower(1.0, 0.5) == 0.0
    assert time_lower(1.0, 0.05, z=0.0, min_rel=0.0) == 1.0


def test_a_median_read_high_cannot_prune_a_front_point():
    """B's median (2.2 s) is read high; its device time is 1.9 s and its energy (1.9 J ≥ 1 W · 1.9 s: the bound
    holds) beats A's. With the median the bound (1 W · 2.2 s · 0.95 = 2.09 J ≥ A's 2.0 J) would prune B
    off the front; with t_lo = 2.2 · (1 − 3 · 0.05) it is measured."""
    rows = {"A": (1.0, 0.0, 2.0, 2.0), "B": (2.2, 0.05, 1.9, 1.0)}
    found = Table(rows).search(1.0)
    assert found.front() == ["A", "B"] and not found.pruned
    naive = Table(rows).search(1.0, z=0.0, min_rel=0.0)
    assert naive.pruned == ["B"] and naive.front() == ["A"]  # what the noise handling prevents


def test_a_floor_above_the_measured_power_switches_pruning_off():
    """A floor read while something else ran (3× too high): the first measured point below the bound shows
    it, pruning stops, the configurations pruned so far are measured after all, and the front is exact."""
    table = random_table(2, floor=70.0)
    found = table.search(210.0)
    assert found.violations and found.floor_w == 0.0
    assert not found.pruned and len(table.asked) == len(table.rows)
    assert found.front() == table.front()
    assert "pruning switched off" in found.info()["violations"][0]


def test_a_violation_brings_back_what_was_pruned_before_it():
    """Floor given 100 W, true floor lower. After A (150 J), C (1.65 s) is pruned by the wrong floor
    (100 W · 1.617 s · 0.95 ≥ 150 J); B, timed noisily (t_lo 0.935 s), is measured next at 60 W — below the
    floor: a violation. C goes back into the queue, is measured (115.5 J) and is on the front."""
    rows = {"A": (1.0, 0.0, 150.0, 150.0), "C": (1.65, 0.0, 115.5, 70.0), "B": (1.7, 0.15, 102.0, 60.0)}
    table = Table(rows)
    found = table.search(100.0)
    assert table.asked == ["A", "B", "C"] and not found.pruned
    assert [k for k, _ in found.violations] == ["B"] and "P=60.0 W" in found.violations[0][1]
    assert found.front() == table.front() == ["A", "C", "B"]


def test_energy_margin_covers_a_low_reading():
    """B runs 1.05 s at the floor's 1 W (true energy 1.05 J: the bound holds) but its energy reads 4 % low,
    1.008 J — below A's 1.02 J, so an exhaustive search puts B on the front. Without the margin the bound
    (1 W · 1.05 s · 0.98 = 1.029 J ≥ 1.02 J) prunes it; with the 5 % margin (0.978 J) it is measured."""
    rows = {"A": (1.0, 0.0, 1.02, 1.02), "B": (1.05, 0.0, 1.008, 0.96)}
    found = Table(rows).search(1.0)
    assert "B" in found.energies and found.front() == ["A", "B"] and not found.violations
    bare = Table(rows).search(1.0, energy_margin=0.0)
    assert bare.pruned == ["B"] and bare.front() == ["A"]


# ------------------------------------------------------------------------------------------- the idle floor
def _idle(watts_counter: float, powers: list[float], period: float = 0.1, dt: float = 0.01, t0: float = 5.0):
    out = []
    for i, p in enumerate(powers):
        t = t0 + i * dt
        out.append(Reading(t, 1000.0 * watts_counter * period * int(t / period + 1e-9), p, 345.0, 1593.0, 35.0, 1))
    return out


def test_idle_floor_is_the_lower_of_the_counter_rate_and_the_readings():
    rs = _idle(72.0, [74.0] * 100)
    idle = idle_floor(rs)
    assert idle.counter_w is not None and 0.9 * 72.0 < idle.counter_w <= 72.0  # never above the true rate
    assert idle.reading_min_w == 74.0 and idle.watts == idle.counter_w
    assert idle.readings == 100 and "idle" in idle.info()["method"]


def test_idle_floor_ignores_a_decaying_average_of_the_previous_kernel():
    powers = list(np.linspace(300.0, 150.0, 100))  # NVML's averaged power still holds the last kernel
    idle = idle_floor(_idle(72.0, powers))
    assert idle.watts <= 72.0 and idle.reading_min_w == pytest.approx(150.0)


def test_idle_floor_without_counter_updates_or_readings():
    assert idle_floor([]) is None
    flat = [Reading(5.0 + 0.01 * i, 1000.0, 71.0, 345.0, 1593.0, 35.0, 1) for i in range(20)]
    idle = idle_floor(flat)
    assert idle.counter_w is None and idle.watts == 71.0


# ------------------------------------------------------------------------------------------- on a real device
def test_pareto_search_on_pocl_with_a_simulated_counter(cl_device):
    """The device glue on the real PoCL device, its sensor a simulated stepping counter at a constant 300 W
    (the energies are the simulation's): the idle floor is the counter's, every configuration is timed, the
    measured points carry an energy on the evaluator, the rest none, and the front is the evaluator's."""
    from test_power_corpus import SimCounter

    from pytest_gpuperf.tuning.kernels import by_name
    from pytest_gpuperf.tuning.pareto import pareto_search
    from pytest_gpuperf.tuning.tuner import context

    bench = by_name("blur1d")
    ctx = context(cl_device, bench, seed=11, objective="time")
    ctx.ev.energy_warmup_s, ctx.ev.energy_k_steps = 0.01, 3
    sensor = SimCounter(period=0.002)
    found, idle = pareto_search(ctx, sensor, budget_s=60.0)
    assert idle is not None and idle.watts == pytest.approx(300.0, rel=0.1)
    assert set(found.order) == set(ctx.space) and len(ctx.space) > 1
    measured = {c for c, p in ctx.ev.points.items() if p.energy_j is not None}
    assert measured == set(found.energies) and found.order[0] in measured
    assert found.front() == ctx.ev.front()
    assert found.exact or found.truncated
    info = found.info(lambda c: c.label())
    assert info["candidates_timed"] == len(ctx.space) and info["p_floor_w"] == pytest.approx(idle.watts, abs=0.01)

    with pytest.raises(ValueError, match="objective 'time'"):
        ctx.ev.sensor = sensor
        pareto_search(ctx, sensor)
