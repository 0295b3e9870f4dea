"""What an OpenCL event's start reads under each way of holding a timed region (:mod:`..devices.queue_hold`).

The OpenCL backend holds every command of a timed region until the host has enqueued them all
(``OpenCLDevice.timed``), so a span of several commands does not time the host's enqueue calls between them:
behind a user event (``gated``), behind a blocking kernel (``held``), or not at all (``ungated``). Where a driver
stamps a held command's start when it releases it rather than when it runs, the user event puts the driver's
release into every device-timed figure. Empty launches timed each way on the same queue, one per span and
:data:`SPAN` back to back per span, show which hold reads the device: the holds should agree with each other,
and with the device's own launch rate, within the timer's resolution.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from ..devices.base import Device, Kernel
from .launch_overhead import per_launch_us

#: the figure's name part per hold (:data:`..devices.queue_hold.HOLDS`)
MODES = {"gated": "event", "held": "kernel", "ungated": "none"}
#: launches per span of the figure's second reading (the launch figures' own spans are 200 launches)
SPAN = 64


def gate_records(device: Any, measurer: Any, kernel: Kernel) -> Iterator[dict[str, Any]]:
    """``launch.event_gate.<mode>.x<launches>.device_us`` for every :data:`MODES` and 1 and :data:`SPAN`
    launches per span, as ``gpuperf_record`` arguments: the device time of one empty launch (``measurer``: the
    test's ``gpu_measure``) under each hold, the blocking kernel's counts in the ``held`` figures' info."""
    arg = [np.int32(0)]
    for mode, hold in MODES.items():
        for launches in (1, SPAN):
            before = device.hold_counts()
            with device.holding(hold):
                us = per_launch_us(device, measurer, kernel, (1,), (1,), arg, launches)
            after = device.hold_counts()
            info: dict[str, Any] = {"launches_per_span": launches, "hold": hold}
            if hold == "kernel":
                info.update(regions=after["regions"] - before["regions"],
                            underheld=after["underheld"] - before["underheld"],
                            spin_ns_per_iteration=after["ns_per_iteration"])
            yield {"name": f"launch.event_gate.{mode}.x{launches}.device_us", "value": us.median, "unit": "us",
                   "better": "lower", "stats": us, "info": info, "identity": {"hold": hold, "launches_per_span": launches}}


def why_not(device: Device) -> str | None:
    """Why the study cannot run on ``device`` (only OpenCL devices hold their timed regions these ways), or None."""
    return None if hasattr(device, "holding") else \
        f"{device.info.spec}: only OpenCL devices choose how to hold a timed region ({device.info.backend} does not)"
