"""The sibling check: cards of one model in one host, side by side, and the one that is worse.

Cards of one model (one ``device.key``) in one host run the same code on the same driver; a card that
is slower or less accurate than its siblings is a hardware or configuration problem (a throttled or
mis-seated card, a lower power limit, ECC page retirement) that a per-model baseline, whose bands
must hold every healthy card, can hide. The check needs no baseline: for every metric that all cards
of a group recorded, each card is compared with **its siblings pooled**. This module gathers the figures
(the groups, each card's value, samples, unit and identity, the class floor) and formats the report;
the verdict is the sibling rule's (:mod:`pytest_gpuperf.baselines.sibling_verdict`, the statistics of the
regression gate):

* ``ratio`` = median(this card) / median(the siblings' samples pooled), or of the values where the cards
  carry no raw samples (``basis: values``);
* ``outlier`` — worse than the siblings (direction-aware through the metric's ``better``) by more than
  the metric class's minimum effect (``baselines/classes.py``: 3 % on GPUs, wider on CPU devices)
  **and** significantly so where both sides carry raw samples; an ``exact`` figure that differs;
* ``better`` — the same on the good side (a prompt to look at the siblings, not a failure);
* ``same`` — inside the floor, or not significant;
* ``incomparable`` — recorded another way on some card (unit or identity differs), or no usable value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from ..verdictwords import Sibling
from .. import SIBLINGS_SCHEMA
from ..baselines import classes
from ..baselines.sibling_verdict import SiblingFigure, sibling_verdict
from ..schemas.results_doc import MetricRecord, ResultsDocument
from ..timing.difference import ALPHA
from .identity import physical_id

SCHEMA = SIBLINGS_SCHEMA  # schemas/siblings-1.json
VERDICTS = Sibling.ALL  # worst first


@dataclass(frozen=True)
class Card:
    """One device's results: what the check reads of a results document."""

    spec: str
    key: str
    name: str
    physical: str
    is_cpu: bool
    metrics: Mapping[str, MetricRecord]  # name → the results file's metric entry

    @classmethod
    def from_document(cls, doc: ResultsDocument) -> "Card":
        """The card of one results document (read through :class:`ResultsDocument`, where it is read)."""
        dev = doc.device or {}
        return cls(spec=str(dev.get("spec") or f"{dev.get('backend')}:{dev.get('index')}"), key=str(dev.get("key")),
                   name=str(dev.get("name", "")), physical=physical_id(dev), is_cpu=bool(dev.get("is_cpu")),
                   metrics={m.require("name").name: m for m in doc.metrics})


@dataclass
class Row:
    """One metric of one card against its siblings."""

    metric: str
    spec: str
    unit: str
    better: str
    value: float | None
    siblings_value: float | None  # median of the siblings' values (or of their pooled samples)
    ratio: float | None
    threshold: float  # the class floor: the smallest relative effect that counts
    verdict: str
    basis: str  # "samples" | "values" | "-"
    reason: str = ""
    difference: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "device": self.spec, "unit": self.unit, "better": self.better,
                "value": _finite(self.value), "siblings_value": _finite(self.siblings_value),
                "ratio": _finite(self.ratio), "threshold": self.threshold, "verdict": self.verdict,
                "basis": self.basis, "reason": self.reason, "difference": self.difference}


@dataclass
class Group:
    """Cards of one model (one device key) and their rows."""

    key: str
    name: str
    devices: list[str]
    rows: list[Row] = field(default_factory=list)

    def outliers(self) -> list[Row]:
        return [r for r in self.rows if r.verdict == Sibling.OUTLIER]

    def to_json(self) -> dict[str, Any]:
        counts: dict[str, dict[str, int]] = {}
        for r in self.rows:
            counts.setdefault(r.spec, {}).setdefault(r.verdict, 0)
            counts[r.spec][r.verdict] += 1
        return {"key": self.key, "name": self.name, "devices": self.devices, "counts": counts,
                "outlier_devices": sorted({r.spec for r in self.outliers()}),
                "rows": [r.to_json() for r in self.rows]}


def _finite(x: float | None) -> float | str | None:
    return x if x is None or math.isfinite(x) else repr(x)


def _samples(metric: MetricRecord) -> list[float] | None:
    xs = metric.samples
    return [float(x) for x in xs] if xs else None


