"""Work-group scheduling microbenchmark (Dao thesis §2.4): the SM and start/progress/end times of every
work-group of an over-subscribed launch, without (``fp32``) and with (``fp64``) contention; the figures
of ``probes/wg_schedule.py`` as ``sched.<kind>.*``. CUDA only: OpenCL has no SM id or device-wide timer a
kernel can read.
"""

from __future__ import annotations

import pytest

from pytest_gpuperf.probes import wg_schedule
from pytest_gpuperf.timing import observers


@pytest.mark.parametrize("kind", wg_schedule.KINDS)
@pytest.mark.gpuperf(requires=["cuda", "fp64"])
def test_work_group_schedule(gpu_device, gpuperf_record, kind):
    result = wg_schedule.measure(gpu_device, kind)
    assert result.groups == gpu_device.info.compute_units * wg_schedule.GROUPS_PER_SM, result
    for r in wg_schedule.records(kind, result, observers.inherit(gpu_device)):
        gpuperf_record(**r)
