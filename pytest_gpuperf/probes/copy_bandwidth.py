"""Device-to-device copy bandwidth through the API (cudaMemcpyAsync / clEnqueueCopyBuffer).

Bytes read + written per second (GB/s). Repeating one copy would time a warm cache once the buffers fit
in it, so every measurement rotates over enough source/destination pairs to cover twice the last-level
cache; the copy is then checked byte for byte, so a figure never stands for a copy that did not happen.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

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
SEED = 1234


def buffer_pairs(info: DeviceInfo, size: int) -> int:
    """Source/destination pairs that cover twice the last-level cache with ``size``-byte copies (1..32)."""
    cache = max(info.l2_bytes, 1) if info.is_cpu else max(info.l2_bytes, GPU_MIN_CACHE)
    return max(1, min(MAX_PAIRS, -(-2 * cache // (2 * size))))


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

    def record(self) -> dict[str, Any]:
        """The figure as ``gpuperf_record`` arguments: GB/s counting the bytes read and written."""
        bw = self.measurement.stats.reciprocal(2 * self.size / 1e9)
        info: dict[str, Any] = {"buffer_pairs": self.pairs, "converged": self.measurement.converged}
        if self.planted:
            info["planted_slowdown"] = self.moved / self.size - 1.0
        return {"name": f"memory.copy.bandwidth.{self.label}", "value": bw.median, "unit": "GB/s",
                "better": "higher", "stats": bw, "info": info}


def measure(device: Device, measurer: Any, label: str, planted: float = 0.0) -> CopyBandwidth:
    """Time the ``label`` copy, rotating over :func:`buffer_pairs` pairs of seeded random bytes
    (``measurer``: the test's ``gpu_measure``); ``planted``: the gate check's memory-bound plant."""
    size = SIZES[label]
    moved = planted_bytes(size, planted)
    pairs = buffer_pairs(device.info, size)
    host = np.random.default_rng(SEED).integers(0, 255, moved, dtype=np.uint8)
    srcs = [device.to_device(host) for _ in range(pairs)]
    dsts = [device.empty(moved) for _ in range(pairs)]
    rotation = itertools.cycle(zip(dsts, srcs))
    m = measurer.enqueue(lambda: device.copy(*next(rotation), moved))
    copied = bool(np.array_equal(device.to_host(dsts[0], np.uint8), host))
    return CopyBandwidth(label, size, moved, pairs, m, copied, planted)
