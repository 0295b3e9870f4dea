"""The baseline gate follows the noise-model table (:mod:`pytest_gpuperf.baselines.noise`) as ``gpuperf
compare`` does: a ``repeated`` figure (derived from timings, without raw samples) is judged only against a
baseline of three runs or more, and then leaves its band only where the new value is significant against
those runs; against fewer it reads ``ungated`` with the reason. Deterministic figures, documented bounds
and NaN are judged as before. Unit tests of :func:`~pytest_gpuperf.baselines.verdicts.compare`, then the
plugin end to end on the real OpenCL device.
"""

from __future__ import annotations

import dataclasses

import json
import math
from typing import Any

import pytest

from pytest_gpuperf.baselines.verdicts import compare
from pytest_gpuperf.baselines.noise import MIN_REPEATS

QUALITY = "tuning.fake.quality"


def entry(value: float, run_values: list[float] | None = None, better: str = "higher",
          tolerance: dict[str, float] | None = None, unit: str = "ratio") -> dict[str, Any]:
    """A baseline entry with a 10 % band (a figure's class floor) and, if given, its baseline runs."""
    e: dict[str, Any] = {"value": value, "unit": unit, "better": better,
                         "tolerance": {"rel": 0.1} if tolerance is None else tolerance, "identity": {}}
    if run_values is not None:
        e["run_values"] = run_values
    return e


def test_repeated_figure_from_two_runs_is_ungated_with_the_reason():
    c = compare(0.667, "higher", entry(0.3, [0.167, 0.433]), name="precision.tuner.stencil.fp32_fraction",
                unit="ratio")
    assert c.verdict == "ungated"
    assert f"baseline from 2 run(s), needs {MIN_REPEATS}" in c.reason
    assert "gpuperf baseline from-results" in c.reason and "init --runs 3" in c.reason
    line = c.line("precision.tuner.stencil.fp32_fraction", 0.667, "ratio", "higher")
    assert "UNGATED" in line and "needs 3" in line  # the summary line says why


def test_repeated_figure_from_one_run_is_ungated():
    c = compare(0.5, "higher", entry(1.0), name=QUALITY, unit="ratio")
    assert c.verdict == "ungated" and "baseline from 1 run(s)" in c.reason


def test_repeated_figure_against_three_agreeing_runs_regresses_30_percent_off():
    c = compare(0.7, "higher", entry(1.0, [1.0, 1.001, 0.999]), name=QUALITY, unit="ratio")
    assert c.verdict == "regressed"
    assert c.difference is not None and c.difference.test == "student" and c.difference.significant
    assert (c.difference.n_a, c.difference.n_b, c.difference.unit) == (3, 1, "runs")


def test_repeated_figure_within_scattered_runs_is_not_regressed():
    # outside the static ±10 % band around 0.60, but inside what three unchanged runs spread over
    c = compare(0.47, "higher", entry(0.60, [0.47, 0.73, 0.60]), name=QUALITY, unit="ratio")
    assert c.verdict == "loose" and "not significant" in c.reason  # in band only through a test this loose
    c = compare(0.80, "higher", entry(0.60, [0.47, 0.73, 0.60]), name=QUALITY, unit="ratio")
    assert c.verdict == "loose"  # not "improved" by the band alone either; and runs this scattered gate loosely


def test_repeated_figure_uses_the_runs_own_repeats():
    base = entry(1.0, [1.0, 1.001, 0.999])
    c = compare(0.7, "higher", base, name=QUALITY, unit="ratio", info={"repeats": [0.7, 0.71, 0.69]})
    assert c.verdict == "regressed" and c.difference is not None and c.difference.n_b == 3
    # repeats that spread over the baseline's value: the band alone does not decide
    c = compare(0.85, "higher", base, name=QUALITY, unit="ratio", info={"repeats": [0.6, 1.1, 0.85]})
    assert c.verdict == "pass"


def test_informational_figure_is_ungated_with_its_reason():
    c = compare(0.2, "higher", entry(1.0, [1.0, 1.0, 1.0]), name=QUALITY, unit="ratio",
                info={"noise": "informational", "why": "depends on the host's scheduler"})
    assert c.verdict == "ungated" and c.reason == "informational: depends on the host's scheduler"


def test_deterministic_figure_is_unchanged():
    base = entry(2.0, better="lower", unit="ulp", tolerance={})
    assert compare(3.0, "lower", base, name="accuracy.sin.max_ulp", unit="ulp").verdict == "regressed"
    assert compare(2.0, "lower", base, name="accuracy.sin.max_ulp", unit="ulp").verdict == "pass"
    exact = entry(64.0, better="exact", unit="configs", tolerance={})
    assert compare(63.0, "exact", exact, name="tuning.fake.space", unit="configs").verdict == "regressed"
    # an exact metric under a repeated row (a tuner's pick) of a one-run baseline: still exact
    pick = entry(4.0, better="exact", unit="index", tolerance={})
    assert compare(5.0, "exact", pick, name="tuning.fake.pick", unit="index").verdict == "regressed"


