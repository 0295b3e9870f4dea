"""The probe suites through the plugin on the local OpenCL device: what the baseline update writes.

Continuous figures (latencies) must carry the noise-derived tolerance (k × robust spread of their
samples); discrete ones (cache sizes on a √2 footprint grid, the saturating ILP) their explicit band.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_gpuperf.devices import discover

SUITES = Path(__file__).resolve().parents[1] / "pytest_gpuperf" / "suites"
INV = discover()
pytestmark = pytest.mark.skipif(not any(d.backend == "opencl" for d in INV.devices), reason="no OpenCL device")


def test_noise_derived_and_explicit_tolerances(pytester):
    bl = pytester.path / "bl"
    args = ["--gpuperf-device=opencl:0", f"--gpuperf-baseline-dir={bl}", "-p", "no:cacheprovider"]
    r = pytester.runpytest(*args, "--gpuperf-update-baselines", str(SUITES / "test_latency.py"), "-k",
                           "(test_latency and fp32-ieee) or (test_throughput and fp32.fma) or test_pointer_chase",
                           str(SUITES / "test_memory_hierarchy.py"))
    r.assert_outcomes(passed=3)
    (path,) = bl.glob("*.json")
    metrics = json.loads(path.read_text())["backends"]["opencl"]["metrics"]
    fma = metrics["latency.fp32.fma.cycles"]["tolerance"]
    assert fma["k"] == 6.0 and fma["spread"] > 0  # from the measured samples
    assert "memory.l1.size.bytes" not in metrics  # a CPU's L1 boundary moves run to run: info only
    assert metrics["throughput.fp32.fma.saturating_ilp"]["tolerance"] == {"abs": 4.0}  # one ILP step (1,2,4,8)
    assert {"k", "spread"} <= set(metrics["memory.l1.latency.cycles"]["tolerance"])  # noise-derived form
    # a CPU device names only L1; the rest of the curve is gated at fixed footprints (stable metric set)
    assert not any(k.startswith(("memory.l2.", "memory.dram.")) for k in metrics)
    assert {"k", "spread"} <= set(metrics["memory.chase.4KiB.latency.cycles"]["tolerance"])
    assert "memory.chase.1MiB.latency.cycles" in metrics
    # the latency group passes against its own fresh baseline
    pytester.runpytest(*args, str(SUITES / "test_latency.py"), "-k", "test_latency and fp32-ieee"
                       ).assert_outcomes(passed=1)
