"""Other processes on the card, and a card that throttles, get the verdict they deserve — without a GPU.

NVML is the stand-in of ``test_power_nvml.FakeNvml`` (its process lists and throttle masks are written
here); the measurement is real, on the PoCL device, as in
``test_every_measurement_window_is_watched_when_the_device_has_a_sensor``. The other process is a real
child (``sleep``), so its name comes from ``/proc/<pid>/comm`` as on a GPU host."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from pytest_gpuperf import exits
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


@pytest.fixture
def neighbour():
    """A real other process of this machine, standing for another tenant of the card."""
    proc = subprocess.Popen(["sleep", "60"])
    comm = Path(f"/proc/{proc.pid}/comm")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and comm.read_text().strip() != "sleep":  # until the exec has happened
        time.sleep(0.01)
    yield proc.pid
    proc.kill()
    proc.wait()


def _sensor(nv: FakeNvml) -> nvml.PowerSensor:
    return nvml.PowerSensor(nv, object(), "0:1:0")


# ---- one reading -------------------------------------------------------------------------------
def test_our_own_pid_alone_is_not_a_cotenant():
    """(b) This process listed — as a compute process, and as a graphics one too — is no one else."""
    t = _sensor(FakeNvml(compute=[[(ME, 2 * GIB)]], graphics=[[(ME, None)]])).tenants()
    assert t is not None and t.others == () and t.listed == 1 and not t.shared and not t.foreign_pids
    assert (t.utilization_gpu_pct, t.utilization_memory_pct) == (97.0, 41.0)  # recorded, never judged


def test_another_pid_is_a_cotenant_named_with_its_memory(neighbour):
    t = _sensor(FakeNvml(compute=[[(ME, GIB), (neighbour, 20 * GIB)]], graphics=[[(neighbour, 20 * GIB)]])).tenants()
    assert t.shared and t.listed == 2
    assert t.others == (nvml.Process(neighbour, "sleep", 20480.0),)
    assert t.others[0].describe() == f"pid {neighbour} (sleep, 20480 MiB)"


def test_pids_of_another_namespace_count_one_of_them_as_this_process():
    """A driver that reports an outer PID namespace's pids lists none of ours: one listed process is this
    run, so only a second one shares the card (else every metric in such a container would read shared)."""
    alone = _sensor(FakeNvml(compute=[[(4_000_001, GIB)]])).tenants()
    assert alone.foreign_pids and not alone.shared
    two = _sensor(FakeNvml(compute=[[(4_000_001, GIB), (4_000_002, GIB)]])).tenants()
    assert two.foreign_pids and two.shared


def test_a_pynvml_without_the_v3_call_uses_the_older_one_and_no_listing_is_unknown():
    class Older(FakeNvml):
        def nvmlDeviceGetComputeRunningProcesses_v3(self, h):
            raise RuntimeError("NVMLError_FunctionNotFound")

        def nvmlDeviceGetComputeRunningProcesses(self, h):
            return self._listed("compute")

    assert _sensor(Older(compute=[[(ME, GIB), (ME + 10_000_000, GIB)]])).tenants().shared

    class Refusing(Older):
        def nvmlDeviceGetComputeRunningProcesses(self, h):
            raise RuntimeError("NVMLError_NoPermission")

        def nvmlDeviceGetGraphicsRunningProcesses(self, h):
            raise RuntimeError("NVMLError_NoPermission")

    sensor = _sensor(Refusing())
    assert sensor.tenants() is None and "NoPermission" in sensor.last_error


# ---- the measurement: a shared window is taken again --------------------------------------------
def _measure_with(device, nv: FakeNvml) -> None:
    k = device.compile("__kernel void k(__global float* x) { x[get_global_id(0)] += 1.0f; }", "k")
    buf = device.to_device(np.zeros(64, np.float32))
    saved = device._power
    device._power = (_sensor(nv), "NVML")
    for seen in (device.observations, device.power_observations, device.tenant_observations):
        seen.clear()
    try:
        measure(device, lambda: device.launch(k, (64,), (64,), [buf]),
                MeasureConfig(warmup=1, min_repeats=3, max_repeats=5, budget_s=0.1))
    finally:
        device._power = saved


def test_a_window_shared_with_another_process_is_remeasured_and_still_shared_is_contended(cl_device, neighbour):
    """(a) Another pid on the device throughout: the window is taken RETRIES more times, the kept one is
    marked contended, and the metric's ``info["tenants"]`` names the process."""
    _measure_with(cl_device, FakeNvml(compute=[[(ME, GIB), (neighbour, 20 * GIB)]]))
    seen = cl_device.tenant_observations
    assert len(seen) == observers.RETRIES + 1, seen
    assert [w["remeasured"] for w in seen] == [0] + [1] * observers.RETRIES
    assert [w["contended"] for w in seen] == [0] * observers.RETRIES + [1]  # only the kept window
    assert len(cl_device.power_observations) == 1  # the kept window's board readings only
    info = {"tenants": observers.summarize_tenants(seen)}
    assert info["tenants"]["processes"] == [{"pid": neighbour, "name": "sleep", "used_memory_mib": 20480.0}]
    assert observers.measured_verdict("regressed", info, is_cpu=False) == "contended"
    assert observers.measured_verdict("pass", info, is_cpu=False) == "contended"
    assert observers.measured_verdict("new", info, is_cpu=False) == "new"  # nothing was gated


