"""Change-point detection on a synthetic history with the measured noise of a real H100 metric."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from pytest_gpuperf.util import jsonio

from pytest_gpuperf.history.backends import record_runs
from pytest_gpuperf.history.cli import DEFAULT_DB  # noqa: F401 - the CLI module must import cleanly
from pytest_gpuperf.history.detect import Point, detect, detect_all, kernel_segments
from pytest_gpuperf.history.records import TrendMetric, RunRecord
from pytest_gpuperf.timing.stats import MAD_TO_SIGMA
from pytest_gpuperf.cli import main
from history_support import committed_detection

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "results/nvidia-h100-80gb-hbm3/accuracy-r2-cuda.json.xz"
METRIC = "accuracy.sum.double.pairwise.n12.time_us"  # 200 samples, robust CV 1.6 %: one of the noisier GPU figures
STEP_AT = 30
#: the step of the synthetic series: outside the band the gate gives this metric's noise (6 σ ≈ 10 %, and σ
#: estimated from 30 runs can read a fifth higher)
STEP = 0.15


def measured_noise() -> tuple[float, float, str]:
    """(median, MAD, better) of the real metric's samples in its results file."""
    doc = jsonio.read_json(SOURCE)
    m = next(m for m in doc["metrics"] if m["name"] == METRIC)
    return m["stats"]["median"], m["stats"]["mad"], m["better"]


def synthetic(seed: int, step: float, n: int = 50, better: str | None = None) -> list[RunRecord]:
    """n runs, one per commit, with the real metric's noise (σ = 1.4826 MAD); a relative step from STEP_AT."""
    median, mad, real_better = measured_noise()
    rng = np.random.default_rng(seed)
    runs = []
    for i in range(n):
        level = median * (1 + (step if i >= STEP_AT else 0.0))
        runs.append(RunRecord(date=f"2026-02-01T00:{i // 60:02d}:{i % 60:02d}+00:00", commit=f"{i:04d}" + "ab" * 18,
                              device_key="nvidia-h100-80gb-hbm3", backend="cuda", driver="580.159.04",
                              metrics=[TrendMetric(name=METRIC, test="t", value=level + MAD_TO_SIGMA * mad *
                                                    rng.standard_normal(), unit="us", better=better or real_better,
                                                    mad=mad, n=200)]))
    return runs


def test_noise_is_real_and_the_step_just_clears_the_gates_band():
    median, mad, better = measured_noise()
    cv = MAD_TO_SIGMA * mad / median
    assert better == "lower" and 0.005 < cv < 0.05 and 6 * cv < STEP < 12 * cv


def test_a_step_the_gate_would_flag_names_its_commit_and_direction():
    runs = synthetic(seed=14, step=STEP)
    steps = detect(runs)
    assert [(s.commit, s.direction) for s in steps] == [(runs[STEP_AT].commit, "worse")]
    assert steps[0].previous_commit == runs[STEP_AT - 1].commit
    assert STEP - 0.02 < steps[0].rel < STEP + 0.02


@pytest.mark.parametrize("seed", range(20))
def test_step_found_within_two_commits_and_no_step_without_one(seed):
    found = detect(synthetic(seed, step=STEP))
    assert len(found) == 1 and abs(found[0].index - STEP_AT) <= 2
    assert detect(synthetic(seed, step=0.0)) == []


def test_higher_is_better_metric_dropping_is_worse_and_rising_is_better():
    assert detect(synthetic(3, step=-STEP, better="higher"))[0].direction == "worse"
    assert detect(synthetic(3, step=+STEP, better="higher"))[0].direction == "better"


def test_sub_noise_wiggle_is_not_a_step():
    assert detect(synthetic(5, step=0.01)) == []
    # 5 % is 3 σ of this metric's noise and found beyond doubt over 20 runs, but the gate's band for a figure
    # this noisy is 6 σ: no step a team would be told of
    assert detect(synthetic(5, step=0.05)) == []


