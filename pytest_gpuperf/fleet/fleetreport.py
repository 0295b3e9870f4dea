"""The fleet verdict: every card of a fleet run against its model's reviewed baseline and against its peers.

Per card, three kinds of finding. This module gathers each cohort's figures, hands them to the cohort noise
model (:mod:`pytest_gpuperf.baselines.cohort`, where every statistic and fleet-relative decision lives) and
words the findings:

* **baseline** — what each run's own gate said (its metrics' verdicts against the model's reviewed
  baseline): a ``regressed`` metric or a ``missing`` one fails the card;
* **deterministic** — figures that do not vary between unchanged runs (ulp errors, exact results,
  counts: ``baselines.noise.is_deterministic``) compared bit for bit across the cohort — or, for a figure read
  off a grid of timed points (``baselines.catalog.grid_tolerance``: a cache size moves one step of its
  footprint grid between unchanged runs), within the band the gate gives it — a card whose value differs from
  the cohort's majority fails;
* **fleet-relative** — per cohort and timed metric, the card's one-sided robust z against the cohort
  (median, MAD), read as a p-value, Benjamini–Hochberg over every card × metric tested; a card × metric
  is flagged when its adjusted p is at most the FDR **and** it is worse than the cohort's median by more
  than the effect floor (``baselines.cohort.effect_floor``): the largest of the metric class's floor, the
  noise multiple × the metric's own noise (its samples' robust CV within a run, or the run-to-run σ of the
  reviewed baseline's runs) and the catalog's fixed band of its family (relative and absolute) where that
  band stands for the noise of one card's runs (a tuner's path, one kernel's model error) — not where it
  holds the differences between boards (``baselines.catalog.between_machines``: a power draw, a DRAM
  latency), the very card-to-card differences this check names. A cohort smaller than the minimum gets no
  fleet-relative verdict (the report says so). Figures a run measured throttled or contended are left out
  and named.

A card flagged only fleet-relatively is **uncertain** until a confirmation run (``--confirm``, or jobs
marked ``"confirm": true``) flags it again against the same cohort statistics: then it **fails**; a
confirmation that does not flag it again leaves a **warn**. Verdicts, worst first: fail, uncertain, warn,
ok. Exit statuses (:func:`exit_status`): 0 every card ok or warn, 1 a card fails, 3 uncertain cards and
no failure (run the confirmation), 2 bad input (``errors.GpuPerfError``: no results, unreadable files).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..verdictwords import FLEET_EXIT, FleetCard, Gate
from .. import FLEET_SCHEMA
from ..baselines import catalog, cohort
from ..baselines.cohort import Reference, exact_value
from ..baselines.noise import model_of
from ..timing.observers import CONTENDED_RUN_LIMIT, THROTTLED_RUN_LIMIT
from .fleetload import Card, CardMetric, Fleet, cohort_label

VERDICTS = FleetCard.ALL  # worst first
#: reasons of one kind listed by name before the rest are counted
SHOWN = 5
DRAIN_COMMAND = "scontrol update nodename={node} state=drain reason={reason}"


@dataclass(frozen=True)
class Settings:
    """How the fleet is judged (the ``gpuperf fleet report`` options)."""

    min_cohort: int = cohort.MIN_COHORT
    fdr: float = cohort.FDR
    noise_multiple: float = cohort.NOISE_MULTIPLE
    #: judge figures measured throttled or contended too (a test cluster whose one host runs every job at
    #: once: each PoCL figure shares the host's cores); they are still named
    keep_disturbed: bool = False


@dataclass(eq=False)
class Outcome:
    """One card's findings and verdict."""

    card: Card
    cohort: str
    fail: list[str] = field(default_factory=list)
    uncertain: list[str] = field(default_factory=list)
    warn: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    flagged: list[dict[str, Any]] = field(default_factory=list)  # fleet-relative rows that passed BH + floor
    deterministic: list[dict[str, Any]] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)  # throttled / contended metric names

    @property
    def verdict(self) -> str:
        return FleetCard.FAIL if self.fail else FleetCard.UNCERTAIN if self.uncertain else FleetCard.WARN if self.warn else FleetCard.OK

    def to_json(self) -> dict[str, Any]:
        return {**self.card.to_json(), "cohort": self.cohort, "verdict": self.verdict,
                "reasons": {"fail": self.fail, "uncertain": self.uncertain, "warn": self.warn, "note": self.notes},
                "outliers": self.flagged, "deterministic_mismatches": self.deterministic,
                "excluded_metrics": sorted(self.excluded)}


