"""The OpenCL event-gate study (``OpenCLDevice.ungated``, ``probes.event_gate``): inside ``ungated()`` a timed
region's commands wait on no user event and the gate is back afterwards, even after an error; both timings of
the empty launch are recorded, told apart by their identity, and informational by their catalog row. PoCL."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.baselines import catalog
from pytest_gpuperf.helpers import Measurer
from pytest_gpuperf.probes import event_gate, launch_overhead
from pytest_gpuperf.timing.measure import MeasureConfig

FIXED = MeasureConfig(warmup=1, min_repeats=4, max_repeats=4, target_rel_spread=0.0, budget_s=30)
COUNT = "__kernel void count(__global int *x, int unused) { atomic_inc(x); }"


def test_ungated_regions_wait_on_no_user_event_and_the_gate_comes_back(cl_device):
    k = cl_device.compile(COUNT, "count")
    buf = cl_device.to_device(np.zeros(1, np.int32))
    seen = []

    def enqueue():
        seen.append(cl_device._gate)
        return cl_device.launch(k, (1,), (1,), [buf, np.int32(0)])

    cl_device.elapsed(cl_device.timed(enqueue), 30.0)
    with cl_device.ungated():
        cl_device.elapsed(cl_device.timed(enqueue), 30.0)
    with pytest.raises(RuntimeError):
        with cl_device.ungated():
            raise RuntimeError("inside")
    cl_device.elapsed(cl_device.timed(enqueue), 30.0)
    assert seen[0] is not None and seen[1] is None and seen[2] is not None and cl_device.gating
    assert int(cl_device.to_host(buf, np.int32)[0]) == 3


def test_both_timings_are_recorded_apart_and_informational(cl_device):
    assert event_gate.why_not(cl_device) is None
    kernel = cl_device.compile(launch_overhead.empty_source(cl_device.info.dialect), launch_overhead.EMPTY_NAME)
    gated, ungated = event_gate.gate_records(cl_device, Measurer(cl_device, FIXED), kernel)
    assert [gated["identity"]["gate"], ungated["identity"]["gate"]] == list(event_gate.MODES)
    assert gated["stats"].n == ungated["stats"].n == 4 and gated["value"] > 0 and ungated["value"] > 0
    assert catalog.family(gated["name"]).noise.model == "informational" and cl_device.gating