def test_cli_detect_fail_on_step_exit_codes(tmp_path, capsys):
    worse, better = str(tmp_path / "w.db"), str(tmp_path / "b.db")
    record_runs(worse, synthetic(14, step=STEP))
    record_runs(better, synthetic(14, step=-STEP))
    assert main(["history", "detect", "--db", worse, "--fail-on-step"]) == 1
    out = capsys.readouterr().out
    assert "WORSE +" in out and synthetic(14, STEP)[STEP_AT].commit[:12] in out
    assert main(["history", "detect", "--db", better, "--fail-on-step"]) == 0
    assert main(["history", "detect", "--db", worse]) == 0


# ---- what is not a step: a level from 0, an identity change, a planted run, a one-run blip --------------
def series_runs(values: list[float], better: str = "lower", identities: list[dict] | None = None,
                planted: set[int] = frozenset(), name: str = "area.metric") -> list[RunRecord]:
    """One run per value (commit ``c<i>``, one minute apart) of one metric; runs in ``planted`` ran the gate
    check's ``--gpuperf-plant``."""
    return [RunRecord(date=f"2026-03-01T{i // 60:02d}:{i % 60:02d}:00+00:00", commit=f"c{i:03d}", device_key="dev",
                      backend="cuda", argv=["suites/", *(["--gpuperf-plant", "memory=0.05"] if i in planted else [])],
                      metrics=[TrendMetric(name=name, test="t", value=v, unit="ulp", better=better, mad=0.0,
                                            identity=(identities or [{}] * len(values))[i])])
            for i, v in enumerate(values)]


def strict_loads(text: str):
    """json.loads that refuses NaN and ±Infinity, as a browser's JSON.parse does."""
    def refuse(token: str):
        raise ValueError(f"non-standard JSON token {token}")
    return json.loads(text, parse_constant=refuse)


def test_a_step_from_zero_has_no_relative_size_and_its_json_is_strict(tmp_path, capsys):
    runs = series_runs([0.0] * 6 + [1.0] * 6, better="bound")
    (step,) = detect(runs)
    assert (step.before, step.after, step.delta, step.rel) == (0.0, 1.0, 1.0, None)
    assert step.commit == "c006" and step.direction == "worse"
    assert "+1 ulp (0 → 1 ulp; from 0, so no relative size;" in step.describe()
    db = str(tmp_path / "h.db")
    record_runs(db, runs)
    assert main(["history", "detect", "--db", db, "--json"]) == 0
    doc = strict_loads(capsys.readouterr().out)
    assert doc["steps"][0]["rel"] is None and doc["steps"][0]["delta"] == 1.0


def test_history_json_is_strict_so_a_non_finite_figure_fails_loudly():
    from pytest_gpuperf.history.records import dumps

    with pytest.raises(ValueError):
        dumps({"rel": math.inf})


def test_an_identity_change_splits_the_series_and_is_reported_not_as_a_step():
    seeded, exhaustive = {"inputs": "seeded", "n": 4096}, {"inputs": "exhaustive"}
    values = [2.0] * 8 + [3.0] * 8  # the exhaustive inputs find a worse case: a new figure, not a regression
    found = detect_all(series_runs(values, better="bound", identities=[seeded] * 8 + [exhaustive] * 8))
    assert found.steps == []
    (change,) = found.identity_changes
    assert (change.commit, change.previous_commit, change.before, change.after) == ("c008", "c007", seeded, exhaustive)
    assert change.what() == "inputs: seeded → exhaustive, n: 4096 → -"
    # within one identity a step is still found, and says which identity it belongs to
    values = [2.0] * 8 + [3.0] * 6 + [4.0] * 6
    (step,) = detect(series_runs(values, better="bound", identities=[seeded] * 8 + [exhaustive] * 12))
    assert (step.commit, step.before, step.after, step.identity) == ("c014", 3.0, 4.0, exhaustive)


