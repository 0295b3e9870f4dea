"""How far the derived figures (``model.*``, ``tuning.*``, ``precision.*``) of the shipped GPU baselines gate, and
how far their saved A/A runs spread between machines: the measurements behind the catalog's informational
rows of derived figures.

Per catalog row (the row a metric's noise model comes from, :func:`pytest_gpuperf.baselines.catalog.row`) and GPU
baseline: the entries, how many gate looser than :data:`~pytest_gpuperf.baselines.detection.LOOSE` (their
detection power, as the gate would state it were the row not informational), and the relative spread of
each entry's value over the saved A/A runs made since its baseline (``scripts/aa_bands.py``'s runs, one
gate-check folder per new machine): the median entry's and the widest entry's standard deviation over
|mean|. A row whose every entry gates looser than 25 % on every GPU baseline cannot gate within 25 % without
more runs: it is declared ``informational`` in the catalog with these figures.

    python scripts/derived_spread.py [--all]   # --all: the rows with no loose entry too
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Mapping

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from aa_bands import KEYS, aa_runs, readings  # noqa: E402

from pytest_gpuperf.baselines import baseline_file, catalog, detection, noise  # noqa: E402
from pytest_gpuperf.baselines.verdicts import band  # noqa: E402
from pytest_gpuperf.paths import REVIEWED_BASELINES  # noqa: E402

#: the derived families: figures computed from the run's measurements (models, tuners, precision studies)
DERIVED = ("model.", "tuning.", "precision.")
#: the baseline runs a derived figure could affordably be re-made from
AFFORDABLE_RUNS = 10


def sigma_to_gate(mde: float = detection.LOOSE, runs: int = AFFORDABLE_RUNS) -> float:
    """The largest run-to-run σ (relative) with which a ``repeated`` figure's gate from ``runs`` baseline runs
    catches ``mde``: the prediction test's t(1 − α/2, runs − 1)·√(1 + 1/runs) plus the 99 % margin's z
    (:func:`pytest_gpuperf.baselines.detection.detection`), 7.3 σ from ten runs."""
    from scipy import stats as sps

    t = float(sps.t.ppf(1.0 - detection.ALPHA / 2, runs - 1)) * (1.0 + 1.0 / runs) ** 0.5
    return mde / (t + float(sps.norm.ppf(detection.POWER)))


def gated_power(name: str, entry: Mapping[str, Any]) -> detection.Detection:
    """The entry's detection power under the model its row had before it was declared informational: a figure
    derived from timings without samples is ``repeated``."""
    tol = entry.get("tolerance") or {}
    width = band(float(entry["value"]), tol)
    info = None
    if noise.model_of(name, str(entry.get("unit", "")), str(entry.get("better", "lower"))) == "informational":
        info = {"noise": "repeated"}
    return detection.detection(entry, name=name, width=width, ratio_safe=float(tol.get("abs", 0.0)) < width,
                               info=info)


def relative_spread(values: list[float]) -> float | None:
    """Standard deviation over |mean| of one entry's A/A values (None below two or at a zero mean)."""
    if len(values) < 2 or statistics.fmean(values) == 0:
        return None
    return statistics.stdev(values) / abs(statistics.fmean(values))


def table() -> dict[str, dict[str, Any]]:
    """Per catalog row: per GPU key the entries, the loose ones, the A/A runs' machines and relative spreads."""
    rows: dict[str, dict[str, Any]] = defaultdict(lambda: defaultdict(lambda: {"entries": 0, "loose": 0,
                                                                              "spreads": [], "machines": set()}))
    for key in KEYS:
        metrics = baseline_file.load(REVIEWED_BASELINES, key).data["backends"]["cuda"]["metrics"]
        runs = aa_runs(key, "cuda")
        for name, entry in metrics.items():
            if not name.startswith(DERIVED) or entry.get("better") not in ("lower", "higher", "exact"):
                continue
            cell = rows[catalog.row(name, str(entry.get("unit", ""))).pattern][key]
            cell["entries"] += 1
            power = gated_power(name, entry)
            cell["loose"] += bool(power.mde is not None and power.mde > detection.LOOSE)
            seen = readings(name, entry, runs)
            cell["machines"] |= {r.run.machine for r in seen}
            spread = relative_spread([r.value for r in seen])
            if spread is not None:
                cell["spreads"].append(spread)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="list the rows with no loose entry too")
    args = ap.parse_args(argv)
    print(f"a repeated figure gates within {detection.LOOSE:.0%} from {AFFORDABLE_RUNS} runs where its σ between "
          f"machines is under {sigma_to_gate():.1%}")
    for pattern, cells in sorted(table().items()):
        if not args.all and not any(c["loose"] for c in cells.values()):
            continue
        whole = all(c["loose"] == c["entries"] for c in cells.values())
        parts = []
        for key, c in cells.items():
            s = sorted(c["spreads"])
            spread = (f"A/A σ/|mean| median {statistics.median(s):.1%}, widest {s[-1]:.1%} over "
                      f"{len(c['machines'])} machines") if s else "no A/A spread"
            parts.append(f"{key}: {c['loose']}/{c['entries']} loose, {spread}")
        declared = next(f for f in catalog.FAMILIES if f.pattern == pattern).noise.model == "informational"
        print(f"{'ALL LOOSE' if whole else 'mixed':9s} {'informational ' if declared else ''}{pattern}: "
              + "; ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
