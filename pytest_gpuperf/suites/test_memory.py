"""Device memory bandwidth and kernel-launch overhead — the first numbers a GPU team checks after a
driver or card change.

* ``memory.copy.bandwidth.<size>`` — device-to-device copy through the API (cudaMemcpyAsync /
  clEnqueueCopyBuffer), GB/s counting bytes read + written, rotating over enough buffer pairs to
  cover twice the last-level cache (at least 2 × 64 MiB on GPUs) so repeated copies do not measure a warm cache;
  on a GPU the 1 and 16 MiB copies are timed as spans of back-to-back copies moving 256 MiB (at most 100
  copies), per copy = span over their number (``copy_bandwidth.copies_per_span``).
* ``launch.empty.device_us`` — device time per launch of an empty kernel of one work-item: on a GPU one
  device-event span of 200 back-to-back launches over their number (``launch_overhead.GPU_SPAN_LAUNCHES``),
  on a CPU device one launch per span.
* ``launch.streams.empty.device_us`` — the same spans issued round-robin on 8 queues of one process (CUDA
  streams, OpenCL command queues; 2 on a CPU device), the mean of each queue's median; ``info`` compares how
  far the queues lie apart with how far one queue's rounds move (``probes.launch_streams``); informational, a study
  (``--gpuperf-profile=study``). Measured
  in 4 child processes one after another (2 on a CPU device), whose queues die with them (a process with eight
  streams launches slower): the mean of their figures, beside their spread.
* ``launch.event_gate.{gated,held,ungated}.x{1,64}.device_us`` — an empty launch on an OpenCL device, one and 64
  per span, timed behind a user event, behind a blocking kernel and unheld (``probes.event_gate``): whether an
  event's start takes in the driver's release of held commands; informational, a study
  (``--gpuperf-profile=study``). OpenCL only.
* ``launch.graph.empty.device_us`` — device time per launch of the same kernel replayed from one CUDA graph
  of 1,000 launches (``launch_overhead.GRAPH_LAUNCHES``): the device's own kernel-to-kernel time, without
  the fetch of each launch's commands from host memory that the stream figure takes in. CUDA only.
* ``launch.graph.grid.<blocks>x256.device_us`` — the same per launch at every grid of the launch sweep
  (``launch.grid.*``), each replayed from one graph of 1,000 launches. CUDA only.
* ``memory.copy.graph.bandwidth.<size>`` — the 1 and 16 MiB copies timed from one CUDA graph of copies moving
  256 MiB (``copy_bandwidth.measure_graph``), free of the stream's fetch of each copy's commands. CUDA only.
* ``launch.empty.host_us`` — host wall time per launch of 2,000 back-to-back empty launches (the
  rate at which the runtime can issue work), synchronised at the end; informational (the host's noise).
"""

from __future__ import annotations

import pytest

from pytest_gpuperf.gatecheck import plants
from pytest_gpuperf.probes import copy_bandwidth, event_gate, launch_overhead, launch_streams


@pytest.mark.parametrize("label", list(copy_bandwidth.SIZES))
def test_copy_bandwidth(gpu_device, gpu_measure, gpuperf_record, gpuperf_plant, label):
    why_not = copy_bandwidth.why_not(gpu_device.info, label)
    if why_not:
        pytest.skip(why_not)
    # the gate check's memory plant: each span of copies followed by a spin of F × the unplanted span (planted_copy)
    c = copy_bandwidth.measure(gpu_device, gpu_measure, label, plants.fraction(gpuperf_plant, "memory"))
    # The copy must really have happened: one destination holds the source bytes.
    assert c.copied, f"{label}: the copied buffer differs from its source"
    gpuperf_record(**c.record())


def test_launch_overhead(gpu_device, gpu_kernel, gpu_measure, gpuperf_record, gpuperf_plant):
    kernel = gpu_kernel.compile(launch_overhead.empty_source(gpu_device.info.dialect), launch_overhead.EMPTY_NAME)
    # the gate check's launch plant: extra work per launch (launch_overhead.planted_spin)
    for r in launch_overhead.empty_records(gpu_device, gpu_measure, kernel, plants.fraction(gpuperf_plant, "launch")):
        gpuperf_record(**r)


def test_launch_streams(gpu_device, gpu_measure, gpuperf_record):
    # in processes of its own: the queues it makes would slow every later launch of this one
    gpuperf_record(**launch_streams.isolated_record(gpu_device, gpu_measure.config))


def test_opencl_event_gate(gpu_device, gpu_kernel, gpu_measure, gpuperf_record):
    why_not = event_gate.why_not(gpu_device)
    if why_not:
        pytest.skip(why_not)
    kernel = gpu_kernel.compile(launch_overhead.empty_source(gpu_device.info.dialect), launch_overhead.EMPTY_NAME)
    for r in event_gate.gate_records(gpu_device, gpu_measure, kernel):
        gpuperf_record(**r)


def test_launch_graph(gpu_device, gpu_kernel, gpu_measure, gpuperf_record, gpuperf_plant):
    _graphs_or_skip(gpu_device)
    kernel = gpu_kernel.compile(launch_overhead.empty_source(gpu_device.info.dialect), launch_overhead.EMPTY_NAME)
    for r in launch_overhead.graph_records(gpu_device, gpu_measure, kernel, plants.fraction(gpuperf_plant, "launch")):
        gpuperf_record(**r)


def _graphs_or_skip(device) -> None:
    if not device.supports_graphs:
        pytest.skip(f"{device.info.spec}: device-side launch graphs are CUDA-only ({device.info.backend} has none)")


def test_graph_grid_launches(gpu_device, gpu_kernel, gpu_measure, gpuperf_record, gpuperf_plant):
    _graphs_or_skip(gpu_device)
    kernel = gpu_kernel.compile(launch_overhead.empty_source(gpu_device.info.dialect), launch_overhead.EMPTY_NAME)
    plant = plants.fraction(gpuperf_plant, "launch")
    for r in launch_overhead.graph_grid_records(gpu_device, gpu_measure, kernel, plant):
        gpuperf_record(**r)


@pytest.mark.parametrize("label", copy_bandwidth.GRAPH_SIZES)
def test_graph_copies(gpu_device, gpu_measure, gpuperf_record, label):
    _graphs_or_skip(gpu_device)
    c = copy_bandwidth.measure_graph(gpu_device, gpu_measure, label)
    assert c.copied, f"{label}: the copied buffer differs from its source"
    gpuperf_record(**c.record())