def test_runs_with_a_planted_regression_are_left_out_of_the_trend():
    values = [100.0 + 0.1 * (i % 3) for i in range(20)]
    for i in (8, 9, 10):
        values[i] *= 1.05  # the gate check's planted 5 %
    found = detect_all(series_runs(values, planted={8, 9, 10}))
    assert found.steps == [] and [r.commit for r, _ in found.left_out] == ["c008", "c009", "c010"]
    assert detect(series_runs(values)) != [], "the same values unplanted are a real bump"
    # a live session records its plants in the run's options instead of an argv
    runs = series_runs(values)
    for r in runs[8:11]:
        r.options["plants"] = ["memory=0.05"]
    assert detect(runs) == []


@pytest.mark.parametrize("where", [0, 3, 10])
def test_a_one_run_blip_is_an_outlier_not_a_step(where):
    values = [100.0 + 0.1 * (i % 3) for i in range(20)]
    values[where] = 50.0
    assert detect(series_runs(values)) == []
    short = [100.0, 100.1, 100.2, 100.0, 100.1, 100.2]
    short[where % 5] = 50.0
    assert detect(series_runs(short)) == []


def test_a_move_at_the_newest_runs_is_a_candidate_until_k_runs_confirm_it():
    values = [100.0 + 0.1 * (i % 3) for i in range(20)] + [110.0]
    (step,) = detect(series_runs(values))
    assert (step.status, step.commit, step.runs_after) == ("candidate", "c020", 1)
    assert "CANDIDATE: 1 run(s) so far" in step.describe()
    (step,) = detect(series_runs(values + [110.1, 110.2]))
    assert (step.status, step.commit, step.runs_after) == ("confirmed", "c020", 3)
    assert detect(series_runs(values + [110.1]), min_runs=2)[0].status == "confirmed"


def test_an_excursion_shorter_than_k_runs_in_the_middle_is_not_a_step():
    values = [100.0 + 0.1 * (i % 3) for i in range(20)]
    values[8:10] = [110.0, 110.1]  # two runs away and back
    assert detect(series_runs(values)) == []
    values[8:11] = [110.0, 110.1, 110.2]  # three runs: a level of its own, there and back
    assert [(s.commit, s.direction) for s in detect(series_runs(values))] == [("c008", "worse"), ("c011", "better")]


def test_a_blip_next_to_a_step_moves_neither_its_commit_nor_its_level():
    values = [100.0 + 0.1 * (i % 3) for i in range(20)]
    values[12:] = [110.0 + 0.1 * (i % 3) for i in range(8)]
    values[11] = 50.0  # the run just before the step failed low
    (step,) = detect(series_runs(values))
    assert (step.commit, step.previous_commit) == ("c012", "c010")  # bisect from the last run at the old level
    assert 100.0 <= step.before <= 100.2 and 110.0 <= step.after <= 110.2


def aa_sets() -> list[set[str]]:
    """The runs each A/A comparison (the pairs of ``results/aa-pairs.json``, whose reports ``gpuperf compare``
    remakes: runs of unchanged code compared with each other) and each gate check's A/A runs of one commit
    hold, as result paths."""
    sets = [set(pair["a"]) | set(pair["b"]) for pair in jsonio.read_json(ROOT / "results" / "aa-pairs.json")["pairs"]]
    for folder in sorted(ROOT.glob("results/*/**/gatecheck")):
        by_commit: dict[str, set[str]] = {}
        for f in folder.glob("aa-*.json.xz"):
            commit = jsonio.read_json(f)["environment"].get("commit", "")
            by_commit.setdefault(commit, set()).add(str(f.relative_to(ROOT))[:-len(".gz")])
        sets += [s for s in by_commit.values() if len(s) > 1]
    return sets


