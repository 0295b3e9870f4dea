"""Change points of each metric over commits: which commit moved it, by how much, for better or worse.

In the spirit of asv's step detection (``asv.step_detect``), a series is compared only with itself:

* **one series per identity.** A metric is keyed by device key, backend, name *and* identity (the
  options that shape the figure, ``MetricRecord.identity``: input set, sizes, sampling …; ``{}`` for
  runs recorded before identities were). When the identity changes, the figure measures something else:
  that is reported as an :class:`IdentityChange`, and segments are compared only within one identity —
  as asv compares results only within one benchmark version.
* **only runs that measure the system as it is.** Gate-check runs that plant a regression
  (``--gpuperf-plant``) are left out of every trend (:func:`left_out`).
* **a level needs two runs.** PELT (``ruptures``, L2 cost) segments the series; a segment of one run
  is an outlier, not a new level: it is left out and the rest segmented again, so a blip is neither a
  step nor pulls a neighbour into a two-run segment of its own.

The penalty is calibrated from the series' own noise: ``beta · σ² · ln n``, a BIC-like penalty (a
split must explain more variance than σ² ln n per extra change point, so pure noise of that σ rarely
splits). σ is the larger of

* the run-to-run noise: 1.4826 · MAD of successive differences / √2 — robust to the steps themselves
  (a step is one outlier among the differences), and
* the within-run noise: 1.4826 · the median of the runs' own MADs (what each run measured),

so a metric is never judged more precise than the device measured it. Then segments whose medians
differ by less than ``max(min_rel · |level|, k_sigma · σ)`` are merged again: a shift that small is
a sub-noise wiggle, not a step worth a bisect. A step from a level of 0 has no relative size: its
``rel`` is None and its absolute change ``delta`` says how far it moved.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from ..timing.stats import MAD_TO_SIGMA
from .records import RunRecord, dumps, finite

DEFAULT_BETA = 3.0
DEFAULT_MIN_REL = 0.02
DEFAULT_K_SIGMA = 2.0
#: Fewer runs cannot tell a step from noise (σ itself comes from the series): report nothing then.
DEFAULT_MIN_RUNS = 5
#: Runs a level needs: a segment of fewer runs is an outlier (a blip), not a new level.
MIN_SEGMENT = 2
#: The pytest option of the gate check's planted regressions: such a run does not measure the system as it is.
PLANT_OPTION = "--gpuperf-plant"


def left_out(run: RunRecord) -> str | None:
    """Why ``run`` is left out of trends, or None: a run with a planted regression (``--gpuperf-plant`` in
    its argv, or ``plants`` in the options a live session recorded) measures a deliberately worsened
    system. Runs that update baselines measure the real system and stay in."""
    plants = [a for a in run.argv if a == PLANT_OPTION or a.startswith(PLANT_OPTION + "=")]
    if plants or run.options.get("plants"):
        return "planted regression (--gpuperf-plant)"
    return None


def trend_runs(runs: Iterable[RunRecord]) -> tuple[list[RunRecord], list[tuple[RunRecord, str]]]:
    """(runs that make up the trends in date order, [(run left out, why)])."""
    kept, dropped = [], []
    for run in sorted(runs, key=lambda r: r.date):
        why = left_out(run)
        if why:
            dropped.append((run, why))
        else:
            kept.append(run)
    return kept, dropped


def identity_key(identity: dict[str, Any] | None) -> str:
    """The canonical text of an identity (sorted keys, strict JSON), as the stores write it."""
    return dumps(finite(identity or {}), sort_keys=True, default=str)


@dataclass(frozen=True)
class Point:
    """One run's value of one metric in a series."""

    date: str
    commit: str
    value: float
    mad: float | None
    driver: str = ""
    toolkit: str = ""
    run: str = ""  # the run's uid
    identity: str = "{}"  # identity_key of the metric in this run


@dataclass(frozen=True)
class Step:
    """A persistent shift of a metric within one identity: ``index`` is the first run at the new level
    in that identity's series, ``run`` its uid; ``rel`` is None when the level before was 0."""

    device_key: str
    backend: str
    name: str
    unit: str
    better: str
    index: int
    commit: str
    previous_commit: str
    date: str
    previous_date: str
    before: float
    after: float
    delta: float
    rel: float | None
    sigma: float
    direction: str  # "worse", "better", or "changed" (an exact metric moved)
    run: str = ""
    identity: dict[str, Any] = field(default_factory=dict, hash=False)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def size(self) -> str:
        """The step's size: relative when the level before was not 0, else the absolute change."""
        return f"{self.delta:+.5g} {self.unit}".rstrip() if self.rel is None else f"{self.rel:+.1%}"

    def describe(self) -> str:
        levels = f"{self.before:.5g} → {self.after:.5g} {self.unit}".rstrip()
        if self.rel is None:
            levels += "; from 0, so no relative size"
        return (f"{self.device_key}/{self.backend} {self.name}: {self.direction.upper()} {self.size()} ({levels}) "
                f"at commit {self.commit[:12] or '?'} ({self.date}; previous run: "
                f"{self.previous_commit[:12] or '?'}, {self.previous_date})")