def _host_busy_retakes(device) -> int:
    """Windows taken again because the CPU device's host was busy (not because of the card): on a loaded
    host (other CI jobs beside this one) PoCL's windows are re-measured for that reason too."""
    host = device.observations
    tenants = device.tenant_observations
    return sum(1 for i in range(1, len(tenants)) if host[i - 1]["busy"] and not tenants[i - 1]["shared"])


def test_a_tenant_that_leaves_costs_one_remeasurement_and_the_figure_is_gated(cl_device, neighbour):
    """Shared at both readings of the first window, gone by the second: the second window is kept (a
    further window only where the CPU device's host was busy)."""
    shared = [(ME, GIB), (neighbour, GIB)]
    _measure_with(cl_device, FakeNvml(compute=[shared, shared, [(ME, GIB)]]))
    seen = cl_device.tenant_observations
    retakes = _host_busy_retakes(cl_device)
    assert [(w["shared"], w["remeasured"], w["contended"]) for w in seen] == [(1, 0, 0)] + [(0, 1, 0)] * (1 + retakes)
    info = {"tenants": observers.summarize_tenants(seen)}
    assert observers.measured_verdict("regressed", info, is_cpu=False) == "regressed"


def test_our_own_pid_alone_is_measured_once(cl_device):
    """(b) through the measurement: this process listed alone is not a reason to measure again (only a busy
    host is, on a CPU device)."""
    _measure_with(cl_device, FakeNvml(compute=[[(ME, GIB)]]))
    seen = cl_device.tenant_observations
    assert len(seen) == 1 + _host_busy_retakes(cl_device)
    assert [(w["shared"], w["contended"], w["processes"]) for w in seen] == [(0, 0, [])] * len(seen)


def test_a_shared_card_explains_a_throttle():
    """Another process's work heats the card and draws its power: a shared and throttled figure reads
    ``contended`` (it counts towards GPU TOO BUSY, not towards the throttle's limit)."""
    info = {"tenants": {"contended": 1}, "power": {"throttled": True}}
    assert observers.measured_verdict("regressed", info, is_cpu=False) == "contended"
    assert observers.measured_verdict("regressed", {"power": {"throttled": True}}, is_cpu=False) == "throttled"


# ---- the run: more than a tenth of a device's metrics ---------------------------------------------
SUITE = WORK_HEAD + f'''
import sys
import pytest
sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_power_nvml import FakeNvml
from pytest_gpuperf.devices import nvml


@pytest.mark.parametrize("k", range(int(os.environ.get("QUIET", "1"))))
def test_quiet(gpuperf_record, k):
    gpuperf_record(f"quiet.{{k}}.count", 1.0, "configs", better="exact", tolerance={{"abs": 0}})


@pytest.mark.parametrize("k", range(int(os.environ.get("TIMED", "1"))))
def test_work(gpu_device, gpu_kernel, gpu_measure, gpuperf_record, k):
    # the stand-in NVML of this test's measurement: another process on the card, a throttle, or neither
    shared = k < int(os.environ.get("SHARED", "0")) and str(k) != os.environ.get("QUIET_AT")
    others = [(int(os.environ["OTHER_PID"]), 20 << 30)] if shared else []
    mask = 0x40 if k < int(os.environ.get("THROTTLED", "0")) else 0  # hw_thermal_slowdown
    nv = FakeNvml(masks=[mask], compute=[[(os.getpid(), 1 << 30)] + others])
    gpu_device._power = (nvml.PowerSensor(nv, object(), "0:1:0"), "NVML")
    kern = gpu_kernel.compile(SRC, "work")
    buf = gpu_kernel.to_device(np.ones(4096, np.float32))
    m = gpu_measure(kern, (4096,), (64,), [buf, np.int32(200)], min_repeats=5, max_repeats=5)
    ms = m.stats.scaled(1e3)
    gpuperf_record(f"kernel.work.{{k}}.ms", ms.median, "ms", better="lower", stats=ms)
'''


