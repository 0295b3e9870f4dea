"""Change-point detection on a synthetic history with the measured noise of a real H100 metric."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pytest_gpuperf.history import record_runs
from pytest_gpuperf.history.cli import DEFAULT_DB  # noqa: F401 - the CLI module must import cleanly
from pytest_gpuperf.history.detect import detect
from pytest_gpuperf.history.records import MetricRecord, RunRecord
from pytest_gpuperf.timing.stats import MAD_TO_SIGMA
from pytest_gpuperf.cli import main

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "results/nvidia-h100-80gb-hbm3/accuracy-r2-cuda.json"
METRIC = "accuracy.sum.double.pairwise.n12.time_us"  # 200 samples, robust CV 1.6 %: one of the noisier GPU figures
STEP_AT = 30


def measured_noise() -> tuple[float, float, str]:
    """(median, MAD, better) of the real metric's samples in its results file."""
    doc = json.loads(SOURCE.read_text())
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
                              metrics=[MetricRecord(name=METRIC, test="t", value=level + MAD_TO_SIGMA * mad *
                                                    rng.standard_normal(), unit="us", better=better or real_better,
                                                    mad=mad, n=200)]))
    return runs


def test_noise_is_real_and_the_step_is_a_few_sigma():
    median, mad, better = measured_noise()
    assert better == "lower" and 0.005 < MAD_TO_SIGMA * mad / median < 0.05


def test_five_percent_step_names_its_commit_and_direction():
    runs = synthetic(seed=14, step=0.05)
    steps = detect(runs)
    assert [(s.commit, s.direction) for s in steps] == [(runs[STEP_AT].commit, "worse")]
    assert steps[0].previous_commit == runs[STEP_AT - 1].commit
    assert 0.035 < steps[0].rel < 0.065


@pytest.mark.parametrize("seed", range(20))
def test_step_found_within_two_commits_and_no_step_without_one(seed):
    found = detect(synthetic(seed, step=0.05))
    assert len(found) == 1 and abs(found[0].index - STEP_AT) <= 2
    assert detect(synthetic(seed, step=0.0)) == []


def test_higher_is_better_metric_dropping_is_worse_and_rising_is_better():
    assert detect(synthetic(3, step=-0.05, better="higher"))[0].direction == "worse"
    assert detect(synthetic(3, step=+0.05, better="higher"))[0].direction == "better"


def test_sub_noise_wiggle_is_not_a_step():
    assert detect(synthetic(5, step=0.01)) == []  # 1 % < min_rel 2 % and < 2 σ


def test_cli_detect_fail_on_step_exit_codes(tmp_path, capsys):
    worse, better = str(tmp_path / "w.db"), str(tmp_path / "b.db")
    record_runs(worse, synthetic(14, step=0.05))
    record_runs(better, synthetic(14, step=-0.05))
    assert main(["history", "detect", "--db", worse, "--fail-on-step"]) == 1
    out = capsys.readouterr().out
    assert "WORSE +" in out and synthetic(14, 0.05)[STEP_AT].commit[:12] in out
    assert main(["history", "detect", "--db", better, "--fail-on-step"]) == 0
    assert main(["history", "detect", "--db", worse]) == 0