def _named(names: Sequence[str]) -> str:
    shown = ", ".join(sorted(names)[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def _once(into: list[str], line: str) -> None:
    """Add ``line`` unless ``into`` says it already (a card of several runs, each interrupted, is told once)."""
    if line not in into:
        into.append(line)


def baseline_findings(out: Outcome, keep_disturbed: bool = False) -> None:
    """The card's runs' own gate verdicts against the reviewed baseline."""
    regressed = sorted({m.name for m in out.card.metrics.values() if Gate.REGRESSED in m.verdicts})
    missing = sorted({str(n) for d in out.card.docs for n in (d.missing or [])})
    if regressed:
        runs = len(out.card.docs)
        hit = sum(any(m.verdict == Gate.REGRESSED for m in d.metrics) for d in out.card.docs)
        within = f" (in {hit} of its {runs} runs)" if runs > 1 else ""
        out.fail.append(f"{len(regressed)} metric(s) regressed against the reviewed baseline{within}: {_named(regressed)}")
    if missing:
        out.fail.append(f"{len(missing)} baseline metric(s) missing (the test no longer records them): {_named(missing)}")
    for d in out.card.docs:
        run = d.run or {}
        if run.get("interrupted"):
            _once(out.warn, "a run was interrupted before its last test (only what finished is judged)")
        if run.get("stopped"):
            _once(out.warn, f"a run stopped early: {run['stopped']}")
    if all(v == Gate.NEW for m in out.card.metrics.values() for v in m.verdicts):
        out.notes.append("no reviewed baseline gated this card's runs (every verdict 'new')")
    disturbed = sorted(m.name for m in out.card.metrics.values() if m.disturbed)
    if disturbed:
        out.excluded = disturbed
        share = len(disturbed) / max(1, len(out.card.metrics))
        text = (f"{len(disturbed)} metric(s) ({share:.0%}) measured throttled or contended"
                f"{'' if keep_disturbed else ', left out of the fleet statistics'}: {_named(disturbed)}")
        # beyond the share at which the gate calls a whole run invalid, the card's figures say little
        (out.warn if share > min(CONTENDED_RUN_LIMIT, THROTTLED_RUN_LIMIT) else out.notes).append(text)


def fleet_tested(m: CardMetric, keep_disturbed: bool = False) -> bool:
    """Whether a metric takes part in the fleet-relative statistics: a timed (non-deterministic) figure
    with a direction, not declared informational nor gated only where stable (``info["gate"] ==
    "if-stable"``: a component whose value swings between unchanged runs), measured undisturbed, with a
    finite value."""
    if m.deterministic or (m.disturbed and not keep_disturbed) or m.value is None or m.better not in ("lower", "higher", "bound"):
        return False
    if m.info.get("gate") == "if-stable":
        return False
    return model_of(m.name, m.unit, m.better, m.noise_rel is not None, m.info) != "informational"


def reference(cards: Sequence[Card], name: str, settings: Settings) -> Reference | None:
    """The cohort's statistics of metric ``name`` over ``cards`` (each card one value), or None when fewer
    than the minimum cohort recorded it the same way."""
    ms = [c.metrics[name] for c in cards if name in c.metrics and fleet_tested(c.metrics[name], settings.keep_disturbed)]
    if not ms:
        return None
    ways: dict[tuple[str, str, str], list[CardMetric]] = {}
    for m in ms:
        ways.setdefault((m.unit, m.better, m.identity), []).append(m)
    (unit, better, ident), same = max(ways.items(), key=lambda kv: len(kv[1]))
    if len(same) < settings.min_cohort:
        return None
    return cohort.reference(name, [m.value for m in same if m.value is not None],
                            [m.noise_rel for m in same if m.noise_rel is not None],
                            [m.se_rel for m in same if m.se_rel is not None], better=better, unit=unit, identity=ident,
                            info=same[0].info, is_cpu=any(c.is_cpu for c in cards),
                            noise_multiple=settings.noise_multiple)


def judge(m: CardMetric, ref: Reference) -> dict[str, Any] | None:
    """One card's metric against its cohort's reference: the row of the test (z, p, effect;
    :func:`pytest_gpuperf.baselines.cohort.card_row`), or None when it was measured another way than the
    cohort's majority."""
    if (m.unit, m.better, m.identity) != (ref.unit, ref.better, ref.identity) or m.value is None:
        return None
    return cohort.card_row(m.name, m.value, ref)


def deterministic_findings(outcomes: Sequence[Outcome], settings: Settings) -> list[str]:
    """Deterministic figures compared across the cohort of ``outcomes`` (:func:`cohort.odd_ones`: bit for bit, or
    within a grid figure's band, :func:`catalog.grid_tolerance`): a card differing from the cohort's strict majority fails. Returns notes on
    figures without a majority."""
    notes: list[str] = []
    cards = [o.card for o in outcomes]
    names = sorted({n for c in cards for n, m in c.metrics.items() if m.deterministic})
    for name in names:
        holders = [(o, o.card.metrics[name]) for o in outcomes if name in o.card.metrics
                   and o.card.metrics[name].deterministic]
        ways: dict[tuple[str, str], list[tuple[Outcome, CardMetric]]] = {}
        for o, m in holders:
            ways.setdefault((m.unit, m.identity), []).append((o, m))
        for group in ways.values():
            if len(group) < settings.min_cohort:
                continue
            own = [exact_value(m.values) for _, m in group]  # each card's own value (its runs' majority)
            # a figure read off a grid of timed points (a cache size) keeps the one-step band the gate gives it
            found = cohort.odd_ones(own, catalog.grid_tolerance(name, group[0][0].card.is_cpu))
            if found is None:
                notes.append(f"{name}: no value shared by a majority of the {len(group)} cards")
                continue
            shared, count, differs = found
            for (o, m), v, odd in zip(group, own, differs):
                if odd:
                    o.deterministic.append({"metric": name, "value": v, "majority": shared,
                                            "cards": len(group), "agreeing": count, "unit": m.unit})
    for o in outcomes:
        if o.deterministic:
            o.fail.append(f"{len(o.deterministic)} deterministic figure(s) differ from the cohort's majority "
                          f"(bit for bit, or beyond a grid figure's one-step band): "
                          f"{_named([r['metric'] for r in o.deterministic])}")
    return notes


def analyze(fleet: Fleet, confirm: Fleet | None = None, settings: Settings = Settings()) -> dict[str, Any]:
    """The fleet report of ``fleet`` (``confirm``: a confirmation run of flagged cards, else the jobs of
    ``fleet`` marked ``"confirm": true``)."""
    outcomes = [Outcome(c, cohort_label(c.cohort)) for c in fleet.cards]
    by_cohort: dict[str, list[Outcome]] = {}
    for o in outcomes:
        baseline_findings(o, settings.keep_disturbed)
        by_cohort.setdefault(o.cohort, []).append(o)
    cohorts: list[dict[str, Any]] = []
    refs: dict[tuple[str, str], Reference] = {}
    tests: list[tuple[Outcome, dict[str, Any]]] = []
    for label, members in sorted(by_cohort.items()):
        entry: dict[str, Any] = {"cohort": label, "cards": [o.card.name for o in members], "judged": False}
        cohorts.append(entry)
        if len(members) < settings.min_cohort:
            why = (f"cohort {label} has {len(members)} card(s), fewer than the minimum of {settings.min_cohort}: "
                   f"no fleet-relative verdict (the reviewed baseline still judges each card)")
            entry["why"] = why
            for o in members:
                o.notes.append(why)
            continue
        entry["judged"] = True
        entry["notes"] = deterministic_findings(members, settings)
        cards = [o.card for o in members]
        names = sorted({n for c in cards for n in c.metrics})
        tested, metrics = 0, set()
        for name in names:
            ref = reference(cards, name, settings)
            if ref is None:
                continue
            refs[(label, name)] = ref
            for o in members:
                m = o.card.metrics.get(name)
                row = judge(m, ref) if m is not None and fleet_tested(m, settings.keep_disturbed) else None
                if row is not None:
                    tests.append((o, row))
                    tested += 1
                    metrics.add(name)
        entry["metrics_tested"] = len(metrics)
        entry["tests"] = tested
    for (o, row), flagged in zip(tests, cohort.flag([r for _, r in tests], settings.fdr)):
        if flagged:
            o.flagged.append(row)
    confirm_cards = list(confirm.cards) + list(confirm.confirm_cards) if confirm is not None else list(fleet.confirm_cards)
    confirmation = _confirm(outcomes, confirm_cards, refs, settings) if confirm_cards else None
    for o in outcomes:
        if not o.flagged:
            continue
        o.flagged.sort(key=lambda r: -r["z"])
        what = (f"{len(o.flagged)} metric(s) worse than the cohort beyond the floor (robust z, BH q ≤ {settings.fdr:g}): "
                f"{_named([r['metric'] for r in o.flagged])}")
        state = (confirmation or {}).get(o.card.name)
        unjudged = state is not None and not state["rows"]  # its re-run judged none of them: no confirmation either way
        verdict = cohort.card_verdict(True, None if state is None or unjudged else bool(state["confirmed"]))
        if verdict == FleetCard.UNCERTAIN and unjudged:
            o.uncertain.append(what + "; the confirmation run could not judge them again (measured while the host or "
                                      "card was busy, or not recorded): re-run the card on a quiet node")
        elif verdict == FleetCard.UNCERTAIN:
            o.uncertain.append(what + "; not yet confirmed: re-run the card and pass --confirm")
        elif verdict == FleetCard.FAIL:
            o.fail.append(what + f"; the confirmation run flags it again ({_named(state['confirmed'])})")
        else:
            o.warn.append(what + "; the confirmation run does not flag it again")
    outcomes.sort(key=lambda o: (VERDICTS.index(o.verdict), o.card.name))
    empty = [{"job": e["job"], "node": e.get("node") or e["job"], "verdict": FleetCard.FAIL,
              "reasons": {"fail": [e["why"]]}}
             for e in fleet.empty_jobs]
    verdicts = [o.verdict for o in outcomes] + ["fail"] * len(empty)
    tally = {v: verdicts.count(v) for v in VERDICTS}
    return {"schema": FLEET_SCHEMA, "fleet_run": fleet.run_id, "root": fleet.root,
            "settings": {"min_cohort": settings.min_cohort, "fdr": settings.fdr,
                         "noise_multiple": settings.noise_multiple, "keep_disturbed": settings.keep_disturbed},
            "confirm_run": confirm.run_id if confirm is not None else (fleet.run_id if fleet.confirm_cards else None),
            "tally": tally, "verdict": next((v for v in VERDICTS if tally[v]), FleetCard.OK),
            "cohorts": cohorts, "cards": [o.to_json() for o in outcomes], "empty_jobs": empty,
            "problems": fleet.problems, "tests": len(tests),
            "confirmation": confirmation}


def _match(card: Card, candidates: Sequence[Card]) -> Card | None:
    """The confirmation run's share of ``card``: the same identity; where several jobs share an identity
    (a test cluster), narrowed by the same label, then the job's array task, then the job label without its
    job id."""
    same = [c for c in candidates if c.ident_key == card.ident_key]
    if len(same) <= 1:
        return same[0] if same else None
    labelled = [c for c in same if c.label == card.label]  # runs named by the same label (--files)
    if len(labelled) == 1:
        return labelled[0]
    task = card.job.get("array_task")
    narrowed = [c for c in same if task is not None and c.job.get("array_task") == task]
    if len(narrowed) == 1:
        return narrowed[0]
    stem = card.label.rsplit("-", 1)[0]
    narrowed = [c for c in same if c.label.rsplit("-", 1)[0] == stem]
    return narrowed[0] if len(narrowed) == 1 else None


def _confirm(outcomes: Sequence[Outcome], confirm_cards: Sequence[Card], refs: Mapping[tuple[str, str], Reference],
             settings: Settings) -> dict[str, dict[str, Any]]:
    """Each flagged card's confirmation: its re-run's flagged metrics judged against the *first* run's
    cohort statistics (a confirmation run may hold only the flagged cards), BH over the re-judged rows."""
    rows: list[tuple[str, dict[str, Any]]] = []
    state: dict[str, dict[str, Any]] = {}
    for o in outcomes:
        if not o.flagged:
            continue
        again = _match(o.card, confirm_cards)
        if again is None:
            continue
        state[o.card.name] = {"confirm_card": again.name, "files": again.paths, "confirmed": [], "rows": []}
        for r in o.flagged:
            m = again.metrics.get(r["metric"])
            ref = refs.get((o.cohort, r["metric"]))
            row = judge(m, ref) if m is not None and ref is not None and fleet_tested(m, settings.keep_disturbed) else None
            if row is not None:
                rows.append((o.card.name, row))
    for (name, row), flagged in zip(rows, cohort.flag([r for _, r in rows], settings.fdr)):
        state[name]["rows"].append(row)
        if flagged:
            state[name]["confirmed"].append(row["metric"])
    return state


def exit_status(report: Mapping[str, Any]) -> int:
    """0 every card ok or warn, 1 a card (or a job without results) fails, 3 uncertain cards only."""
    tally = report["tally"]
    worst = next((v for v in VERDICTS if tally.get(v)), FleetCard.OK)
    return FLEET_EXIT[worst]


def drain_commands(report: Mapping[str, Any], template: str = DRAIN_COMMAND) -> list[str]:
    """One Slurm drain command per node holding a failed card (or a job that left no results), each
    field shell-quoted: ``scontrol update nodename=<node> state=drain reason="gpuperf: ..."``."""
    reasons: dict[str, list[str]] = {}
    for c in report["cards"]:
        if c["verdict"] == FleetCard.FAIL:
            reasons.setdefault(str(c["node"]), []).append(f"{c['card']}: {c['reasons']['fail'][0]}")
    for e in report["empty_jobs"]:
        reasons.setdefault(str(e["node"]), []).append(f"job {e['job']}: no results")
    out = []
    for node, why in sorted(reasons.items()):
        text = "gpuperf: " + "; ".join(why)
        text = text if len(text) <= 200 else text[:197] + "..."
        out.append(template.format(node=shlex.quote(node), reason=shlex.quote(text)))
    return out
