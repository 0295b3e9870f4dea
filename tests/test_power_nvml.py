"""The NVML power sensor, the energy observer and the ``throttled`` verdict — without a GPU.

This machine has no NVML library: opening a sensor must fail softly with the reason (the PoCL / no-NVML
skip path). Readings are :class:`Reading` lists written here by hand (arithmetic checks, not
measurements); the verdict goes through the real plugin on the PoCL device."""

from __future__ import annotations

import json
import threading
import time
from types import SimpleNamespace

import pytest

from pytest_gpuperf.devices import discover, nvml
from pytest_gpuperf.devices.nvml import Reading, decode_throttle, is_slowdown, open_sensor, throttle_bits
from pytest_gpuperf.timing.observers import throttled_verdict
from pytest_gpuperf.timing.observers import PowerWatch, power_window, summarize_power
from suite_support import baseline_folder


def test_throttle_bits_follow_pynvml_constants_where_they_exist():
    pynvml = pytest.importorskip("pynvml")
    bits = throttle_bits(pynvml)
    assert bits["sw_power_cap"] == pynvml.nvmlClocksThrottleReasonSwPowerCap == 0x4
    assert bits["hw_thermal_slowdown"] == pynvml.nvmlClocksThrottleReasonHwThermalSlowdown
    assert bits["gpu_idle"] == 0x1


def test_missing_constants_fall_back_to_the_header_values():
    class Old:  # a pynvml that predates the newer reasons
        nvmlClocksThrottleReasonGpuIdle = 1

    bits = throttle_bits(Old)
    assert bits["gpu_idle"] == 1 and bits["hw_power_brake_slowdown"] == 0x80
    assert "user_defined_clocks" not in bits  # neither pynvml nor the fallback table knows it: decodes as unknown


def test_decode_names_every_bit_and_flags_unknown_ones():
    assert decode_throttle(0) == []
    assert sorted(decode_throttle(0x1 | 0x4)) == ["gpu_idle", "sw_power_cap"]
    assert decode_throttle(1 << 30, {"gpu_idle": 1}) == ["unknown_0x40000000"]


@pytest.mark.parametrize("reasons,slow", [([], False), (["gpu_idle"], False),
                                          (["applications_clocks_setting", "sync_boost"], False),
                                          (["sw_power_cap"], True), (["hw_thermal_slowdown"], True),
                                          (["sw_thermal_slowdown"], True), (["hw_slowdown"], True),
                                          (["hw_power_brake_slowdown"], True), (["unknown_0x800"], False)])
def test_which_reasons_are_real_slowdowns(reasons, slow):
    assert is_slowdown(reasons) is slow


def test_no_pci_bus_id_means_no_sensor_with_the_reason():
    sensor, why = open_sensor(None)
    assert sensor is None and "PCI bus id" in why


def test_without_the_nvml_library_opening_fails_softly():
    """CI and this machine: pynvml may be installed (then the NVML library is missing) or not at all."""
    try:
        import pynvml  # noqa: F401
        expected = "NVML"  # e.g. "NVML unavailable: NVMLError_LibraryNotFound: NVML Shared Library Not Found"
    except ImportError:
        expected = "nvidia-ml-py is not installed"
    sensor, why = open_sensor("00000000:01:00.0")
    assert sensor is None and expected in why


def test_pocl_device_has_no_sensor_with_the_reason(cl_device):
    sensor, why = cl_device.power_sensor()
    assert sensor is None and "CPU device" in why
    assert cl_device.power_sensor() == (sensor, why)  # opened once