@pytest.mark.xdist_group("dashboard")  # its worker has read and detected the committed history
def test_the_committed_history_has_no_step_next_to_a_planted_run_across_an_identity_or_inside_aa_runs():
    """On the history built from the committed results: every step is compared within one identity, between
    levels of runs that are not planted gate-check runs, and none falls between two runs of a stretch of
    unchanged A/A runs (the committed A/A comparisons and gate checks)."""
    runs, found = committed_detection()
    planted = {r.uid for r, _ in found.left_out}
    assert planted and found.identity_changes and found.steps
    by_uid = {r.uid: r for r in runs}
    by_series: dict = {}
    for r in sorted(runs, key=lambda r: r.date):
        for m in r.metrics:
            by_series.setdefault((r.device_key, r.backend, m.name), []).append(r)
    stretches = aa_sets()
    assert len(stretches) >= 10
    for s in found.steps:
        assert s.run not in planted and s.date >= s.previous_date
        first = by_uid[s.run]
        assert next(m for m in first.metrics if m.name == s.name).identity == s.identity
        previous = next(r for r in by_series[(s.device_key, s.backend, s.name)]
                        if r.date == s.previous_date and r.commit == s.previous_commit and r.uid not in planted)
        pair = {str(Path(x.source).resolve().relative_to(ROOT))[:-len(".gz")] for x in (previous, first)}
        assert not any(pair <= aa for aa in stretches), f"{s.describe()} sits inside A/A runs {pair}"
    strict_loads(json.dumps(found.to_json(), allow_nan=False))


# ---- a saved slice of the real history, its steps labelled by hand ----------------------------------------
#: (device key, name, commit range, direction, status) of every step in tests/data/history/slice.json.gz,
#: read off its series by eye (tests/history_slice.py names the series and why each is there)
LABELLED = {
    # the PTX model took Alavani's global-memory latency model measured on the device (e391d77)
    ("nvidia-h100-80gb-hbm3", "model.ptx.mean_error", "849ea2b3a7f4..e391d77", "better", "confirmed"),
    # the fuzz suite's seeded inputs changed with the deterministic accuracy statistics (5d3968b)
    ("nvidia-h100-80gb-hbm3", "accuracy.fuzz.fp32.tan.huge.max_ulp", "05c8507..a00f8a6", "better", "confirmed"),
    # the newest run's L2 latency is 5 % lower: one run so far
    ("nvidia-h100-80gb-hbm3", "memory.l2.latency.cycles", "2ddbc93..fa19cec", "better", "candidate"),
}
#: series of the slice that hold no step, and why (a real move inside the gate's band is not a step)
NO_STEP = {
    "launch.empty.host_us": "PoCL's host launch time halved between the dev gate check and the final one, and "
                            "stayed; but host wall time is informational (its catalog row): never a step",
    "model.ptx.dwarf.monte_carlo.mape": "0.78 → 0.71 (−9.7 %) at e391d77, inside its test's 20 % band",
    "memory.global.latency.unloaded.cycles": "700 → 663 cycles and staying, but its three runs before spread "
                                             "699.5–718.5: a baseline of them holds ±65 cycles (6 σ)",
    "accuracy.sum.double.parallel.n20.time_us": "two placement modes that alternate between sessions",
    "accuracy.fp32.__sinf.max_ulp": "its inputs became exhaustive: an identity change",
    "latency.fp32.fma.cycles": "quiet; the planted gate-check runs beside it are left out",
    "model.sampled.intmix.error": "gated only if stable, and its runs on PoCL never were",
    "tuning.transpose_naive.kt_pso.quality": "a tuner's quality on 2 shared cores: noise inside its band",
}


def test_the_hand_labelled_steps_of_a_saved_slice_of_the_real_history():
    from history_slice import load

    found = detect_all(load())
    got = {(s.device_key, s.name, s.commit_range(), s.direction, s.status) for s in found.steps}
    assert got == LABELLED
    assert not {s.name for s in found.steps} & set(NO_STEP)
    assert any(c.name == "accuracy.fp32.__sinf.max_ulp" for c in found.identity_changes)
    assert found.left_out and all("--gpuperf-plant" in why for _, why in found.left_out)


