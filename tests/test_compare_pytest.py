"""``pytest --gpuperf-compare=OTHER.json`` on the real OpenCL device (PoCL in CI): the verdict is the one
``gpuperf compare`` gives, ``--junitxml`` carries one property per metric, and under GitHub Actions the
run prints ``::error``/``::warning`` annotations and appends a table to the step summary."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from pytest_gpuperf.compare import engine
from pytest_gpuperf.compare.load import load_side
from suite_support import WORK_HEAD
from suite_support import baseline_folder

SUITE = WORK_HEAD + '''
def test_work(gpu_device, gpu_kernel, gpu_measure, gpuperf_record):
    k = gpu_kernel.compile(SRC, "work")
    buf = gpu_kernel.to_device(np.ones(64, np.float32))
    m = gpu_measure(k, (64,), (64,), [buf, np.int32(2000)])
    ms = m.stats.scaled(1e3)
    gpuperf_record("kernel.work.ms", ms.median, "ms", better="lower", stats=ms)
    if not os.environ.get("DROP_ULP"):
        gpuperf_record("accuracy.work.max_ulp", float(os.environ.get("ULP", "1")), "ulp", better="lower")
    gpuperf_record("tuning.work.quality", float(os.environ.get("QUALITY", "0.9")), "ratio", better="higher")
'''


def _pocl() -> bool:
    from pytest_gpuperf.devices import discover

    return any(d.backend == "opencl" for d in discover().devices)


pytestmark = pytest.mark.skipif(not _pocl(), reason="no OpenCL device (install pocl-opencl-icd)")


def _properties(xml_path) -> dict[str, dict]:
    root = ET.parse(xml_path).getroot()
    return {p.get("name"): json.loads(p.get("value")) for p in root.iter("property")}


@pytest.fixture
def reference(pytester, monkeypatch):
    """A first run of the tiny suite, written as results JSON: the run the next ones are gated against."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    pytester.makepyfile(SUITE)
    ref = pytester.path / "ref.json"
    pytester.runpytest("--gpuperf-device=opencl:0", "--gpuperf-budget=0.2", f"--gpuperf-baseline-dir={baseline_folder(pytester.path, 'bl')}",
                       f"--gpuperf-json={ref}").assert_outcomes(passed=1)
    return ref


def _args(pytester, ref, *more):
    return ("--gpuperf-device=opencl:0", "--gpuperf-budget=0.2", f"--gpuperf-baseline-dir={baseline_folder(pytester.path, 'bl')}",
            f"--gpuperf-compare={ref}", *more)


def test_regression_against_another_run_fails_with_junit_properties_and_annotations(pytester, monkeypatch, reference):
    summary = pytester.path / "summary.md"
    monkeypatch.setenv("ULP", "3")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    xml = pytester.path / "junit.xml"
    result = pytester.runpytest(*_args(pytester, reference, f"--junitxml={xml}", f"--gpuperf-json={pytester.path / 'b.json'}"))
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert f"performance regression against run {reference}" in out
    assert "accuracy.work.max_ulp: WORSE" in out
    # JUnit: one property per metric, with value, reference, delta and verdict
    props = _properties(xml)
    ulp = props["gpuperf.accuracy.work.max_ulp"]
    assert (ulp["value"], ulp["reference"], ulp["verdict"], ulp["gate"]) == (3.0, 1.0, "worse", "regressed")
    assert ulp["delta_rel"] == pytest.approx(2.0)
    assert set(props["gpuperf.kernel.work.ms"]) >= {"value", "reference", "delta_rel", "verdict"}
    # GitHub: an ::error annotation per regression, the table in the step summary; on a loaded host the
    # timing reads 'contended' (1 of 3 metrics), and the run says it was too busy to gate (exit 9) besides
    work = next(m for m in json.loads((pytester.path / "b.json").read_text())["metrics"] if m["name"] == "kernel.work.ms")
    busy = work["verdict"] == "contended"
    errors = [ln for ln in out.splitlines() if ln.startswith("::error ")]
    regressions = [ln for ln in errors if not ln.startswith("::error title=gpuperf%3A HOST TOO BUSY TO GATE::")]
    assert regressions == [ln for ln in regressions if "accuracy.work.max_ulp" in ln] and len(regressions) == 1
    assert regressions[0].startswith("::error title=gpuperf regression%3A accuracy.work.max_ulp on opencl%3A0::")
    assert len(errors) == 1 + busy and result.ret == 1, out  # what the run judged failed: 1, even on a busy host
    text = summary.read_text()
    assert f"against run {reference}" in text and "| `accuracy.work.max_ulp` | 1 | 3 ulp | +200.0% | **regressed** |" in text
    # the same verdicts as the console script's on the same two files
    rep = engine.compare_sides(load_side("A", [reference]), load_side("B", [pytester.path / "b.json"]))
    cli = {r.name: r.verdict for r in rep.rows}
    assert cli == {name.removeprefix("gpuperf."): p["verdict"] for name, p in props.items()}


