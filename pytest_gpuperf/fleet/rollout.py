"""A fleet's baseline and the rollout gate: what a fleet run says about the model, not about one card.

* :func:`fleet_baseline` — baseline entries for review from a fleet run: per model (device key and
  backend), the cards the fleet report does not flag (no fail, no uncertain) merged by the project's one
  merge rule (``baselines.merge.merge_runs``: the median over the cards, the spread between them as the
  band's noise) and written by the baseline file writer, so ``gpuperf baseline check`` and
  ``gpuperf baseline diff`` read it like any other.
* :func:`compare` — two fleet runs of one model (nodes on the old driver, nodes on the new) metric by
  metric, each card one value: the spread **between cards** is the unit (Welch's t or Mann–Whitney over the
  per-card values), Benjamini–Hochberg across metrics; a metric is ``worse`` when the new cohort is
  significantly worse **and** its median is worse than the old one's by more than the effect floor (the
  metric class's floor or the metric's own within-run noise × the noise multiple). Deterministic figures
  compare their cohort majorities exactly. The tests and the verdicts are the cohort noise model's
  (:mod:`pytest_gpuperf.baselines.cohort`: :func:`~pytest_gpuperf.baselines.cohort.between_cards`,
  :func:`~pytest_gpuperf.baselines.cohort.timed_shift`, :func:`~pytest_gpuperf.baselines.cohort.exact_shift`);
  this module gathers each model's per-card values and words the report.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..verdictwords import Compare, FleetCard, Rollout
from .. import FLEET_COMPARE_SCHEMA
from ..baselines import baseline_file, cohort
from ..baselines.merge import merge_runs
from ..errors import GpuPerfError
from ..schemas.results_doc import ResultsDocument
from .fleetload import Card, Fleet, cohort_label
from .fleetreport import Settings, fleet_tested, analyze

#: the false-discovery rate of the rollout gate (fewer tests than a fleet report: metrics, not cards × metrics)
COMPARE_FDR = 0.05
TESTS = ("welch", "mannwhitney")


def _models(fleet: Fleet) -> dict[tuple[str, str], list[Card]]:
    out: dict[tuple[str, str], list[Card]] = {}
    for c in fleet.cards:
        out.setdefault((str(c.identity.get("key")), str(c.identity.get("backend"))), []).append(c)
    return out


def same_way(cards: Sequence[Card]) -> tuple[list[ResultsDocument], dict[str, int]]:
    """The cards' documents with each metric kept only where it was recorded the way most cards recorded
    it (unit, direction, identity: a fleet may span code versions whose options changed), and how many
    runs' values of each metric were dropped for it."""
    ways: dict[str, dict[tuple[str, str, str], int]] = {}
    for c in cards:
        for m in c.metrics.values():
            key = (m.unit, m.better, m.identity)
            ways.setdefault(m.name, {}).setdefault(key, 0)
            ways[m.name][key] += 1
    majority = {name: max(counts.items(), key=lambda kv: kv[1])[0] for name, counts in ways.items()}
    docs, dropped = [], {}
    for c in cards:
        for d in c.docs:
            keep = []
            for m in d.metrics:
                key = (str(m.get("unit", "")), str(m.get("better", "lower")),
                       json.dumps(m.identity or {}, sort_keys=True))
                if majority.get(str(m.name)) == key:
                    keep.append(m)
                else:
                    dropped[str(m.name)] = dropped.get(str(m.name), 0) + 1
            docs.append(replace(d, metrics=tuple(keep)))
    return docs, dropped


