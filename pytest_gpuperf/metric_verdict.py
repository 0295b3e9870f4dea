"""The verdict of one recorded metric: against its baseline entry, a reference run or its documented bound.

The session calls :func:`judge` as a test records a metric (after :func:`annotated` has put what the
observers saw into its ``info``). Against a reference run (``--gpuperf-compare``) the verdict is ``gpuperf
compare``'s (:func:`pytest_gpuperf.compare.gate.judge_metric`); against a baseline entry the metric's noise
model decides how a verdict may be reached (:func:`pytest_gpuperf.baselines.verdicts.compare`); either way
the observers may still make the figure ``contended`` or ``throttled`` (:func:`.timing.observers.measured_verdict`),
naming a change far beyond what they explain (``would_regress``).
"""

from __future__ import annotations

from typing import Any

from . import baselines as bl
from .baselines import noise
from .device_runs import DeviceRun
from .report.results import Metric
from .schemas.results_doc import MetricRecord
from .timing import observers
from .verdictwords import Gate


def annotated(run: DeviceRun, metric: Metric, bound: float | None) -> Metric:
    """The metric with what the observers saw while it was measured (host load, other processes on the
    card, power and throttling) and its documented bound."""
    if bound is not None:
        metric.info["bound"] = float(bound)
    dev = run.device
    seen = {} if dev is None else observers.Capture(dev, from_start=True).marks()
    if "host" in seen:
        metric.info["host"] = seen["host"]
    if "tenants" in seen:
        metric.info["tenants"] = seen["tenants"]
    if "power" in seen:
        given = dict(metric.info.get("power") or {})
        # the test's own power figures win, but a throttle either of them saw stays seen
        metric.info["power"] = {**seen["power"], **given,
                                "throttled": bool(seen["power"]["throttled"] or given.get("throttled"))}
    return metric


def deterministic(metric: Metric) -> bool:
    """Whether the metric follows the ``deterministic`` noise model (``baselines.noise``): its value is the
    same bits whoever shared the machine, so only marks it inherited (``timing.observers.inherit``) keep
    it from being judged."""
    samples = bool(metric.stats is not None and metric.stats.samples)
    return noise.model_of(metric.name, metric.unit, metric.better, samples, metric.info) == "deterministic"


def judge(run: DeviceRun, metric: Metric, bound: float | None, reference: Any = None) -> None:
    """The metric's verdict: against the reference run under ``--gpuperf-compare`` (``reference``, a
    ``compare.load.Side``: the verdict of ``gpuperf compare``), else against its baseline entry by its noise
    model, else against its documented bound (a baseline of its own before anyone reviewed a file)."""
    name, value, unit, better, stats = metric.name, metric.value, metric.unit, metric.better, metric.stats
    entry = run.expected.get(name)
    if reference is not None:  # --gpuperf-compare: the verdict of 'gpuperf compare' (compare.gate)
        entry = None  # the reference run replaces the baseline; a documented bound still gates below
        if name in reference.metrics:
            from .compare.gate import judge_metric

            # judge_metric already gives throttled/contended, for either side (compare.gate)
            metric.verdict, metric.baseline, metric.info["line"] = judge_metric(
                reference, MetricRecord.from_json(metric.to_json()), run.info.to_json())
            if (observers.shared_metric(metric.info, deterministic(metric))
                    and metric.verdict in (*Gate.JUDGED, Gate.THROTTLED)):
                metric.verdict = Gate.CONTENDED  # this run's card was shared (timing.observers.measured_verdict)
            beyond = ((metric.baseline or {}).get("compare") or {}).get("would_regress")
            if beyond and metric.verdict in Gate.DISTURBED:
                metric.info["would_regress"] = beyond
            return
    # the metric's noise model decides how a verdict may be reached, as in 'gpuperf compare' (baselines.noise)
    cmp = bl.compare(value, better, entry, samples=None if stats is None else stats.samples,
                     identity=metric.identity, gate_if_stable=metric.info.get("gate") == "if-stable",
                     name=name, unit=unit, info=metric.info, source_digest=metric.source_digest)
    fixed = deterministic(metric)
    metric.verdict = observers.measured_verdict(cmp.verdict, metric.info, run.info.is_cpu, fixed)
    if metric.verdict in Gate.DISTURBED and cmp.expected is not None:
        d = cmp.difference  # the ratio's interval where both sides carry samples: its end nearest to no change
        factor = observers.worse_factor(value, cmp.expected, better, None if d is None else (d.ci_low, d.ci_high))
        beyond = observers.would_regress(factor, metric.info, run.info.is_cpu, run.info.compute_units, fixed)
        if beyond is not None:  # named in the summary and the results: "would have regressed: run again alone"
            metric.info["would_regress"] = beyond
    if entry is not None:
        metric.baseline = {k: v for k, v in entry.items() if k not in ("provenance", "samples")}
        metric.baseline.update(cmp.to_json())
    elif bound is not None and better == "bound":
        # A documented bound is a baseline of its own even before anyone reviewed a file.
        doc = {"value": float(bound), "better": "bound", "tolerance": dict(metric.tolerance or {})}
        cmp = bl.compare(value, "bound", doc)
        metric.verdict = Gate.REGRESSED if cmp.verdict == Gate.REGRESSED else Gate.NEW
        metric.baseline = {**doc, **cmp.to_json(), "source": "documented bound"}
    metric.info["line"] = cmp.line(name, value, unit, better)