def _run(pytester, monkeypatch, *args, **env):
    for k, v in env.items():
        monkeypatch.setenv(k, str(v))
    return pytester.runpytest("--gpuperf-device=opencl:0",
                              f"--gpuperf-baseline-dir={baseline_folder(pytester.path, 'bl')}",
                              "-p", "no:cacheprovider", *args)


def _baseline(pytester, monkeypatch, timed: int, quiet: int) -> None:
    pytester.makepyfile(SUITE)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(pytester.path / "step-summary.md"))
    made = _run(pytester, monkeypatch, "--gpuperf-update-baselines", TIMED=timed, QUIET=quiet, SHARED=0, THROTTLED=0)
    assert made.ret == 0, made.stdout.str()


@needs_opencl
def test_a_run_with_more_than_a_tenth_shared_is_gpu_too_busy(pytester, monkeypatch, neighbour):
    """(a, c) Two of ten metrics measured with another process on the card: each reads ``contended``
    naming it, and the run fails with its own status, a line and a GitHub error."""
    _baseline(pytester, monkeypatch, timed=2, quiet=8)
    out = pytester.path / "r.json"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = _run(pytester, monkeypatch, f"--gpuperf-json={out}", TIMED=2, QUIET=8, SHARED=2, OTHER_PID=neighbour)
    assert result.ret == exits.GPU_TOO_BUSY, result.stdout.str()
    work = next(m for m in json.loads(out.read_text())["metrics"] if m["name"] == "kernel.work.0.ms")
    assert work["verdict"] == "contended"
    assert work["info"]["tenants"]["remeasured"] == observers.RETRIES and work["info"]["tenants"]["contended"] == 1
    assert work["info"]["tenants"]["processes"] == [{"pid": neighbour, "name": "sleep", "used_memory_mib": 20480.0}]
    result.stdout.fnmatch_lines([f"*GPU TOO BUSY TO GATE (exit {exits.GPU_TOO_BUSY}): opencl:0: 2 of 10 metrics*"
                                 f"pid {neighbour} (sleep, 20480 MiB)*"])
    result.stdout.fnmatch_lines(["::error title=gpuperf%3A GPU TOO BUSY TO GATE::opencl:0: 2 of 10 metrics*"])


@needs_opencl
def test_a_card_held_through_several_tests_stops_the_run_early(pytester, monkeypatch, neighbour):
    """Another process through every measurement of ``BUSY_STOP_TESTS`` tests in a row: the run stops
    there as GPU TOO BUSY TO GATE (the later tests do not run), and the results say why it stopped."""
    timed = observers.BUSY_STOP_TESTS + 3
    _baseline(pytester, monkeypatch, timed=timed, quiet=1)
    out = pytester.path / "r.json"
    result = _run(pytester, monkeypatch, f"--gpuperf-json={out}", TIMED=timed, QUIET=1, SHARED=timed,
                  OTHER_PID=neighbour)
    assert result.ret == exits.GPU_TOO_BUSY, result.stdout.str()
    doc = json.loads(out.read_text())
    ran = [t["test"] for t in doc["tests"] if t["test"].startswith("test_") and "test_work" in t["test"]]
    assert len(ran) == observers.BUSY_STOP_TESTS
    assert "stopped early" in doc["run"]["stopped"] and f"pid {neighbour} (sleep" in doc["run"]["stopped"]
    result.stdout.fnmatch_lines([f"*GPU TOO BUSY TO GATE (exit {exits.GPU_TOO_BUSY}): opencl:0: another process held "
                                 f"the card through every measurement of the last {observers.BUSY_STOP_TESTS} tests*"])
    finished = _run(pytester, monkeypatch, "--gpuperf-when-busy=finish", f"--gpuperf-json={out}", TIMED=timed,
                    QUIET=1, SHARED=timed, OTHER_PID=neighbour)
    assert finished.ret == exits.GPU_TOO_BUSY, finished.stdout.str()
    assert sum("test_work" in t["test"] for t in json.loads(out.read_text())["tests"]) == timed