def test_the_running_sums_cost_is_ruptures_l2_cost_and_segments_the_slice_as_it_does(monkeypatch):
    """PELT's cost from running sums (``detect._running_l2``) gives each segment the cost ruptures' ``CostL2``
    gives it, on series far from zero too, and the levels of the saved slice of the real history are those PELT
    with ``CostL2`` gives, after the same merge."""
    import ruptures as rpt
    from ruptures.costs import CostL2

    from history_slice import load
    from pytest_gpuperf.history import detect as detect_module

    rng = np.random.default_rng(3)
    for offset in (0.0, 1.0, 1e6):
        xs = offset + rng.normal(0.0, 1e-3, 60) + np.repeat([0.0, 0.01, -0.02], 20)
        ours, theirs = detect_module._running_l2()().fit(xs), CostL2().fit(xs.reshape(-1, 1))
        for start, end in [(0, 60), (0, 1), (5, 25), (19, 41), (59, 60), (30, 33)]:
            assert ours.error(start, end) == pytest.approx(theirs.error(start, end), rel=1e-6, abs=1e-12)

    segments = detect_module._segments
    differing: list = []

    def both(xs, sigma, beta, shift):
        got = segments(xs, sigma, beta, shift)
        n = xs.size
        ends = rpt.Pelt(model="l2", min_size=1, jump=1).fit(xs.reshape(-1, 1)).predict(
            pen=beta * sigma * sigma * math.log(n))
        bounds = detect_module._merged(xs, [0, *ends[:-1], n], shift)  # the merge _segments applies
        if bounds != got:
            differing.append((xs.tolist(), got, bounds))
        return got

    monkeypatch.setattr(detect_module, "_segments", both)
    found = detect_all(load())
    assert found.steps and differing == [], differing[:3]


# ---- the gate's threshold, the noise between runs, deterministic figures ----------------------------------
def gated_runs(values: list[float], unit: str = "us", name: str = "memory.copy.time", is_cpu: bool = False,
               better: str = "lower", tolerance: dict | None = None, info: dict | None = None,
               commits: list[str] | None = None) -> list[RunRecord]:
    """One run per value of one metric on a GPU (or a CPU device), with what decides its gate."""
    return [RunRecord(date=f"2026-04-01T{i // 60:02d}:{i % 60:02d}:00+00:00",
                      commit=(commits[i] if commits else f"g{i:03d}"), device_key="dev", backend="opencl",
                      device={"is_cpu": is_cpu, "backend": "opencl"},
                      metrics=[TrendMetric(name=name, test="t", value=v, unit=unit, better=better, mad=0.0,
                                            tolerance=tolerance, info=dict(info or {}))])
            for i, v in enumerate(values)]


def quiet(level: float, n: int, start: int = 0) -> list[float]:
    """n runs at ``level`` with ±0.05 % of wiggle: far quieter than any gate band."""
    return [level * (1 + 0.0005 * ((start + i) % 3 - 1)) for i in range(n)]


def test_a_significant_step_inside_the_gate_band_is_not_a_step():
    values = quiet(100.0, 10) + quiet(100.5, 10)  # 0.5 %: dozens of σ, but inside a GPU time's 1 % floor
    assert detect(gated_runs(values)) == []
    (step,) = detect(gated_runs(quiet(100.0, 10) + quiet(102.0, 10)))
    assert step.rule.startswith("class floor 1% (3% from fewer than 3 runs) (time on GPUs)")
    assert step.threshold == pytest.approx(1.0, rel=0.1)
    # before three runs show the spread, a GPU figure's floor is 3 % (classes.SINGLE_RUN_GPU_FLOOR)
    assert detect(gated_runs(quiet(100.0, 2) + quiet(102.0, 10))) == []


def test_a_step_must_leave_the_band_a_baseline_of_the_old_runs_would_have():
    """The gate's band holds 6 × the run-to-run σ of the runs it was made from: a move within it is one the
    gate would pass, however many runs show it."""
    from pytest_gpuperf.timing.stats import between_run_sigma

    old = [100.0, 101.0, 99.0, 100.5, 99.5, 100.0, 101.0, 99.0, 100.5, 99.5]
    band = 6 * between_run_sigma(old)  # ≈ 4.4 % (the robust σ of ten runs)
    assert detect(gated_runs(old + [103.5 + 0.1 * (i % 3) for i in range(10)])) == []
    (step,) = detect(gated_runs(old + [110.0 + 0.1 * (i % 3) for i in range(10)]))
    assert step.threshold == pytest.approx(band) and 3.5 < band


