"""How an OpenCL device holds a timed region (``OpenCLDevice.holding``, ``devices.queue_hold``, ``probes.event_gate``):
each hold runs the region's commands, correctly, and ``holding`` restores the device's own hold afterwards, even
after an error; the blocking kernel's hold outlasts a host pause once it has seen one; the study records every
hold at one and many launches per span, told apart by their identity and informational by their catalog row. PoCL."""

from __future__ import annotations

import time

import numpy as np
import pytest

from pytest_gpuperf.baselines import catalog
from pytest_gpuperf.devices import queue_hold
from pytest_gpuperf.helpers import Measurer
from pytest_gpuperf.probes import event_gate, launch_overhead
from pytest_gpuperf.timing.measure import MeasureConfig

FIXED = MeasureConfig(warmup=1, min_repeats=3, max_repeats=3, target_rel_spread=0.0, budget_s=30)
COUNT = "__kernel void count(__global int *x, int unused) { atomic_inc(x); }"


def test_every_hold_runs_the_region_and_holding_restores_the_devices_own(cl_device):
    own = cl_device.hold
    assert own == ("event" if cl_device.info.is_cpu else "kernel")
    k = cl_device.compile(COUNT, "count")
    buf = cl_device.to_device(np.zeros(1, np.int32))
    seen = []

    def enqueue():
        seen.append((cl_device.hold, cl_device._gate is not None))
        return [cl_device.launch(k, (1,), (1,), [buf, np.int32(0)]) for _ in range(3)]

    for hold in queue_hold.HOLDS:
        with cl_device.holding(hold):
            assert cl_device.elapsed(cl_device.timed(enqueue), 30.0) > 0
    with pytest.raises(RuntimeError):
        with cl_device.holding("none"):
            raise RuntimeError("inside")
    with pytest.raises(ValueError, match="unknown hold"):
        with cl_device.holding("spin"):
            pass
    assert cl_device.hold == own
    assert seen == [("event", True), ("kernel", False), ("none", False)]
    assert int(cl_device.to_host(buf, np.int32)[0]) == 3 * len(queue_hold.HOLDS)


def test_the_blocking_kernel_outlasts_a_host_pause_once_it_has_seen_one(cl_device):
    """A 30 ms host pause between two launches: the first region's hold (planned before any enqueue was timed)
    may end inside the pause, and is then counted as underheld; every later hold lasts twice the pause, so
    their spans are device time only."""
    k = cl_device.compile(COUNT, "count")
    buf = cl_device.to_device(np.zeros(1, np.int32))

    def enqueue():
        first = cl_device.launch(k, (1,), (1,), [buf, np.int32(0)])
        time.sleep(0.03)
        return [first, cl_device.launch(k, (1,), (1,), [buf, np.int32(0)])]

    with cl_device.holding("kernel"):
        spans = [cl_device.elapsed(cl_device.timed(enqueue), 30.0) for _ in range(3)]
    counts = cl_device.hold_counts()
    assert counts["ns_per_iteration"] > 0 and counts["regions"] >= 3
    assert max(spans[1:]) < 0.015, f"the host pause leaked into a held span: {spans}"


def test_every_hold_is_recorded_apart_and_informational(cl_device):
    assert event_gate.why_not(cl_device) is None
    kernel = cl_device.compile(launch_overhead.empty_source(cl_device.info.dialect), launch_overhead.EMPTY_NAME)
    records = list(event_gate.gate_records(cl_device, Measurer(cl_device, FIXED), kernel))
    names = [r["name"] for r in records]
    assert names == [f"launch.event_gate.{m}.x{n}.device_us" for m in event_gate.MODES for n in (1, event_gate.SPAN)]
    assert all(r["stats"].n == 3 and r["value"] > 0 for r in records)
    assert [r["identity"]["hold"] for r in records] == [h for h in event_gate.MODES.values() for _ in (1, 2)]
    held = [r for r in records if r["identity"]["hold"] == "kernel"]
    assert all(r["info"]["regions"] >= 3 and r["info"]["spin_ns_per_iteration"] > 0 for r in held)
    assert all(catalog.family(n).noise.model == "informational" for n in names)
