"""The probes' fixture: ``instruction_latency(op, fast=False)`` for a user's own suite.

A kernel author who wants to gate one instruction (say, after a driver upgrade changed ``__expf``)
should not have to write a dependent-chain kernel: the fixture builds the same SASS-proven chain the
latency suite uses and returns its latency, in cycles where the device allows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from ..devices.base import Device
from ..helpers import Measurer
from ..timing.stats import Stats
from . import latency, ops


@dataclass(frozen=True)
class Latency:
    """One measured latency: ``stats`` in ``unit`` ("cycles" or "ns"), the proof and how it was taken."""

    op: str
    fast: bool
    stats: Stats
    unit: str
    metric: str
    info: dict[str, Any]


class InstructionLatency:
    """Callable bound to one device: ``instruction_latency("fp32.fma")`` → :class:`Latency`."""

    def __init__(self, device: Device, measure: Measurer) -> None:
        self.device = device
        self.measure = measure

    def __call__(self, name: str, fast: bool = False) -> Latency:
        info = self.device.info
        o = ops.op(name)  # KeyError lists the known operations
        missing = o.features() - info.features
        if missing or o.source(info.backend) is None:
            pytest.skip(f"{name} needs {', '.join(sorted(missing)) or 'a ' + info.backend + ' form'}, "
                        f"unavailable on {info.name}")
        timing = latency.timing_of(info)
        ((ck, kernel),), evidence = latency.build(self.device, [o], fast, timing)
        st, unit, extra = latency.measure(self.device, self.measure, ck, kernel)
        meta: dict[str, Any] = {"u1": ck.u1, "u2": ck.u2, "timing": timing, **extra}
        if unit == "cycles":
            return Latency(name, fast, st, "cycles", o.metric("latency", "cycles", fast),
                           {**meta, "sass": evidence[ck.name]})
        if info.clock_mhz > 0:  # ns → cycles at the reported clock, as the latency suite does
            return Latency(name, fast, st.scaled(info.clock_mhz / 1e3), "cycles", o.metric("latency", "cycles", fast),
                           {**meta, "clock_mhz": info.clock_mhz, "clock_source": "reported maximum"})
        return Latency(name, fast, st, "ns", o.metric("latency", "ns", fast), meta)


@pytest.fixture
def instruction_latency(gpu_device: Device, gpu_measure: Measurer) -> InstructionLatency:
    """Measure one operation's dependent-chain latency on the test's device (SASS-proven on CUDA)."""
    return InstructionLatency(gpu_device, gpu_measure)