@needs_opencl
def test_a_tenant_that_leaves_resets_the_count(pytester, monkeypatch, neighbour):
    """Shared tests separated by a quiet one never make the streak: the run finishes every test."""
    _baseline(pytester, monkeypatch, timed=8, quiet=1)
    monkeypatch.setenv("QUIET_AT", "4")
    out = pytester.path / "r.json"
    result = _run(pytester, monkeypatch, f"--gpuperf-json={out}", TIMED=8, QUIET=1, SHARED=8, OTHER_PID=neighbour)
    assert sum("test_work" in t["test"] for t in json.loads(out.read_text())["tests"]) == 8, result.stdout.str()
    assert "stopped" not in json.loads(out.read_text())["run"]


@needs_opencl
def test_a_few_shared_metrics_leave_the_run_green_and_say_so(pytester, monkeypatch, neighbour):
    """(c) One of eleven metrics shared: under a tenth, so the run gates the rest and names the process."""
    _baseline(pytester, monkeypatch, timed=1, quiet=10)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = _run(pytester, monkeypatch, TIMED=1, QUIET=10, SHARED=1, OTHER_PID=neighbour)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*kernel.work.0.ms*contended*",
                                 f"*GPU SHARED: 1 metric(s) of opencl:0 *pid {neighbour} (sleep, 20480 MiB)*"])
    assert "TOO BUSY" not in result.stdout.str() and "::error" not in result.stdout.str()


@needs_opencl
def test_a_run_with_more_than_a_tenth_throttled_fails_naming_the_reasons(pytester, monkeypatch):
    """(d) Two of ten metrics measured while the card slowed itself down: the run cannot gate the card."""
    _baseline(pytester, monkeypatch, timed=2, quiet=8)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = _run(pytester, monkeypatch, TIMED=2, QUIET=8, THROTTLED=2)
    assert result.ret == exits.THROTTLED, result.stdout.str()
    result.stdout.fnmatch_lines(["*kernel.work.0.ms*throttled*",
                                 f"*CARD THROTTLED TOO OFTEN TO GATE (exit {exits.THROTTLED}): opencl:0: 2 of 10 "
                                 "metrics*hw_thermal_slowdown (2 metrics)*"])
    result.stdout.fnmatch_lines(["::error title=gpuperf%3A CARD THROTTLED TOO OFTEN TO GATE::opencl:0: 2 of 10*"
                                 "hw_thermal_slowdown*"])


@needs_opencl
def test_a_few_throttled_metrics_leave_the_run_green_and_say_so(pytester, monkeypatch):
    """(d) One of eleven metrics throttled: under a tenth; the summary names the reason."""
    _baseline(pytester, monkeypatch, timed=1, quiet=10)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = _run(pytester, monkeypatch, TIMED=1, QUIET=10, THROTTLED=1)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*kernel.work.0.ms*throttled*",
                                 "*CARD THROTTLED: 1 metric(s) of opencl:0 *hw_thermal_slowdown*kernel.work.0.ms*"])
    assert "TOO OFTEN" not in result.stdout.str() and "::error" not in result.stdout.str()


@needs_opencl
def test_gated_against_another_run_a_shared_card_reads_contended_too(pytester, monkeypatch, neighbour):
    """``--gpuperf-compare``: the reference run replaces the baseline, and a figure measured on a shared
    card is still not judged."""
    _baseline(pytester, monkeypatch, timed=1, quiet=1)
    ref = pytester.path / "ref.json"
    # the reference only has to be written: on a loaded host its one timing is contended (exit 9)
    assert _run(pytester, monkeypatch, f"--gpuperf-json={ref}", TIMED=1, QUIET=1).ret in (0, exits.HOST_TOO_BUSY)
    out = pytester.path / "r.json"
    _run(pytester, monkeypatch, f"--gpuperf-compare={ref}", f"--gpuperf-json={out}", TIMED=1, QUIET=1, SHARED=1,
         OTHER_PID=neighbour)
    work = next(m for m in json.loads(out.read_text())["metrics"] if m["name"] == "kernel.work.0.ms")
    assert work["verdict"] == "contended", work


@needs_opencl
def test_a_card_both_shared_and_throttled_too_often_reads_gpu_too_busy(pytester, monkeypatch, neighbour):
    """Two of ten metrics on a shared card, two more throttled: both limits are passed, and the shared card's
    status wins (another process's work can make the card throttle; the throttle cannot explain the process)."""
    _baseline(pytester, monkeypatch, timed=4, quiet=6)
    result = _run(pytester, monkeypatch, TIMED=4, QUIET=6, SHARED=2, THROTTLED=4, OTHER_PID=neighbour)
    assert result.ret == exits.GPU_TOO_BUSY, result.stdout.str()
    out = result.stdout.str()
    assert "GPU TOO BUSY TO GATE" in out and "CARD THROTTLED TOO OFTEN TO GATE" in out