def fleet_baseline(fleet: Fleet, directory: str | Path, k: float = 6.0,
                   settings: Settings = Settings()) -> list[dict[str, Any]]:
    """Write baseline entries from ``fleet`` into ``directory`` (one file per device key, one section per
    backend) from the cards the fleet report leaves ok or warn; returns what was written per model. Where one
    model's cards fall into several cohorts (two drivers, two power limits), the largest cohort is used and
    the others are named: a baseline holds one setting."""
    report = analyze(fleet, settings=settings)
    flagged = {c["card"] for c in report["cards"] if c["verdict"] in (FleetCard.FAIL, FleetCard.UNCERTAIN)}
    written = []
    for (key, backend), cards in sorted(_models(fleet).items()):
        cohorts: dict[str, list[Card]] = {}
        for c in cards:
            cohorts.setdefault(cohort_label(c.cohort), []).append(c)
        label, members = max(cohorts.items(), key=lambda kv: len(kv[1]))
        kept = [c for c in members if c.name not in flagged]
        if not kept:
            raise GpuPerfError(f"every card of {label} is flagged by the fleet report: no card to make a baseline of")
        docs, dropped = same_way(kept)
        entries = merge_runs(docs, k)
        baseline = baseline_file.load(directory, key)
        prov = dict(next(iter(entries.values()))["provenance"]) if entries else {}
        prov["fleet_run"] = fleet.run_id
        prov["cards"] = len(kept)
        baseline_file.update(baseline, backend, baseline_file.device_header(docs[-1].device), prov, entries)
        written.append({"path": str(baseline.path), "key": key, "backend": backend, "cohort": label,
                        "metrics": len(entries), "cards": [c.name for c in kept],
                        "excluded": sorted(c.name for c in members if c.name in flagged),
                        "other_cohorts": sorted(k2 for k2 in cohorts if k2 != label), "dropped": dropped})
    return written


def _row(name: str, old: Sequence[Card], new: Sequence[Card], test: str) -> dict[str, Any] | None:
    mo = [c.metrics[name] for c in old if name in c.metrics]
    mn = [c.metrics[name] for c in new if name in c.metrics]
    if not mo or not mn:
        return None
    ref = mo[0]
    if any((m.unit, m.better, m.identity) != (ref.unit, ref.better, ref.identity) for m in mo + mn):
        return {"metric": name, "verdict": Compare.INCOMPARABLE,
                "why": "recorded another way (unit, direction or identity)"}
    if ref.deterministic:
        a = str(cohort.majority([repr(cohort.exact_value(m.values)) for m in mo])[0])
        b = str(cohort.majority([repr(cohort.exact_value(m.values)) for m in mn])[0])
        return {"metric": name, "kind": "deterministic", "old": a, "new": b, "unit": ref.unit, "better": ref.better,
                "verdict": Compare.SAME if a == b else cohort.exact_shift(a, b, ref.better)}
    xo = [m.value for m in mo if fleet_tested(m)]
    xn = [m.value for m in mn if fleet_tested(m)]
    if len(xo) < 2 or len(xn) < 2:  # counted and said, never dropped: a busy fleet must not look like a clean one
        return {"metric": name, "kind": "not judged", "unit": ref.unit, "better": ref.better,
                "old_cards": len(xo), "new_cards": len(xn), "verdict": Compare.INFORMATIONAL,
                "why": (f"judged on {len(xo)} old and {len(xn)} new card(s), needs two a side: the others measured it "
                        "while the host or card was busy (contended, shared or throttled), which the fleet statistics "
                        "leave out")}
    p = cohort.between_cards(xo, xn, ref.better, test)
    mo_med, mn_med = float(statistics.median(xo)), float(statistics.median(xn))
    cvs = [m.noise_rel for m in mo + mn if m.noise_rel is not None]
    noise_rel = float(statistics.median(cvs)) if cvs else 0.0
    floor, _ = cohort.effect_floor(ref.unit, ref.info, any(c.is_cpu for c in list(old) + list(new)), noise_rel)
    return {"metric": name, "kind": "timed", "unit": ref.unit, "better": ref.better, "old": mo_med, "new": mn_med,
            "old_cards": len(xo), "new_cards": len(xn), "effect": cohort.worse_effect(mn_med, mo_med, ref.better),
            "floor": floor, "p": p, "verdict": Compare.SAME}


