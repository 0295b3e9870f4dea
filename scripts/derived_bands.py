"""The GPU figures that gate looser than their target — derived figures 10 %, hardware figures 5 % — measured again
from their baseline runs and every saved A/A run.

A derived figure (:data:`DERIVED`: a tuner's cost or quality, a model's error, a classifier's counter, λ0, and every
other figure that is not a hardware one — a summation's rounding error, a kernel's energy under tuning) mostly carries
no raw samples: it is ``repeated``, judged by its catalog row's fixed band and
by the prediction t-test of one new run against the baseline's runs. From three baseline runs that test needs
t(1 − α/2, 2)·√(4/3) ≈ 36 run-σ, and the fixed bands are wide, so most of these gates caught only changes over
25 %. The saved A/A runs (``aa-*.json.xz`` under ``results/<key>*/``, :func:`aa_bands.aa_runs`: each gate-check
folder ran on a new machine) hold the same figures, with the same test and identity, from unchanged code
on other machines; each section of a baseline (CUDA, OpenCL) is pooled with the runs of its own backend only. This script pools each such entry's baseline runs with those A/A runs (at least
:data:`MIN_POOLED` runs), and where that makes the gate tighter — or where an unchanged A/A run reads ``regressed``
against the entry's band (a false alarm: the band was narrower than the machines spread, and those runs are named as
its cause) — stores them as the entry's runs
(``run_values``; ``value`` their median, as ``gpuperf baseline from-results`` makes it) and sets its band from
their spread between machines: k × σ (the entry's k, else :data:`aa_bands.K`; σ the larger of the runs'
standard deviation and their robust σ, :func:`pytest_gpuperf.timing.stats.between_run_sigma`), in place of the
row's fixed band where that is narrower, beside it where the measured spread is wider (the cause written); a
tuner's count of evaluations never narrower than one configuration of its kernel's space (:func:`grid_step`), and
runs that agree to :data:`EXACT` on every machine are deterministic (:func:`exact`). The pooled entries share
one provenance (``band_from``, :data:`pytest_gpuperf.baselines.catalog.BAND_FROM`: the script, the runs, each
entry's cause and what the pooling replaced), so the catalog does not re-apply its fixed band
(:func:`pytest_gpuperf.baselines.catalog.measured_band`) and this script recomputes the same result. An entry
that still cannot gate within 25 % (:data:`~pytest_gpuperf.baselines.detection.LOOSE`) after pooling is declared
informational, its provenance's ``band_from`` naming the measured spread
(:func:`pytest_gpuperf.baselines.catalog.measured_informational`): recorded, not gated. So is an entry whose gate
is already looser than its kind allows and whose own runs (at least :data:`MIN_DECLARED`, as few machines as made
it) spread as far: more runs or machines could narrow only a band it already lacks.

Hardware figures (:func:`pytest_gpuperf.baselines.detection.hardware`: launch, memory, latency, throughput, clock,
power) are pooled the same way where their gate is looser than :data:`HARDWARE_TARGET`: a card's figure measured
on six machines is the reference a fleet of that card is held to. One that still cannot gate within
:data:`HARDWARE_TARGET` after pooling (a board's power draw, which spreads 3–5 % between machines; a DRAM-range
chase; a host-submitted launch rate) is declared informational with that spread as its cause, not left a wide
pass (:func:`widest`); the fleet report compares the cards themselves on those figures. One gating
within 5 % but looser than its own target (a device-timed figure's 2 %, :func:`~pytest_gpuperf.baselines.detection.target`)
is pooled only where that reaches its target *and* no machine left out reads ``regressed`` against the band the
other machines' runs set (:func:`holds_out`): a band narrowed below 5 % must hold for the next machine, which the
runs it was set from cannot show. A fit's goodness (``….r2``) is no hardware figure
(:func:`~pytest_gpuperf.baselines.detection.hardware`) and keeps its row's band.

    python scripts/derived_bands.py            # report; exit 1 where a reviewed baseline would change
    python scripts/derived_bands.py --write    # update the reviewed baselines
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from aa_bands import KEYS, K, Reading, Run, aa_runs, readings, settle  # noqa: E402

from pytest_gpuperf.baselines import baseline_file, catalog, detection  # noqa: E402
from pytest_gpuperf.baselines.table import power  # noqa: E402
from pytest_gpuperf.baselines.verdicts import band, compare  # noqa: E402
from pytest_gpuperf.paths import REVIEWED_BASELINES  # noqa: E402
from pytest_gpuperf.timing.stats import between_run_sigma  # noqa: E402

#: the figures held to the derived target: computed from the run's measurements (models, tuners, precision studies,
#: kernels' energies, the scheduling study) or an accuracy figure — every figure but the hardware ones
DERIVED = ("model.", "tuning.", "precision.", "power.tuning.", "sched.", "accuracy.")
#: the runs a pooled entry needs: with five the prediction test's threshold is t(0.9995, 4)·√1.2 ≈ 9.4 σ
MIN_POOLED = 5
#: the runs that can show an entry too loose to keep: its gate already wider than its kind allows and its runs
#: spreading as far (more runs lower the test's threshold, not the spread), so it is declared informational
#: from these rather than left a wide pass until :data:`MIN_POOLED` runs could narrow it
MIN_DECLARED = 3
#: the machines (gate-check folders) whose A/A runs an entry is pooled from, narrowed or declared informational:
#: runs of one machine beside the baseline's cannot show what the next machine reads (on NVIDIA's OpenCL a third
#: machine read tuner costs beyond bands pooled from two: docs/gating.md). A false alarm is widened for at once:
#: one unchanged run beyond the band is its measured cause
MIN_MACHINES = 2
#: derived entries gating looser than this are measured again (the target: within it, else within LOOSE)
TARGET = 0.10
#: hardware entries gating looser than this are measured again: 5 %, not a device-timed figure's 2 % target
#: (:func:`pytest_gpuperf.baselines.detection.target`): pooled towards 2 %, bands of k × σ between machines fail a
#: machine left out (``scripts/machine_holdout.py``; docs/gating.md names the figures)
HARDWARE_TARGET = detection.HARDWARE_MDE
SCRIPT = "scripts/derived_bands.py"
#: the key of ``band_from`` naming the derived entries that a machine left out fails (``scripts/machine_holdout.py``):
#: their spread between machines is not one the others' runs predict, so they are recorded, not gated
HELD_OUT = "held_out"
#: runs that agree to within this share of their value (the 7 digits a baseline stores) measured no spread: a band
#: of k × that would fail the first run that moves by a rounding. Such an entry, identical on every machine pooled
#: (at least :data:`MIN_MACHINES` besides the baseline's), is deterministic: it gates at the derived target
#: (:data:`TARGET` of its value), or, on a grid (:func:`grid_step`), at half a step, so any move of one step is caught
EXACT = 1e-6


@dataclass
class Outcome:
    """What pooling did to one entry: ``mended`` (the new entry), or why not (``why``), with its MDE before and
    after and the measured spread between machines (σ/|median| of the pooled runs)."""

    name: str
    before: float
    after: float | None = None
    spread: float | None = None
    runs: int = 0
    machines: int = 0
    mended: dict[str, Any] | None = None
    informational: bool = False
    why: str = ""
    alarmed: list[str] | None = None  # A/A runs that read regressed against the entry's band before pooling


def original(name: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """The entry as its baseline made it: what an earlier run of this script replaced, restored from its provenance
    (the section's shared ``band_from``, :data:`pytest_gpuperf.baselines.catalog.BAND_FROM`)."""
    prov = entry.get("provenance")
    was = prov.get(catalog.BAND_FROM) if isinstance(prov, Mapping) else None
    if not isinstance(was, Mapping) or was.get("script") != SCRIPT or name not in (was.get("baseline") or {}):
        return copy.deepcopy(dict(entry))
    # the shared provenance (every pooled entry's runs, causes and replaced entries) is read, not copied: only
    # this entry's part of it is kept
    prov = {k: v for k, v in prov.items() if k != catalog.BAND_FROM}
    out = copy.deepcopy({k: prov if k == "provenance" else v for k, v in entry.items()})
    base = copy.deepcopy(was["baseline"][name])
    out.update(value=base["value"], tolerance=dict(base["tolerance"]))
    for key in ("run_values", "runs"):
        out.pop(key, None)
        if key in base:
            out[key] = base[key]
    rest = out["provenance"]
    if rest.get("text") is not None and len(rest) == 1:
        out["provenance"] = rest["text"]
    elif rest:
        out["provenance"] = rest
    else:
        out.pop("provenance", None)
    return out


def target(name: str) -> float | None:
    """The MDE a figure is pooled towards: TARGET for a derived one, HARDWARE_TARGET for a hardware one, else None."""
    if name.startswith(DERIVED):
        return TARGET
    if detection.hardware(name):
        return HARDWARE_TARGET
    return None


def own_target(name: str) -> float | None:
    """The MDE a hardware figure must reach (:func:`pytest_gpuperf.baselines.detection.target`: 2 % where the
    device's timer measured it) where that is tighter than :func:`target`, else None: such a figure gating within
    :data:`HARDWARE_TARGET` is pooled only towards it, under :func:`holds_out`."""
    goal = detection.target(name)
    return goal if goal is not None and goal < HARDWARE_TARGET and not name.startswith(DERIVED) else None


def widest(name: str) -> float:
    """The widest gate a pooled figure may keep: a hardware figure's :data:`HARDWARE_TARGET` (one that cannot get
    there between machines is informational with that spread as its cause, not a wide pass), any other's
    :data:`~pytest_gpuperf.baselines.detection.LOOSE`."""
    return HARDWARE_TARGET if target(name) == HARDWARE_TARGET else detection.LOOSE


def candidate(name: str, entry: Mapping[str, Any]) -> bool:
    """A derived or hardware figure the gate judges (not informational, not a zero value, not a bound) looser than
    its :func:`target`, or than its :func:`own_target`."""
    goal = target(name)
    if goal is None or entry.get("better") not in ("lower", "higher", "exact"):
        return False
    if float(entry["value"]) == 0:
        return False
    p = power(name, entry)
    return p.mde is not None and p.mde > min(goal, own_target(name) or goal)


def false_alarm(name: str, entry: Mapping[str, Any], runs: list[Run]) -> bool:
    """A derived or hardware figure the gate judges whose band an unchanged A/A run's value lies beyond (:func:`judge`
    reads the value alone, without the run's samples: a sampled figure's live verdict may have held it
    insignificant): its band is narrower than the spread between machines, so it is pooled whatever its MDE (the
    band it gets names those runs as cause)."""
    if target(name) is None or entry.get("better") not in ("lower", "higher", "exact") or float(entry["value"]) == 0:
        return False
    if power(name, entry).mde is None:
        return False
    return any(judge(name, entry, r.value) == "regressed" for r in readings(name, entry, runs))


def judge(name: str, entry: Mapping[str, Any], value: float) -> str:
    """The gate's verdict on one run's value of a derived figure."""
    return compare(value, entry["better"], entry, name=name, unit=entry.get("unit"),
                   identity=entry.get("identity")).verdict


def grid_step(name: str, unit: str, metrics: Mapping[str, Mapping[str, Any]]) -> float | None:
    """The step of the grid a tuner's count lies on, or None: an evaluation count over the kernel's space
    (``tuning.<kernel>.<strategy>.cost``, ``….evals.*``) moves by one configuration of the space (1/space,
    :func:`pytest_gpuperf.baselines.catalog.space_of`) at the least, so its band is never narrower than that, however
    well its runs agree."""
    if not name.startswith("tuning.") or unit not in ("ratio", "fraction") \
            or not (name.endswith(".cost") or ".evals." in name):
        return None
    space = (metrics.get(catalog.space_of(name)) or {}).get("value")
    return 1.0 / float(space) if isinstance(space, (int, float)) and space > 0 else None


def pooled_entry(name: str, entry: Mapping[str, Any], values: list[float], files: list[str],
                 machines: int, step: float | None = None) -> tuple[dict[str, Any], str]:
    """The entry from its baseline runs and the A/A runs (``values``, baseline first) and the cause of its band;
    ``step``: the grid step its band is never narrower than (:func:`grid_step`)."""
    tol = dict(entry.get("tolerance") or {})
    k = float(tol.get("k", K))
    sigma = max(statistics.stdev(values), between_run_sigma(values))
    value = float(statistics.median(values))
    old_width = band(float(entry["value"]), tol)
    spread_rel = sigma / abs(value)
    if max(k * sigma, step or 0.0) <= old_width:
        new_tol = {"k": k, "spread": float(f"{sigma:.7g}")}
        how = f"narrower than the row's fixed band ({old_width / abs(float(entry['value'])):.2%}), which it replaces"
        if step is not None and k * sigma < step / 2:  # the runs stay within half a step: any move of one is caught
            new_tol.update({"abs": float(f"{step / 2:.7g}"), "step": float(f"{step:.7g}")})
            how += f"; half a step of its grid ({step:.4g}, one configuration of the kernel's space), which the runs stay within"
        elif step is not None:
            new_tol["abs"] = float(f"{step:.7g}")
            how += f"; never under one configuration of the kernel's space ({step:.4g})"
    else:
        new_tol = {**tol, "k": k, "spread": float(f"{sigma:.7g}")}
        how = (f"wider than the row's fixed band ({old_width / abs(float(entry['value'])):.2%}): the runs on other "
               f"machines spread that far")
    cause = (f"between machines: {len(values)} runs ({len(values) - len(files)} baseline, {len(files)} A/A on "
             f"{machines} machines) spread σ/|median| {spread_rel:.2%}; band k {k:g} × σ {sigma:.4g}, {how}")
    prov = entry.get("provenance")
    prov = {"text": prov} if isinstance(prov, str) else dict(prov or {})
    base = {"value": entry["value"], "tolerance": dict(entry.get("tolerance") or {})}
    for key in ("run_values", "runs"):
        if key in entry:
            base[key] = entry[key]
    prov[catalog.BAND_FROM] = {"script": SCRIPT, "runs": files, "causes": {name: cause}, "baseline": {name: base}}
    new = dict(entry, value=value, tolerance=new_tol, run_values=values, runs=len(values), provenance=prov)
    return new, cause


def mde(d: detection.Detection) -> float | None:
    """A gate's MDE for comparing gates: a point on a grid whose band catches any move of one step is the tightest
    gate its figure allows (0), else the relative MDE (None where it has none)."""
    return 0.0 if d.step is not None else d.mde


def pool(key: str, name: str, entry: Mapping[str, Any], runs: list[Run],
         metrics: Mapping[str, Mapping[str, Any]], held_out: str | None = None) -> Outcome:
    """Pool one entry's baseline runs with its A/A runs; the mended entry where that gates it tighter and every
    A/A run passes it. ``held_out``: what a machine left out read against the band the others set, for a derived
    entry that fails it (:data:`HELD_OUT`): the entry is declared informational with that cause."""
    before = power(name, entry).mde
    out = Outcome(name, before)
    seen = readings(name, entry, runs)
    base = [float(v) for v in (entry.get("run_values") or [entry["value"]])]
    values = [float(f"{v:.7g}") for v in base + [r.value for r in seen]]  # as the file stores them
    out.runs, out.machines = len(values), len({r.run.machine for r in seen})
    needs = f"{len(seen)} A/A run(s) with its test and identity: {len(values)} runs in all, needs {MIN_POOLED}"
    few = len(values) < MIN_POOLED  # enough to declare it too loose to keep, not to narrow it
    if len(values) < MIN_DECLARED:
        out.why = needs
        return out
    files = [f"results/{key}/{r.run.label}" for r in seen]
    step = grid_step(name, str(entry.get("unit", "")), metrics)
    new, _ = pooled_entry(name, entry, values, files, out.machines, step)
    out.spread = float(new["tolerance"]["spread"]) / abs(float(new["value"]))
    if out.spread < EXACT:
        if few:
            out.why = needs
            return out
        return exact(out, name, entry, new, values, files, step)
    shipped_alarms = [r for r in seen if judge(name, entry, r.value) == "regressed"]
    if shipped_alarms:  # unchanged runs on other machines fail the entry's own band: the spread they measure is its cause
        out.alarmed = [f"{r.run.label} {r.delta:+.2%}" for r in shipped_alarms]
        cause = new["provenance"][catalog.BAND_FROM]["causes"][name]
        new["provenance"][catalog.BAND_FROM]["causes"][name] = (
            f"{cause}; unchanged A/A runs read regressed against the band it had ({', '.join(out.alarmed)})")
    after = mde(power(name, new))
    out.after = after
    # what the spread between machines alone allows (a count's grid step is no noise: a count of two
    # configurations whose band is one of them catches a move of two, whatever share of it that is)
    spread_only = mde(power(name, pooled_entry(name, entry, values, files, out.machines)[0])) if step else after
    # an entry unchanged runs already fail has no claim left but what its runs between machines allow
    best = min(math.inf if out.alarmed else before, spread_only if spread_only is not None else math.inf)
    if step is not None and after is not None and after > widest(name):
        # a count whose runs move by a configuration between machines gates no tighter than one configuration of
        # its space: where that is over the widest gate its kind allows, no number of runs narrows it
        best = max(best, after)
    # more machines could only show a band it already lacks: one its runs spread too far for is declared at once
    too_wide = held_out is None and best > widest(name)
    if few and not too_wide:
        out.why = needs
        return out
    if held_out is None and not out.alarmed and out.machines < MIN_MACHINES and not too_wide:
        out.why = (f"pooled MDE {after:.2%}, but its A/A runs come from {out.machines} machine(s): a band set from "
                   f"them must hold for machines not yet seen ({MIN_MACHINES} needed)")
        return out
    why = None
    if held_out is not None:  # the others' runs do not predict one machine's: a jump, not a spread
        new["provenance"][catalog.BAND_FROM][HELD_OUT] = {name: held_out}
        why = (f"yet one machine left out fails the band the others' runs set ({held_out}): it jumps between "
               "machines, so it is recorded, not gated")
    elif too_wide:  # measured, and too noisy between runs or machines to gate within what its kind allows
        hardware = widest(name) < detection.LOOSE
        why = (f"so a gate from these runs would catch only changes over {best:.1%}, wider than the "
               f"{widest(name):.0%} a hardware figure gates within" if hardware else
               f"so a gate from these runs would catch only changes over {best:.0%}") + ": recorded, not gated"
    if why is not None:
        new["provenance"][catalog.BAND_FROM]["informational"] = {name: (
            f"over {len(values)} unchanged runs ({len(base)} baseline, {len(seen)} A/A on {out.machines} machines; "
            f"{SCRIPT}) it spreads σ/|median| {out.spread:.1%} between machines, {why}" if seen else
            f"over the {len(values)} unchanged runs its baseline was made from ({SCRIPT}) it spreads σ/|median| "
            f"{out.spread:.1%}, {why}")}
        out.mended, out.informational = new, True
        return out
    if not out.alarmed and (after is None or not math.isfinite(after) or after >= before):
        out.why = f"pooled MDE {after:.2%} not tighter than {before:.2%}"
        return out
    goal = own_target(name)
    if goal is not None and not out.alarmed and before <= HARDWARE_TARGET:
        if after > goal:  # narrower, yet short of its target: the band the file has is the one its runs held
            out.why = f"pooled MDE {after:.2%} tighter than {before:.2%} but not within its {goal:.0%} target"
            return out
        failed = holds_out(name, entry, base, seen, metrics)
        if failed:
            out.why = f"pooled to {after:.2%}, but a machine left out fails the band the others set: {failed}"
            return out
    alarms = [r.run.label for r in seen if judge(name, new, r.value) == "regressed"]
    if alarms:
        out.why = f"A/A runs read regressed against the pooled band: {', '.join(alarms)}"
        return out
    out.mended = new
    return out


def exact(out: Outcome, name: str, entry: Mapping[str, Any], new: dict[str, Any], values: list[float],
          files: list[str], step: float | None) -> Outcome:
    """An entry whose pooled runs all read the same value (:data:`EXACT`): deterministic, on every machine pooled.
    From :data:`MIN_MACHINES` machines besides the baseline's its band becomes :data:`TARGET` of its value — a
    smaller change of a deterministic figure (a rounding error, a classifier's votes) is real, but no loss a gate
    should fail on — or, where it lies on a grid (``step``), half a step: any move of one configuration is caught,
    however large a share of a small count one step is. Where that is no tighter than the entry's gate, it is left."""
    if out.machines < MIN_MACHINES:
        out.why = (f"its {len(values)} runs agree to {EXACT:g} of its value, but on {out.machines} machine(s) besides "
                   f"the baseline's ({MIN_MACHINES} needed)")
        return out
    if step is not None:
        tol: dict[str, Any] = {"abs": float(f"{step / 2:.7g}"), "step": float(f"{step:.7g}")}
        how = f"half a step of its grid ({step:.4g}, one configuration of the kernel's space): any move of one step is caught"
    else:
        tol = {"rel": TARGET}
        how = f"the derived target, {TARGET:.0%} of its value"
    cause = (f"identical in all {len(values)} runs ({len(values) - len(files)} baseline, {len(files)} A/A on "
             f"{out.machines} machines): a deterministic figure; band {how}")
    new = dict(new, tolerance=tol)
    new["provenance"][catalog.BAND_FROM]["causes"][name] = cause
    after = power(name, new)
    out.after = after.mde if after.mde is not None else 0.0
    was = power(name, entry)
    if was.mde is None or (after.mde is not None and after.mde >= was.mde):
        out.why = f"identical runs; a deterministic band ({how}) is no tighter than its gate"
        return out
    out.mended = new
    return out


def holds_out(name: str, entry: Mapping[str, Any], base: list[float], seen: list[Reading],
              metrics: Mapping[str, Mapping[str, Any]]) -> str:
    """Each machine's A/A readings judged against the band pooled from the baseline runs and every *other* machine's
    (as :func:`pool` sets it): what the first machine that reads ``regressed`` read, or "" where none does (or fewer
    than :data:`MIN_POOLED` runs are left without a machine)."""
    step = grid_step(name, str(entry.get("unit", "")), metrics)
    for machine in sorted({r.run.machine for r in seen}):
        others = [r for r in seen if r.run.machine != machine]
        values = [float(f"{v:.7g}") for v in base + [r.value for r in others]]
        if len(values) < MIN_POOLED:
            continue
        files = [r.run.label for r in others]
        band_of_others, _ = pooled_entry(name, entry, values, files, len({r.run.machine for r in others}), step)
        for r in seen:
            if r.run.machine == machine and judge(name, band_of_others, r.value) == "regressed":
                return f"without {machine}, {r.run.label} read {r.delta:+.2%}"
    return ""


def held_out_causes(metrics: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """The held-out declarations the section's entries carry (:data:`HELD_OUT`), by entry name."""
    found: dict[str, str] = {}
    for name, entry in metrics.items():
        prov = entry.get("provenance")
        was = prov.get(catalog.BAND_FROM) if isinstance(prov, Mapping) else None
        if isinstance(was, Mapping) and name in (was.get(HELD_OUT) or {}):
            found[name] = str(was[HELD_OUT][name])
    return found


def mend_section(key: str, metrics: dict[str, dict[str, Any]], runs: list[Run],
                 held_out: Mapping[str, str] | None = None) -> list[Outcome]:
    """Pool every candidate entry of one section (in place, on the entries as their baselines made them).
    ``held_out``: derived entries a machine left out fails, with what it read (default: the declarations the
    entries already carry, so pooling again keeps them; ``{}`` for none)."""
    outcomes = []
    held_out = held_out_causes(metrics) if held_out is None else dict(held_out)
    for name in sorted(metrics):
        metrics[name] = original(name, metrics[name])
    for name in sorted(metrics):
        entry = metrics[name]
        if name not in held_out and not candidate(name, entry) and not false_alarm(name, entry, runs):
            continue
        out = pool(key, name, entry, runs, metrics, held_out.get(name))
        outcomes.append(out)
    # one provenance per provenance the pooled entries had: the runs, causes, replaced entries and declarations
    # of all of them, so a file keeps one line per update, not one per entry
    shared: dict[str, dict[str, Any]] = {}
    for out in outcomes:
        if out.mended is None:
            continue
        prov = out.mended["provenance"]
        mine = prov[catalog.BAND_FROM]
        rest = json.dumps({k: v for k, v in prov.items() if k != catalog.BAND_FROM}, sort_keys=True)
        into = shared.setdefault(rest, {**{k: v for k, v in prov.items() if k != catalog.BAND_FROM},
                                        catalog.BAND_FROM: {"script": SCRIPT, "runs": [], "causes": {}, "baseline": {},
                                                            "informational": {}, HELD_OUT: {}}})
        got = into[catalog.BAND_FROM]
        got["runs"] = sorted(set(got["runs"]) | set(mine["runs"]))
        for part in ("causes", "baseline", "informational", HELD_OUT):
            got[part].update(mine.get(part) or {})
        metrics[out.name] = dict(out.mended, provenance=into)
    for into in shared.values():
        if not into[catalog.BAND_FROM][HELD_OUT]:
            del into[catalog.BAND_FROM][HELD_OUT]
    return outcomes


def classes(outcomes: list[Outcome]) -> dict[str, int]:
    """Counts of the outcomes' MDE after pooling (or before, where nothing changed), by target and LOOSE."""
    counts = {"≤5 %": 0, "≤10 %": 0, "≤25 %": 0, "loose: one configuration": 0, "loose: left": 0, "informational": 0}
    for o in outcomes:
        mde = o.after if o.mended is not None else o.before
        label = "≤5 %" if mde <= HARDWARE_TARGET else "≤10 %" if mde <= TARGET else "≤25 %" if mde <= detection.LOOSE \
            else "loose: one configuration" if o.mended is not None else "loose: left"
        counts["informational" if o.informational else label] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="update the reviewed baselines (else report only)")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per entry")
    args = ap.parse_args(argv)
    changed = 0
    for key in KEYS:
        bl = baseline_file.load(REVIEWED_BASELINES, key)
        moved = 0
        for backend, section in sorted(bl.data["backends"].items()):
            metrics = section["metrics"]
            before = copy.deepcopy(metrics)
            runs = aa_runs(key, backend)
            if not runs:  # no A/A run of this backend saved: nothing to pool it with
                print(f"{key} {backend}: no saved A/A run of this backend")
                continue
            outcomes = mend_section(key, metrics, runs)
            for o in outcomes:
                if args.verbose or o.mended is None or o.informational or o.after > detection.LOOSE:
                    state = f"MDE {o.before:.2%} → {o.after:.2%}" if o.mended is not None else f"left: {o.why}"
                    state += " (informational)" if o.informational else ""
                    spread = "" if o.spread is None else f", σ/|median| {o.spread:.2%}"
                    print(f"{key} {backend} {o.name}: {state} ({o.runs} runs, {o.machines} machines{spread})")
            print(f"{key} {backend}: {len(outcomes)} entries looser than their target (derived {TARGET:.0%}, hardware "
                  f"{HARDWARE_TARGET:.0%}); {sum(o.mended is not None for o in outcomes)} "
                  f"pooled; after: {classes(outcomes)}")
            changed_here = [n for n in metrics if metrics[n] != before[n]]
            if changed_here:
                print(f"{key} {backend}: {len(changed_here)} entries differ from the shipped file")
            moved += len(changed_here)
        changed += settle(bl, moved, args.write, "entries written")
    return 1 if changed and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
