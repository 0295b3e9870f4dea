"""The sampled GPU gates the exact rank test gave power, against every saved A/A run: their bands set anew.

The gate's Mann–Whitney test took scipy's normal approximation wherever timer-quantized samples tie, and
with it a run's 5 samples against a baseline's 15 (three runs) never reached p < 0.001, however far apart:
those gates (throughput, summation times, pointer chases) could not regress. The test is now exact on small
sides (:func:`pytest_gpuperf.timing.difference.rank_p_value`), so every unchanged run that sat outside such
a band would now fail. This script reads the saved A/A runs (``aa-*.json.xz``, ``aa-*.json.xz`` under ``results/<key>*/``: each
gate-check folder ran on a new machine) made since each entry's baseline, with the entry's test and
identity, and computes each run's delta against the shipped band. Where a run sat outside the band on the bad
side, the entry's band is set from the measured spread between machines: the entry's k × the run-to-run σ
(:func:`pytest_gpuperf.timing.stats.between_run_sigma`) of the baseline's runs and the A/A runs, never
narrower than it was; the entry's provenance names the runs (``band_from``) and the cause (the machines and
their deltas). Nothing else changes: the value, its runs and samples stay those of the baseline.

    python scripts/aa_bands.py            # report; exit 1 where a reviewed baseline would change
    python scripts/aa_bands.py --write    # update the reviewed baselines
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_gpuperf.baselines import baseline_file, detection  # noqa: E402
from pytest_gpuperf.baselines.verdicts import band, edges  # noqa: E402
from pytest_gpuperf.schemas import results_doc  # noqa: E402
from pytest_gpuperf.paths import REVIEWED_BASELINES  # noqa: E402
from pytest_gpuperf.timing.difference import ALPHA, MIN_SAMPLES  # noqa: E402
from pytest_gpuperf.timing.stats import between_run_sigma  # noqa: E402
from pytest_gpuperf.util import jsonio  # noqa: E402

#: the GPU baselines whose saved gate checks hold A/A runs (results/<key>*/)
KEYS = ("nvidia-h200", "nvidia-h100-80gb-hbm3")
RESULTS = ROOT / "results"
#: k of a band set from the spread between machines, where the entry names none
K = 6.0


@dataclass(frozen=True)
class Run:
    """One saved A/A run: ``label`` (its path under results/<key>/, the folder names the machine), when it
    started, its metrics by name, and the device backend it ran on (its figures speak for that section of the
    baseline only: a CUDA and an OpenCL run of one card record the same metric names from the same tests), the
    card's UUID where the run recorded one (the same board across folders), and ``home``: the folder that names
    that card's machine where its runs span several (:func:`_aa_runs`)."""

    label: str
    started: str
    metrics: Mapping[str, Mapping[str, Any]]
    backend: str
    card: str = ""
    home: str = ""

    @property
    def machine(self) -> str:
        """The folder the run's machine is named by: its own, or where its card (by UUID) has runs in several
        folders, the first of them by name (two gate checks of one board are one machine)."""
        return self.home or self.label.split("/")[0]

    @functools.cached_property
    def replayed(self) -> frozenset[str]:
        """The tests of this run whose figures came from a reviewed reference (:func:`reviewed`: one of the test's
        figures says so, and all of them were computed from the same table or profile)."""
        return frozenset(str(m.get("test")) for m in self.metrics.values() if reviewed(m))


@dataclass(frozen=True)
class Reading:
    """An A/A run's value of one metric and its delta against the entry (relative, bad direction positive)."""

    run: Run
    value: float
    samples: tuple[float, ...]
    delta: float
    outside: bool  # beyond the band's bad-side edge


def aa_runs(key: str, backend: str, results: Path = RESULTS) -> list[Run]:
    """Every saved A/A run of ``key``'s cards on ``backend`` (the baseline section they speak for), oldest first."""
    return [r for r in _aa_runs(key, results) if r.backend == backend]


