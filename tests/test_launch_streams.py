"""The launch-queue study (``Device.on_queue``, ``probes.launch_streams``): work inside ``on_queue(k)`` runs on
queue k and the device's own queue is back afterwards, every queue's spans are timed and kept, the two spreads
are computed from them, and the figure is informational by its catalog row. PoCL (a real OpenCL device)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from pytest_gpuperf.baselines import catalog
from pytest_gpuperf.helpers import Measurer
from pytest_gpuperf.probes import launch_overhead, launch_streams
from pytest_gpuperf.timing import stats
from pytest_gpuperf.timing.measure import MeasureConfig

COUNT = "__kernel void count(__global int *x, int unused) { atomic_inc(x); }"
FIXED = MeasureConfig(warmup=1, min_repeats=4, max_repeats=4, target_rel_spread=0.0, budget_s=30)


def test_on_queue_enqueues_there_and_gives_the_own_queue_back(cl_device):
    own = cl_device.queue
    k = cl_device.compile(COUNT, "count")
    buf = cl_device.to_device(np.zeros(1, np.int32))
    seen = []
    for q in (1, 2, 1):
        with cl_device.on_queue(q):
            seen.append(cl_device.queue)
            assert cl_device.elapsed(cl_device.timed(lambda: cl_device.launch(k, (1,), (1,), [buf, np.int32(0)])),
                                     30.0) > 0
    assert cl_device.queue is own
    assert seen[0] is seen[2] and seen[0] is not seen[1] and own not in seen
    with cl_device.on_queue(0):
        assert cl_device.queue is own
    assert int(cl_device.to_host(buf, np.int32)[0]) == 3


def test_on_queue_restores_the_own_queue_after_an_error(cl_device):
    own = cl_device.queue
    with pytest.raises(RuntimeError, match="inside"):
        with cl_device.on_queue(3):
            raise RuntimeError("inside")
    assert cl_device.queue is own
    with pytest.raises(ValueError, match="0 or more"):
        with cl_device.on_queue(-1):
            pass


def test_stream_record_keeps_every_queues_rounds_and_their_spreads(cl_device):
    kernel = cl_device.compile(launch_overhead.empty_source(cl_device.info.dialect), launch_overhead.EMPTY_NAME)
    r = launch_streams.stream_record(cl_device, Measurer(cl_device, FIXED), kernel, queues=3, rounds=2)
    per = r["info"]["per_queue_us"]
    assert r["name"] == "launch.streams.empty.device_us" and len(per) == 3 and all(len(q) == 2 for q in per)
    medians = [float(np.median(q)) for q in per]
    assert r["value"] == pytest.approx(np.mean(medians), rel=1e-4)
    assert r["info"]["between_queues_pct"] == pytest.approx(launch_streams.spread_pct(medians), abs=1e-3)
    assert r["identity"]["queues"] == 3 and r["identity"]["rounds"] == 2
    assert catalog.family(r["name"]).noise.model == "informational"
    with pytest.raises(ValueError, match="two queues"):
        launch_streams.stream_record(cl_device, Measurer(cl_device, FIXED), kernel, queues=1)


def test_spread_is_range_over_median():
    assert launch_streams.spread_pct is stats.spread_pct
    assert launch_streams.spread_pct([1.0, 1.1, 1.05]) == pytest.approx(0.1 / 1.05 * 100)
    assert launch_streams.spread_pct([2.0]) == 0.0


def test_the_suite_measures_the_study_in_processes_of_its_own(cl_device):
    """The queues the study makes live and die in child processes: this process's device gains none, and the
    record holds each process's queues, the mean of their figures and the spread between them; the children's
    measurement windows join this device's observations, so the session marks the figure as it marks any."""
    before, seen = len(cl_device._queues), len(cl_device.observations)
    r = launch_streams.isolated_record(cl_device, FIXED)
    assert len(cl_device._queues) == before
    info = r["info"]
    assert info["processes"] == launch_streams.CPU_PROCESSES == len(info["per_process"]) == r["stats"].n
    for one in info["per_process"]:
        assert len(one["per_queue_us"]) == launch_streams.CPU_QUEUES
        assert all(len(q) == launch_streams.ROUNDS for q in one["per_queue_us"])
    windows = launch_streams.CPU_PROCESSES * launch_streams.CPU_QUEUES * launch_streams.ROUNDS
    assert len(cl_device.observations) - seen >= windows
    assert all("busy" in w for w in cl_device.observations[seen:])
    assert not any(k in r for k in launch_streams.OBSERVED)
    assert r["value"] == pytest.approx(np.mean(info["per_process_us"]), rel=1e-5)
    assert info["between_processes_pct"] == pytest.approx(launch_streams.spread_pct(info["per_process_us"]), abs=1e-3)
    assert r["identity"]["processes"] == launch_streams.CPU_PROCESSES and r["unit"] == "us"
    with pytest.raises(ValueError, match="at least one process"):
        launch_streams.isolated_record(cl_device, FIXED, processes=0)


def test_a_failing_child_is_named_with_its_exit_and_the_way_out(cl_device):
    from dataclasses import replace

    from pytest_gpuperf.errors import ProbeVerificationError

    own = cl_device.info
    cl_device.info = replace(own, index=99)  # no such device in the child
    try:
        with pytest.raises(ProbeVerificationError, match=r"process of its own.*exit 1.*not launch_streams"):
            launch_streams.isolated_record(cl_device, FIXED)
    finally:
        cl_device.info = own


def test_a_child_counts_the_run_that_started_it_as_its_own(monkeypatch):
    """The study's child is told its parent's pids: the parent's context on the card is the measurement's own
    (not a tenant), and where NVML names pids of another namespace the card is shared only beyond the two."""
    from pytest_gpuperf.devices import nvml

    monkeypatch.delenv(nvml.PARENT_ENV, raising=False)
    assert nvml.parent_pids() == frozenset() and nvml.own_pids() >= {os.getpid()}
    monkeypatch.setenv(nvml.PARENT_ENV, "4242,17")
    assert nvml.parent_pids() == {4242, 17} and {4242, 17} <= nvml.own_pids()
    two = nvml.Tenants(listed=2, foreign_pids=True, ours=2)
    assert not two.shared and nvml.Tenants(listed=3, foreign_pids=True, ours=2).shared
    assert nvml.Tenants(listed=2, foreign_pids=True).shared  # a process of its own: the second one is a tenant