@dataclass(frozen=True)
class IdentityChange:
    """A metric whose identity changed between two runs: the series is split there, not compared."""

    device_key: str
    backend: str
    name: str
    commit: str
    previous_commit: str
    date: str
    previous_date: str
    before: dict[str, Any] = field(hash=False)
    after: dict[str, Any] = field(hash=False)
    run: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def what(self) -> str:
        """What changed, in words (:func:`identity_difference`)."""
        return identity_difference(self.before, self.after)


def identity_difference(before: dict[str, Any], after: dict[str, Any]) -> str:
    """An identity change in words: the keys that differ, ``key: old → new`` (``-`` where absent); runs
    recorded before identities existed have ``{}``, so their change says the identity was first recorded."""
    if not before:
        return "identity first recorded: " + identity_key(after)
    keys = sorted(set(before) | set(after), key=str)
    return ", ".join(f"{k}: {before.get(k, '-')} → {after.get(k, '-')}"
                     for k in keys if before.get(k) != after.get(k))


@dataclass
class Detection:
    """What :func:`detect_all` found: steps, identity changes, and the runs left out of the trends."""

    steps: list[Step]
    identity_changes: list[IdentityChange]
    left_out: list[tuple[RunRecord, str]]

    def to_json(self) -> dict[str, Any]:
        return {"steps": [s.to_json() for s in self.steps],
                "identity_changes": [c.to_json() for c in self.identity_changes],
                "left_out": [{"run": r.uid, "date": r.date, "commit": r.commit, "device_key": r.device_key,
                              "backend": r.backend, "source": r.source, "why": why} for r, why in self.left_out]}


SeriesKey = tuple[str, str, str]  # device_key, backend, name


def series(runs: Iterable[RunRecord]) -> dict[SeriesKey, tuple[dict[str, str], list[Point]]]:
    """Group runs into per-metric series (date order, every identity): key → ({unit, better}, points).

    Runs are taken as given; :func:`trend_runs` is what leaves the planted ones out."""
    out: dict[SeriesKey, tuple[dict[str, str], list[Point]]] = {}
    for run in sorted(runs, key=lambda r: r.date):
        uid = run.uid
        for m in run.metrics:
            if m.value is None or not math.isfinite(m.value):
                continue
            key = (run.device_key, run.backend, m.name)
            meta, points = out.setdefault(key, ({"unit": m.unit, "better": m.better}, []))
            meta.update(unit=m.unit or meta["unit"], better=m.better or meta["better"])
            points.append(Point(run.date, run.commit, float(m.value), m.mad, run.driver, run.toolkit, uid,
                                identity_key(m.identity)))
    return out


def noise_sigma(values: Sequence[float], mads: Sequence[float | None] = ()) -> float:
    """Robust σ of a series: max(run-to-run σ from successive differences, median within-run σ)."""
    xs = np.asarray(values, dtype=np.float64)
    diffs = np.diff(xs)
    between = MAD_TO_SIGMA * float(np.median(np.abs(diffs - np.median(diffs)))) / math.sqrt(2) if diffs.size else 0.0
    within_raw = [m for m in mads if m is not None and math.isfinite(m)]
    within = MAD_TO_SIGMA * float(np.median(within_raw)) if within_raw else 0.0
    floor = 1e-9 * max(1e-300, float(np.median(np.abs(xs)))) if xs.size else 1e-300
    return max(between, within, floor)


def direction(better: str, delta: float) -> str:
    """``worse``/``better`` from the metric's ``better`` and the sign of the change; ``changed`` for exact."""
    if better == "exact":
        return "changed"
    up_is_good = better == "higher"
    return "better" if (delta > 0) == up_is_good else "worse"


def _segments(xs: np.ndarray, sigma: float, beta: float, min_rel: float, k_sigma: float) -> list[int]:
    """Segment bounds ``[0, …, n]`` of one series: PELT (L2 cost, penalty ``beta σ² ln n``), then merging of
    adjacent segments whose medians differ by less than ``max(min_rel · |level|, k_sigma · σ)``."""
    import ruptures as rpt

    n = xs.size
    penalty = beta * sigma * sigma * math.log(n)
    ends = rpt.Pelt(model="l2", min_size=1, jump=1).fit(xs.reshape(-1, 1)).predict(pen=penalty)
    bounds = [0, *ends[:-1], n]  # segment i spans bounds[i]:bounds[i+1]
    while len(bounds) > 2:
        meds = [float(np.median(xs[a:b])) for a, b in zip(bounds, bounds[1:])]
        gaps = []
        for i in range(1, len(meds)):
            need = max(min_rel * abs(meds[i - 1]), k_sigma * sigma)
            gaps.append((abs(meds[i] - meds[i - 1]) / need if need > 0 else math.inf, i))
        ratio, i = min(gaps)
        if ratio >= 1.0:
            break
        del bounds[i]  # merge segment i into i-1
    return bounds


