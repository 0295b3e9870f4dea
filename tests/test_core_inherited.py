"""A figure computed from shared or throttled measurements inherits that mark — in the gate and in
``gpuperf compare`` — a deterministic figure is judged whatever the machine did, and a contended figure
whose change is far beyond what sharing explains is named "would have regressed".

The NVML readings are the scripted stand-in of ``test_power_nvml.FakeNvml`` (process lists, throttle masks);
the measurements are real, on the PoCL device; the other process is a real child (``sleep``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pytest_gpuperf import exits
from pytest_gpuperf.compare import engine
from pytest_gpuperf.compare.load import merge
from pytest_gpuperf.schemas.results_doc import MetricRecord
from pytest_gpuperf.devices import discover, nvml
from pytest_gpuperf.timing import observers
from pytest_gpuperf.timing.measure import MeasureConfig, measure
from suite_support import WORK_HEAD, baseline_folder
from test_power_nvml import FakeNvml

INV = discover()
needs_opencl = pytest.mark.skipif(not any(d.backend == "opencl" for d in INV.devices),
                                  reason="needs an OpenCL device (install pocl-opencl-icd)")
GIB = 1 << 30
ME = os.getpid()
GPU = {"is_cpu": False, "compute_units": 132, "key": "gpu", "backend": "cuda"}
CPU = {"is_cpu": True, "compute_units": 2, "key": "cpu", "backend": "opencl"}


@pytest.fixture
def neighbour():
    """A real other process of this machine, standing for another tenant of the card."""
    proc = subprocess.Popen(["sleep", "60"])
    comm = Path(f"/proc/{proc.pid}/comm")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and comm.read_text().strip() != "sleep":
        time.sleep(0.01)
    yield proc.pid
    proc.kill()
    proc.wait()


def _watched(device, nv: FakeNvml) -> observers.Capture:
    """One real measurement on ``device`` under the scripted NVML ``nv``; the capture of its windows."""
    k = device.compile("__kernel void k(__global float* x) { x[get_global_id(0)] += 1.0f; }", "k")
    buf = device.to_device(np.zeros(64, np.float32))
    saved = device._power
    device._power = (nvml.PowerSensor(nv, object(), "0:1:0"), "NVML")
    for seen in (device.observations, device.power_observations, device.tenant_observations):
        seen.clear()
    try:
        watched = observers.Capture(device)
        measure(device, lambda: device.launch(k, (64,), (64,), [buf]),
                MeasureConfig(warmup=1, min_repeats=3, max_repeats=5, budget_s=0.1))
    finally:
        device._power = saved
    return watched


# ---- the marks a derived figure inherits, from saved NVML readings ------------------------------------
@needs_opencl
def test_a_figure_computed_from_shared_windows_inherits_contended(cl_device, neighbour):
    """The chase latencies were measured with another process on the card; the cache size found on them is
    a deterministic figure (a step of the footprint grid), yet it inherits ``contended`` from them — and a
    deterministic figure that only ran beside them (an ulp count) is judged on its value."""
    watched = _watched(cl_device, FakeNvml(compute=[[(ME, GIB), (neighbour, 20 * GIB)]]))
    inherited = observers.inherit(watched)
    assert inherited[observers.INHERITED]["tenants"]["contended"] == 1
    assert inherited[observers.INHERITED]["tenants"]["processes"][0]["pid"] == neighbour
    size_info = {"grid": "2 footprints per doubling", **inherited}
    assert observers.measured_verdict("regressed", size_info, is_cpu=False, deterministic=True) == "contended"
    assert observers.measured_verdict("pass", size_info, is_cpu=False, deterministic=True) == "contended"
    # the test's own windows (what the session writes into every metric of the test) say nothing of an ulp
    ambient = observers.Capture(cl_device, from_start=True).marks()
    assert observers.shared_metric(ambient)
    assert observers.measured_verdict("regressed", ambient, is_cpu=True, deterministic=True) == "regressed"
    assert observers.measured_verdict("pass", ambient, is_cpu=True, deterministic=True) == "pass"
    # a mean over several figures inherits from any of them (its own inputs' inherited marks included)
    quiet = {"tenants": {"contended": 0, "processes": []}}
    mean = observers.inherit(quiet, size_info)
    assert observers.measured_verdict("regressed", mean, is_cpu=False) == "contended"
    assert observers.inherit(quiet)[observers.INHERITED]["tenants"]["contended"] == 0


@needs_opencl
def test_a_figure_computed_from_throttled_windows_inherits_throttled(cl_device):
    watched = _watched(cl_device, FakeNvml(masks=[0x40]))  # hw_thermal_slowdown at every reading
    slope = {"fit": "least squares", **observers.inherit(watched)}
    assert slope[observers.INHERITED]["power"]["throttle_reasons"] == ["hw_thermal_slowdown"]
    assert observers.measured_verdict("regressed", slope, is_cpu=False) == "throttled"
    assert observers.measured_verdict("regressed", slope, is_cpu=False, deterministic=True) == "throttled"
    assert observers.measured_verdict("new", slope, is_cpu=False) == "new"  # nothing was gated
    calm = _watched(cl_device, FakeNvml(masks=[0]))
    assert observers.measured_verdict("regressed", observers.inherit(calm), is_cpu=False) == "regressed"


# ---- how much sharing can explain ---------------------------------------------------------------------
def _host(foreign: float, steal: float = 0.0) -> dict:
    return {"host": {"windows": 3, "steal_cores_max": steal, "foreign_cores_max": foreign, "remeasured": 2,
                     "busy": 3, "contended": 1}}


def test_what_sharing_explains_and_what_lies_far_beyond_it():
    """Two busy cores of a host's two: the work kept at least one, a slowdown of at most 2, so a figure
    more than FAR_BEYOND x 2 worse is named; a host left with nothing explains anything up to 1/MIN_SHARE."""
    assert observers.explained_slowdown(_host(1.0), is_cpu=True, cores=2) == pytest.approx(2.0)
    assert observers.explained_slowdown(_host(1.98), is_cpu=True, cores=2) == pytest.approx(1 / observers.MIN_SHARE)
    assert observers.explained_slowdown(_host(1.0), is_cpu=False, cores=2) == 1.0  # a GPU's device time
    one_other = {"tenants": {"contended": 1, "processes": [{"pid": 7}]}}
    assert observers.explained_slowdown(one_other, is_cpu=False, cores=132) == 2.0
    hot = {"power": {"throttled": True, "sm_clock_min_mhz": 990, "sm_clock_max_mhz": 1980}}
    assert observers.explained_slowdown(hot, is_cpu=False, cores=132) == pytest.approx(2.0)
    # an inherited mark explains as much as the figure's own; a deterministic figure reads only inherited ones
    assert observers.explained_slowdown({observers.INHERITED: _host(1.0)}, True, 2, deterministic=True) == 2.0
    assert observers.explained_slowdown(_host(1.0), True, 2, deterministic=True) == 1.0

    limit = observers.FAR_BEYOND * 2.0
    assert observers.would_regress(8.0, _host(1.0), True, 2) == {"factor": 8.0, "explained": 2.0, "limit": limit}
    assert observers.would_regress(limit * 0.99, _host(1.0), True, 2) is None  # may be the neighbour's
    assert observers.would_regress(None, _host(1.0), True, 2) is None  # nothing to compare with
    # a chase whose L2 another process evicted (x2.32 with one other process) stays merely contended
    assert observers.would_regress(2.32, one_other, False, 132) is None
    # how much worse: in the metric's direction, and with samples the interval's end nearest to no change
    assert observers.worse_factor(8.0, 1.0, "lower") == 8.0 and observers.worse_factor(1.0, 8.0, "higher") == 8.0
    assert observers.worse_factor(8.0, 1.0, "higher") == pytest.approx(0.125)  # better is never worse
    assert observers.worse_factor(8.0, 1.0, "lower", (5.0, 11.0)) == 5.0
    assert observers.worse_factor(0.1, 1.0, "higher", (0.05, 0.2)) == pytest.approx(5.0)
    assert observers.worse_factor(8.0, 1.0, "bound") is None and observers.worse_factor(-1.0, 1.0, "lower") is None


# ---- gpuperf compare ---------------------------------------------------------------------------------
def _metric(name: str, value: float, unit: str, better: str, info: dict, samples: int = 0) -> MetricRecord:
    """One metric as a results file stores it, read as the comparison reads it."""
    stats = None
    if samples:
        xs = list(value * (1 + 0.001 * np.sin(np.arange(samples))))
        stats = {"median": value, "mad": 0.001 * value, "min": min(xs), "max": max(xs), "n": samples, "samples": xs}
    return MetricRecord.from_json({"name": name, "test": "t", "value": value, "unit": unit, "better": better,
                                   "info": info, "identity": {}, "stats": stats})


def test_compare_a_derived_figure_inherits_contended_and_a_deterministic_one_is_judged():
    shared = {"tenants": {"contended": 1, "processes": [{"pid": 7, "name": "python3"}]}}
    a = merge("memory.l2.size.bytes", [_metric("memory.l2.size.bytes", 47.5e6, "bytes", "exact", {})])
    b = merge("memory.l2.size.bytes", [_metric("memory.l2.size.bytes", 8.4e6, "bytes", "exact",
                                               observers.inherit(shared))])
    row = engine.judge(a, b, GPU, GPU)
    assert row.noise == "deterministic" and row.verdict == "worse"  # the value moved beyond the band …
    assert not row.gated and not row.fails and "another process the card" in row.reason  # … but was shared
    # the same figure without the inherited mark, beside the test's shared windows only: judged and failing
    b_ambient = merge("memory.l2.size.bytes", [_metric("memory.l2.size.bytes", 8.4e6, "bytes", "exact", shared)])
    assert engine.judge(a, b_ambient, GPU, GPU).fails
    # an ulp count measured on a busy host (and beside another process) is the same bits: judged normally
    ulp_a = merge("accuracy.sin.max_ulp", [_metric("accuracy.sin.max_ulp", 1.0, "ulp", "lower", {})])
    ulp_b = merge("accuracy.sin.max_ulp", [_metric("accuracy.sin.max_ulp", 1.0, "ulp", "lower",
                                                   {**_host(1.5), **shared})])
    row = engine.judge(ulp_a, ulp_b, CPU, CPU)
    assert row.verdict == "same" and row.gated and "contended" not in row.extra
    worse = merge("accuracy.sin.max_ulp", [_metric("accuracy.sin.max_ulp", 3.0, "ulp", "lower", {**_host(1.5), **shared})])
    assert engine.judge(ulp_a, worse, CPU, CPU).fails


def test_compare_a_chase_measured_beside_another_process_is_not_worse():
    """The issue's case: the chase carried its co-tenant into the results, so ``gpuperf compare`` shows the
    +132 % and does not gate it; a side pooling runs is shared where any of its runs was."""
    shared = {"tenants": {"contended": 1, "processes": [{"pid": 7, "name": "python3"}]}}
    name = "memory.chase.16MiB.latency.cycles"
    a = merge(name, [_metric(name, 300.0, "cycles", "lower", {}, samples=40)])
    b = merge(name, [_metric(name, 696.0, "cycles", "lower", shared, samples=40)])
    row = engine.judge(a, b, GPU, GPU)
    assert row.verdict == "worse" and not row.fails and "would_regress" not in row.extra
    pooled = merge(name, [_metric(name, 696.0, "cycles", "lower", shared, samples=40),
                          _metric(name, 690.0, "cycles", "lower", {"tenants": {"contended": 0, "processes": []}},
                                  samples=40)])
    assert observers.shared_metric(pooled.info)
    assert not engine.judge(a, pooled, GPU, GPU).fails
    # far beyond what one other process explains: named in the row
    c = merge(name, [_metric(name, 3000.0, "cycles", "lower", shared, samples=40)])
    row = engine.judge(a, c, GPU, GPU)
    assert not row.fails and row.to_json()["would_regress"]["factor"] == pytest.approx(10.0, rel=0.01)
    assert "would have regressed" in row.reason


# ---- the gate and gpuperf compare on PoCL ----------------------------------------------------------------
SUITE = WORK_HEAD + f'''
import sys
import pytest
sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_power_nvml import FakeNvml
from pytest_gpuperf.devices import nvml
from pytest_gpuperf.timing import observers


def test_chase(gpu_device, gpu_kernel, gpu_measure, gpuperf_record):
    # the stand-in NVML of this test's measurement: another process on the card, or none
    others = [(int(os.environ["OTHER_PID"]), 20 << 30)] if os.environ.get("SHARED") else []
    gpu_device._power = (nvml.PowerSensor(FakeNvml(compute=[[(os.getpid(), 1 << 30)] + others]), object(), "0:1:0"),
                         "NVML")
    kern = gpu_kernel.compile(SRC, "work")
    buf = gpu_kernel.to_device(np.ones(4096, np.float32))
    m = gpu_measure(kern, (4096,), (64,), [buf, np.int32(200)], min_repeats=5, max_repeats=5)
    ms = m.stats.scaled(1e3)
    gpuperf_record("chase.work.ms", ms.median, "ms", better="lower", stats=ms)
    # a size found on the curve: another process evicting the cache makes it read smaller
    size = 8.4e6 if others else 47.5e6
    gpuperf_record("cache.size.bytes", size, "bytes", better="exact", tolerance={{"rel": 0.1}},
                   info=observers.inherit(gpu_device))
    # a count of the outputs, the same bits whoever shared the card
    gpuperf_record("exact.count", float(os.environ.get("COUNT", "3")), "count", better="exact", tolerance={{"abs": 0}})


def test_mean(gpu_device, gpuperf_record, gpuperf_recorded, gpuperf_recorded_info):
    inputs = [n for n in gpuperf_recorded if n.startswith("chase.")]
    # a figure of a later test computed from them (a size over the kernels' footprints, say): measures nothing itself
    gpuperf_record("mean.of.chases.bytes", 2e6 if os.environ.get("SHARED") else 1e6, "bytes", better="exact",
                   tolerance={{"rel": 0.1}}, info=observers.inherit(*(gpuperf_recorded_info[n] for n in inputs)))
'''


def _run(pytester, monkeypatch, *args, **env):
    for k in ("SHARED", "COUNT"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, str(v))
    return pytester.runpytest("--gpuperf-device=opencl:0", f"--gpuperf-baseline-dir={baseline_folder(pytester.path, 'bl')}",
                              "-p", "no:cacheprovider", *args)


@needs_opencl
def test_derived_figures_inherit_contended_in_the_gate_and_in_compare(pytester, monkeypatch, neighbour):
    pytester.makepyfile(SUITE)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    assert _run(pytester, monkeypatch, "--gpuperf-update-baselines").ret == 0
    quiet, shared = pytester.path / "quiet.json", pytester.path / "shared.json"
    assert _run(pytester, monkeypatch, f"--gpuperf-json={quiet}").ret in (0, exits.HOST_TOO_BUSY)
    result = _run(pytester, monkeypatch, f"--gpuperf-json={shared}", SHARED=1, OTHER_PID=neighbour)
    by = {m["name"]: m for m in json.loads(shared.read_text())["metrics"]}
    # the size (8.4 MB against 47.5 MB) and the mean over an earlier test's figures inherit the chase's mark
    assert by["cache.size.bytes"]["verdict"] == "contended", by["cache.size.bytes"]
    assert by["cache.size.bytes"]["info"]["inherited"]["tenants"]["processes"][0]["pid"] == neighbour
    assert by["mean.of.chases.bytes"]["verdict"] == "contended", by["mean.of.chases.bytes"]
    assert by["chase.work.ms"]["verdict"] == "contended"
    # the count ran beside the same windows and is judged on its value
    assert observers.shared_metric(by["exact.count"]["info"]) and by["exact.count"]["verdict"] == "pass"
    assert result.ret == exits.GPU_TOO_BUSY, result.stdout.str()  # three of four figures could not be gated
    assert "REGRESSED" not in result.stdout.str()
    # gpuperf compare of the two runs: nothing worse is gated
    out = pytester.path / "cmp.json"
    cmp = subprocess.run([sys.executable, "-m", "pytest_gpuperf.cli", "compare", str(quiet), str(shared),
                          "--format", "json", "-o", str(out)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert cmp.returncode == 0, cmp.stdout + cmp.stderr
    rows = {r["name"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["cache.size.bytes"]["verdict"] == "worse" and not rows["cache.size.bytes"]["gated"]
    assert not rows["mean.of.chases.bytes"]["fails"]
    # a changed count is a regression whoever shared the card, in the gate as in compare
    changed = pytester.path / "changed.json"
    result = _run(pytester, monkeypatch, f"--gpuperf-json={changed}", SHARED=1, OTHER_PID=neighbour, COUNT=4)
    count = next(m for m in json.loads(changed.read_text())["metrics"] if m["name"] == "exact.count")
    assert count["verdict"] == "regressed"
    result.stdout.fnmatch_lines(["*exact.count*REGRESSED*"])