def test_a_cpu_device_needs_the_step_its_class_floor_allows():
    values = quiet(100.0, 10) + quiet(150.0, 10)  # +50 %: a step on a GPU, not on a CPU device (floor 100 %)
    assert len(detect(gated_runs(values))) == 1
    assert detect(gated_runs(values, is_cpu=True)) == []
    assert len(detect(gated_runs(quiet(100.0, 10) + quiet(250.0, 10), is_cpu=True))) == 1


def test_a_host_timed_figure_and_a_test_s_own_tolerance_set_the_band():
    values = quiet(100.0, 10) + quiet(150.0, 10)
    assert detect(gated_runs(values, info={"host_timed": True})) == []  # the host class: 100 %
    assert detect(gated_runs(values, tolerance={"rel": 0.6})) == []
    (step,) = detect(gated_runs(values, tolerance={"abs": 20.0}))
    assert step.rule.startswith("the test's own tolerance") and step.threshold == 20.0


def test_a_step_must_stand_out_of_the_noise_between_runs():
    rng = np.random.default_rng(3)
    noisy = [100.0 * (1 + 0.05 * rng.standard_normal()) for _ in range(20)]  # σ 5 %
    shifted = noisy[:10] + [v * 1.04 for v in noisy[10:]]  # 4 %: outside the 3 % band, well inside the noise
    assert detect(gated_runs(shifted)) == []
    (step,) = detect(gated_runs(noisy[:10] + [v * 1.3 for v in noisy[10:]]))
    assert abs(step.index - 10) <= 1 and step.confidence > 0.999 and step.p_value < 1e-3  # noise can blur the run


def test_runs_of_one_commit_show_the_noise_and_no_step_falls_between_them():
    """Two modes that alternate by session, not by run: successive differences see little noise, the
    runs that share a commit (A/A runs) see it all."""
    values = [100.0, 100.1, 100.0, 106.0, 106.1, 106.0, 100.1, 100.0, 106.1, 106.0, 100.0, 100.1]
    commits = ["a", "a", "a", "a", "a", "a", "b", "b", "b", "b", "c", "c"]
    assert detect(gated_runs(values, commits=commits)) == []
    assert detect(gated_runs(values)) != [], "with a commit per run the same values are steps"


def test_any_change_of_a_deterministic_figure_is_a_step():
    values = [0.125] * 5 + [0.12503] * 5  # +0.02 %: far inside any timing band, but a seeded ulp error moved
    (step,) = detect(gated_runs(values, unit="ulp", name="accuracy.fp32.sin.mean_ulp"))
    assert (step.model, step.index, step.confidence, step.p_value, step.sigma) == ("deterministic", 5, 1.0, None, 0.0)
    assert "exact figure" in step.describe()
    within = detect(gated_runs(values, unit="ulp", name="accuracy.fp32.sin.mean_ulp", tolerance={"abs": 0.001}))
    assert within == [], "a change within the test's own tolerance is not one"


def test_an_informational_figure_never_steps():
    values = quiet(100.0, 10) + quiet(200.0, 10)
    assert detect(gated_runs(values, info={"noise": "informational", "why": "shown only"})) == []


def test_an_if_stable_metric_steps_only_from_a_stable_level():
    unstable = [0.05, 0.15, 0.06, 0.14, 0.05, 0.15, 0.06, 0.14] + [0.6] * 6
    tol = {"abs": 0.02, "rel": 0.25}
    assert detect(gated_runs(unstable, unit="1", name="model.sampled.k.error", tolerance=tol,
                             info={"gate": "if-stable"})) == []
    stable = [0.10, 0.101, 0.10, 0.101, 0.10, 0.101] + [0.6] * 6
    assert len(detect(gated_runs(stable, unit="1", name="model.sampled.k.error", tolerance=tol,
                                 info={"gate": "if-stable"}))) == 1