@functools.lru_cache(maxsize=None)
def _aa_runs(key: str, results: Path) -> tuple[Run, ...]:
    """:func:`aa_runs`, read once per process: the saved runs do not change while it runs, and each is a few MB
    of JSON that the scripts (and their tests) would otherwise parse again for every table they make."""
    runs = []
    for folder in sorted(results.glob(f"{key}*")):
        for path in sorted((p for p in folder.rglob("aa-*.json*") if jsonio.is_results_name(p.name))):
            doc = jsonio.read_json(path)
            runs.append(Run(str(path.relative_to(folder)), str(doc["run"]["started"]),
                            {m["name"]: m for m in doc["metrics"]}, str(doc["device"]["backend"]),
                            results_doc.card_uuid(doc.get("card"))))
    homes: dict[str, str] = {}
    for r in runs:
        if r.card:
            homes[r.card] = min(homes.get(r.card, r.machine), r.machine)
    runs = [dataclasses.replace(r, home=homes[r.card]) if r.card else r for r in runs]
    return tuple(sorted(runs, key=lambda r: r.started))


def gained_power(entry: Mapping[str, Any]) -> bool:
    """Whether the exact rank test made this entry's sampled gate able to regress: its samples tie, a run's
    samples are enough for the test, and two sides that do not overlap reach α only under the exact test."""
    ref = entry.get("samples") or []
    if entry.get("better") not in ("lower", "higher") or len(ref) < MIN_SAMPLES:
        return False
    n_b = detection.samples_per_run(entry)
    ties = len(set(map(float, ref))) < len(ref)
    return n_b >= MIN_SAMPLES and detection.min_p_value(len(ref), n_b, ties, exact=False) >= ALPHA \
        > detection.min_p_value(len(ref), n_b, ties)


def bad_delta(entry: Mapping[str, Any], value: float) -> float:
    """The relative change from the entry's value, positive in its bad direction."""
    expected = float(entry["value"])
    if expected == 0:
        return math.inf if value != 0 else 0.0
    delta = (value - expected) / abs(expected)
    return -delta if entry["better"] == "higher" else delta


def outside(entry: Mapping[str, Any], value: float) -> bool:
    """Beyond the band's bad-side edge, as the gate's band verdict reads it (:func:`.verdicts.edges`)."""
    expected, tol = float(entry["value"]), entry.get("tolerance") or {}
    width = band(expected, tol)
    low, high = edges(expected, width, entry["better"], ratio_safe=float(tol.get("abs", 0.0)) < width)
    if entry["better"] == "exact":
        return not low <= value <= high
    return value < low if entry["better"] == "higher" else value > high


def reviewed(metric: Mapping[str, Any]) -> bool:
    """Whether a figure was computed from a reviewed reference (a tuning table or an ncu profile the package or a
    fleet's folder holds, ``info.reference.reviewed`` / ``info.collection.reference.reviewed``): every machine
    that replays it reads the same search figures and counters by construction, so the figures of such a test
    (:attr:`Run.replayed`) show nothing of how far machines spread and are not pooled."""
    info = metric.get("info") or {}
    for ref in (info.get("reference"), (info.get("collection") or {}).get("reference")):
        if isinstance(ref, Mapping) and ref.get("reviewed") is True:
            return True
    return False


def readings(name: str, entry: Mapping[str, Any], runs: list[Run]) -> list[Reading]:
    """The A/A runs' readings of an entry made since its baseline, with its test and identity (a reading computed
    from a reviewed reference left out: :func:`reviewed`)."""
    since = str((entry.get("provenance") or {}).get("date", ""))
    out = []
    for run in runs:
        m = run.metrics.get(name)
        if m is None or run.started < since or m.get("test") != entry.get("test") \
                or (m.get("identity") or {}) != (entry.get("identity") or {}) or m.get("unit") != entry.get("unit") \
                or m.get("test") in run.replayed:
            continue
        value = float(m["value"])
        samples = tuple(float(x) for x in ((m.get("stats") or {}).get("samples") or ()))
        out.append(Reading(run, value, samples, bad_delta(entry, value), outside(entry, value)))
    return out


