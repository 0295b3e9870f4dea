"""The ranked final pass (tuning.descent), the per-stage ledger and the replay of saved measurements."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_gpuperf.tuning import descent, replay
from pytest_gpuperf.tuning.evaluate import Config, Ledger

SAVED = Path(__file__).resolve().parents[1] / "results" / "pocl-pthread-haswell-amd-epyc" / "tuning-points-opencl.json"


def _walk(times: dict[Config, float], spread: float = 0.0, start: Config | None = None, floor: float = 0.01):
    seen: list[Config] = []

    def time_of(c: Config) -> float:
        if c not in seen:
            seen.append(c)
        return times[c]

    order = {c: i for i, c in enumerate(sorted(times))}
    walk = descent.descend(list(times), time_of, lambda c: spread, rank=order.__getitem__, start=start, floor=floor)
    return walk, seen


def test_a_unimodal_1d_family_is_descended_to_its_optimum_with_fewer_runs_than_the_pool():
    sizes = [32 * k for k in range(1, 33)]
    times = {Config((s,)): abs(s - 416) + 100.0 for s in sizes}
    walk, seen = _walk(times, start=Config((1024,)))
    assert walk.best == Config((416,))
    assert len(seen) < len(sizes)


def test_a_neighbour_inside_the_noise_is_a_tie_not_a_direction():
    times = {Config((64,)): 100.0, Config((128,)): 98.0, Config((256,)): 90.0}
    walk, _ = _walk(times, spread=0.05, start=Config((64,)))
    assert walk.best == Config((64,)) and walk.steps == 0  # 2 % better is inside 5 % noise
    walk, _ = _walk(times, spread=0.01, start=Config((64,)))
    assert walk.best == Config((256,))


def test_2d_neighbours_are_one_power_of_two_away_and_workload_variants_stay_apart():
    pool = [Config((32, 4)), Config((64, 4)), Config((32, 8)), Config((16, 2)), Config((128, 4)), Config((8, 2), "wl")]
    near = descent.neighbours(Config((32, 4)), pool)
    assert set(near) == {Config((64, 4)), Config((32, 8)), Config((16, 2))}
    assert descent.neighbours(Config((8, 2), "wl"), pool) == []


def test_an_empty_pool_is_an_error():
    with pytest.raises(ValueError, match="at least one"):
        descent.descend([], lambda c: 1.0, lambda c: 0.0, rank=lambda c: 0)


def test_the_ledger_counts_evaluations_per_stage_once_each():
    ledger = Ledger()
    ledger.stage = "concurrency"
    ledger.charge(Config((64,)))
    ledger.charge(Config((1024,)))
    ledger.stage = "final"
    ledger.charge(Config((64,)))  # already paid for by the concurrency filter
    ledger.charge(Config((256,)))
    assert ledger.by_stage() == {"concurrency": 2, "final": 1}


def test_replay_of_a_saved_pocl_run_reproduces_the_suite_s_own_picks():
    """The tuning suite saved every point of a real PoCL run; replaying the two final passes on them
    gives the picks and evaluation counts the suite itself recorded for the thesis tuner and the ranked
    descent (same numbers, same decisions)."""
    doc = json.loads(SAVED.read_text())
    metrics = {m["name"]: m for m in doc["metrics"]}
    rows = replay.replay_results(doc)
    assert len(rows) == 12
    for thesis, ranked in rows:
        k = thesis.kernel
        assert thesis.pick == metrics[f"tuning.{k}.dao.quality"]["info"]["picks"][0]
        assert ranked.pick == metrics[f"tuning.{k}.dao_ranked.quality"]["info"]["picks"][0]
        assert ranked.cost == pytest.approx(metrics[f"tuning.{k}.dao_ranked.cost"]["value"])
        assert thesis.cost == pytest.approx(metrics[f"tuning.{k}.dao.cost"]["value"])


def test_replay_cli_refuses_a_results_file_without_points(tmp_path, capsys):
    f = tmp_path / "r.json"
    f.write_text(json.dumps({"schema": "pytest-gpuperf/1", "metrics": []}))
    assert replay.main([str(f)]) == 2
    assert "no tuning kernel with saved points" in capsys.readouterr().err
