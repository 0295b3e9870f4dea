"""The shorter energy span of the power suite's copy and tuning-kernel loads, held to the saved spans it was chosen
from: every saved GPU A/A run's spans re-read over their first ``SHORT_SPAN_STEPS`` counter steps
(``scripts/energy_span_study.py``) must stay well inside the spread between runs that the figures' bands are set
from, and near the whole span's power. A saved run that contradicts it fails here."""

from __future__ import annotations

import math

import pytest

from pytest_gpuperf.power.energy_figures import SHORT_SPAN_STEPS
from pytest_gpuperf.timing.energy import K_STEPS, Reading
from suite_support import load_script

pytestmark = pytest.mark.xdist_group("saved-aa-runs")

study = load_script("energy_span_study")
#: the loads that read over the short span (the FMA loads keep K_STEPS)
SHORT_LOADS = ("copy_256MiB", "tuning.")


@pytest.mark.parametrize("key", ("nvidia-h200", "nvidia-h100-80gb-hbm3"))
def test_a_short_span_lies_well_inside_the_spread_between_runs_on_every_saved_span(key):
    rows = [r for r in study.study(key, SHORT_SPAN_STEPS) if r.load.startswith(SHORT_LOADS)]
    assert len(rows) == 13, [r.load for r in rows]  # the copy and the twelve tuning kernels
    for r in rows:
        assert r.spans >= 40, r  # every saved A/A run of the card
        assert abs(r.offset_median) < 0.005, r  # near the whole span's power
        # the runs' spread holds the whole span's own error (a short span's / √2): a short span's in its place
        # widens it by sqrt(1 + short² / (2 · spread²)), at most a tenth
        assert math.sqrt(1.0 + r.short_sigma ** 2 / (2.0 * r.between_runs_sigma ** 2)) < 1.10, r


def test_the_short_span_ends_at_the_reading_that_shows_its_last_step():
    """``short_span`` ends where ``steady_state_energy`` would: at the first reading whose counter moved by the
    steps asked for (the step measured from the readings), never earlier."""
    step = 30_000.0  # mJ: one counter update
    rs = [Reading(t=0.01 * i, energy_mj=step * (i // 10), power_w=300.0, sm_clock_mhz=1980.0, mem_clock_mhz=2619.0,
                  temperature_c=50.0, throttle_mask=0) for i in range(0, 400)]
    end = study.short_span(rs, SHORT_SPAN_STEPS)
    assert rs[end].energy_mj - rs[0].energy_mj == SHORT_SPAN_STEPS * step
    assert rs[end - 1].energy_mj - rs[0].energy_mj < SHORT_SPAN_STEPS * step
    assert study.short_span(rs[:end], SHORT_SPAN_STEPS) is None
    assert SHORT_SPAN_STEPS < K_STEPS
