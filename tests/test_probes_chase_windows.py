"""A CPU device's gated pointer-chase figure: the long-minus-short pairs of several windows pooled, taken
again a bounded number of times while their median is not positive, and refused as impossible after that.

The windows below are real PoCL readings (cycles per load) of the 1 MiB chase on a 2-core Xeon beside
eight memory-streaming processes: a window of such a host once had a negative median, and that window
alone was the recorded figure.
"""

from __future__ import annotations

from itertools import chain, cycle
from typing import Iterator, Sequence

import numpy as np
import pytest

from pytest_gpuperf.baselines import validity
from pytest_gpuperf.helpers import Measurer
from pytest_gpuperf.probes import chase_windows, hierarchy
from pytest_gpuperf.timing.measure import MeasureConfig

NAME = "memory.chase.1MiB.latency.cycles"
#: five consecutive windows; the first one's median is negative (the sweep's window, the old figure)
BUSY = [[-0.41, -0.64, 14.16], [6.31, 14.81, 11.65, 5.14, 11.1], [15.35, 11.73, 34.37, 159.51, 13.12],
        [-23.37, 15.21, 14.73, 28.85, -10.84], [0.78, 15.2, 12.67, 4.89, -7.38]]
#: that run's non-positive pairs (26 of its 245 at 1 MiB), five per window: a neighbour in every short launch
BURST = [[-7.64, -47.11, -2.67, -50.42, -200.8], [-3.74, -7.78, -3.27, -0.41, -0.64],
         [-23.37, -10.84, -7.38, -2.62, -21.45], [-10.19, -9.99, -12.78, -4.55, -1.96],
         [-0.18, -0.48, -8.94, -0.75, -8.04]]


class Windows:
    """Recorded windows handed out one per call, as :func:`..memory.chase_events` measures them."""

    def __init__(self, windows: Iterator[Sequence[float]]) -> None:
        self.windows, self.calls = windows, 0

    def __call__(self) -> list[float]:
        self.calls += 1
        return list(next(self.windows))


def test_a_window_with_a_negative_median_no_longer_is_the_figure():
    assert np.median(BUSY[0]) < 0 and validity.problem(NAME, float(np.median(BUSY[0])), "cycles")  # the old figure
    more = Windows(iter(BUSY[1:]))
    pool = chase_windows.pooled(more, BUSY[0])
    assert more.calls == chase_windows.WINDOWS - 1 and pool.rounds == 0
    assert pool.samples == [x for w in BUSY for x in w]  # every pair kept, the negative ones too
    assert pool.median == pytest.approx(11.73) and validity.problem(NAME, pool.median, "cycles") is None
    assert pool.info() == {"windows": 5, "pairs": 23}


def test_a_pool_that_is_not_positive_is_measured_again_and_says_why():
    # the neighbour holds the first round's short launches; then the host is only busy
    more = Windows(chain(iter(BURST[1:]), cycle(BUSY)))
    pool = chase_windows.pooled(more, BURST[0])
    # round 1 adds 23 pairs (5 not positive): 30 of 48 still not positive; round 2's 23 tip the median
    assert pool.rounds == 2 and pool.windows == 15 and more.calls == 14
    assert pool.median == pytest.approx(0.78)
    assert pool.info()["remeasured"] == {"rounds": 2, "why": chase_windows.WHY}


def test_a_figure_not_positive_after_the_last_round_is_returned_and_refused():
    more = Windows(cycle(BURST))
    pool = chase_windows.pooled(more, BURST[0])
    assert more.calls == chase_windows.WINDOWS - 1 + chase_windows.REMEASURE * chase_windows.WINDOWS
    assert pool.rounds == chase_windows.REMEASURE and pool.median < 0
    assert "is negative" in validity.problem(NAME, pool.median, "cycles")


def test_an_empty_sweep_window_is_an_error():
    with pytest.raises(ValueError, match="holds no pairs"):
        chase_windows.pooled(Windows(cycle(BUSY)), [])


def test_the_cpu_sweep_records_its_footprint_over_pooled_windows_on_pocl(cl_device):
    """The sweep's own 1 MiB window read a negative median: the recorded figure pools it with four windows
    measured on the device, and is a latency."""
    p = hierarchy.probe(cl_device, Measurer(cl_device, MeasureConfig()))
    foot = 1 << 20
    sweep = hierarchy.ChaseSweep(p, hierarchy.cache_bytes(cl_device.info), False, True,
                                 {hierarchy.CHASE_STRIDE: [(foot, float(np.median(BUSY[0])))]}, {foot: BUSY[0]}, [])
    (rec,) = sweep.records(cl_device)
    assert rec["name"] == NAME and rec["value"] > 0 and validity.problem(NAME, rec["value"], "cycles") is None
    assert rec["info"]["windows"] >= chase_windows.WINDOWS and rec["stats"].samples[:3] == tuple(BUSY[0])
    assert rec["identity"] == {}
