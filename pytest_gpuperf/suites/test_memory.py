"""Device memory bandwidth and kernel-launch overhead — the first numbers a GPU team checks after a
driver or card change.

* ``memory.copy.bandwidth.<size>`` — device-to-device copy through the API (cudaMemcpyAsync /
  clEnqueueCopyBuffer), GB/s counting bytes read + written, rotating over enough buffer pairs to
  cover twice the last-level cache (at least 2 × 64 MiB on GPUs) so repeated copies do not measure a warm cache.
* ``launch.empty.device_us`` — device-event time of one empty kernel of one work-item.
* ``launch.empty.host_us`` — host wall time per launch of 2,000 back-to-back empty launches (the
  rate at which the runtime can issue work), synchronised at the end.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from pytest_gpuperf.gatecheck import plants
from pytest_gpuperf.probes.memory import launch_tolerance
from pytest_gpuperf.timing.stats import Stats

MiB = 1 << 20
SIZES = {"1MiB": 1 * MiB, "16MiB": 16 * MiB, "256MiB": 256 * MiB, "1GiB": 1024 * MiB}

EMPTY = {
    "cuda": 'extern "C" __global__ void empty_kernel(int x) { }',
    "opencl": "__kernel void empty_kernel(int x) { }",
}


@pytest.mark.parametrize("label", list(SIZES))
def test_copy_bandwidth(gpu_device, gpu_measure, gpuperf_record, gpuperf_plant, label):
    size = SIZES[label]
    # the gate check's memory-bound plant: move (1 + F) × the bytes the figure is credited with
    planted = plants.fraction(gpuperf_plant, "memory")
    moved = size + (int(size * planted) // 4096) * 4096
    info = gpu_device.info
    if info.is_cpu and size > 256 * MiB:
        pytest.skip(f"{label} copies are GPU-sized; {info.name} is a CPU device")
    # NVIDIA's OpenCL reports a 4 MiB "global memory cache" for the H100 (L2 is 50 MiB), so on GPUs
    # rotate over at least 2 × 64 MiB whatever the driver says.
    cache = max(info.l2_bytes, 1) if info.is_cpu else max(info.l2_bytes, 64 * MiB)
    pairs = max(1, min(32, -(-2 * cache // (2 * size))))
    if 2 * pairs * size > info.memory_bytes // 4:
        pytest.skip(f"{label} × {pairs} buffer pairs would use over a quarter of {info.name}'s memory")
    rng = np.random.default_rng(1234)
    host = rng.integers(0, 255, moved, dtype=np.uint8)
    srcs = [gpu_device.to_device(host) for _ in range(pairs)]
    dsts = [gpu_device.empty(moved) for _ in range(pairs)]
    order = iter(range(1 << 62))

    def copy_once():
        i = next(order) % pairs
        return gpu_device.copy(dsts[i], srcs[i], moved)

    m = gpu_measure.enqueue(copy_once)
    # The copy must really have happened: compare one destination with the source bytes.
    assert np.array_equal(gpu_device.to_host(dsts[0], np.uint8), host)
    bw = m.stats.reciprocal(2 * size / 1e9)  # bytes read + written, per second → GB/s
    info = {"buffer_pairs": pairs, "converged": m.converged}
    if planted:
        info["planted_slowdown"] = moved / size - 1.0
    gpuperf_record(f"memory.copy.bandwidth.{label}", bw.median, "GB/s", better="higher", stats=bw, info=info)


def test_launch_overhead(gpu_device, gpu_kernel, gpu_measure, gpuperf_record):
    kernel = gpu_kernel.compile(EMPTY[gpu_device.info.backend], "empty_kernel")
    arg = [np.int32(0)]
    m = gpu_measure(kernel, (1,), (1,), arg)
    us = m.stats.scaled(1e6)
    # PoCL's per-launch thread wake-up makes its sub-µs figure bimodal: the CPU launch band (probes.memory)
    gpuperf_record("launch.empty.device_us", us.median, "us", better="lower", stats=us,
                   tolerance=launch_tolerance(gpu_device.info))

    n = 2000
    samples = []
    for _ in range(7):
        gpu_device.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            gpu_device.launch(kernel, (1,), (1,), arg)
        gpu_device.synchronize()
        samples.append((time.perf_counter() - t0) / n * 1e6)
    host = Stats.of(samples)
    gpuperf_record("launch.empty.host_us", host.median, "us", better="lower", stats=host,
                   info={"launches_per_sample": n, "host_timed": True})