def test_sampled_timing_is_unchanged():
    ref = [1.0 + 0.001 * i for i in range(20)]
    base = dict(entry(1.0, better="lower", unit="ms"), samples=ref)
    run = [2 * x for x in ref]
    c = compare(2.0, "lower", base, samples=run, name="kernel.work.ms", unit="ms")
    assert c.verdict == "regressed" and c.difference is not None and c.difference.unit == "samples"
    # the same verdict as without the model; the gate adds only what it would have caught
    assert dataclasses.replace(c, detect=None) == compare(2.0, "lower", base, samples=run)
    # a timing of a baseline made without samples, measured with them: the band, as before
    assert compare(2.0, "lower", entry(1.0, better="lower", unit="ms"), samples=run, name="kernel.work.ms",
                   unit="ms").verdict == "regressed"


def test_bound_still_regresses_past_its_limit_whatever_the_model():
    # accuracy.search.* is a repeated figure (a time-budgeted search) of a baseline of one run
    bound = entry(1.0, better="bound", unit="ulp", tolerance={})
    c = compare(3.0, "bound", bound, name="accuracy.search.sin.max_ulp", unit="ulp")
    assert c.verdict == "regressed"
    assert compare(1.0, "bound", bound, name="accuracy.search.sin.max_ulp", unit="ulp").verdict == "pass"


def test_nan_still_regresses_a_repeated_figure():
    c = compare(math.nan, "higher", entry(1.0), name=QUALITY, unit="ratio")
    assert c.verdict == "regressed" and "NaN" in c.reason


def test_if_stable_rule_comes_first():
    c = compare(0.5, "higher", entry(1.0, [1.0, 1.0, 1.0]), name=QUALITY, unit="ratio", gate_if_stable=True)
    assert c.verdict == "ungated" and "stability across runs unknown" in c.reason


def test_without_a_name_the_band_alone_decides():
    """Callers that apply the model themselves (gpuperf compare's engine) get the band verdict."""
    assert compare(0.5, "higher", entry(1.0)).verdict == "regressed"


# ---- end to end: the plugin on the real OpenCL device --------------------------------------------------

SUITE = '''
import os

def test_tuner(gpu_device, gpuperf_record):
    gpuperf_record("tuning.fake.quality", float(os.environ["QUALITY"]), "ratio", better="higher",
                   tolerance={"rel": 0.1})
'''


def _opencl() -> bool:
    from pytest_gpuperf.devices import discover

    return any(d.backend == "opencl" for d in discover().devices)


@pytest.mark.skipif(not _opencl(), reason="no OpenCL device (install pocl-opencl-icd)")
def test_plugin_gates_a_repeated_figure_only_against_three_runs(pytester, monkeypatch):
    from pytest_gpuperf.cli import main as gpuperf
    from suite_support import baseline_folder

    pytester.makepyfile(SUITE)

    def run(quality: float, out: str):
        monkeypatch.setenv("QUALITY", str(quality))
        return pytester.runpytest("--gpuperf-device=opencl:0",
                                  f"--gpuperf-baseline-dir={baseline_folder(pytester.path, 'bl')}",
                                  f"--gpuperf-json={pytester.path / out}")

    def baseline(values: list[float], tag: str) -> None:
        files = []
        for i, v in enumerate(values):
            run(v, f"{tag}{i}.json")
            files.append(str(pytester.path / f"{tag}{i}.json"))
        assert gpuperf(["baseline", "from-results", *files, "--dir", str(pytester.path / "bl")]) == 0

    def metric(out: str) -> dict[str, Any]:
        (m,) = json.loads((pytester.path / out).read_text())["metrics"]
        return m

    baseline([0.90, 0.901], "two")
    result = run(0.5, "after2.json")
    assert result.ret == 0  # not decided by the band alone
    m = metric("after2.json")
    assert m["verdict"] == "ungated" and "baseline from 2 run(s), needs 3" in m["baseline"]["reason"]

    baseline([0.90, 0.901, 0.899], "three")
    result = run(0.5, "after3.json")
    assert result.ret == 1
    m = metric("after3.json")
    assert m["verdict"] == "regressed" and m["baseline"]["difference"]["test"] == "student"
    result.stdout.fnmatch_lines(["*tuning.fake.quality: REGRESSED*"])
    assert run(0.9, "same.json").ret == 0 and metric("same.json")["verdict"] == "pass"
