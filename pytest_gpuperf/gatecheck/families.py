"""Plants per family at the size each family claims to catch, and the detection curves of the headline figures.

Every family of the suites names the metrics that must catch its plant (:data:`TARGETS`): the launch path,
copies of every size, each cache level's chase, instruction latency and throughput, a math function's ulp,
summation error, energy per operation under the power suite's load, the tuner's pick and the sampled
model's error. The size planted on a metric is what its gate claims to catch: :func:`claimed_size`, the larger of
1.5 × the band's relative half-width and the minimum detectable effect the verdict states for the entry (its
"catches ≥ …": where a few baseline runs or a sample test set it beyond the band, the band alone would plant a
change the gate never claimed). Band and MDE are passed in by the caller (this package sits below the
verdicts; it reaches them only through the command line and files).

Where the baseline has no entry for a metric, the device class's fallback size is planted (a CPU device's
is the smallest its noise lets a PoCL gate catch); a family whose claimed size lies outside what a plant can
express (a band wider than 9 × the value) is reported as not plantable, with the reason, never silently
dropped. :func:`curve_plants` plants the headline figures at 1, 2, 5 and 10 %.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

from .plants import ADDITIVE, FAMILY, KINDS
from .run import Plant, node_id

#: the sizes of the detection curves (``--curve``)
CURVE_SIZES = (0.01, 0.02, 0.05, 0.10)
#: the largest size a plant may take (plants.parse accepts fractions in (0, 10))
MAX_SIZE = 9.0
#: the smallest size planted, for a metric whose band is zero (an exact figure)
MIN_SIZE = 0.01


@dataclass(frozen=True)
class Target:
    """A metric that must catch a family's plant, where it is measured (a ``-k`` selection, used when the
    baseline does not name the test), the size planted where the baseline has no entry (GPU, CPU), and why a
    device cannot run it (``gpu_only``: the reason a CPU device skips it)."""

    kind: str
    metric: str
    selection: tuple[str, ...]
    fallback: tuple[float, float]
    gpu_only: str | None = None
    cpu: bool = True  # measured (as a named metric) on CPU devices too
    gpu: bool = True
    #: the name carries the device's geometry (``{units}``: its compute-unit count, :func:`metric_of`), and the
    #: target is planted only where the baseline has an entry under the name the device gives it
    per_unit: bool = False

    @property
    def additive(self) -> bool:
        """The plant adds its size to the metric (an error fraction), not × (1 + size)."""
        return self.kind in ADDITIVE


def _copy(label: str, cpu: bool = True, gpu: bool = True) -> Target:
    return Target("memory", f"memory.copy.bandwidth.{label}",
                  ("suites/test_memory.py", "-k", f"copy_bandwidth and {label}"), (0.05, 2.0), cpu=cpu, gpu=gpu)


_LAUNCH = ("suites/test_memory.py", "-k", "test_launch_overhead")
_GRAPH = ("suites/test_memory.py", "-k", "test_launch_graph")
_NO_GRAPHS = "launch graphs are CUDA's: OpenCL devices have none"
_GRID = ("suites/test_memory_hierarchy.py", "-k", "test_launch_overhead_vs_grid")
_GRAPH_GRID = ("suites/test_memory.py", "-k", "test_graph_grid_launches")
_CHASE = ("suites/test_memory_hierarchy.py", "-k", "test_pointer_chase")
_NO_SENSOR = "energy per op needs a power sensor (NVML): a CPU device has none"

#: every family's target metrics, in the order they are planted
TARGETS: tuple[Target, ...] = (
    Target("launch", "launch.graph.empty.device_us", _GRAPH, (0.05, 3.0), gpu_only=_NO_GRAPHS),
    # one work-group per SM: the grid where every SM gets one launch's work (132x256 on an H100 SXM or H200)
    Target("launch", "launch.graph.grid.{units}x256.device_us", _GRAPH_GRID, (0.05, 3.0), gpu_only=_NO_GRAPHS,
           per_unit=True),
    Target("launch", "launch.empty.device_us", _LAUNCH, (0.3, 3.0)),
    Target("launch", "launch.overhead.intercept_us", _GRID, (0.3, 3.0)),
    _copy("1MiB"), _copy("16MiB"), _copy("256MiB"), _copy("1GiB", cpu=False),
    Target("chase", "memory.l1.latency.cycles", _CHASE, (0.05, 2.0)),
    Target("chase", "memory.l2.latency.cycles", _CHASE, (0.05, 2.0), cpu=False),
    Target("chase", "memory.dram.latency.cycles", _CHASE, (0.08, 2.0), cpu=False),
    Target("chase", "memory.chase.64MiB.latency.cycles", _CHASE, (0.08, 2.0), gpu=False),
    Target("compute", "latency.fp32.fma.cycles", ("suites/test_latency.py", "-k", "test_latency and fp32-ieee"),
           (0.05, 1.2)),
    Target("throughput", "throughput.fp32.fma.ops_per_clk_sm",
           ("suites/test_latency.py", "-k", "test_throughput and fp32.fma"), (0.05, 3.0)),
    Target("summation", "accuracy.sum.float.serial.n16.abs_err",
           ("suites/test_accuracy_sum.py", "-k", "test_summation and serial"), (1.5, 1.5)),
    Target("power", "power.fma_fp32.joules_per_op", ("suites/test_power.py", "-k", "test_energy_fma and fp32"),
           (0.3, 0.3), gpu_only=_NO_SENSOR),
    Target("tuner", "tuning.reduce.dao.quality", ("suites/test_workgroup_tuning.py", "-k", "test_tune and reduce"),
           (0.15, 5.0)),
    Target("model", "model.sampled.mean_error", ("suites/test_model_error.py", "-k", "test_sampled_models"),
           (0.2, 1.0), cpu=False),
    # a CPU device measures the corpus at the project's geometry only (studies.sampled.sampled_corpus.protocols_for)
    Target("model", "model.sampled_project.mean_error", ("suites/test_model_error.py", "-k", "test_sampled_models"),
           (0.2, 1.0), gpu=False),
)
#: the families whose plant has no size: a math function 1 ulp off on some inputs, a metric not recorded —
#: (argument, metric that must catch it, selection)
FIXED = {
    "ulp": ("sin", "accuracy.fp32.sin.max_ulp",
            ("suites/test_accuracy_math.py", "-k", "test_math_function and sin- and fp32")),
    "missing": ("memory.copy.bandwidth.16MiB", "memory.copy.bandwidth.16MiB",
                ("suites/test_memory.py", "-k", "copy_bandwidth and 16MiB")),
}
#: the headline figures of the detection curves: the 1 GiB copy, the FMA chain, the launch overhead (from a graph,
#: and the grid sweep's intercept), the L2 chase; a curve is drawn where the gate judges the figure
HEADLINES = ("memory.copy.bandwidth.1GiB", "latency.fp32.fma.cycles", "launch.graph.empty.device_us",
             "launch.overhead.intercept_us", "memory.l2.latency.cycles")

#: the half-width of an entry's band, in the metric's units (the caller's: ``verdicts.band`` of its value and
#: tolerance, or its minimum detectable effect once baselines carry one)
Band = Callable[[Mapping[str, Any]], float]
#: why the gate never judges a metric (of this name and unit), or None: the caller's (the noise models sit above)
Ungated = Callable[[str, str], "str | None"]
#: the minimum detectable effect the verdict states for a metric's entry (a relative change), or None where it
#: states none: the caller's (:func:`pytest_gpuperf.baselines.table.power`)
Power = Callable[[str, Mapping[str, Any]], "float | None"]


def claimed_size(entry: Mapping[str, Any], band: Band, additive: bool = False, mde: float | None = None) -> float:
    """The change the gate claims to catch on ``entry``: the larger of 1.5 × the band's half-width relative to
    the value and ``mde``, the minimum detectable effect its verdict states (``additive``: in the metric's own
    units, for a plant that adds its size to an error fraction). A plant of 1.5 bands lands half a band beyond
    the edge; one of the MDE lands where the verdict says it catches 99 of 100 changes — so a gate that keeps
    its claim reads ``regressed``. Rounded up to 3 significant digits and at least :data:`MIN_SIZE`; may exceed
    :data:`MAX_SIZE` (not plantable)."""
    width = float(band(entry))
    value = abs(float(entry["value"]))
    stated = 0.0 if mde is None else float(mde)
    if additive:
        raw = max(1.5 * width, stated * value)
    else:
        raw = max(1.5 * width / value, stated) if value > 0 else float("inf")
    if not math.isfinite(raw):
        return float("inf")
    return _rounded_up(raw)


def _rounded_up(raw: float) -> float:
    """``raw`` rounded up to 3 significant digits (never below it), at least :data:`MIN_SIZE`."""
    if raw <= 0:
        return MIN_SIZE
    unit = 10.0 ** (math.floor(math.log10(raw)) - 2)  # the third significant digit, rounded up: never below the claim
    rounded = float(f"{math.ceil(raw / unit - 1e-6) * unit:.3g}")
    return max(MIN_SIZE, rounded)


def calibrated_size(size: float, baseline: float, machine: float, better: str) -> float:
    """The size to plant so that the planted value lands ``size`` beyond the *baseline* value, on a machine whose
    unplanted runs read ``machine``: a plant of F makes a lower-is-better figure (1 + F) × its value and divides a
    higher-is-better one by (1 + F), so (1 + F')·machine = (1 + F)·baseline, or machine / (1 + F') =
    baseline / (1 + F). The claim is about the distance from the baseline (the gate's reference), so a machine
    that reads better than the baseline gets a larger plant, one that reads worse a smaller one — still the
    claim's test: the planted value sits where a plant of ``size`` from the baseline puts it. A machine that
    already reads beyond the claim gets :data:`MIN_SIZE` (its unplanted runs should have regressed). Rounded
    up to 3 significant digits."""
    if baseline <= 0 or machine <= 0 or not (math.isfinite(baseline) and math.isfinite(machine)):
        raise ValueError(f"calibration needs positive values, got baseline {baseline!r} and machine {machine!r}")
    ratio = baseline / machine if better == "lower" else machine / baseline
    return _rounded_up((1.0 + size) * ratio - 1.0)


def calibrate(chosen: Sequence[Plant], entries: Mapping[str, Mapping[str, Any]],
              machine: Mapping[str, float]) -> list[Plant]:
    """``chosen`` with each fraction plant whose target has a baseline entry and a reading of this machine
    (``machine``: the median of its unplanted runs, per metric) planted at :func:`calibrated_size`, its claim
    kept as ``claim``; plants that add their size (an error fraction), have no such reading, or would exceed
    :data:`MAX_SIZE` stay as they were."""
    additive = {t.metric for t in TARGETS if t.additive}
    out = []
    for p in chosen:
        entry, value = entries.get(p.metric), machine.get(p.metric)
        if (KINDS.get(p.kind) != "fraction" or p.metric in additive or entry is None or value is None
                or entry.get("better") not in ("lower", "higher")):
            out.append(p)
            continue
        try:
            planted = calibrated_size(float(p.size), float(entry["value"]), float(value), str(entry["better"]))
        except ValueError:
            out.append(p)
            continue
        if planted > MAX_SIZE:
            out.append(p)
            continue
        out.append(replace(p, arg=f"{planted:g}", claim=float(p.size), machine=float(value),
                           baseline=float(entry["value"])))
    return out


def metric_of(t: Target, compute_units: int) -> str | None:
    """The metric ``t`` targets on a device of ``compute_units`` compute units (SMs); None where its name needs the
    count and the device did not report one."""
    if not t.per_unit:
        return t.metric
    return t.metric.format(units=compute_units) if compute_units > 0 else None


def _tests(t: Target, entry: Mapping[str, Any] | None, spec: str) -> tuple[str, ...]:
    """The one test that recorded the entry (its node id on device ``spec``), else the target's selection."""
    if entry and entry.get("test") and spec:
        return (node_id(str(entry["test"]), spec),)
    return t.selection


def family_plants(families: Sequence[str] | None, is_cpu: bool, entries: Mapping[str, Mapping[str, Any]],
                  band: Band, spec: str = "", ungated: Ungated | None = None, power: Power | None = None,
                  compute_units: int = 0) -> tuple[list[Plant], list[dict[str, Any]]]:
    """The plants of ``families`` (kinds of :data:`FAMILY`, planted in that order; None: every family, in the
    order of :data:`TARGETS`, then :data:`FIXED`) at their claimed sizes
    (:func:`claimed_size` of the baseline ``entries`` and the MDE ``power`` states for them, else the device
    class's fallback; the ``ulp`` and
    ``missing`` plants as :data:`FIXED` names them), and the targets left out with the reason: GPU-only on a
    CPU device, a band too wide to plant, or a metric the gate records without judging (``ungated``: the caller's
    reason for a metric and its unit, None where it is gated). ``compute_units``: the device's count, which names
    the targets whose metric carries the device's geometry (:func:`metric_of`)."""
    known = {t.kind for t in TARGETS} | set(FIXED)
    wanted = set(families) if families is not None else known
    unknown = wanted - known
    if unknown:
        raise ValueError(f"unknown plant families {sorted(unknown)}: choose from {', '.join(sorted(known))} (or all)")
    chosen: list[Plant] = []
    skipped: list[dict[str, Any]] = []
    for t in TARGETS:
        if t.kind not in wanted or not (t.cpu if is_cpu else t.gpu):
            continue
        if is_cpu and t.gpu_only:
            skipped.append({"kind": t.kind, "metric": t.metric, "why": t.gpu_only})
            continue
        metric = metric_of(t, compute_units)
        if metric is None:
            skipped.append({"kind": t.kind, "metric": t.metric,
                            "why": "its name carries the device's compute-unit count, which the device did not "
                                   "report"})
            continue
        entry = entries.get(metric)
        if entry is None and t.per_unit:
            skipped.append({"kind": t.kind, "metric": metric,
                            "why": f"its name carries this device's geometry ({compute_units} compute units), and "
                                   "the device's baseline has no entry under it: nothing to judge the plant against"})
            continue
        why = None if ungated is None else ungated(metric, str((entry or {}).get("unit", "")))
        if why:
            skipped.append({"kind": t.kind, "metric": metric, "why": f"recorded, not gated: {why}"})
            continue
        if entry is not None:
            size = claimed_size(entry, band, t.additive, None if power is None else power(metric, entry))
        else:
            size = t.fallback[1 if is_cpu else 0]
        if size > MAX_SIZE:
            skipped.append({"kind": t.kind, "metric": metric,
                            "why": f"its gate claims only a change of {size:g}× the value (over {MAX_SIZE:g}): "
                                   "no plant can test so loose a gate"})
            continue
        chosen.append(Plant(t.kind, f"{size:g}", metric, _tests(t, entry, spec)))
    for kind, (arg, metric, selection) in FIXED.items():
        if kind in wanted:
            chosen.append(Plant(kind, arg, metric, _tests(Target(kind, metric, selection, (0, 0)),
                                                          entries.get(metric), spec)))
    if families is not None:  # in the order the user named them: a time-limited call plants those first
        order = {kind: i for i, kind in enumerate(dict.fromkeys(families))}
        chosen.sort(key=lambda p: order[p.kind])
    return chosen, skipped


def curve_plants(is_cpu: bool, entries: Mapping[str, Mapping[str, Any]], spec: str = "",
                 sizes: Sequence[float] = CURVE_SIZES, ungated: Ungated | None = None
                 ) -> tuple[list[Plant], list[dict[str, Any]]]:
    """The headline figures (:data:`HEADLINES`, those the device class measures) planted at each of ``sizes``, and
    those left out with the reason: GPU-only on a CPU device, or recorded without being judged (``ungated``, as
    in :func:`family_plants`) — a curve of a figure the gate never judges would read "missed" at every size."""
    out: list[Plant] = []
    skipped: list[dict[str, Any]] = []
    for t in TARGETS:
        if t.metric not in HEADLINES or not (t.cpu if is_cpu else t.gpu):
            continue
        why = t.gpu_only if is_cpu else None
        if why is None and ungated is not None:
            reason = ungated(t.metric, str((entries.get(t.metric) or {}).get("unit", "")))
            why = f"recorded, not gated: {reason}" if reason else None
        if why:
            skipped.append({"kind": t.kind, "metric": t.metric, "why": f"no detection curve: {why}"})
            continue
        out += [Plant(t.kind, f"{s:g}", t.metric, _tests(t, entries.get(t.metric), spec)) for s in sizes]
    return out, skipped
