"""The energy-aware tuner's objective and Pareto front (tuning/pareto.py) on hand-made points."""

from __future__ import annotations

import pytest

from pytest_gpuperf.tuning.pareto import check_objective, pareto_front, score


def test_front_of_hand_made_points():
    pts = {"a": (1.0, 10.0), "b": (2.0, 5.0), "c": (3.0, 6.0), "d": (1.5, 10.0), "e": (4.0, 1.0)}
    assert pareto_front(pts) == ["a", "b", "e"]  # c: b is faster and cheaper; d: a is faster at equal energy


def test_equal_points_are_all_kept_and_empty_is_empty():
    assert pareto_front({"x": (1.0, 1.0), "y": (1.0, 1.0)}) == ["x", "y"]
    assert pareto_front({}) == []


def test_scores_per_objective():
    assert score(2.0, 3.0, "time") == 2.0
    assert score(2.0, 3.0, "energy") == 3.0
    assert score(2.0, 3.0, "both") == 6.0  # energy-delay product
    assert score(2.0, None, "time") == 2.0
    with pytest.raises(ValueError, match="power sensor"):
        score(2.0, None, "energy")
    with pytest.raises(ValueError, match="unknown tuning objective"):
        check_objective("speed")


def test_energy_objective_on_a_device_without_a_sensor_says_why(cl_device):
    from pytest_gpuperf.tuning.evaluate import Evaluator
    from pytest_gpuperf.tuning.kernels import by_name
    from pytest_gpuperf.timing.measure import MeasureConfig

    bench = by_name("reduce")
    ev = Evaluator(cl_device, bench, bench.sizes(cl_device), MeasureConfig())
    ev.set_objective("time")
    with pytest.raises(ValueError, match="CPU device"):
        ev.set_objective("energy")
    assert ev.objective == "time" and ev.front() == []


def test_energy_objective_on_pocl_with_a_simulated_counter(cl_device):
    """The Evaluator's energy path on the real PoCL device, its sensor a simulated stepping counter (the
    energies are the simulation's, not measurements): every point gets one, ``both`` scores the
    energy-delay product, and the front is drawn from the measured points."""
    from test_power_corpus import SimCounter

    from pytest_gpuperf.timing.measure import MeasureConfig
    from pytest_gpuperf.tuning.evaluate import Config, Evaluator, Ledger
    from pytest_gpuperf.tuning.kernels import by_name

    bench = by_name("blur1d")
    ev = Evaluator(cl_device, bench, bench.sizes(cl_device), MeasureConfig(warmup=1, min_repeats=3, max_repeats=5,
                                                                            budget_s=0.2))
    ev.sensor = SimCounter(period=0.002)
    ev.energy_warmup_s, ev.energy_k_steps = 0.02, 5
    ev.set_objective("both")
    ledger = Ledger()
    scores = {c: ev.evaluate(c, ledger) for c in (Config((16,)), Config((32,)), Config((64,)))}
    for c, s in scores.items():
        p = ev.points[c]
        assert p.energy_j is not None and p.energy_j > 0 and not p.throttled
        assert s == pytest.approx(p.time_s * p.energy_j)
    front = ev.front()
    assert front and set(front) <= set(scores)
