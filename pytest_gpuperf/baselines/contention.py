"""Which runs of a first baseline may give an entry its value: a figure measured while the host or the card
was not the code's alone, or that holds a value no measurement can take, is not a reference.

``gpuperf baseline init`` merges N runs. A metric whose window another process shared (a CPU device's
busy host, a card with another tenant) or that the card throttled in one of them (what the gate would
call ``contended`` or ``throttled``: :func:`pytest_gpuperf.timing.observers.measured_verdict`) takes its
value and band from the other runs only; one disturbed in every run is left out of the baseline, named,
with the fix (run on a quiet host) — unless the user keeps such entries, and then the file flags them.
When more than :data:`~pytest_gpuperf.timing.observers.CONTENDED_RUN_LIMIT` of the metrics would be left
out, the runs say little about the code and the init is refused, as a gated run over that share is. A
metric with a value or a sample no measurement can take in any run (:func:`.validity.metric_problem`, the
rule every builder of an entry applies) is never stored. What was left out or flagged is written into the
section's provenance (:func:`provenance`)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

from ..verdictwords import Gate
from .. import exits
from ..timing import observers
from ..schemas.results_doc import ResultsDocument
from . import noise, validity

#: what :func:`disturbance` names, and the exit status of an init refused for it
CAUSES = {"contended": "the host's CPUs were busy with other work", "shared": "another process ran on the card",
          "throttled": "the card slowed itself down (thermal, power cap)"}
EXITS = {"contended": exits.HOST_TOO_BUSY, "shared": exits.GPU_TOO_BUSY, "throttled": exits.THROTTLED}
FIXES = {"contended": "run init again on a quiet host (nothing else using its CPUs)",
         "shared": "run init again with the card to itself", "throttled": "fix the card's cooling or power limit"}


def disturbance(metric: Mapping[str, Any], is_cpu: bool) -> str | None:
    """Why one run's figure is not the code's own — ``contended`` (busy host, CPU devices), ``shared``
    (another process on the card), ``throttled`` — or None; the same marks the gate judges by."""
    info = metric.get("info") if isinstance(metric.get("info"), Mapping) else {}
    deterministic = noise.is_deterministic(metric, str(metric.get("name", "")))
    if observers.shared_metric(info, deterministic):
        return "shared"
    verdict = observers.measured_verdict("pass", info, is_cpu, deterministic)
    return None if verdict == Gate.PASS else (Gate.THROTTLED if verdict == Gate.THROTTLED else Gate.CONTENDED)


@dataclass
class Screened:
    """The runs of one device and backend with the disturbed figures taken out, and what was taken out."""

    docs: list[ResultsDocument]
    #: metric → why it is not in the baseline (disturbed in every run, or an impossible value)
    left_out: dict[str, str] = field(default_factory=dict)
    #: metric → the runs whose figure was set aside (the entry comes from the others)
    partial: dict[str, str] = field(default_factory=dict)
    #: metric → why it is kept although disturbed in every run (the user asked: ``--keep-contended``)
    flagged: dict[str, str] = field(default_factory=dict)
    #: metrics with an impossible value or sample (a subset of ``left_out``)
    impossible: list[str] = field(default_factory=list)
    #: disturbed metric → its cause (:data:`CAUSES`)
    causes: dict[str, str] = field(default_factory=dict)
    metrics: int = 0

    def too_disturbed(self) -> bool:
        """More than :data:`~pytest_gpuperf.timing.observers.CONTENDED_RUN_LIMIT` of the metrics left out as
        disturbed in every run: the runs cannot make a baseline (the share at which a gated run is refused)."""
        every = [n for n in self.left_out if n in self.causes]  # kept on request (flagged): not refused
        return bool(self.metrics) and len(every) > observers.CONTENDED_RUN_LIMIT * self.metrics

    def main_cause(self) -> str:
        """The cause most of the disturbed metrics share."""
        counts: dict[str, int] = defaultdict(int)
        for cause in self.causes.values():
            counts[cause] += 1
        return max(sorted(counts), key=lambda c: counts[c]) if counts else "contended"


def screen(docs: Sequence[ResultsDocument], keep_contended: bool = False) -> Screened:
    """The runs (results documents of one device and backend, in run order) as :func:`.merge.merge_runs`
    should merge them: each metric without its disturbed runs' figures; a metric disturbed in every run
    left out (kept and flagged with ``keep_contended``); a metric with an impossible value or sample in any run
    (:func:`.validity.metric_problem`) left out."""
    is_cpu = bool(docs[-1].device.get("is_cpu")) if docs else False
    runs_of: dict[str, list[int]] = defaultdict(list)
    disturbed: dict[str, list[int]] = defaultdict(list)
    out = Screened(docs=[])
    for i, doc in enumerate(docs, start=1):
        for m in doc.metrics:
            why = validity.metric_problem(m, doc.device.get("peak_bandwidth_gbs"))
            if why and m.require("name").name not in out.left_out:
                out.left_out[m.name] = f"run {i}: {why}"
                out.impossible.append(m.name)
            if not isinstance(m.value, (int, float)):
                continue
            runs_of[m.require("name").name].append(i)
            cause = disturbance(m, is_cpu)
            if cause:
                disturbed[m.name].append(i)
                out.causes.setdefault(m.name, cause)
    out.metrics = len(runs_of)
    drop: dict[str, set[int]] = {}
    for name, bad in disturbed.items():
        said = (f"in run{'s' if len(bad) > 1 else ''} {', '.join(map(str, bad))} of {len(docs)} "
                f"{CAUSES[out.causes[name]]}")
        if name in out.left_out:
            continue
        if len(bad) < len(runs_of[name]):
            drop[name] = set(bad)
            out.partial[name] = f"{said}: made from the other runs"
        elif keep_contended:
            out.flagged[name] = f"{said}: kept (--keep-contended), its value and band are not the code's alone"
        else:
            out.left_out[name] = f"{said}: left out"
    for name in list(out.causes):
        if name not in out.left_out and name not in out.partial and name not in out.flagged:
            del out.causes[name]  # impossible and disturbed: left out as impossible
    for i, doc in enumerate(docs, start=1):
        kept = tuple(m for m in doc.metrics
                     if m.require("name").name not in out.left_out and i not in drop.get(m.name, ()))
        out.docs.append(replace(doc, metrics=kept))
    return out


def provenance(prov: Mapping[str, Any], screened: Screened) -> dict[str, Any]:
    """The section's provenance with what the screening did: ``left_out`` (metric → why it is not in the
    file), ``partial`` (metric → the runs set aside) and ``contended`` (metric → why it is kept although
    disturbed in every run)."""
    out = dict(prov)
    for key, found in (("left_out", screened.left_out), ("partial", screened.partial),
                       ("contended", screened.flagged)):
        if found:
            out[key] = dict(sorted(found.items()))
    return out
