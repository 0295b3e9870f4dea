"""The verdict of one recorded metric: against its baseline entry, a reference run or its documented bound.

This is the one place a figure is judged. A live run calls :func:`judge` as a test records a metric (after
:func:`annotated` has put what the observers saw into its ``info``); a tool that judges a saved run again —
against another baseline, or to check that a change kept every verdict — calls :func:`judge_record` on the
stored record (or :func:`unjudged` then :func:`judge`), and gets exactly the verdict, message and baseline
comparison a live run would have given. Against a reference run (``--gpuperf-compare``,
:attr:`.device_runs.DeviceRun.reference`) the verdict is ``gpuperf compare``'s
(:func:`pytest_gpuperf.compare.gate.judge_metric`); against a baseline entry the metric's noise model decides
how a verdict may be reached (:func:`pytest_gpuperf.baselines.verdicts.compare`); either way the observers may
still make the figure ``contended`` or ``throttled`` (:func:`.timing.observers.measured_verdict`), naming a
change far beyond what they explain (``would_regress``).
"""

from __future__ import annotations

import copy
from typing import Any, Mapping

from . import baselines as bl
from .baselines import noise
from .device_runs import DeviceRun
from .report.results import Metric
from .schemas.results_doc import MetricRecord, ResultsDocumentError
from .timing import observers
from .timing.stats import Stats
from .verdictwords import Gate

#: what a stored metric's ``info`` holds that :func:`judge` itself writes: left out before judging it again
WRITTEN = ("line", "would_regress", "xfail")
#: the fields of a stored metric a verdict needs
NEEDED = ("test", "name", "value", "unit", "better")


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


def judge(run: DeviceRun, metric: Metric, bound: float | None = None) -> Metric:
    """The metric's verdict, written into it (``verdict``, ``baseline``, ``info["line"]`` and, where the
    observers explain less than the change, ``info["would_regress"]``), and the metric returned: against the
    run's reference run under ``--gpuperf-compare`` (``run.reference``, a ``compare.load.Side``: the verdict of
    ``gpuperf compare``), else against its baseline entry (``run.expected``) by its noise model, else against
    its documented bound ``bound`` (a baseline of its own before anyone reviewed a file)."""
    name, value, unit, better, stats = metric.name, metric.value, metric.unit, metric.better, metric.stats
    reference = run.reference
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
            return metric
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
    return metric


def unjudged(record: MetricRecord | Mapping[str, Any]) -> tuple[Metric, float | None]:
    """A stored metric (a results file's record, or its dict) as a live run holds it just before :func:`judge`,
    and its documented bound: its figures, samples, identity, kernel digest and what the observers saw, without
    what the judgement wrote (:data:`WRITTEN`, the stored verdict and baseline comparison). A record that lacks
    a field a verdict needs raises :class:`.schemas.results_doc.ResultsDocumentError` naming it."""
    rec = record if isinstance(record, MetricRecord) else MetricRecord.from_json(dict(record))
    lacking = [k for k in NEEDED if rec.get(k) is None]
    if lacking:
        raise ResultsDocumentError(f"metric {rec.name or '?'}", f"has no {', '.join(lacking)}; judge a metric "
                                   "as `--gpuperf-json` writes it")
    info = {k: v for k, v in copy.deepcopy(rec.info or {}).items() if k not in WRITTEN}
    stats = None if not rec.stats else Stats.from_json(rec.stats)
    metric = Metric(str(rec.test), str(rec.name), float(rec.value), str(rec.unit), str(rec.better), stats, None,
                    Gate.NEW, info, None if rec.tolerance is None else dict(rec.tolerance), dict(rec.identity or {}),
                    rec.get("source_digest"))
    bound = info.get("bound")
    return metric, None if bound is None else float(bound)


def judge_record(run: DeviceRun, record: MetricRecord | Mapping[str, Any]) -> Metric:
    """A stored metric judged again against ``run``'s baseline (or its reference run) exactly as a live run
    judges it when its test records it: :func:`unjudged`, then :func:`judge` with its documented bound. The
    returned metric holds the verdict, ``info["line"]``, the baseline comparison and any ``would_regress``."""
    metric, bound = unjudged(record)
    return judge(run, metric, bound)
