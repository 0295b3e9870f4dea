"""Device-to-device copy bandwidth through the API (cudaMemcpyAsync / clEnqueueCopyBuffer).

Bytes read + written per second (GB/s). Repeating one copy would time a warm cache once the buffers fit
in it, so every measurement rotates over enough source/destination pairs to cover twice the last-level
cache; the copy is then checked byte for byte, so a figure never stands for a copy that did not happen.

On a GPU a copy of a few MiB lasts a few µs, within a few ticks of the event timer and dominated by the
span's own start and end; so there each sample times :func:`copies_per_span` back-to-back copies (continuing
the rotation) between one pair of events, and a copy's time is the span over their number, as bandwidth
microbenchmarks batch small transfers. Copies of 256 MiB and more (and every copy on a CPU device, whose
bands cover its host's noise) stay one per span.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..baselines.classes import PER_SPAN
from ..devices.base import Device, DeviceInfo
from ..timing.measure import Measurement

MiB = 1 << 20
#: the copy sizes the memory suite gates, by label
SIZES = {"1MiB": 1 * MiB, "16MiB": 16 * MiB, "256MiB": 256 * MiB, "1GiB": 1024 * MiB}
#: the largest copy a CPU device (PoCL) is asked for: bigger ones are GPU-sized
CPU_MAX_BYTES = 256 * MiB
#: the cache a GPU's rotation covers at least: NVIDIA's OpenCL reports a 4 MiB "global memory cache" for
#: the H100, whose L2 is 50 MiB, so the reported size is not trusted below this
GPU_MIN_CACHE = 64 * MiB
MAX_PAIRS = 32
#: bytes a GPU's span of back-to-back copies moves at least (copies of this size and more are timed alone)
SPAN_BYTES = 256 * MiB
#: the most copies one span holds: far below the launches the driver's queue holds behind the timer's
#: blocking kernel
MAX_SPAN_COPIES = 100
SEED = 1234


def buffer_pairs(info: DeviceInfo, size: int) -> int:
    """Source/destination pairs that cover twice the last-level cache with ``size``-byte copies (1..32)."""
    cache = max(info.l2_bytes, 1) if info.is_cpu else max(info.l2_bytes, GPU_MIN_CACHE)
    return max(1, min(MAX_PAIRS, -(-2 * cache // (2 * size))))


def copies_per_span(info: DeviceInfo, size: int) -> int:
    """Back-to-back copies per device-event span: enough ``size``-byte copies to move :data:`SPAN_BYTES`
    (at most :data:`MAX_SPAN_COPIES`) on a GPU; one on a CPU device."""
    if info.is_cpu:
        return 1
    return max(1, min(MAX_SPAN_COPIES, -(-SPAN_BYTES // size)))


def why_not(info: DeviceInfo, label: str) -> str | None:
    """Why the ``label`` copy is not measured on this device (the reason to skip), or None: a GPU-sized
    copy on a CPU device, or buffers that would take over a quarter of the device's memory."""
    size = SIZES[label]
    if info.is_cpu and size > CPU_MAX_BYTES:
        return f"{label} copies are GPU-sized; {info.name} is a CPU device"
    pairs = buffer_pairs(info, size)
    if 2 * pairs * size > info.memory_bytes // 4:
        return f"{label} × {pairs} buffer pairs would use over a quarter of {info.name}'s memory"
    return None


def planted_bytes(size: int, planted: float) -> int:
    """Bytes a copy moves under the gate check's memory-bound plant: (1 + ``planted``) × ``size``, the
    extra rounded down to whole 4 KiB pages (the figure is still credited with ``size``)."""
    return size + (int(size * planted) // 4096) * 4096


@dataclass
class CopyBandwidth:
    """One copy size's measurement and whether the copy really happened."""

    label: str
    size: int
    moved: int
    pairs: int
    measurement: Measurement
    copied: bool  # the first destination holds the source's bytes
    planted: float = 0.0  # the gate check's planted slowdown asked for (0: none)
    per_span: int = 1  # back-to-back copies each sample's span timed (its time is per copy × this)

    def record(self) -> dict[str, Any]:
        """The figure as ``gpuperf_record`` arguments: GB/s counting the bytes read and written, per copy (a
        span of several over their number); a span of several names it in its identity."""
        bw = self.measurement.stats.scaled(1.0 / self.per_span).reciprocal(2 * self.size / 1e9)
        info: dict[str, Any] = {"buffer_pairs": self.pairs, "converged": self.measurement.converged}
        if self.planted:
            info["planted_slowdown"] = self.moved / self.size - 1.0
        out = {"name": f"memory.copy.bandwidth.{self.label}", "value": bw.median, "unit": "GB/s",
               "better": "higher", "stats": bw, "info": info}
        if self.per_span > 1:
            info[PER_SPAN] = self.per_span
            out["identity"] = {"timing": "back-to-back copies per event pair", "copies_per_span": self.per_span}
        return out


def measure(device: Device, measurer: Any, label: str, planted: float = 0.0, per_span: int | None = None
            ) -> CopyBandwidth:
    """Time the ``label`` copy, rotating over :func:`buffer_pairs` pairs of seeded random bytes
    (``measurer``: the test's ``gpu_measure``); ``planted``: the gate check's memory-bound plant;
    ``per_span``: copies per device-event span (default :func:`copies_per_span`)."""
    size = SIZES[label]
    moved = planted_bytes(size, planted)
    pairs = buffer_pairs(device.info, size)
    host = np.random.default_rng(SEED).integers(0, 255, moved, dtype=np.uint8)
    srcs = [device.to_device(host) for _ in range(pairs)]
    dsts = [device.empty(moved) for _ in range(pairs)]
    rotation = itertools.cycle(zip(dsts, srcs))
    n = copies_per_span(device.info, size) if per_span is None else int(per_span)
    m = measurer.enqueue(lambda: device.copy_many([next(rotation) for _ in range(n)], moved))
    copied = bool(np.array_equal(device.to_host(dsts[0], np.uint8), host))
    return CopyBandwidth(label, size, moved, pairs, m, copied, planted, n)
