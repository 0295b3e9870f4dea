"""The event-timed shared (local) memory chase on a CPU device: its long and short sections differ by far
more time than a CPU device's launches jitter, so the per-load figure is a latency, not launch noise (at the
GPU's section length the difference is ~30 µs, and the median can read negative)."""

from __future__ import annotations

import numpy as np

from pytest_gpuperf.baselines import validity
from pytest_gpuperf.helpers import Measurer
from pytest_gpuperf.probes import hierarchy, memory
from pytest_gpuperf.timing.measure import MeasureConfig

#: the least time (µs) the extra loads of the long section must take on a CPU device
LEAST_DIFFERENCE_US = 200.0


def test_the_cpu_shared_chase_sections_differ_by_far_more_than_launch_jitter(cl_device):
    p = hierarchy.probe(cl_device, Measurer(cl_device, MeasureConfig()))
    cycles = float(np.median(memory.shared_latency(cl_device, p.kernels, p.clock, p.meas)))
    assert validity.problem("memory.shared.latency.cycles", cycles, "cycles") is None, cycles
    extra_loads = memory.shared_section(cl_device) * memory.UNROLL
    assert cycles * extra_loads / p.clock >= LEAST_DIFFERENCE_US, (cycles, extra_loads, p.clock)