def test_interrupted_runs_are_left_out_like_planted_ones():
    values = quiet(100.0, 20)
    runs = gated_runs(values[:10] + [150.0] * 3 + values[13:])
    for r in runs[10:13]:
        r.options["interrupted"] = True
    found = detect_all(runs)
    assert found.steps == [] and [why for _, why in found.left_out] == ["interrupted (Ctrl-C before every test ran)"] * 3


def test_each_step_carries_its_commit_range_size_direction_and_confidence(tmp_path, capsys):
    db = str(tmp_path / "h.db")
    record_runs(db, gated_runs(quiet(100.0, 10) + quiet(110.0, 4)))
    assert main(["history", "detect", "--db", db, "--json"]) == 0
    (step,) = strict_loads(capsys.readouterr().out)["steps"]
    assert (step["commit_range"], step["direction"], step["status"], step["runs_before"], step["runs_after"]) == \
        ("g009..g010", "worse", "confirmed", 10, 4)
    assert step["rel"] == pytest.approx(0.1, abs=1e-3) and 0.999 < step["confidence"] <= 1.0
    assert main(["history", "detect", "--db", db, "--min-runs", "5"]) == 0
    out = capsys.readouterr().out
    assert "CANDIDATE: 4 run(s) so far" in out and "0 step(s) confirmed by 5+ runs" in out
    assert main(["history", "detect", "--db", db, "--min-runs", "5", "--fail-on-step"]) == 0, "a candidate never fails"
    assert main(["history", "detect", "--db", db, "--fail-on-step"]) == 1


# ---- kernel changes (the series' runs compiled other kernels: source_digest) ----------------------------------
def _kernel_run(date: str, commit: str, digest: str | None, value: float) -> RunRecord:
    return RunRecord(date=date, commit=commit, device_key="dev", backend="opencl",
                     metrics=[TrendMetric(name="k.fill", test="t.py::t", value=value, unit="1", better="lower",
                                          info={"noise": "deterministic"}, source_digest=digest)])


def test_a_kernel_change_splits_the_series_and_a_run_without_a_digest_continues_the_kernel_before_it():
    """A move across a kernel change is a kernel change, never a step; a move within one kernel is still a step.
    Unknown is no change: runs recorded before digests lead into the first known kernel, one without a digest
    between two runs of one kernel keeps them one kernel, and the next known digest is compared with the last
    known one (back to an earlier kernel is a change too)."""
    rows = [(None, 1.0), (None, 1.0), ("aa", 1.0), (None, 1.0), ("aa", 1.0), ("aa", 1.0),
            ("bb", 2.0), (None, 2.0), ("bb", 2.0), ("bb", 4.0), ("bb", 4.0), ("bb", 4.0), ("aa", 4.0)]
    runs = [_kernel_run(f"2026-01-{i:02d}T00:00:00", f"c{i}", d, v) for i, (d, v) in enumerate(rows, start=1)]
    found = detect_all(runs)
    assert [(c.previous_commit, c.commit, c.before, c.after) for c in found.kernel_changes] == [
        ("c6", "c7", "aa", "bb"), ("c12", "c13", "bb", "aa")]
    assert [(s.previous_commit, s.commit, s.direction, s.before, s.after) for s in found.steps] == [
        ("c9", "c10", "worse", 2.0, 4.0)]
    segments, cuts = kernel_segments([Point(r.date, r.commit, 1.0, None, digest=r.metrics[0].source_digest)
                                      for r in runs])
    assert [[p.commit for p in s] for s in segments] == [[f"c{i}" for i in range(1, 7)],
                                                         [f"c{i}" for i in range(7, 13)], ["c13"]]
    assert [(a.commit, b.commit) for a, b in cuts] == [("c6", "c7"), ("c12", "c13")]
    # without any digest (a history from before digests) both moves are steps, as they always were
    blind = detect_all([_kernel_run(r.date, r.commit, None, r.metrics[0].value or 0.0) for r in runs])
    assert [s.commit for s in blind.steps] == ["c7", "c10"] and blind.kernel_changes == []