def change_points(values: Sequence[float], sigma: float, beta: float = DEFAULT_BETA, min_rel: float = DEFAULT_MIN_REL,
                  k_sigma: float = DEFAULT_K_SIGMA, min_runs: int = DEFAULT_MIN_RUNS) -> tuple[list[int], list[int]]:
    """(indices where a new level starts, indices of outliers) of one series.

    A level must hold at least :data:`MIN_SEGMENT` runs: a segment shorter than that is an outlier (one
    run away from its neighbours), left out before the series is segmented again — so a blip neither
    counts as a step nor drags a neighbouring run into a segment of its own. Steps are reported between
    the remaining levels, at their first run."""
    xs = np.asarray(values, dtype=np.float64)
    keep = np.arange(xs.size)
    outliers: list[int] = []
    while keep.size >= max(2 * MIN_SEGMENT, min_runs):
        bounds = _segments(xs[keep], sigma, beta, min_rel, k_sigma)
        short = [i for a, b in zip(bounds, bounds[1:]) if b - a < MIN_SEGMENT for i in range(a, b)]
        if not short:
            return [int(keep[b]) for b in bounds[1:-1]], sorted(outliers)
        outliers += [int(keep[i]) for i in short]
        keep = np.delete(keep, short)
    return [], sorted(outliers)


def _identity_changes(key: SeriesKey, points: Sequence[Point]) -> list[IdentityChange]:
    out = []
    for prev, cur in zip(points, points[1:]):
        if prev.identity != cur.identity:
            out.append(IdentityChange(key[0], key[1], key[2], cur.commit, prev.commit, cur.date, prev.date,
                                      json.loads(prev.identity), json.loads(cur.identity), cur.run))
    return out


def detect_all(runs: Iterable[RunRecord], device_key: str | None = None, beta: float = DEFAULT_BETA,
               min_rel: float = DEFAULT_MIN_REL, k_sigma: float = DEFAULT_K_SIGMA, names: str | None = None,
               min_runs: int = DEFAULT_MIN_RUNS) -> Detection:
    """Steps of every series within each identity, the identity changes, and the runs left out
    (optionally of one device key, or of metrics whose name contains ``names``)."""
    kept, dropped = trend_runs(r for r in runs if not device_key or r.device_key == device_key)
    steps: list[Step] = []
    changes: list[IdentityChange] = []
    for (key, backend, name), (meta, points) in sorted(series(kept).items()):
        if names and names not in name:
            continue
        changes += _identity_changes((key, backend, name), points)
        by_identity: dict[str, list[Point]] = defaultdict(list)
        for p in points:
            by_identity[p.identity].append(p)
        for ident, pts in by_identity.items():
            values = [p.value for p in pts]
            sigma = noise_sigma(values, [p.mad for p in pts])
            cps, outliers = change_points(values, sigma, beta, min_rel, k_sigma, min_runs)
            kept = sorted(set(range(len(values))) - set(outliers))
            bounds = [0, *cps, len(values)]
            for j, cp in enumerate(cps):
                before = float(np.median([values[i] for i in kept if bounds[j] <= i < cp]))
                after = float(np.median([values[i] for i in kept if cp <= i < bounds[j + 2]]))
                prev = max(i for i in kept if i < cp)  # the last run at the old level: bisect from there
                delta = after - before
                rel = delta / abs(before) if before else None  # from 0 a relative change is undefined
                steps.append(Step(key, backend, name, meta["unit"], meta["better"], cp, pts[cp].commit,
                                  pts[prev].commit, pts[cp].date, pts[prev].date, before, after, delta, rel,
                                  sigma, direction(meta["better"], delta), pts[cp].run, json.loads(ident)))
    steps.sort(key=lambda s: (s.device_key, s.backend, s.name, s.date))
    return Detection(steps, changes, dropped)


def detect(runs: Iterable[RunRecord], device_key: str | None = None, beta: float = DEFAULT_BETA,
           min_rel: float = DEFAULT_MIN_REL, k_sigma: float = DEFAULT_K_SIGMA, names: str | None = None,
           min_runs: int = DEFAULT_MIN_RUNS) -> list[Step]:
    """Every step of every series (optionally of one device key, or metrics whose name contains ``names``)."""
    return detect_all(runs, device_key, beta, min_rel, k_sigma, names, min_runs).steps


def environment_changes(runs: Iterable[RunRecord]) -> dict[tuple[str, str], list[dict[str, str]]]:
    """Per (device key, backend): the runs where driver, runtime or toolkit changed (for the dashboard)."""
    last: dict[tuple[str, str], tuple[str, str, str]] = {}
    out: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for run in sorted(runs, key=lambda r: r.date):
        k = (run.device_key, run.backend)
        cur = (run.driver, run.runtime, run.toolkit)
        if k in last and last[k] != cur:
            what = [f"{f} {a}→{b}" for f, a, b in zip(("driver", "runtime", "toolkit"), last[k], cur) if a != b]
            out[k].append({"date": run.date, "commit": run.commit, "what": ", ".join(what), "run": run.uid})
        last[k] = cur
    return dict(out)
