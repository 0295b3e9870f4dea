"""Metric classes: which kind of figure a unit names, and the smallest relative change the gate
resolves for each class on GPUs and on CPU devices.

One home for these numbers: new baselines take their ``rel`` floor from here (the effect a timing
change must exceed, beside k × the measured noise), the gate check plants changes of these sizes,
and the README states them as the gate's resolution.

GPU floors are 1 %: device-timed figures on an idle GPU repeat between runs far closer than that (a
large copy's bandwidth to a few hundredths of a percent), so the band is set by each figure's measured
run-to-run spread (the k × spread term, from the baseline's runs) with 1 % as the least it may be; a
2 % slowdown of a steady figure is then caught.
CPU devices (PoCL on CI's shared 2 cores) are far noisier; their floors are the sizes the PoCL gate
check measured it can detect reliably (docs/evidence.md).
"""

from __future__ import annotations

#: unit → class. Units not listed are ``other`` (dimensionless model/tuning figures, counts).
UNIT_CLASS = {
    "s": "time", "ms": "time", "us": "time", "ns": "time",
    "GB/s": "rate", "1/s": "rate", "ops/clk/SM": "throughput",
    "cycles": "cycles", "ns/kthread": "time",
    "ulp": "ulp",
}

#: relative floor of new baselines' bands, per device type and class
FLOORS = {
    "gpu": {"time": 0.01, "rate": 0.01, "throughput": 0.01, "cycles": 0.01, "ulp": 0.01, "other": 0.01},
    # PoCL on 2 shared cores: set from the run-to-run spread of unchanged runs of the memory and latency
    # suites on such a host (shared with other jobs, as CI's cores are with neighbours). Copy bandwidth moves
    # by a fifth to a third between runs; dependent-chain and memory latencies by about 15 % at the median
    # and 50 % at the 90th percentile. A 30 % rate band holds the copies (ratio-safe edges: a run may read
    # down to value/1.3); 100 % for times and cycles holds the p90 metric, and k × the measured spread
    # widens the noisier ones. The µs launch figures carry their own absolute band
    # (the launch families of baselines/catalog.py: the slow mode of a descheduled PoCL worker).
    # Compute throughput (ops/clk/SM) is its own class there: its kernels keep both PoCL workers busy, so
    # a neighbour process holding one of the two cores halves it, while memory-bound copies do not move;
    # 125 % (ratio-safe: down to value/2.25) holds a lost core with room.
    "cpu": {"time": 1.0, "rate": 0.3, "throughput": 1.25, "cycles": 1.0, "ulp": 0.03, "other": 2.0},
}

#: the relative floor on a GPU where the figure's run-to-run spread is not known — a baseline written from
#: one run, a ``gpuperf compare`` side of fewer than three runs: an unchanged card moves some figures by a
#: few percent between runs (where a buffer lands in the L2's partitions, a clock's step) although its
#: samples within one run agree, so one run's samples cannot stand for that spread and 3 % guards it
SINGLE_RUN_GPU_FLOOR = 0.03

#: units that cannot be negative: times, latencies, rates, error magnitudes
NON_NEGATIVE = {"s", "ms", "us", "ns", "cycles", "GB/s", "1/s", "ops/clk/SM", "ulp", "ns/kthread", "bytes",
                "configs", "MHz", "J", "J/op", "W"}


#: Host-timed figures (``info["host_timed"]``: the host's clock around Python-side launches or a tuner's
#: compile-and-time loop, pytest-benchmark timings) are a class of their own on every device: their noise
#: is the host's (which core the interpreter runs on, its frequency, neighbour processes), not the
#: device's: a host-timed launch figure moves by up to ×1.9 between unchanged runs on GPUs and on PoCL
#: alike. A 100 % floor (ratio-safe: a lower-is-better figure may read up to 2× before it regresses) holds
#: that spread; a host-side launch path that doubled is still caught. Device-timed figures keep their device floors.
HOST_FLOOR = 1.0


def metric_class(unit: str, host_timed: bool = False) -> str:
    """The metric's class: ``host`` for host-timed figures, else by unit (:data:`UNIT_CLASS`)."""
    return "host" if host_timed else UNIT_CLASS.get(unit, "other")


def is_host_timed(info: object) -> bool:
    """Whether a metric's ``info`` marks it as timed by the host's clock (see :data:`HOST_FLOOR`)."""
    return isinstance(info, dict) and bool(info.get("host_timed"))


def floor(unit: str, is_cpu: bool, override: tuple[float, float] | None = None, host_timed: bool = False,
          spread_known: bool = True) -> float:
    """The relative floor for a new baseline of a metric in ``unit`` (``override``: ``--gpuperf-floor``);
    host-timed figures take :data:`HOST_FLOOR` unless overridden. ``spread_known``: the band's k × spread
    term holds the figure's run-to-run spread (values from three runs or more); without it a GPU figure
    takes :data:`SINGLE_RUN_GPU_FLOOR`."""
    if override is not None:
        return override[1] if is_cpu else override[0]
    if host_timed:
        return HOST_FLOOR
    if not is_cpu and not spread_known:
        return max(SINGLE_RUN_GPU_FLOOR, FLOORS["gpu"][metric_class(unit)])
    return FLOORS["cpu" if is_cpu else "gpu"][metric_class(unit)]


#: seconds per unit of the time units
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


#: a metric's ``info`` key: how many operations (launches, copies) one device-event span timed, the figure
#: being span / that count; the event timer's tick is then divided among them (:func:`resolution_floor`)
PER_SPAN = "ops_per_span"


def resolution_floor(unit: str, timer_resolution_s: float, info: object = None) -> float:
    """The narrowest absolute band a time metric can have on a device: its event timer's resolution, in
    the metric's unit (0 for other units). A band below it gates quantisation noise: CUDA documents
    ~0.5 µs for event timing, so a µs-scale figure such as one launch read alone moves between unchanged
    runs by more than a few percent of its value. A figure that is one span over ``info[PER_SPAN]``
    back-to-back operations resolves that many times finer."""
    per = TIME_UNITS.get(unit)
    if per is None:
        return 0.0
    count = info.get(PER_SPAN) if isinstance(info, dict) else None
    return timer_resolution_s / per / max(1, int(count or 1))


#: the widest relative band a device-timed GPU figure may gate with, unless its row of the catalog
#: (:data:`.catalog.FAMILIES`) writes the measured cause of its noise (a band wider than the noise allows gates nothing)
WIDE_BAND = 0.10