def compare(old: Fleet, new: Fleet, test: str = "welch", fdr: float = COMPARE_FDR) -> dict[str, Any]:
    """The rollout gate's report of fleet run ``new`` against ``old`` (see the module's docstring)."""
    if test not in TESTS:
        raise GpuPerfError(f"unknown test {test!r}; choose one of {', '.join(TESTS)}")
    mo, mn = _models(old), _models(new)
    models = []
    for key in sorted(set(mo) & set(mn)):
        a, b = mo[key], mn[key]
        entry: dict[str, Any] = {"key": key[0], "backend": key[1], "old_cards": [c.name for c in a],
                                 "new_cards": [c.name for c in b], "rows": []}
        models.append(entry)
        if len(a) < 2 or len(b) < 2:
            entry["why"] = (f"{len(a)} old and {len(b)} new card(s): the spread between cards needs at least two "
                            f"on each side; not compared")
            continue
        names = sorted(set().union(*(c.metrics for c in a)) & set().union(*(c.metrics for c in b)))
        entry["rows"] = [r for r in (_row(n, a, b, test) for n in names) if r is not None]
    timed = [r for m in models for r in m["rows"] if r.get("kind") == "timed"]
    for r, q in zip(timed, cohort.bh([r["p"] for r in timed])):
        r["q"] = q
        effect = r["effect"]
        r["verdict"] = cohort.timed_shift(q, effect, r["floor"], fdr)
        if isinstance(effect, float) and effect != effect or effect in (float("inf"), float("-inf")):
            r["effect"] = repr(effect)
    compared = [m for m in models if "why" not in m]
    if not compared:
        why = "; ".join(f"{m['key']}/{m['backend']}: {m['why']}" for m in models) or "no device model in both runs"
        raise GpuPerfError(f"nothing to compare between {old.run_id} and {new.run_id}: {why}")
    for m in models:
        m["rows"].sort(key=lambda r: (r["verdict"] != Compare.WORSE, r["verdict"] != Compare.BETTER, r["metric"]))
        m["tally"] = {v: sum(1 for r in m["rows"] if r["verdict"] == v)
                      for v in (Compare.WORSE, Compare.BETTER, Compare.SAME, Compare.INCOMPARABLE, Compare.INFORMATIONAL)}
    worse = [dict(r, key=m["key"], backend=m["backend"]) for m in models for r in m["rows"]
             if r["verdict"] == Compare.WORSE]
    return {"schema": FLEET_COMPARE_SCHEMA, "old": old.run_id, "new": new.run_id, "test": test, "fdr": fdr,
            "models": models, "worse": worse, "verdict": Rollout.FAIL if worse else Rollout.PASS}


def compare_text(report: Mapping[str, Any]) -> str:
    lines = [f"gpuperf fleet compare {report['old']} -> {report['new']}: {report['verdict'].upper()} "
             f"({len(report['worse'])} metric(s) worse; {report['test']}, BH q ≤ {report['fdr']:g})"]
    for m in report["models"]:
        head = f"{m['key']}/{m['backend']}: {len(m['old_cards'])} old card(s), {len(m['new_cards'])} new"
        lines.append(head + (f" — {m['why']}" if "why" in m else
                             " — " + ", ".join(f"{n} {v}" for v, n in m["tally"].items())))
        for r in m["rows"]:
            if r["verdict"] not in (Compare.WORSE, Compare.BETTER):
                continue
            if r["kind"] == "timed":
                eff = r["effect"] if isinstance(r["effect"], str) else f"{r['effect']:+.1%}"
                lines.append(f"  {r['verdict'].upper():6} {r['metric']}: {r['old']:.4g} -> {r['new']:.4g} {r['unit']} "
                             f"({eff} worse, floor {r['floor']:.1%}, p {r['p']:.2g}, q {r['q']:.2g})")
            else:
                lines.append(f"  {r['verdict'].upper():6} {r['metric']}: {r['old']} -> {r['new']} {r['unit']} "
                             f"(deterministic: the cohorts' majorities differ)")
    return "\n".join(lines)
