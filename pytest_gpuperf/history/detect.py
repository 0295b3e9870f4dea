"""Change points of each metric over commits: which commit moved it, by how much, for better or worse.

One series per (device key, backend, metric name), runs in date order. Segmentation is PELT
(``ruptures``, L2 cost) with a penalty calibrated from the series' own noise: ``beta · σ² · ln n``, a
BIC-like penalty (a split must explain more variance than σ² ln n per extra change point, so pure
noise of that σ rarely splits). σ is the larger of

* the run-to-run noise: 1.4826 · MAD of successive differences / √2 — robust to the steps themselves
  (a step is one outlier among the differences), and
* the within-run noise: 1.4826 · the median of the runs' own MADs (what each run measured),

so a metric is never judged more precise than the device measured it. Then segments whose medians
differ by less than ``max(min_rel · |level|, k_sigma · σ)`` are merged again: a shift that small is
a sub-noise wiggle, not a step worth a bisect.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from ..timing.stats import MAD_TO_SIGMA
from .records import RunRecord

DEFAULT_BETA = 3.0
DEFAULT_MIN_REL = 0.02
DEFAULT_K_SIGMA = 2.0
#: Fewer runs cannot tell a step from noise (σ itself comes from the series): report nothing then.
DEFAULT_MIN_RUNS = 5


@dataclass(frozen=True)
class Point:
    date: str
    commit: str
    value: float
    mad: float | None
    driver: str = ""
    toolkit: str = ""


@dataclass(frozen=True)
class Step:
    """A persistent shift of a metric: ``index`` is the first run at the new level."""

    device_key: str
    backend: str
    name: str
    unit: str
    better: str
    index: int
    commit: str
    previous_commit: str
    date: str
    before: float
    after: float
    rel: float
    sigma: float
    direction: str  # "worse", "better", or "changed" (an exact metric moved)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        return (f"{self.device_key}/{self.backend} {self.name}: {self.direction.upper()} {self.rel:+.1%} "
                f"({self.before:.5g} → {self.after:.5g} {self.unit}) at commit {self.commit[:12] or '?'} "
                f"(previous run: {self.previous_commit[:12] or '?'}, {self.date})")


SeriesKey = tuple[str, str, str]  # device_key, backend, name


def series(runs: Iterable[RunRecord]) -> dict[SeriesKey, tuple[dict[str, str], list[Point]]]:
    """Group runs into per-metric series (date order): key → ({unit, better}, points)."""
    out: dict[SeriesKey, tuple[dict[str, str], list[Point]]] = {}
    for run in sorted(runs, key=lambda r: r.date):
        for m in run.metrics:
            if m.value is None or not math.isfinite(m.value):
                continue
            key = (run.device_key, run.backend, m.name)
            meta, points = out.setdefault(key, ({"unit": m.unit, "better": m.better}, []))
            meta.update(unit=m.unit or meta["unit"], better=m.better or meta["better"])
            points.append(Point(run.date, run.commit, float(m.value), m.mad, run.driver, run.toolkit))
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


def direction(better: str, rel: float) -> str:
    if better == "exact":
        return "changed"
    up_is_good = better == "higher"
    return "better" if (rel > 0) == up_is_good else "worse"


def change_points(values: Sequence[float], sigma: float, beta: float = DEFAULT_BETA, min_rel: float = DEFAULT_MIN_REL,
                  k_sigma: float = DEFAULT_K_SIGMA, min_runs: int = DEFAULT_MIN_RUNS) -> list[int]:
    """Indices where a new level starts (PELT, then merging of sub-threshold segments)."""
    import ruptures as rpt

    xs = np.asarray(values, dtype=np.float64)
    n = xs.size
    if n < max(3, min_runs):
        return []
    min_size = 2 if n >= 8 else 1
    penalty = beta * sigma * sigma * math.log(n)
    ends = rpt.Pelt(model="l2", min_size=min_size, jump=1).fit(xs.reshape(-1, 1)).predict(pen=penalty)
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
    return bounds[1:-1]


def detect(runs: Iterable[RunRecord], device_key: str | None = None, beta: float = DEFAULT_BETA,
           min_rel: float = DEFAULT_MIN_REL, k_sigma: float = DEFAULT_K_SIGMA, names: str | None = None,
           min_runs: int = DEFAULT_MIN_RUNS) -> list[Step]:
    """Every step of every series (optionally of one device key, or metrics whose name contains ``names``)."""
    steps = []
    for (key, backend, name), (meta, points) in sorted(series(runs).items()):
        if (device_key and key != device_key) or (names and names not in name):
            continue
        values = [p.value for p in points]
        sigma = noise_sigma(values, [p.mad for p in points])
        cps = change_points(values, sigma, beta, min_rel, k_sigma, min_runs)
        bounds = [0, *cps, len(values)]
        for j, cp in enumerate(cps):
            before = float(np.median(values[bounds[j]:cp]))
            after = float(np.median(values[cp:bounds[j + 2]]))
            rel = (after - before) / abs(before) if before else math.copysign(math.inf, after - before)
            steps.append(Step(key, backend, name, meta["unit"], meta["better"], cp, points[cp].commit,
                              points[cp - 1].commit, points[cp].date, before, after, rel, sigma,
                              direction(meta["better"], rel)))
    return steps


def environment_changes(runs: Iterable[RunRecord]) -> dict[tuple[str, str], list[dict[str, str]]]:
    """Per (device key, backend): the runs where driver, runtime or toolkit changed (for the dashboard)."""
    last: dict[tuple[str, str], tuple[str, str, str]] = {}
    out: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for run in sorted(runs, key=lambda r: r.date):
        k = (run.device_key, run.backend)
        cur = (run.driver, run.runtime, run.toolkit)
        if k in last and last[k] != cur:
            what = [f"{f} {a}→{b}" for f, a, b in zip(("driver", "runtime", "toolkit"), last[k], cur) if a != b]
            out[k].append({"date": run.date, "commit": run.commit, "what": ", ".join(what)})
        last[k] = cur
    return dict(out)
