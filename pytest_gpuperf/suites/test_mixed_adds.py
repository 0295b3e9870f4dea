"""Mixed-precision addition throughput (Surineni thesis §6.2, Table IX): dependent additions in binary32
only, binary64 only and both interleaved 50:50, at full occupancy.

* ``throughput.mixed_add.<fp32|fp64|mixed>.adds_per_s`` — additions per second (the mixed kernel counts
  both kinds);
* ``throughput.mixed_add.mixed_over_fp64`` — the mixed kernel's rate over the binary64-only one's (Table IX:
  2× on a Maxwell Titan X, whose binary64 units are few).
"""

from __future__ import annotations

import pytest

from pytest_gpuperf.probes import mixed_adds
from pytest_gpuperf.probes.bound_measurer import BoundMeasurer
from pytest_gpuperf.timing.profiles import profile


def test_mixed_precision_adds(gpu_device, gpu_measure, gpuperf_record):
    info = gpu_device.info
    if not info.fp64:
        pytest.skip(f"{info.name} has no binary64 support: the mixed kernel needs it")
    result = mixed_adds.measure(gpu_device, BoundMeasurer(gpu_measure, profile("latency", info.is_cpu)))
    assert all(s.median > 0 for s in result.rates.values()), result.rates
    for r in result.records():
        gpuperf_record(**r)
