"""Steady-state energy per launch (timing/energy.py) on hand-written readings and a simulated counter.

The counter below is a simulation of NVML's behaviour (it advances in steps, at a fixed period), used
to check the loop's mechanics — when it stops, what it divides by — never presented as a measurement."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from pytest_gpuperf.util import jsonio

from pytest_gpuperf.devices.nvml import Reading, decode_throttle
from pytest_gpuperf.timing.energy import K_STEPS, counter_resolution, energy_of, steady_state_energy


def _r(t, mj, mask=0, sm=1980.0):
    return Reading(t, mj, 500.0, sm, 2619.0, 60.0, mask)


def test_resolution_is_the_median_jump_and_period():
    rs = [_r(0.00, 0), _r(0.01, 0), _r(0.02, 1000), _r(0.03, 1000), _r(0.04, 2000), _r(0.06, 3000)]
    res = counter_resolution(rs)
    assert res.step_j == 1.0 and res.jumps == 3
    assert res.period_s == pytest.approx(0.02)
    assert counter_resolution(rs[:3]) is None  # one jump says nothing about the step


def test_energy_of_a_span():
    rs = [_r(0.0, 0)] + [_r(0.1 * k, 1000.0 * k, mask=0x4 if k == 3 else 0) for k in range(1, 11)]
    e = energy_of(rs, launches=2000, ops_per_launch=1e6, reasons=decode_throttle)
    assert e.energy_j == 10.0 and e.span_s == pytest.approx(1.0)
    assert e.joules_per_launch == pytest.approx(0.005) and e.joules_per_op == pytest.approx(5e-9)
    assert e.watts == pytest.approx(10.0)
    assert e.steps == pytest.approx(10.0) and e.enough == (10 >= K_STEPS)
    assert e.throttled and e.throttle_reasons == ["sw_power_cap"]
    # readings 100 ms apart: either end may be seen up to 100 ms late, over a 1 s span, plus 1 mJ in 10 J
    assert e.info()["error_bound_rel"] == pytest.approx(0.2 + 1e-4)


def test_dense_readings_bound_the_error_by_their_gaps():
    """Readings every 5 ms, counter updates every 100 ms: the ends are seen ≤ 5 ms late, so the bound
    over 20 updates is (5 + 5) ms / 2 s + 1 mJ / delta, not the 2/K of unaligned ends."""
    rs = [_r(0.005 * k, 1000.0 * ((0.005 * k + 1e-9) // 0.1)) for k in range(0, 601)]
    # a span as the loop makes it: from the first reading showing an update to the one showing the 20th after
    first = next(k for k in range(1, len(rs)) if rs[k].energy_mj != rs[k - 1].energy_mj)
    last = next(k for k in range(first, len(rs)) if rs[k].energy_mj - rs[first].energy_mj >= 20000.0)
    e = energy_of(rs[first:last + 1], launches=100, ops_per_launch=1.0)
    assert e.info()["error_bound_rel"] < 0.011
    # the saved samples (what a results file keeps) give back the same bound, drift and power
    again = energy_of([Reading(**s) for s in e.samples()], launches=100, ops_per_launch=1.0)
    assert len(e.samples()) < len(e.readings)
    assert (again.error_bound_rel, again.drift_rel, again.watts) == (e.error_bound_rel, e.drift_rel, e.watts)
    assert e.watts == pytest.approx(10.0, rel=0.011)
    assert e.drift_rel == pytest.approx(0.0, abs=0.01)  # constant power: no drift


def test_saved_h100_spans_re_derive_and_their_windows_agree():
    """The H100 run's saved NVML samples give back its figures, and 20-update windows of one span agree
    within a few % (the kernel's own power noise, which K_STEPS = 20 leaves in a metric)."""
    path = Path(__file__).resolve().parents[1] / "results/nvidia-h100-80gb-hbm3/default-4-cuda.json.xz"
    doc = jsonio.read_json(path)
    spans = [m for m in doc["metrics"] if m["name"].endswith("joules_per_op") and m["info"].get("nvml_samples")]
    assert len(spans) >= 10
    for m in spans:
        rs = [Reading(**s) for s in m["info"]["nvml_samples"]]
        e = energy_of(rs, m["info"]["power"]["launches"], m["info"]["ops_per_launch"])
        assert e.watts == pytest.approx(m["info"]["power"]["watts"], rel=1e-3), m["name"]
        ticks = [r for a, r in zip(rs, rs[1:]) if r.energy_mj != a.energy_mj]
        windows = [(b.energy_mj - a.energy_mj) / 1000 / (b.t - a.t) for a, b in zip(ticks[::20], ticks[20::20])]
        assert len(windows) >= 3 and (max(windows) - min(windows)) / e.watts < 0.05, (m["name"], windows)


def test_a_span_shorter_than_one_update_is_refused():
    with pytest.raises(ValueError, match="did not advance"):
        energy_of([_r(0.0, 5.0), _r(0.001, 5.0)], 10, 1.0)
    with pytest.raises(ValueError):
        energy_of([_r(0.0, 5.0)], 10, 1.0)


class SimCounter:
    """Energy counter that advances by ``watts × period`` every ``period`` seconds of real time."""

    def __init__(self, watts=250.0, period=0.01):
        self.t0 = time.perf_counter()
        self.watts, self.period = watts, period
        self.last_error = None

    def read(self):
        t = time.perf_counter()
        updates = int((t - self.t0) / self.period)
        return Reading(t, updates * self.watts * self.period * 1000.0, self.watts, 1980.0, 2619.0, 50.0, 0)

    def reasons(self, mask):
        return decode_throttle(mask)


class SimDevice:
    def __init__(self):
        self.launches = 0

    def timed(self, run):
        run()
        return None

    def elapsed(self, handle, timeout_s):
        return 1e-4

    def synchronize(self, timeout_s=60.0):
        time.sleep(0.001)  # a batch takes device time


def test_the_loop_runs_until_the_counter_moved_k_steps():
    dev, sensor = SimDevice(), SimCounter()

    def launch():
        dev.launches += 1

    e = steady_state_energy(dev, sensor, launch, ops_per_launch=100.0, warmup_s=0.02, k_steps=10)
    assert e.steps >= 10 and e.resolution.step_j == pytest.approx(2.5)
    assert e.watts == pytest.approx(250.0, rel=0.35)  # whole steps over a span read between updates
    assert e.launches > 0 and e.joules_per_launch == pytest.approx(e.energy_j / e.launches)
    assert e.joules_per_op == pytest.approx(e.joules_per_launch / 100.0)


class FailingCounter(SimCounter):
    """Answers ``good`` reads, then never again (NVML lost mid-span)."""

    def __init__(self, good):
        super().__init__()
        self.good = good
        self.last_error = "NVML_ERROR_GPU_IS_LOST"

    def read(self):
        self.good -= 1
        return super().read() if self.good >= 0 else None


def test_a_sensor_that_stops_answering_ends_the_span_with_an_error(cl_device):
    """On the real PoCL device: the counter answers the warm-up and start readings, then nothing. The
    loop must end at its deadline with the sensor's error, not spin forever on failed readings."""
    k = cl_device.compile("__kernel void nop(__global float* x) { x[get_global_id(0)] += 1.0f; }", "nop")
    buf = cl_device.to_device(np.zeros(64, np.float32))
    with pytest.raises(RuntimeError, match="stopped answering.*GPU_IS_LOST"):
        steady_state_energy(cl_device, FailingCounter(good=3), lambda: cl_device.launch(k, (64,), None, [buf]),
                            ops_per_launch=64.0, warmup_s=0.01, max_span_s=0.3)


def test_kept_samples_give_the_same_figures():
    rs = [_r(0.001 * k, 1000.0 * (k // 10), mask=0x4 if k == 37 else 0) for k in range(0, 101)]
    e = energy_of(rs, launches=500, ops_per_launch=10.0)
    kept = [Reading.from_json(d) for d in e.samples()]
    assert len(kept) < len(rs)
    again = energy_of(kept, 500, 10.0)
    assert (again.energy_j, again.span_s, again.steps, again.throttle_reasons) == \
        (e.energy_j, e.span_s, e.steps, e.throttle_reasons)
    assert again.resolution == e.resolution
