"""How often would a new machine's unchanged run fail the shipped GPU baseline? Leave one machine out.

The shipped H200/H100 baselines pool each loose or once-failed entry's runs across the machines whose A/A runs
are saved (:mod:`derived_bands`). Whether the bands that pooling sets are wide enough for the *next* machine
cannot be read from the same runs: every saved run passes by construction. This script answers it the way a
cross-validation does: for each machine, it redoes the pooling from the baseline runs and every *other*
machine's A/A runs (:func:`derived_bands.mend_section` on the entries as their baselines made them), then judges
the held-out machine's A/A runs against the result, value by value (:func:`derived_bands.judge`: without a run's
samples, so a sampled figure may read ``regressed`` here where its live rank test would hold it
insignificant — the count is an upper bound).

The share of held-out machines with no false alarm estimates the chance that an unchanged run on a new machine
is clean; the entries that fail name where the bands are still narrower than the spread between machines. A
derived figure (a tuner's search cost, a model's error) that fails jumps between machines — a search's path
follows timing ties — rather than spreading as the others' runs predict: with ``--write`` it is declared
informational, with what the held-out machine read as its cause (:data:`derived_bands.HELD_OUT`, kept when the
pooling runs again); a declared figure that no machine left out fails any more (more machines' runs now spread
as far as its jump) is gated again on its pooled band. A hardware figure that fails keeps the band pooled over every machine, the held-out one
included (:mod:`derived_bands`).

    python scripts/machine_holdout.py                # every card with saved A/A runs
    python scripts/machine_holdout.py nvidia-h200    # one card
    python scripts/machine_holdout.py --write        # declare the derived figures that fail informational
    python scripts/machine_holdout.py --kept         # held out again with those declarations kept
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import derived_bands  # noqa: E402
from aa_bands import KEYS, Run, aa_runs, readings, settle  # noqa: E402

from pytest_gpuperf.baselines import baseline_file, catalog  # noqa: E402
from pytest_gpuperf.paths import REVIEWED_BASELINES  # noqa: E402


def held_out(key: str, machine: str, shipped: dict, runs: list[Run], kept: bool = False) -> list[tuple[str, str]]:
    """The held-out machine's A/A readings (entry name, what it read) that the bands pooled without it read
    ``regressed``; ``kept``: with the shipped held-out declarations kept (learnt from every machine, the
    left-out one included: the best case), else without any."""
    metrics = copy.deepcopy(shipped)
    derived_bands.mend_section(key, metrics, [r for r in runs if r.machine != machine],
                               held_out=None if kept else {})
    mine = [r for r in runs if r.machine == machine]
    alarms = []
    for name, entry in sorted(metrics.items()):
        if entry.get("better") not in ("lower", "higher", "exact") or float(entry.get("value", 0) or 0) == 0:
            continue
        if catalog.measured_informational(name, entry) is not None:
            continue
        for reading in readings(name, entry, mine):
            if derived_bands.judge(name, entry, reading.value) == "regressed":
                alarms.append((name, f"without {machine}, {reading.run.label} read {reading.delta:+.2%}"))
    return alarms


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("keys", nargs="*", default=list(KEYS), help="device keys (default: every card with A/A runs)")
    ap.add_argument("--write", action="store_true",
                    help="declare the derived figures a held-out machine fails informational in the reviewed baselines")
    ap.add_argument("--kept", action="store_true",
                    help="keep the shipped declarations while a machine is held out (the best case: they were learnt "
                         "from every machine); reports only")
    args = ap.parse_args(argv)
    if args.kept and args.write:
        ap.error("--kept reports the declarations' effect; it writes nothing")
    changed = 0
    for key in args.keys:
        bl = baseline_file.load(REVIEWED_BASELINES, key)
        shipped = bl.data["backends"]["cuda"]["metrics"]
        runs = aa_runs(key, "cuda")
        machines = sorted({r.machine for r in runs})
        if len(machines) < 3:
            print(f"{key}: A/A runs on {len(machines)} machine(s); leaving one out needs 3")
            continue
        clean, failing = 0, {}
        for machine in machines:
            alarms = held_out(key, machine, shipped, runs, args.kept)
            n = sum(1 for r in runs if r.machine == machine)
            clean += not alarms
            for name, what in alarms:
                failing.setdefault(name, what)
            print(f"{key} without {machine} ({n} run(s)): " + ("no false alarm" if not alarms else
                  f"{len(alarms)} false alarm(s): {'; '.join(f'{n} {w}' for n, w in alarms)}"))
        print(f"{key}: {clean} of {len(machines)} held-out machines clean against bands pooled without them"
              + (" (shipped declarations kept)" if args.kept else ""))
        if args.kept:
            continue
        before = derived_bands.held_out_causes(shipped)
        # the declarations are what the held-out runs show now: a figure no machine left out fails any more (the
        # other machines' runs have come to spread as far as its jump) gates again on its pooled band
        declare = {n: before.get(n, w) for n, w in failing.items() if n.startswith(derived_bands.DERIVED)}
        new = sorted(set(declare) - set(before))
        retracted = sorted(set(before) - set(declare))
        print(f"{key}: derived figures a held-out machine fails: {len(declare)} ({len(new)} not yet declared"
              + (f": {', '.join(new)}" if new else "") + f"; {len(retracted)} declared that none fails any more"
              + (f": {', '.join(retracted)}" if retracted else "") + ")")
        if new or retracted:
            metrics = shipped
            snapshot = copy.deepcopy(metrics)
            derived_bands.mend_section(key, metrics, runs, held_out=declare)
            moved = [n for n in metrics if metrics[n] != snapshot[n]]
            changed += settle(bl, len(moved), args.write, "entries written")
    return 1 if changed and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
