"""Instruction latency and throughput probes — did the machine itself change?

* ``latency.<prec>.<op>[.fast].cycles`` — one dependent chain per operation (Alavani ch. 3.2,
  Surineni ch. 3.2): CUDA times it with ``clock64()`` and proves from the SASS that the chain ran
  the intended instruction; OpenCL times it with profiling events (``.ns``) and converts with the
  reported clock (``.cycles``). ``.fast`` = compiled with ``-use_fast_math`` / ``-cl-fast-relaxed-math``.
* ``throughput.<prec>.<op>.ops_per_clk_sm`` — independent chains (ILP 1..8) at full occupancy, the
  best ILP's rate; ``...ilp<k>.ops_per_clk_sm`` per ILP and ``...saturating_ilp`` (Alavani's ILP study).
"""

from __future__ import annotations

import pytest

from pytest_gpuperf.gatecheck import plants
from pytest_gpuperf.probes import latency, ops, throughput
from pytest_gpuperf.probes.bound_measurer import BoundMeasurer
from pytest_gpuperf.timing.profiles import profile

CASES = [(g, fast) for g in ops.GROUPS for fast in (False, True)]


@pytest.mark.parametrize("group,fast", CASES, ids=[f"{g}-{'fast' if f else 'ieee'}" for g, f in CASES])
def test_latency(gpu_device, gpu_measure, gpuperf_record, gpuperf_plant, group, fast):
    chosen, why_not = latency.group_ops(group, gpu_device.info)
    if why_not:
        pytest.skip(why_not)
    plant = plants.fraction(gpuperf_plant, "compute")
    for r in latency.records(gpu_device, gpu_measure, chosen, fast, plant=plant):
        assert r["value"] != 0, f"{r['name']}: zero latency {r['unit']} — the chain was not timed"
        gpuperf_record(**r)  # a negative latency is an impossible value: an error that names the host's marks


@pytest.fixture(scope="module")
def sm_clock():
    """Per-device cache of the measured SM clock (CUDA) so every throughput test does not re-measure."""
    return throughput.ClockCache()


@pytest.mark.parametrize("name", ops.THROUGHPUT_OPS)
def test_throughput(gpu_device, gpu_measure, gpuperf_record, gpuperf_plant, sm_clock, name):
    info = gpu_device.info
    o = ops.op(name)
    missing = o.features() - info.features
    if missing or o.source(info.backend) is None:
        pytest.skip(f"{name} needs {', '.join(sorted(missing)) or 'a CUDA-only form'}, unavailable on {info.name}")
    measurer = BoundMeasurer(gpu_measure, profile("latency", info.is_cpu))
    clock = sm_clock.of(gpu_device, measurer)
    if clock is None:
        pytest.skip(f"{info.name} reports no clock; ops per clock cannot be derived")
    for r in clock.records:  # the measured clock, recorded by the module's first throughput test
        gpuperf_record(**r)
    sweep = throughput.sweep(gpu_device, measurer, o, clock, plants.fraction(gpuperf_plant, "throughput"))
    assert all(p.ops_per_clk_cu.median > 0 for p in sweep.points), [p.ops_per_clk_cu.median for p in sweep.points]
    for r in sweep.records():
        gpuperf_record(**r)
