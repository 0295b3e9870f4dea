"""No device-timed GPU figure of a reviewed baseline gates wider than ``classes.WIDE_BAND`` unless the
measured cause of its noise is written in its catalog row (``Family.cause``), or it is recorded, not gated, with the
spread between machines that made it so (``catalog.measured_informational``)."""

from __future__ import annotations

import pytest

from pytest_gpuperf.baselines import baseline_file, catalog, classes
from pytest_gpuperf.baselines.verdicts import band
from pytest_gpuperf.paths import REVIEWED_BASELINES

TIMING = ("time", "rate", "throughput", "cycles")


def _gpu_files():
    return [p for p in sorted(REVIEWED_BASELINES.glob("*.json")) if not p.name.startswith("pocl")]


def wide_without_cause(doc: dict) -> list[str]:
    out = []
    for backend in doc.get("backends", {}).values():
        for name, e in backend.get("metrics", {}).items():
            if e.get("better") not in ("lower", "higher") or not e.get("value"):
                continue
            if classes.metric_class(e.get("unit", ""), classes.is_host_timed(e.get("info"))) not in TIMING:
                continue
            if band(e["value"], e.get("tolerance", {})) / abs(e["value"]) > classes.WIDE_BAND \
                    and catalog.wide_band_cause(name, e.get("unit", "")) is None \
                    and catalog.measured_informational(name, e) is None:  # recorded, not gated: its spread named
                out.append(name)
    return out


@pytest.mark.parametrize("path", _gpu_files(), ids=lambda p: p.stem)
def test_every_wide_gpu_timing_band_has_its_written_cause(path):
    assert wide_without_cause(baseline_file.load(path.parent, path.stem).data) == []


def test_a_wide_band_without_a_cause_is_found():
    doc = {"backends": {"cuda": {"metrics": {
        "memory.copy.bandwidth.1GiB": {"value": 3000.0, "unit": "GB/s", "better": "higher",
                                       "tolerance": {"rel": 0.25}},
        "memory.copy.bandwidth.1MiB": {"value": 480.0, "unit": "GB/s", "better": "higher",
                                       "tolerance": {"rel": 0.25}},
        "latency.fp32.fma.cycles": {"value": 4.0, "unit": "cycles", "better": "lower", "tolerance": {"rel": 0.01}}}}}}
    assert wide_without_cause(doc) == ["memory.copy.bandwidth.1GiB"]


def test_the_gating_table_in_the_docs_is_the_one_the_baselines_give():
    """docs/gating.md's table is ``gpuperf baseline table`` of the reviewed baselines, as they are now."""
    import io
    from contextlib import redirect_stdout
    from pathlib import Path

    from pytest_gpuperf.cli import main

    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["baseline", "table", str(REVIEWED_BASELINES)]) == 0
    doc = (Path(__file__).resolve().parents[1] / "docs" / "gating.md").read_text()
    assert buf.getvalue().strip() in doc, "regenerate it: gpuperf baseline table pytest_gpuperf/baselines/reviewed"


@pytest.mark.parametrize("name,entry,starts", [
    ("made.up.bandwidth", {"value": 480.0, "unit": "GB/s", "tolerance": {"k": 6.0, "spread": 10.5, "rel": 0.01},
                                    "run_values": [470.0, 480.0, 490.0]}, "measured: k 6 × σ 10.5 (3 runs)"),
    ("launch.empty.device_us", {"value": 3.0, "unit": "us", "tolerance": {"abs": 0.5}}, "written: "),
    ("tuning.blur1d.kt_genetic_algorithm.cost", {"value": 0.5, "unit": "ratio", "tolerance": {"rel": 1.6}}, "catalog: "),
    ("made.up.figure", {"value": 1.0, "unit": "ratio", "tolerance": {"rel": 0.5}}, "no cause written: its catalog row gives none"),
])
def test_the_table_says_why_a_band_is_wide(name, entry, starts):
    from pytest_gpuperf.baselines.table import cause

    assert cause(name, entry).startswith(starts)


def test_a_cause_of_gpu_noise_is_not_given_for_a_cpu_device_s_band():
    """The written causes are measured GPU noise (CUDA events, launch-bound copies): a CPU device's wide
    band is its catalog row's (PoCL's slow launch mode), as the table of a CPU baseline file says."""
    from pytest_gpuperf.baselines.table import cause

    entry = {"value": 3.0, "unit": "us", "tolerance": {"abs": 25.0, "rel": 2.0}}
    assert cause("launch.empty.device_us", entry, is_cpu=False).startswith("written: host-submitted launches, read by device events")
    assert cause("launch.empty.device_us", entry, is_cpu=True) == f"catalog: {catalog.LAUNCH_CPU_WHY}"


def test_a_gpu_only_band_leaves_a_cpu_device_to_its_measured_spread():
    from pytest_gpuperf.baselines import catalog

    assert catalog.tolerance("memory.chase.4MiB.latency.cycles", False) == {"rel": 0.03}
    assert catalog.tolerance("memory.chase.4MiB.latency.cycles", True) is None


def test_the_catalog_s_identity_keys_are_those_the_suites_record():
    """Every metric of a full run of the current suites (H200, 171978e) carries the identity keys its
    family declares, and a family declares keys only where its metrics carry them."""
    from pytest_gpuperf.baselines import catalog
    from pytest_gpuperf.util import jsonio
    from pytest_gpuperf.paths import REVIEWED_BASELINES

    run = REVIEWED_BASELINES.parents[2] / "results" / "nvidia-h200" / "baseline-171978e" / "b1-cuda.json.xz"
    metrics = jsonio.read_json(run)["metrics"]
    assert not [m["name"] for m in metrics if catalog.missing_identity(m["name"], m.get("identity"))]
    declared = {catalog.family(m["name"]).pattern for m in metrics
                if catalog.family(m["name"]) is not None and catalog.family(m["name"]).identity}
    assert len(declared) >= 20
    assert catalog.missing_identity("model.sampled.copy.error", {"sampling": "dao"}) == ["waves"]