class FakeNvml:
    """A scripted NVML: one more mJ per read; a read can be made to fail.

    ``compute`` / ``graphics``: the processes listed on the device, one list of ``(pid, used bytes)`` per
    listing call in turn (the last repeats; bytes None: NVML does not say); ``utilization``: the device's
    (gpu %, memory %)."""

    NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU = 1, 2, 0

    def __init__(self, masks=(0,), compute=((),), graphics=((),), utilization=(97, 41)):
        self.energy = 1000
        self.masks = list(masks)
        self.fail = False
        self.reads = 0
        self.compute = [list(x) for x in compute]
        self.graphics = [list(x) for x in graphics]
        self.utilization = utilization
        self.listings = {"compute": 0, "graphics": 0}

    def _listed(self, kind):
        script = getattr(self, kind)
        i = self.listings[kind]
        self.listings[kind] += 1
        return [SimpleNamespace(pid=pid, usedGpuMemory=used) for pid, used in script[min(i, len(script) - 1)]]

    def nvmlDeviceGetComputeRunningProcesses_v3(self, h):
        return self._listed("compute")

    def nvmlDeviceGetGraphicsRunningProcesses(self, h):  # a pynvml whose graphics call has no v3 name
        return self._listed("graphics")

    def nvmlDeviceGetUtilizationRates(self, h):
        return SimpleNamespace(gpu=self.utilization[0], memory=self.utilization[1])

    def nvmlDeviceGetTotalEnergyConsumption(self, h):
        if self.fail:
            raise RuntimeError("NVMLError_GpuIsLost")
        self.energy += 1
        self.reads += 1
        return self.energy

    def nvmlDeviceGetPowerUsage(self, h):
        return 300_000

    def nvmlDeviceGetClockInfo(self, h, which):
        return 1980 if which == 1 else 2619

    def nvmlDeviceGetTemperature(self, h, which):
        return 55

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, h):
        return self.masks[min(self.reads, len(self.masks)) - 1]


def test_a_failed_reading_is_none_with_the_error_never_an_exception():
    nv = FakeNvml()
    sensor = nvml.PowerSensor(nv, object(), "0:1:0")
    assert sensor.read().power_w == 300.0
    nv.fail = True
    assert sensor.read() is None and "GpuIsLost" in sensor.last_error


def test_power_watch_samples_in_the_background_and_stops():
    nv = FakeNvml(masks=[0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0])  # a thermal slowdown seen only mid-window
    sensor = nvml.PowerSensor(nv, object(), "0:1:0")
    watch = PowerWatch(sensor, period_s=0.005)
    before = threading.active_count()
    watch.start()
    time.sleep(0.08)
    w = watch.stop()
    assert threading.active_count() == before  # the sampler thread is gone
    assert w is not None and w["samples"] >= 4
    assert w["throttled"] == 1 and "hw_thermal_slowdown" in w["throttle_reasons"]
    assert w["energy_j"] == pytest.approx((w["samples"] - 1) / 1000.0)


def _r(t, mj, sm=1980.0, mask=0, temp=60.0):
    return Reading(t, mj, 400.0, sm, 2619.0, temp, mask)


def test_power_window_arithmetic():
    w = power_window([_r(0.0, 10_000), _r(0.5, 10_100, sm=1755, mask=0x1), _r(2.0, 10_800, temp=71)],
                     decode_throttle)
    assert w["energy_j"] == 0.8 and w["wall_s"] == 2.0 and w["avg_power_w"] == 0.4
    assert (w["sm_clock_min_mhz"], w["sm_clock_max_mhz"], w["temperature_max_c"]) == (1755, 1980, 71)
    assert w["throttle_reasons"] == ["gpu_idle"] and w["throttled"] == 0  # idle is not a slowdown
    assert power_window([_r(0.0, 1.0)], decode_throttle) is None


def test_summary_of_a_tests_windows():
    a = power_window([_r(0.0, 0), _r(1.0, 300_000)], decode_throttle)
    b = power_window([_r(5.0, 300_000), _r(6.0, 700_000, mask=0x4)], decode_throttle)
    s = summarize_power([a, b])
    assert s["energy_j"] == 700.0 and s["wall_s"] == 2.0 and s["avg_power_w"] == 350.0
    assert s["throttled"] is True and s["throttled_windows"] == 1 and s["throttle_reasons"] == ["sw_power_cap"]


@pytest.mark.parametrize("verdict,throttled,out", [("regressed", True, "throttled"), ("pass", True, "throttled"),
                                                   ("improved", True, "throttled"), ("new", True, "new"),
                                                   ("incomparable", True, "incomparable"),
                                                   ("regressed", False, "regressed")])
def test_throttled_verdict(verdict, throttled, out):
    assert throttled_verdict(verdict, {"power": {"throttled": throttled}}) == out
    assert throttled_verdict(verdict, {}) == verdict


# ---- the verdict through the plugin, on the real PoCL device ---------------------------------------
INV = discover()
THROTTLE = '''
import os
def test_x(gpu_device, gpuperf_record):
    power = {"throttled": bool(os.environ.get("THROTTLED")), "throttle_reasons": ["hw_thermal_slowdown"]}
    gpuperf_record("x.energy", float(os.environ.get("VALUE", "1.0")), "J/op", better="lower",
                   tolerance={"rel": 0.01}, info={"power": power})
'''