def test_unchanged_run_passes_and_a_dropped_metric_is_a_warning(pytester, monkeypatch, reference):
    xml = pytester.path / "junit.xml"
    pytester.runpytest(*_args(pytester, reference, f"--junitxml={xml}")).assert_outcomes(passed=1)
    assert _properties(xml)["gpuperf.accuracy.work.max_ulp"]["verdict"] == "same"
    monkeypatch.setenv("DROP_ULP", "1")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    result = pytester.runpytest(*_args(pytester, reference))
    # a metric of a passed test that the reference has and this run lacks: missing (exit 1, on a busy host too)
    assert result.ret == 1, result.stdout.str()
    result.stdout.fnmatch_lines(["::error title=gpuperf missing%3A accuracy.work.max_ulp on opencl%3A0::*"])  # it fails the run


def test_a_derived_figure_is_not_judged_from_one_run_a_side(pytester, monkeypatch, reference):
    """A tuner's quality (derived from timings, no samples) halves against the reference run: one value a
    side cannot tell a change from run-to-run noise, so the run passes with the metric ``ungated`` — what
    ``gpuperf compare`` reads ``informational``."""
    monkeypatch.setenv("QUALITY", "0.45")
    xml = pytester.path / "junit.xml"
    pytester.runpytest(*_args(pytester, reference, f"--junitxml={xml}")).assert_outcomes(passed=1)
    prop = _properties(xml)["gpuperf.tuning.work.quality"]
    assert (prop["value"], prop["reference"], prop["verdict"], prop["gate"]) == (0.45, 0.9, "informational", "ungated")


def test_without_github_actions_no_annotations(pytester, monkeypatch, reference):
    monkeypatch.setenv("ULP", "3")
    monkeypatch.setenv("GITHUB_ACTIONS", "false")
    result = pytester.runpytest(*_args(pytester, reference))
    result.assert_outcomes(failed=1)
    assert "::error" not in result.stdout.str()


def test_bad_reference_is_a_usage_error(pytester):
    pytester.makepyfile(SUITE)
    (pytester.path / "bad.json").write_text("[]")
    result = pytester.runpytest("--gpuperf-device=opencl:0", f"--gpuperf-compare={pytester.path / 'bad.json'}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--gpuperf-compare: *bad.json*"])


def test_baseline_gating_annotates_and_records_properties_too(pytester, monkeypatch):
    """Without --gpuperf-compare the run is gated against baselines/ and reports the same way."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    pytester.makepyfile(SUITE)
    base = ("--gpuperf-device=opencl:0", "--gpuperf-budget=0.2", f"--gpuperf-baseline-dir={baseline_folder(pytester.path, 'bl')}")
    pytester.runpytest(*base, "--gpuperf-update-baselines").assert_outcomes(passed=1)
    summary = pytester.path / "summary.md"
    monkeypatch.setenv("ULP", "3")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    xml = pytester.path / "junit.xml"
    result = pytester.runpytest(*base, f"--junitxml={xml}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["::error title=gpuperf regression%3A accuracy.work.max_ulp on opencl%3A0::*REGRESSED*"])
    prop = _properties(xml)["gpuperf.accuracy.work.max_ulp"]
    assert (prop["verdict"], prop["reference"], prop["against"]) == ("regressed", 1.0, "baseline")
    assert "against baseline" in summary.read_text() and "**regressed**" in summary.read_text()


def test_several_reference_runs_pool(pytester, reference):
    out = pytester.path / "b.json"
    pytester.runpytest(*_args(pytester, reference, f"--gpuperf-compare={reference}", f"--gpuperf-json={out}")
                       ).assert_outcomes(passed=1)
    doc = json.loads(out.read_text())
    ulp = next(m for m in doc["metrics"] if m["name"] == "accuracy.work.max_ulp")
    assert ulp["verdict"] == "pass" and ulp["baseline"]["compare"]["runs"] == [2, 1]
    assert ulp["baseline"]["source"] == f"run {reference}, {reference}"
