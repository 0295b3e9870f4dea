"""The ranked final pass (tuning.descent), the per-stage ledger and the replay of saved measurements
(the chain rule itself: tests/test_tuning_ranked_1d.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_gpuperf.schemas.results_doc import ResultsDocument
from pytest_gpuperf.tuning import descent, replay
from pytest_gpuperf.tuning.evaluate import Config, Ledger
from pytest_gpuperf.tuning.kernels import by_name
from pytest_gpuperf.tuning.strategies import dao_ranked, exhaustive
from pytest_gpuperf.tuning.tuner import context

RESULTS = Path(__file__).resolve().parents[1] / "results"
SAVED = RESULTS / "pocl-pthread-haswell-amd-epyc" / "tuning-points-opencl.json"
H100 = RESULTS / "nvidia-h100-80gb-hbm3" / "default-5c-cuda.json"  # CUDA, full spaces, the rule "walk"
H200 = RESULTS / "nvidia-h200" / "upgrade-1b-cuda.json"


def _saved(path: Path) -> ResultsDocument:
    """A committed run (stored compressed), read as every results file is; a missing one fails the test —
    the evidence belongs here."""
    return ResultsDocument.load(path)


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


@pytest.mark.parametrize("saved", [SAVED, H100, H200], ids=["pocl", "h100", "h200"])
def test_replay_of_a_saved_run_reproduces_the_suite_s_own_picks(saved):
    """The tuning suite saved every point of a real run; replaying the two final passes on them, with the
    rule those runs used (``walk``), gives the picks, evaluation counts and kernel time the suite itself
    recorded for the thesis tuner and the ranked pass (same numbers, same decisions)."""
    doc = _saved(saved)
    metrics = {m.name: m for m in doc.metrics}
    rows = replay.replay_results(doc, rule="walk")
    assert len(rows) == 12
    for thesis, ranked in rows:
        k = thesis.kernel
        assert thesis.pick == metrics[f"tuning.{k}.dao.quality"].info["picks"][0]
        assert ranked.pick == metrics[f"tuning.{k}.dao_ranked.quality"].info["picks"][0]
        assert ranked.cost == pytest.approx(metrics[f"tuning.{k}.dao_ranked.cost"].value)
        assert thesis.cost == pytest.approx(metrics[f"tuning.{k}.dao.cost"].value)
        assert ranked.device_cost == pytest.approx(metrics[f"tuning.{k}.dao_ranked.device_cost"].value, abs=1e-4)
        assert thesis.device_cost == pytest.approx(metrics[f"tuning.{k}.dao.device_cost"].value, abs=1e-4)


@pytest.mark.parametrize("saved", [H100, H200], ids=["h100", "h200"])
def test_replay_of_the_gpu_runs_under_the_chain_rule(saved):
    """On the H100 and H200 runs the default rule picks, on every chain (1-D sizes, merge factors), the
    survivor the thesis' exhaustive pass picks, with no more evaluations; 2-D spaces of >= 200 shapes keep
    the target (<= 1.02x at <= 5 % of the kernel time). What it cannot do is H100/H200 blur1d's 20 %: the
    contention check alone spends 11.7 / 11.9 %, and any pass that shows 128 is the best must time 64 and
    256 beside it — exactly what it times."""
    rows = {a.kernel: (a, b) for a, b in replay.replay_results(_saved(saved))}
    for thesis, ranked in rows.values():
        if thesis.dims == 1:
            assert ranked.pick == thesis.pick and ranked.evaluations <= thesis.evaluations
            assert ranked.quality <= 1.02
        elif thesis.space >= 200:
            assert ranked.verdict() == "met"
    thesis, ranked = rows["blur1d"]
    assert ranked.final == 3 and ranked.verdict() == "MISSED (kernel time)"
    assert ranked.filters_device_cost > 0.11


def test_replay_cli_prints_quality_and_kernel_time_per_kernel(capsys):
    _saved(H100)
    assert replay.main([str(H100)]) == 0
    out = capsys.readouterr().out
    assert "rule 'bracket'" in out and "1-D: q <= 1.02, kernel <= 20%" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("matvec_row "))
    assert "64  1.013    2+4  16.0%" in line and line.endswith("| met")
    assert replay.main([str(H100), "--rule", "walk"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("matvec_row "))
    assert "512  1.022    2+2  10.7%" in line and line.endswith("MISSED (quality)")


def test_dao_ranked_on_a_device_is_what_its_replay_gives(gpu_device):
    """The strategy on a device (PoCL in CI) and the replay of the points it saved take the same
    decisions: the same pick and the same configurations timed."""
    ctx = context(gpu_device, by_name("matvec_row"), {"m": 64, "n": 32})
    exhaustive(ctx)  # every point timed first, as the suite does
    out = dao_ranked(ctx)
    assert out.pruning["rule"] == "bracket"
    assert out.pruning["evaluations"].get("final", 0) <= len(out.pruning["survivors"])
    _thesis, ranked = replay.replay_kernel("matvec_row", replay.points(ctx), out.pruning["survivors"],
                                           out.pruning["profiled"])
    assert ranked.pick == out.best.label() and ranked.evaluations == len(out.ledger.visited)


def test_replay_cli_refuses_a_results_file_without_points(tmp_path, capsys):
    f = tmp_path / "r.json"
    f.write_text(json.dumps({"schema": "pytest-gpuperf/1", "metrics": []}))
    assert replay.main([str(f)]) == 2
    assert "no tuning kernel with saved points" in capsys.readouterr().err