@pytest.mark.skipif(not any(d.backend == "opencl" for d in INV.devices), reason="no OpenCL device")
def test_a_throttled_metric_is_not_gated(pytester, monkeypatch):
    pytester.makepyfile(THROTTLE)
    from pytest_gpuperf.cli import main as gpuperf

    base = ["--gpuperf-device=opencl:0", f"--gpuperf-baseline-dir={baseline_folder(pytester.path, 'bl')}"]
    # energy is a repeated figure (baselines.noise): gated against a baseline of three runs
    runs = [str(pytester.path / f"b{i}.json") for i in range(3)]
    for path in runs:
        pytester.runpytest(*base, f"--gpuperf-json={path}").assert_outcomes(passed=1)
    assert gpuperf(["baseline", "from-results", *runs, "--dir", str(pytester.path / "bl")]) == 0
    monkeypatch.setenv("VALUE", "2.0")
    monkeypatch.setenv("THROTTLED", "1")
    out = pytester.path / "r.json"
    result = pytester.runpytest(*base, f"--gpuperf-json={out}")
    result.assert_outcomes(passed=1)  # twice the energy, but the card throttled: not a regression
    doc = json.loads(out.read_text())
    m = next(m for m in doc["metrics"] if m["name"] == "x.energy")
    assert m["verdict"] == "throttled" and m["info"]["power"]["throttled"] is True
    monkeypatch.delenv("THROTTLED")
    pytester.runpytest(*base).assert_outcomes(failed=1)  # the same value unthrottled regresses


def test_compare_shows_a_throttled_row_but_does_not_gate_it():
    from compare_support import metric, results, side_of
    from pytest_gpuperf.compare import engine

    def rep(info_b):  # a sampled figure (raw repeats on both sides), so the change is judged at all
        a = side_of("A", [results([metric("p.w", 100.0, unit="W", samples=[99, 100, 101] * 6)])], ["a.json"])
        b = side_of("B", [results([metric("p.w", 200.0, unit="W", info=info_b,
                                                 samples=[199, 200, 201] * 6)])], ["b.json"])
        (row,) = engine.compare_sides(a, b, engine.Options()).rows
        return row

    row = rep({"power": {"throttled": True}})
    assert row.verdict == "worse" and not row.gated and "throttled while B" in row.reason
    assert rep({}).gated  # the same change unthrottled is gated


def test_the_older_reasons_call_is_used_when_the_newer_one_fails():
    class Mixed(FakeNvml):
        def nvmlDeviceGetCurrentClocksEventReasons(self, h):
            raise RuntimeError("NVMLError_FunctionNotFound")

    sensor = nvml.PowerSensor(Mixed(masks=[0x20]), object(), "0:1:0")
    assert sensor.reasons(sensor.read().throttle_mask) == ["sw_thermal_slowdown"]


def test_every_measurement_window_is_watched_when_the_device_has_a_sensor(cl_device):
    """timing.measure on the real PoCL device with a stand-in sensor (FakeNvml: one mJ per read): each
    window leaves a power reading in ``device.power_observations``."""
    import numpy as np

    from pytest_gpuperf.timing.measure import MeasureConfig, measure

    k = cl_device.compile("__kernel void k(__global float* x) { x[get_global_id(0)] += 1.0f; }", "k")
    buf = cl_device.to_device(np.zeros(64, np.float32))
    saved = cl_device._power
    cl_device._power = (nvml.PowerSensor(FakeNvml(masks=[0x4]), object(), "0:1:0"), "NVML")
    cl_device.power_observations.clear()
    try:
        measure(cl_device, lambda: cl_device.launch(k, (64,), (64,), [buf]),
                MeasureConfig(warmup=1, min_repeats=3, max_repeats=5, budget_s=0.1))
    finally:
        cl_device._power = saved
    (w,) = cl_device.power_observations[-1:]
    assert w["samples"] >= 2 and w["energy_j"] > 0 and w["throttled"] == 1
    assert summarize_power(cl_device.power_observations)["throttle_reasons"] == ["sw_power_cap"]
    cl_device.power_observations.clear()
