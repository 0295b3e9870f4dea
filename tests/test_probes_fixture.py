"""``instruction_latency``: the probes' fixture in a user's own suite, on the local OpenCL device."""

from __future__ import annotations

import json

import pytest

from pytest_gpuperf.devices import discover

pytestmark = pytest.mark.skipif(not any(d.backend == "opencl" for d in discover().devices),
                                reason="no OpenCL device")

USER_SUITE = '''
def test_fma_latency(instruction_latency, gpuperf_record):
    lat = instruction_latency("fp32.fma")
    assert lat.metric.startswith("latency.fp32.fma.") and lat.unit in ("cycles", "ns")
    assert lat.stats.n >= 5 and lat.stats.median > 0
    gpuperf_record(lat.metric, lat.stats.median, lat.unit, stats=lat.stats, info=lat.info)

def test_unknown_op_names_the_known_ones(instruction_latency):
    try:
        instruction_latency("fp32.nonsense")
    except KeyError as exc:
        assert "fp32.fma" in str(exc)
    else:
        raise AssertionError("an unknown operation must be an error")

def test_cuda_only_op_skips_with_reason(instruction_latency):
    instruction_latency("round32.fadd_rz")
'''


def test_instruction_latency_fixture_records_a_gated_metric(pytester):
    pytester.makepyfile(test_user=USER_SUITE)
    out = pytester.path / "r.json"
    r = pytester.runpytest("--gpuperf-device=opencl:0", f"--gpuperf-json={out}", "-p", "no:cacheprovider", "-rs")
    r.assert_outcomes(passed=2, skipped=1)
    r.stdout.fnmatch_lines(["*round32.fadd_rz needs*"])
    (metric,) = json.loads(out.read_text())["metrics"]
    assert metric["name"].startswith("latency.fp32.fma.") and metric["stats"]["n"] >= 5
