"""Planted regressions deliver their size on the metric they target, and the gate check plants the size that
lands the claim beyond the baseline (``probes.copy_bandwidth.planted_copy``, ``gatecheck.calibrate``)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.helpers import Measurer
from pytest_gpuperf.probes import copy_bandwidth
from pytest_gpuperf.timing import observers
from pytest_gpuperf.timing.measure import MeasureConfig

QUICK = MeasureConfig(warmup=2, min_repeats=25, max_repeats=25, target_rel_spread=0.0, budget_s=30)


def test_a_copy_plant_slows_the_1mib_copy_by_about_its_size(cl_device):
    """1 MiB copies measured unplanted and with ``memory=0.5`` in turn, in one process: the planted median
    bandwidth is at least 1 / (1 + 0.7 × 0.5) of the unplanted one (the spin appended to each span delivers
    most of its size), the copy itself still happens, and the record names what was planted."""
    m = Measurer(cl_device, QUICK)
    load = observers.HostLoad()
    load.start()
    plain, planted, records = [], [], []
    for _ in range(5):
        plain.append(copy_bandwidth.measure(cl_device, m, "1MiB").record()["value"])
        c = copy_bandwidth.measure(cl_device, m, "1MiB", 0.5)
        assert c.copied
        records.append(c.record())
        planted.append(records[-1]["value"])
    window = load.stop()
    info = records[-1]["info"]
    assert info["planted_slowdown"] == 0.5 and info["planted_span_us"] > 0 and info["planted_spin_steps"] >= 0
    assert info["planted_extra_us"] == pytest.approx(0.5 * info["planted_span_us"])
    moved = float(np.median(plain)) / float(np.median(planted)) - 1.0
    if moved < 0.7 * 0.5 and observers.contended(window):
        pytest.skip(f"other work held this host's cores while the copies were timed (host window {window}): the "
                    f"plant moved the 1 MiB bandwidth {moved:+.0%}, not judged; run on a quieter host")
    assert moved >= 0.7 * 0.5, (plain, planted, info)