def mended(name: str, entry: Mapping[str, Any], seen: list[Reading], files: list[str]) -> dict[str, Any]:
    """The entry with its band set from the spread of its baseline runs and the A/A runs between machines."""
    values = [*map(float, entry.get("run_values") or [entry["value"]]), *(r.value for r in seen)]
    tol = dict(entry.get("tolerance") or {})
    k = float(tol.get("k", K))
    sigma = between_run_sigma(values)
    tol.update(k=k, spread=max(float(tol.get("spread", 0.0)), sigma))
    machines = sorted({r.run.machine for r in seen})
    out = [r for r in seen if r.outside]
    cause = (f"between machines: {len(seen)} A/A runs on {len(machines)} machines read "
             f"{min(r.delta for r in seen):+.2%}..{max(r.delta for r in seen):+.2%} (bad direction positive) "
             f"against the baseline's {len(values) - len(seen)} runs; outside the shipped band "
             f"({band(float(entry['value']), entry.get('tolerance') or {}) / abs(float(entry['value'])):.2%}): "
             + ", ".join(f"{r.run.label} {r.delta:+.2%}" for r in out)
             + f"; band k {k:g} × σ {sigma:.4g} of all {len(values)} runs")
    provenance = dict(entry.get("provenance") or {})
    provenance["band_from"] = {"script": "scripts/aa_bands.py", "runs": files, "causes": {}}
    new = dict(entry, tolerance=tol, provenance=provenance)
    return new | {"_cause": cause}


def mend_section(key: str, metrics: dict[str, dict[str, Any]], runs: list[Run]) -> tuple[dict[str, str], list[str]]:
    """Set the bands of the entries an A/A run left (in place); their causes by name, and the report's lines."""
    causes: dict[str, str] = {}
    lines = []
    pending = {}
    for name in sorted(metrics):
        entry = metrics[name]
        if not gained_power(entry):
            continue
        seen = readings(name, entry, runs)
        if not seen:
            lines.append(f"{key} {name}: no A/A run since its baseline")
            continue
        deltas = " ".join(f"{r.delta:+.2%}" for r in seen)
        flag = "OUTSIDE" if any(r.outside for r in seen) else "inside"
        lines.append(f"{key} {name}: {flag} band {band(float(entry['value']), entry['tolerance']) / abs(float(entry['value'])):.2%}"
                     f", {len(seen)} A/A runs: {deltas}")
        if any(r.outside for r in seen):
            pending[name] = seen
    files = sorted({f"results/{key}/{r.run.label}" for seen in pending.values() for r in seen})
    for name, seen in pending.items():
        new = mended(name, metrics[name], seen, files)
        causes[name] = new.pop("_cause")
        metrics[name] = new
    for name in pending:  # one provenance for the update, every mended entry's cause under it
        metrics[name]["provenance"]["band_from"]["causes"] = dict(causes)
        still = [r for r in readings(name, metrics[name], runs) if r.outside]
        if still:
            raise SystemExit(f"{key} {name}: k × σ between machines leaves {', '.join(r.run.label for r in still)} "
                             "outside the band: its spread has a cause this script does not measure; look at it")
    return causes, lines


def settle(bl: Any, moved: int, write: bool, what: str) -> int:
    """Write the reviewed baseline ``bl`` back (validated) when ``moved`` entries changed and ``write`` asks
    for it; the count of entries that differ from the shipped file (a check run fails on any)."""
    if moved and write:
        baseline_file.validate(str(bl.path), bl.data)
        baseline_file.write(bl.path, bl.data)
        print(f"{bl.path.relative_to(ROOT)}: {moved} {what}")
    return moved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="update the reviewed baselines (else report only)")
    args = ap.parse_args(argv)
    changed = 0
    for key in KEYS:
        bl = baseline_file.load(REVIEWED_BASELINES, key)
        moved = 0
        for backend, section in sorted(bl.data["backends"].items()):
            metrics = section["metrics"]
            before = {n: dict(e.get("tolerance") or {}) for n, e in metrics.items()}
            runs = aa_runs(key, backend)
            if not runs:  # no A/A run of this backend saved: nothing to set its bands from
                continue
            causes, lines = mend_section(key, metrics, runs)
            print("\n".join(lines))
            moved += sum(metrics[n]["tolerance"] != before[n] for n in causes)
            for name in causes:
                print(f"{key} {backend} {name}: {causes[name]}")
        changed += settle(bl, moved, args.write, "band(s) set from the spread between machines")
    return 1 if changed and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
