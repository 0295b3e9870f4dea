"""``pytest --gpuperf-compare=OTHER.json``: gate a run against another run instead of a baseline.

Each metric a test records is judged by :func:`.engine.judge` — the very function behind ``gpuperf
compare`` — against the same metric of the reference run, so a pytest gate and a later ``gpuperf
compare OTHER.json THIS.json`` give the same verdict on the same numbers — the same noise models
(:mod:`pytest_gpuperf.baselines.noise`) included: a deterministic figure is compared exactly, a timing
by its samples against one reference run or over runs against several, and a figure derived from
timings (``repeated``) is judged only when both sides carry :data:`~pytest_gpuperf.baselines.noise.MIN_REPEATS`
values (this run: its ``info["repeats"]``). The comparison's words map back onto the session's:
``worse`` → ``regressed`` (the test fails, as against a baseline), ``better`` → ``improved``, ``same`` →
``pass``, a metric the reference lacks → ``new`` (a documented bound still gates it), a worse row that is
not gated (a per-kernel component without agreeing runs) and an ``informational`` row (recorded, never
judged) → ``ungated``; a row whose either side was measured while the card throttled → ``throttled``;
``incomparable`` stays. An impossible value in the reference is that reference's problem, not this
run's: ``incomparable`` with the reason.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..verdictwords import COMPARE_TO_GATE, Compare, Gate
from . import engine
from .load import Side, load_side, merge
from ..schemas.results_doc import MetricRecord


def load_reference(paths: list[str]) -> Side:
    """The reference runs (side A, pooled as in ``gpuperf compare``); :class:`.load.CompareInputError` on a
    bad file."""
    return load_side("A", paths)


def judge_metric(reference: Side, metric: MetricRecord, device: Mapping[str, Any],
                 opts: engine.Options = engine.Options()) -> tuple[str, dict[str, Any] | None, str]:
    """(session verdict, what the results file keeps as the metric's ``baseline``, the one-line message)."""
    b = merge(str(metric.require("name").name), [metric])
    a = reference.metrics.get(b.name)
    row = engine.judge(a, b, reference.device, device, opts)
    if a is None:
        return "new", None, f"{b.name}: new — the reference run {', '.join(reference.paths)} did not record it"
    verdict = Gate.UNGATED if row.verdict == Compare.WORSE and not row.gated else COMPARE_TO_GATE[row.verdict]
    if row.extra.get("throttled") and verdict in Gate.COMPARED:
        verdict = Gate.THROTTLED  # the card slowed itself down on one side: not gated
    elif row.extra.get("contended") and verdict in Gate.COMPARED:
        verdict = Gate.CONTENDED  # a CPU device shared its cores on one side: not gated (timing.observers)
    doc = {"value": a.value, "source": "run " + ", ".join(reference.paths), "band": row.extra.get("band") or 0.0,
           "delta_rel": row.delta_rel, "compare": row.to_json()}
    return verdict, doc, row.line("reference", "this run")


def junit_property(name: str, metric: Any, device: str) -> tuple[str, str]:
    """One ``record_property`` of a metric: its value, the reference, the delta and the verdict, as JSON
    (a JUnit property holds one string; JSON keeps it machine-readable for CI dashboards)."""
    base = metric.baseline or {}
    compared = base.get("compare") or {}
    doc = {"value": metric.value, "unit": metric.unit, "reference": base.get("value"),
           "delta_rel": base.get("delta_rel"), "verdict": compared.get("verdict", metric.verdict),
           "gate": metric.verdict, "against": base.get("source", "baseline" if base else None), "device": device}
    from ..report.results import jsonable

    return f"gpuperf.{name}", json.dumps(jsonable(doc), ensure_ascii=False)
