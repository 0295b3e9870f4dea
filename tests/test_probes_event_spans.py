"""Launch and small-copy figures timed as spans of back-to-back operations (``Device.launch_many``,
``Device.copy_many``, ``probes.launch_overhead``, ``probes.copy_bandwidth``): every operation of a span runs,
the figure is the span over its operations, the method is in the identity, the timer's resolution is divided
among the span's operations, and the host-timed launch rate is informational. PoCL."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.baselines import classes, noise
from pytest_gpuperf.helpers import Measurer
from pytest_gpuperf.probes import copy_bandwidth, launch_overhead
from pytest_gpuperf.probes.bound_measurer import BoundMeasurer
from pytest_gpuperf.timing.measure import MeasureConfig, Measurement
from pytest_gpuperf.timing.stats import Stats

COUNT = "__kernel void count(__global int *x, int unused) { atomic_inc(x); }"
FIXED = MeasureConfig(warmup=1, min_repeats=4, max_repeats=4, target_rel_spread=0.0, budget_s=30)


def _counter(dev):
    return dev.compile(COUNT, "count"), dev.to_device(np.zeros(1, np.int32))


def test_launch_many_enqueues_every_launch_and_refuses_none(cl_device):
    k, buf = _counter(cl_device)
    handles = cl_device.elapsed(cl_device.timed(lambda: cl_device.launch_many(k, 7, (1,), (1,), [buf, np.int32(0)])),
                                30.0)
    assert handles > 0
    assert int(cl_device.to_host(buf, np.int32)[0]) == 7
    with pytest.raises(ValueError, match="at least one launch"):
        cl_device.launch_many(k, 0, (1,), (1,), [buf, np.int32(0)])


def test_per_launch_time_spans_every_launch_of_every_sample(cl_device):
    """Warm-up and samples each run the whole span: 5 spans of 6 launches increment the counter 30 times."""
    k, buf = _counter(cl_device)
    st = launch_overhead.per_launch_us(cl_device, Measurer(cl_device, FIXED), k, (1,), (1,), [buf, np.int32(0)], 6)
    assert st.n == 4 and st.median > 0
    assert int(cl_device.to_host(buf, np.int32)[0]) == 5 * 6


def test_a_span_of_many_launches_outlasts_one_launch(cl_device):
    """The span holds all its launches (device-timed, the least of a few spans each): 64 launches take longer
    than one; a span that closed after its first launch would not."""
    k, buf = _counter(cl_device)
    args = [buf, np.int32(0)]
    one = min(cl_device.elapsed(cl_device.timed(lambda: cl_device.launch_many(k, 1, (1,), (1,), args)), 30.0)
              for _ in range(5))
    many = min(cl_device.elapsed(cl_device.timed(lambda: cl_device.launch_many(k, 64, (1,), (1,), args)), 30.0)
               for _ in range(5))
    assert many > one


def test_empty_launch_records_name_their_span_and_the_host_rate_is_informational(cl_device):
    kernel = cl_device.compile(launch_overhead.empty_source(cl_device.info.dialect), launch_overhead.EMPTY_NAME)
    dev, host = launch_overhead.empty_records(cl_device, Measurer(cl_device, FIXED), kernel, launches=8)
    assert dev["name"] == "launch.empty.device_us" and dev["value"] > 0 and dev["stats"].n == 4
    assert dev["identity"] == {"timing": "back-to-back launches per event pair", "launches_per_span": 8}
    assert dev["info"][classes.PER_SPAN] == 8
    assert host["name"] == "launch.empty.host_us"
    assert noise.model_of(host["name"], host["unit"], host["better"], True, host["info"]) == "informational"
    assert "host" in noise.why(host["name"], host["unit"], host["info"])


def test_a_device_without_graphs_refuses_them_by_name(cl_device):
    """OpenCL has no device-side launch graphs: the device says so (the suite's graph test skips on it), and
    asking for one is an error naming the device, never a figure timed some other way."""
    from pytest_gpuperf.errors import ProbeVerificationError

    k, buf = _counter(cl_device)
    assert cl_device.supports_graphs is False
    with pytest.raises(ProbeVerificationError, match="no device-side graphs to capture 4 launches of 'count'"):
        cl_device.launch_graph(k, 4, (1,), (1,), [buf, np.int32(0)])
    with pytest.raises(ProbeVerificationError, match="no device-side graphs to capture 256 copies of 1MiB"):
        copy_bandwidth.measure_graph(cl_device, Measurer(cl_device, FIXED), "1MiB")
    with pytest.raises(ProbeVerificationError, match="no device-side graphs"):
        list(launch_overhead.graph_grid_records(cl_device, Measurer(cl_device, FIXED), k))
    assert launch_overhead.graph_identity(1000) == {
        "timing": "one device-side graph of back-to-back launches per event pair", "launches_per_graph": 1000}
    # the graph's span over its launches divides the timer's tick as a span of stream launches does
    assert classes.resolution_floor("us", 0.5e-6, {classes.PER_SPAN: 1000}) == pytest.approx(0.0005)


def test_a_cpu_device_keeps_one_launch_per_span_and_its_identity():
    """CPU devices keep the method their baselines were measured with: one launch per span, no new identity
    key; GPUs time spans of GPU_SPAN_LAUNCHES."""
    class Info:
        is_cpu = True
    assert launch_overhead.span_launches(Info()) == 1 and launch_overhead.span_identity(1) == {}
    Info.is_cpu = False
    assert launch_overhead.span_launches(Info()) == launch_overhead.GPU_SPAN_LAUNCHES >= 100
    assert launch_overhead.span_identity(200)["launches_per_span"] == 200


def test_grid_points_and_fit_carry_the_span(cl_device):
    kernel = cl_device.compile(launch_overhead.empty_source(cl_device.info.dialect), launch_overhead.EMPTY_NAME)
    meas = BoundMeasurer(Measurer(cl_device, FIXED), {"warmup": 0, "min_repeats": 3, "max_repeats": 3})
    recs = list(launch_overhead.grid_records(cl_device, meas, kernel, launches=2))
    points = [r for r in recs if r["name"].startswith("launch.grid.")]
    assert len(points) == len(launch_overhead.grid_blocks(cl_device.info.compute_units, True))
    assert all(r["identity"]["launches_per_span"] == 2 and r["info"][classes.PER_SPAN] == 2 for r in points)
    fit = {r["name"]: r for r in recs if r["name"].startswith("launch.overhead.")}
    assert fit["launch.overhead.intercept_us"]["identity"]["launches_per_span"] == 2
    assert fit["launch.overhead.intercept_us"]["identity"]["fit_point"] == "q25"  # the CPU's own fit point kept


def test_the_timer_resolution_is_divided_among_a_spans_operations():
    assert classes.resolution_floor("us", 0.5e-6) == pytest.approx(0.5)
    assert classes.resolution_floor("us", 0.5e-6, {classes.PER_SPAN: 200}) == pytest.approx(0.0025)
    assert classes.resolution_floor("us", 0.5e-6, {"other": 3}) == pytest.approx(0.5)
    assert classes.resolution_floor("GB/s", 0.5e-6, {classes.PER_SPAN: 200}) == 0.0


class _Info:
    def __init__(self, is_cpu: bool) -> None:
        self.is_cpu = is_cpu


def test_small_gpu_copies_are_batched_to_move_256_mib_per_span_and_large_ones_stay_alone():
    MiB = copy_bandwidth.MiB
    gpu = _Info(False)
    assert [copy_bandwidth.copies_per_span(gpu, s) for s in (MiB, 16 * MiB, 256 * MiB, 1024 * MiB)] == [100, 16, 1, 1]
    assert copy_bandwidth.copies_per_span(_Info(True), MiB) == 1  # CPU devices keep their method


def test_a_batched_copy_figure_is_per_copy_and_names_its_span():
    MiB = copy_bandwidth.MiB
    m = Measurement((4e-3, 8e-3, 12e-3), Stats.of([4e-3, 8e-3, 12e-3]), True)
    rec = copy_bandwidth.CopyBandwidth("1MiB", MiB, 32, m, True, per_span=4).record()
    assert rec["value"] == pytest.approx(2 * MiB / 1e9 / 2e-3)  # the 8 ms median span holds 4 copies of 2 ms
    assert rec["identity"] == {"timing": "back-to-back copies per event pair", "copies_per_span": 4}
    assert rec["info"][classes.PER_SPAN] == 4
    alone = copy_bandwidth.CopyBandwidth("1MiB", MiB, 32, m, True).record()
    assert "identity" not in alone and alone["value"] == pytest.approx(2 * MiB / 1e9 / 8e-3)


def test_copy_many_copies_every_pair_and_refuses_none(cl_device):
    srcs = [cl_device.to_device(np.full(256, i + 1, np.uint8)) for i in range(3)]
    dsts = [cl_device.empty(256) for _ in range(3)]
    span = cl_device.elapsed(cl_device.timed(lambda: cl_device.copy_many(list(zip(dsts, srcs)), 256)), 30.0)
    assert span > 0
    assert [int(cl_device.to_host(d, np.uint8)[0]) for d in dsts] == [1, 2, 3]
    with pytest.raises(ValueError, match="at least one"):
        cl_device.copy_many([])


def test_a_copy_measured_in_spans_really_copies_and_records_per_copy(cl_device):
    c = copy_bandwidth.measure(cl_device, Measurer(cl_device, FIXED), "1MiB", per_span=3)
    assert c.copied and c.per_span == 3 and c.measurement.stats.n == 4
    rec = c.record()
    assert rec["identity"]["copies_per_span"] == 3 and rec["value"] > 0
    # the per-copy figure is three times the bandwidth its spans would read as one copy each
    assert rec["value"] == pytest.approx(3 * c.measurement.stats.reciprocal(2 * c.size / 1e9).median, rel=1e-9)


def test_a_baseline_from_gpu_runs_of_a_span_gates_finer_than_the_event_timer():
    """``gpuperf baseline from-results`` (merge_runs) of three CUDA runs: a launch timed over 200 per span
    gets an absolute floor of 0.5 µs / 200, one read alone keeps the timer's 0.5 µs."""
    from pytest_gpuperf.baselines.merge import merge_runs
    from pytest_gpuperf.schemas.results_doc import ResultsDocument

    def doc(v: float) -> ResultsDocument:
        metric = {"name": "launch.empty.device_us", "value": v, "unit": "us", "better": "lower",
                  "test": "suites/test_memory.py::test_launch_overhead", "info": {classes.PER_SPAN: 200},
                  "identity": launch_overhead.span_identity(200)}
        alone = dict(metric, name="launch.grid.1x256.device_us", info={}, identity={})
        return ResultsDocument.from_json({"device": {"backend": "cuda", "name": "GPU", "key": "gpu", "is_cpu": False},
                                          "environment": {}, "run": {}, "metrics": [metric, alone]})

    entries = merge_runs([doc(2.000), doc(2.001), doc(2.002)], k=6.0)
    assert entries["launch.empty.device_us"]["tolerance"]["abs"] == pytest.approx(0.0025)
    assert entries["launch.grid.1x256.device_us"]["tolerance"]["abs"] == pytest.approx(0.5)


def test_a_graph_timed_copy_is_a_figure_of_its_own():
    """The graph-timed small copies move SPAN_BYTES per graph with no cap on their number, and carry their own
    name and identity, so a stream-timed baseline never judges them (nor they it)."""
    assert copy_bandwidth.copies_per_graph(copy_bandwidth.SIZES["1MiB"]) == 256
    assert copy_bandwidth.copies_per_graph(copy_bandwidth.SIZES["16MiB"]) == 16
    assert set(copy_bandwidth.GRAPH_SIZES) <= set(copy_bandwidth.SIZES)


def test_a_graph_copy_record_names_its_method(cl_device):
    import dataclasses

    c = copy_bandwidth.measure(cl_device, Measurer(cl_device, FIXED), "1MiB", per_span=4)
    stream, graph = c.record(), dataclasses.replace(c, graph=True).record()
    assert stream["name"] == "memory.copy.bandwidth.1MiB"
    assert graph["name"] == "memory.copy.graph.bandwidth.1MiB" and graph["value"] == stream["value"]
    assert graph["identity"] == {"timing": "one device-side graph of back-to-back copies per event pair",
                                 "copies_per_graph": 4}
    assert graph["info"][classes.PER_SPAN] == 4
