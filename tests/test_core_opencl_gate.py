"""The OpenCL timing gate: commands enqueued inside ``Device.timed`` wait on a user event released only
after the enqueue callable returns, so a multi-launch span is device time without host enqueue gaps.
Run on a real OpenCL device (PoCL in CI)."""

from __future__ import annotations

import threading
import time

import numpy as np

from pytest_gpuperf.timing.measure import MeasureConfig, measure

SRC = """
__kernel void inc(__global float* x, int n) { int i = get_global_id(0); if (i < n) x[i] += 1.0f; }
"""


def test_gated_launches_run_and_give_correct_results(cl_device):
    k = cl_device.compile(SRC, "inc")
    buf = cl_device.to_device(np.zeros(1024, np.float32))
    handle = cl_device.timed(lambda: [cl_device.launch(k, (1024,), (64,), [buf, np.int32(1024)]) for _ in range(5)])
    assert cl_device.elapsed(handle, 10.0) > 0
    assert np.all(cl_device.to_host(buf, np.float32) == 5.0)


def test_host_gaps_are_not_timed(cl_device):
    """A 50 ms host pause between two enqueues inside the timed region must not show in the span: the
    commands wait for the gate until the callable has returned."""
    k = cl_device.compile(SRC, "inc")
    buf = cl_device.to_device(np.zeros(64, np.float32))

    def enqueue():
        first = cl_device.launch(k, (64,), (64,), [buf, np.int32(64)])
        time.sleep(0.05)
        return [first, cl_device.launch(k, (64,), (64,), [buf, np.int32(64)])]

    spans = [cl_device.elapsed(cl_device.timed(enqueue), 10.0) for _ in range(3)]
    assert min(spans) < 0.025, f"the host pause leaked into the device span: {spans}"


def test_blocking_read_inside_the_timed_region_does_not_deadlock(cl_device):
    k = cl_device.compile(SRC, "inc")
    buf = cl_device.to_device(np.zeros(64, np.float32))

    def enqueue():
        ev = cl_device.launch(k, (64,), (64,), [buf, np.int32(64)])
        cl_device.to_host(buf, np.float32)  # releases the gate first
        return ev

    # in a daemon thread, so a regression (a read stuck behind a held gate) fails here instead of hanging the run
    out: dict = {}
    t = threading.Thread(target=lambda: out.update(m=measure(
        cl_device, enqueue, MeasureConfig(warmup=0, min_repeats=2, max_repeats=2, timeout_s=10.0))), daemon=True)
    t.start()
    t.join(60.0)
    stuck = t.is_alive()
    while t.is_alive():  # let the stuck reads finish, so the fixture's teardown does not hang too
        cl_device._release_gate()
        t.join(0.1)
    assert not stuck, "a blocking read inside the timed region deadlocked behind the gate"
    assert out["m"].stats.median > 0


def _minor_faults() -> int:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def test_a_new_buffer_on_a_cpu_device_is_committed_before_anything_is_timed(cl_device):
    """On a CPU device a fresh buffer's pages are mapped on first touch, so the first timed copy into it
    used to pay one page fault per 4 KiB (the copy suite timed 29 of 200 samples on fresh pages; a fresh
    CI VM read 1.1 GB/s for 15). ``empty`` commits the pages: a copy into a new buffer then faults at
    most a few pages of bookkeeping, not one per page. PoCL runs in this process, so its faults show
    in this process's count; the assertion reads no clock."""
    if not cl_device.info.is_cpu:
        import pytest
        pytest.skip("only a CPU device maps device memory on first touch")
    size = 64 << 20  # 16,384 pages
    src = cl_device.to_device(np.ones(size, np.uint8))
    dst = cl_device.empty(size)
    cl_device.synchronize()
    before = _minor_faults()
    cl_device.elapsed(cl_device.timed(lambda: cl_device.copy(dst, src, size)), 30.0)
    faults = _minor_faults() - before
    assert faults < size // 4096 // 20, f"the timed copy faulted {faults} pages of a {size >> 20} MiB buffer"
    assert np.array_equal(cl_device.to_host(dst, np.uint8, 4096), np.ones(4096, np.uint8))
