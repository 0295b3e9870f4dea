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
from typing import Any, Callable

import numpy as np

from ..baselines.classes import PER_SPAN
from ..devices.base import Device, DeviceInfo
from ..timing.measure import Measurement
from . import launch_overhead

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


#: interleaved samples of a span with and without the copy plant's empty spin launch, to price that launch
PLANT_LAUNCH_SAMPLES = 11


@dataclass(frozen=True)
class PlantedCopy:
    """The gate check's ``memory`` plant on a copy span: a spin launch appended to every span, calibrated to
    ``fraction`` × the unplanted span's measured time (the empty launch's own share taken off)."""

    spin: launch_overhead.PlantedSpin
    span_s: float  # the unplanted span's median
    launch_s: float  # what appending the spin launch with no steps added to a span (median difference)

    def enqueue(self, device: Device) -> Any:
        return device.launch(self.spin.kernel, (1,), (1,), self.spin.args())

    def info(self) -> dict[str, Any]:
        return {**self.spin.info(), "planted_span_us": self.span_s * 1e6, "planted_launch_us": self.launch_s * 1e6}


def planted_copy(device: Device, span: Callable[[], Any], fraction: float, span_s: float,
                 timeout_s: float = 30.0) -> PlantedCopy:
    """The ``memory`` plant: every span of copies (``span`` enqueues one) is followed by a launch whose first
    work-item spins for ``fraction`` × ``span_s``, the unplanted span's measured time, so each copy takes
    (1 + ``fraction``) × its time. More bytes per copy would not do it: a launch-bound copy (1 MiB on an H200)
    barely slows when it moves more bytes. The cost of appending a launch that does not spin is measured
    (the median difference of spans with and without it, taken in pairs) and taken off the spin."""
    probe = launch_overhead.planted_spin(device, fraction, span_s, timeout_s)

    def once(steps: int | None) -> float:
        def run() -> Any:
            handles = list(span())
            if steps is not None:
                handles.append(device.launch(probe.kernel, (1,), (1,), [np.int32(steps), probe.sink]))
            return handles
        return device.elapsed(device.timed(run), timeout_s)

    # pairs taken back to back, so a slow spell of the host moves both of a pair rather than one median
    launch_s = max(0.0, float(np.median([once(0) - once(None) for _ in range(PLANT_LAUNCH_SAMPLES)])))
    spin = launch_overhead.planted_spin(device, fraction, span_s, timeout_s, less_s=launch_s)
    return PlantedCopy(spin, span_s, launch_s)


@dataclass
class CopyBandwidth:
    """One copy size's measurement and whether the copy really happened."""

    label: str
    size: int
    pairs: int
    measurement: Measurement
    copied: bool  # the first destination holds the source's bytes
    plant: PlantedCopy | None = None  # the gate check's memory plant, where planted
    per_span: int = 1  # back-to-back copies each sample's span timed (its time is per copy × this)
    graph: bool = False  # the span replayed one device-side graph (:func:`measure_graph`)

    def record(self) -> dict[str, Any]:
        """The figure as ``gpuperf_record`` arguments: GB/s counting the bytes read and written, per copy (a
        span of several over their number); a span of several names it in its identity."""
        bw = self.measurement.stats.scaled(1.0 / self.per_span).reciprocal(2 * self.size / 1e9)
        info: dict[str, Any] = {"buffer_pairs": self.pairs, "converged": self.measurement.converged}
        if self.plant is not None:
            info.update(self.plant.info())
        name = f"memory.copy.{'graph.' if self.graph else ''}bandwidth.{self.label}"
        out = {"name": name, "value": bw.median, "unit": "GB/s", "better": "higher", "stats": bw, "info": info}
        if self.graph or self.per_span > 1:
            info[PER_SPAN] = self.per_span
            timing, key = (("one device-side graph of back-to-back copies per event pair", "copies_per_graph")
                           if self.graph else ("back-to-back copies per event pair", "copies_per_span"))
            out["identity"] = {"timing": timing, key: self.per_span}
        return out


def _buffers(device: Device, size: int) -> tuple[np.ndarray, list[Any], list[Any]]:
    """The seeded source bytes, and :func:`buffer_pairs` sources holding them and destinations of ``size``."""
    host = np.random.default_rng(SEED).integers(0, 255, size, dtype=np.uint8)
    pairs = buffer_pairs(device.info, size)
    return host, [device.to_device(host) for _ in range(pairs)], [device.empty(size) for _ in range(pairs)]


def measure(device: Device, measurer: Any, label: str, planted: float = 0.0, per_span: int | None = None
            ) -> CopyBandwidth:
    """Time the ``label`` copy, rotating over :func:`buffer_pairs` pairs of seeded random bytes
    (``measurer``: the test's ``gpu_measure``); ``planted``: the gate check's ``memory`` plant, a slowdown of
    that fraction of the measured unplanted span (:func:`planted_copy`); ``per_span``: copies per device-event
    span (default :func:`copies_per_span`)."""
    size = SIZES[label]
    host, srcs, dsts = _buffers(device, size)
    pairs = len(srcs)
    rotation = itertools.cycle(zip(dsts, srcs))
    n = copies_per_span(device.info, size) if per_span is None else int(per_span)

    def span() -> Any:
        return device.copy_many([next(rotation) for _ in range(n)], size)

    plant = None
    if planted > 0:
        plant = planted_copy(device, span, planted, measurer.enqueue(span).stats.median)
        m = measurer.enqueue(lambda: [*span(), plant.enqueue(device)])
    else:
        m = measurer.enqueue(span)
    copied = bool(np.array_equal(device.to_host(dsts[0], np.uint8), host))
    return CopyBandwidth(label, size, pairs, m, copied, plant, n)


#: the copies a graph-timed figure measures (:func:`measure_graph`): the launch-bound sizes
GRAPH_SIZES = ("1MiB", "16MiB")


def copies_per_graph(size: int) -> int:
    """Copies captured into one graph: enough ``size``-byte copies to move :data:`SPAN_BYTES` (no queue limits a
    graph's length, so no :data:`MAX_SPAN_COPIES` cap)."""
    return max(1, -(-SPAN_BYTES // size))


def measure_graph(device: Device, measurer: Any, label: str) -> CopyBandwidth:
    """The ``label`` copy timed from one device-side graph of :func:`copies_per_graph` back-to-back copies that
    rotate over :func:`buffer_pairs` pairs, one graph launch per event pair (``measurer``: the test's
    ``gpu_measure``); checked byte for byte like :func:`measure`. Devices without graphs raise."""
    size = SIZES[label]
    host, srcs, dsts = _buffers(device, size)
    pairs = len(srcs)
    n = copies_per_graph(size)
    order = [(dsts[i % pairs], srcs[i % pairs]) for i in range(n)]
    replay = device.capture(lambda: device.copy_many(order, size), f"{n} copies of {label}")
    m = measurer.enqueue(replay)
    copied = bool(np.array_equal(device.to_host(dsts[0], np.uint8), host))
    return CopyBandwidth(label, size, pairs, m, copied, None, n, graph=True)
