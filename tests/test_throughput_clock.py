"""The FMA throughput's operations per clock use the clock the sweep ran at: where the clock is measured (a
``clock64()`` spin on CUDA), it is read again after the sweep and a sweep whose clock took another boost step is
measured again at it (``probes.throughput.sweep``); a device that reports its clock (PoCL) keeps the reported one."""

from __future__ import annotations

import dataclasses

from pytest_gpuperf.helpers import Measurer
from pytest_gpuperf.probes import ops, throughput
from pytest_gpuperf.timing.measure import MeasureConfig

QUICK = MeasureConfig(warmup=1, min_repeats=5, max_repeats=5, target_rel_spread=0.0, budget_s=20)


def test_a_boost_step_is_a_moved_clock_and_the_spins_own_spread_is_not():
    """An H100's spin reads 1,977 or 1,992 MHz, one boost step apart: that is a clock that moved; two readings of
    one step differ by the spin's own spread, about 0.2 MHz."""
    assert not throughput.steady(1991.9, 1976.9)
    assert not throughput.steady(1977.0, 1991.9)
    assert throughput.steady(1976.8, 1977.0) and throughput.steady(1991.9, 1991.7)


def test_a_reported_clock_is_not_read_again_and_a_moved_clock_is_kept_with_the_figures(cl_device):
    """On PoCL the clock is the reported maximum: the sweep is measured once and its figures carry no readings.
    The figures of a sweep measured again after its clock moved name the readings and whether the last one held."""
    measurer = Measurer(cl_device, QUICK)
    clock = throughput.ClockCache().of(cl_device, measurer)
    assert clock is not None and clock.source == "reported maximum"
    s = throughput.sweep(cl_device, measurer, ops.op("fp32.fma"), clock)
    assert s.clock_readings == () and s.points
    assert all("clock_readings_mhz" not in r["info"] for r in s.records())
    moved = dataclasses.replace(s, clock=throughput.SmClock(1976.9, throughput.MEASURED),
                                clock_readings=(1991.9, 1976.9, 1977.0))
    best = [r for r in moved.records() if r["name"] == "throughput.fp32.fma.ops_per_clk_sm"][0]["info"]
    assert best["clock_readings_mhz"] == [1991.9, 1976.9, 1977.0] and best["clock_held"] is True
    assert best["clock_mhz"] == 1976.9
    unsteady = dataclasses.replace(moved, clock_readings=(1991.9, 1976.9, 1991.8))
    assert all(r["info"]["clock_held"] is False for r in unsteady.records() if "ilp" in r["name"]
               and "saturating" not in r["name"])
