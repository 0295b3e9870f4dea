"""The card's own state under one standard load becomes gated figures: a card that sustains a lower clock
under the same work is ``regressed``. The load runs for real on the PoCL device; the board is the
stand-in NVML of ``test_power_nvml`` (a healthy card, and one that slows itself down)."""

from __future__ import annotations

import numpy as np

from pytest_gpuperf import baselines as bl
from pytest_gpuperf.devices import nvml
from pytest_gpuperf.power import sustained
from test_power_nvml import FakeNvml

SRC = "__kernel void spin(__global float* x) { int i = get_global_id(0); float a = x[i]; " \
      "for (int k = 0; k < 64; ++k) a = a * 0.999f + 0.001f; x[i] = a; }"


class ThrottlingCard(FakeNvml):
    """A card under a thermal slowdown: a lower SM clock, the hardware-thermal reason in every reading."""

    def nvmlDeviceGetClockInfo(self, h, which):
        return 1410 if which == 1 else 2619

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, h):
        return 0x40  # hw_thermal_slowdown


def _load(cl_device, nv):
    k = cl_device.compile(SRC, "spin")
    buf = cl_device.to_device(np.ones(4096, np.float32))
    sensor = nvml.PowerSensor(nv, object(), "0:1:0")
    return sustained.under_load(cl_device, sensor, lambda: cl_device.launch(k, (4096,), (64,), [buf]),
                                warmup_s=0.05, span_s=0.2)


def test_a_healthy_card_sustains_its_clock_and_reports_no_slowdown(cl_device):
    s = _load(cl_device, FakeNvml())
    assert s.readings >= sustained.MIN_READINGS and set(s.sm_clock_mhz) == {1980.0} and s.slowed_share == 0.0 and s.slowdowns == {}
    names = [m["name"] for m in sustained.records("fma_fp32", s)]
    assert names == ["power.sustained.fma_fp32.sm_clock_mhz", "power.sustained.fma_fp32.watts",
                     "power.sustained.fma_fp32.slowed_share"]


def test_a_card_that_now_throttles_under_the_same_load_is_regressed(cl_device):
    good = {m["name"]: m for m in sustained.records("fma_fp32", _load(cl_device, FakeNvml()))}
    slow_load = _load(cl_device, ThrottlingCard())
    slow = {m["name"]: m for m in sustained.records("fma_fp32", slow_load)}
    assert slow_load.slowdowns == {"hw_thermal_slowdown": slow_load.readings} and slow_load.slowed_share == 1.0
    for name in ("power.sustained.fma_fp32.sm_clock_mhz", "power.sustained.fma_fp32.slowed_share"):
        g, s = good[name], slow[name]
        entry = bl.make_entry(value=g["value"], worst=g["value"], unit=g["unit"], better=g["better"], test="t",
                              info={}, tolerance=g.get("tolerance"), spread=0.0, k=6.0, floor_rel=0.03, provenance={},
                              samples=None if g.get("stats") is None else g["stats"].samples)
        samples = None if s.get("stats") is None else s["stats"].samples
        assert bl.compare(s["value"], s["better"], entry, samples=samples).verdict == "regressed", name