def _value(metric: MetricRecord) -> float | None:
    try:
        v = float(metric.value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def judge(name: str, card: Card, siblings: Sequence[Card], floor: float, alpha: float = ALPHA) -> Row:
    """One card's metric ``name`` against the same metric of its ``siblings`` pooled: the figures gathered
    here, the verdict the sibling rule's (:func:`pytest_gpuperf.baselines.sibling_verdict.sibling_verdict`)."""
    mine = card.metrics[name]
    unit, better = str(mine.get("unit", "")), str(mine.get("better", "lower"))
    value = _value(mine)
    others = [s.metrics[name] for s in siblings]
    j = sibling_verdict(SiblingFigure(value, _samples(mine), unit, mine.identity),
                        [SiblingFigure(_value(o), _samples(o), o.unit, o.identity) for o in others],
                        better, floor, alpha)
    return Row(name, card.spec, unit, better, value, j.siblings_value, j.ratio, floor, j.verdict, j.basis,
               j.reason, None if j.difference is None else j.difference.to_json())


def check(documents: Iterable[ResultsDocument], *, floor: float | None = None,
          floor_override: tuple[float, float] | None = None, alpha: float = ALPHA) -> dict[str, Any]:
    """The sibling report of a host's results documents (one per device; the same as results files).

    Devices group by ``device.key`` and backend (a backend's kernels are its own: CUDA and OpenCL figures
    of one metric name are not the same measurement); a group needs two or more distinct physical cards.
    ``floor``: one threshold for every metric (``gpuperf siblings --threshold``); otherwise the class
    floor of each metric's unit (``floor_override``: ``--gpuperf-floor GPU CPU``)."""
    by_group: dict[tuple[str, str], list[Card]] = {}
    for doc in documents:
        card = Card.from_document(doc)
        members = by_group.setdefault((card.key, card.spec.partition(":")[0]), [])
        if all(c.physical != card.physical for c in members):  # one card, one entry (a repeated file)
            members.append(card)
    groups: list[Group] = []
    for (key, _backend), members in sorted(by_group.items()):
        if len(members) < 2:
            continue
        group = Group(key, members[0].name, [c.spec for c in members])
        common = set.intersection(*(set(c.metrics) for c in members))
        for name in sorted(common):
            for card in members:
                sibs = [c for c in members if c is not card]
                unit = str(card.metrics[name].get("unit", ""))
                # one run per card: how far unchanged cards' figures spread between runs is not known here
                thr = floor if floor is not None else classes.floor(
                    unit, card.is_cpu, floor_override, classes.is_host_timed(card.metrics[name].get("info")),
                    spread_known=False)
                group.rows.append(judge(name, card, sibs, thr, alpha))
        order = {v: i for i, v in enumerate(VERDICTS)}
        group.rows.sort(key=lambda r: (order.get(r.verdict, 99), r.metric, r.spec))
        groups.append(group)
    return {"schema": SCHEMA, "alpha": alpha, "groups": [g.to_json() for g in groups],
            "outliers": [r.to_json() for g in groups for r in g.outliers()]}


def summary_lines(report: Mapping[str, Any], limit: int = 20) -> list[tuple[str, bool]]:
    """Terminal lines of a report: per group, a tally per card and every outlier (up to ``limit``),
    each as (text, is_bad)."""
    lines: list[tuple[str, bool]] = []
    for g in report.get("groups", []):
        lines.append((f"siblings {g['key']} ({g['name']}): {', '.join(g['devices'])}", False))
        for spec in g["devices"]:
            tally = ", ".join(f"{n} {v}" for v, n in sorted(g["counts"].get(spec, {}).items()))
            bad = spec in g["outlier_devices"]
            lines.append((f"  {spec}: {'OUTLIER — ' if bad else ''}{tally or 'no metric in common'}", bad))
        outliers = [r for r in g["rows"] if r["verdict"] == Sibling.OUTLIER]
        for r in outliers[:limit]:
            ratio = "-" if r["ratio"] is None else f"{r['ratio']:.4g}"
            stat = ""
            if r.get("difference"):
                d = r["difference"]
                stat = f" [{d['ci'][0]:.4g}, {d['ci'][1]:.4g}] p={d['p_value']:.2g}"
            lines.append((f"  OUTLIER {r['device']} {r['metric']}: {r['value']:.6g} {r['unit']} vs siblings "
                          f"{r['siblings_value']:.6g} ({r['better']} is better), ratio {ratio}{stat}, "
                          f"floor {r['threshold']:.0%} ({r['basis']})", True))
        if len(outliers) > limit:
            lines.append((f"  … {len(outliers) - limit} more outlier rows in siblings.json", True))
    return lines
