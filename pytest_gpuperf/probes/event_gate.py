"""What an OpenCL event's start reads: one empty launch timed with and without the user-event gate.

The OpenCL backend holds every command of a timed region behind a user event it completes only once the host
has enqueued them all (``OpenCLDevice.timed``), so a span of several commands does not time the host's enqueue
calls between them. Where a driver stamps a command's start when it is submitted rather than when it runs,
the gate moves that stamp, and a device-timed figure takes in part of the host's submission. An empty launch,
one per span, timed both ways on the same queue shows it: on a GPU the two should agree within the timer's
resolution, and a gated reading many times the ungated one names the gate as the cause of the figures' spread.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np

from ..devices.base import Device, Kernel
from .launch_overhead import per_launch_us

#: the figure's two timings, by the name part that tells them apart
MODES = ("gated", "ungated")


def gate_records(device: Any, measurer: Any, kernel: Kernel) -> Iterator[dict[str, Any]]:
    """``launch.event_gate.<mode>.device_us`` for both :data:`MODES` as ``gpuperf_record`` arguments: the
    device time of one empty launch per span (``measurer``: the test's ``gpu_measure``), gated as every other
    figure is, then without the gate (``device.ungated()``, an OpenCL device's)."""
    arg = [np.int32(0)]
    for mode in MODES:
        with contextlib.nullcontext() if mode == "gated" else device.ungated():
            us = per_launch_us(device, measurer, kernel, (1,), (1,), arg, 1)
        yield {"name": f"launch.event_gate.{mode}.device_us", "value": us.median, "unit": "us", "better": "lower",
               "stats": us, "info": {"launches_per_span": 1, "gate": mode == "gated"}, "identity": {"gate": mode}}


def why_not(device: Device) -> str | None:
    """Why the study cannot run on ``device`` (only OpenCL devices gate their timed regions), or None."""
    return None if hasattr(device, "ungated") else \
        f"{device.info.spec}: only OpenCL devices time behind a user-event gate ({device.info.backend} does not)"
