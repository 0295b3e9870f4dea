"""Steps a team can act on: which commits moved a metric, by how much, for better or worse, and how sure.

In the spirit of asv's step detection (``asv.step_detect``), a series is compared only with itself, and
a step is reported only where the gate would have seen it too:

* **one series per identity.** A metric is keyed by device key, backend, name *and* identity (the
  options that shape the figure, ``TrendMetric.identity``: input set, sizes, sampling …; ``{}`` for
  runs recorded before identities were). When the identity changes the figure measures something else:
  that is an :class:`IdentityChange`, never a step, and levels are compared only within one identity.
* **one series per kernel.** As asv's benchmark version, the digest of the kernels a metric's test compiled
  (``TrendMetric.source_digest``) splits an identity's series where it changes: a move across a changed
  kernel is a :class:`KernelChange` (``kernel changed``), never a step. A run without a digest (recorded
  before digests were, or a figure of the host alone) continues the kernel of the runs before it.
* **only runs that measure the system as it is.** Gate-check runs that plant a regression
  (``--gpuperf-plant``) and runs that Ctrl-C interrupted are left out of every trend (:func:`left_out`),
  and so are the figures the observers marked as not the code's (:data:`NOT_THE_CODES`).
* **the gate's threshold and the noise between runs.** Two levels differ only where the newer one lies
  outside the band a baseline made of the older level's runs would have — the test's own tolerance, else
  the floor of the metric's class (:mod:`pytest_gpuperf.baselines.classes`: CPU devices and host-timed
  figures have wider ones, and a GPU figure a wider one while its old level holds fewer runs than show
  its run-to-run spread), widened by the gate's k × the run-to-run σ of those runs, never narrower than
  the device's timer — *and* by more than ``k_sigma`` standard errors of the series' noise between runs,
  between levels whose runs do not overlap (two placement modes of one figure that take turns are one
  level). A noisy metric therefore needs a larger step than a quiet one, and no metric a step smaller
  than its gate resolves.
* **persistence.** A new level counts once it holds ``k`` runs (``--min-runs``): a shorter excursion in
  the middle of a series is transient (left out, and the series segmented again), and a move at the
  newest runs is reported as a *candidate* until ``k`` runs confirm it.
* **deterministic figures** (the noise model of :mod:`pytest_gpuperf.baselines.noise`: seeded ulp errors,
  counts, exact metrics) have no noise: any change beyond the test's own tolerance is a step (confidence
  1), once it persists like any other. Informational figures are never judged.
* **a cause.** A change between two runs of the same commit, driver and toolkit has nothing that could
  have caused it; a metric its test marks ``gate: if-stable`` steps only from a level as stable as the
  gate demands.

Levels of noisy figures come from PELT (``ruptures``, L2 cost) with a penalty calibrated from the
series' own noise, ``beta · σ² · ln n`` (BIC-like: pure noise of that σ rarely splits), followed by a
merge of adjacent levels whose difference does not pass both thresholds above. σ is the largest of the
run-to-run noise (1.4826 · MAD of successive differences / √2, robust to the steps themselves), the
within-run noise (1.4826 · the median of the runs' own MADs) and the pooled spread of A/A runs. Each step carries its commit range (the
last run at the old level, the first at the new), its size, direction and confidence: 1 − p of a t-test
over the runs of the two levels (:func:`pytest_gpuperf.timing.difference.run_difference`), 1 for a
deterministic change. A step from a level of 0 has no relative size: ``rel`` is None, ``delta`` says
how far it moved.
"""

from __future__ import annotations

import functools
import json
import math
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..verdictwords import Gate, Trend
from ..baselines import classes, noise
from ..baselines.verdicts import band, edges
from ..gatecheck.plants import planted_values
from ..devices.base import timer_resolution
from ..timing.difference import run_difference
from ..timing.stats import MAD_TO_SIGMA, between_run_sigma, mad
from .records import TrendMetric, RunRecord, dumps, finite

DEFAULT_BETA = 3.0
#: A step must exceed this many σ of the series' noise between runs (beside the gate's band).
DEFAULT_K_SIGMA = 3.0
#: Runs a new level must hold before its step is confirmed (``k``); fewer at the newest runs: a candidate.
DEFAULT_MIN_RUNS = 3
#: Runs the first level of a series needs to be a level at all (fewer: left out as an outlier).
MIN_SEGMENT = 2
#: Verdicts of figures that were not the code's: another process shared the card or the host's cores, or
#: the card throttled while they were measured (``timing.observers``) — left out of trends as out of the gate.
NOT_THE_CODES = (Gate.CONTENDED, Gate.THROTTLED)
#: Step statuses: confirmed by ``k`` runs, or seen at the newest runs only.
CONFIRMED, CANDIDATE = "confirmed", "candidate"


def left_out(run: RunRecord) -> str | None:
    """Why ``run`` is left out of trends, or None: a run with a planted regression (``--gpuperf-plant`` in
    its argv, or ``plants`` in the options a live session recorded) measures a deliberately worsened
    system; an interrupted run (Ctrl-C) holds only the tests that finished, some of them cut short. Runs
    that update baselines measure the real system and stay in."""
    if planted_values(run.argv) or run.options.get("plants"):
        return "planted regression (--gpuperf-plant)"
    if run.options.get("interrupted"):
        return "interrupted (Ctrl-C before every test ran)"
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
    if not identity:
        return "{}"
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
    digest: str | None = None  # the metric's source_digest in this run (None: unknown)


@dataclass(frozen=True)
class Rule:
    """How steps of one series are judged, as the gate judges a run: the metric's noise model and the
    band around a level (``tolerance``, :func:`pytest_gpuperf.baselines.verdicts.band`)."""

    model: str
    tolerance: Mapping[str, float]
    source: str  # where the band comes from, in words
    few: Mapping[str, float] | None = None  # the band while a level holds fewer runs than show its spread
    k: float = 0.0  # the gate's k × (run-to-run σ of the level's runs) term; 0 for deterministic figures

    def tol(self, runs: int, spread: float = 0.0) -> Mapping[str, float]:
        """The band's terms for a level of ``runs`` runs whose values spread by σ = ``spread``, as a baseline
        made of those runs would hold them (:func:`pytest_gpuperf.baselines.baseline_file.make_entry`): a GPU figure's
        floor is wider until three runs show its run-to-run spread
        (:func:`pytest_gpuperf.baselines.classes.floor`), and k × that spread widens any band."""
        tol = dict(self.few if self.few is not None and not noise.enough_repeats(runs) else self.tolerance)
        if self.k and spread > 0:
            tol.update(k=self.k, spread=spread)
        return tol

    def width(self, level: float, runs: int = noise.MIN_REPEATS, spread: float = 0.0) -> float:
        return band(level, self.tol(runs, spread))

    def outside(self, before: float, after: float, better: str, runs: int = noise.MIN_REPEATS,
                spread: float = 0.0) -> float:
        """How far ``after`` lies from ``before`` (a level of ``runs`` runs spreading by ``spread``) in units of
        the band's half-width on its side (≥ 1: outside the band; ``inf`` for any change when the band is 0)."""
        tol = self.tol(runs, spread)
        width = band(before, tol)
        direction = better if better in ("lower", "higher") else "lower"
        # ratio-safe unless an absolute term sets the width, as in the gate (baselines.verdicts)
        low, high = edges(before, width, direction, ratio_safe=float(tol.get("abs", 0.0)) < width)
        need = (high - before) if after >= before else (before - low)
        gap = abs(after - before)
        if need <= 0:
            return math.inf if gap > 0 else 0.0
        return gap / need


def rule_for(metric: TrendMetric, device: Mapping[str, Any], samples: bool) -> Rule:
    """The gate's view of ``metric`` on ``device``: its noise model (:func:`.noise.model_of`) and its band —
    the tolerance its test set, else the floor of its class on this kind of device (host-timed figures
    their own), never narrower than the device's timer (:func:`.classes.resolution_floor`)."""
    info = metric.info or {}
    model = noise.model_of(metric.name, metric.unit, metric.better, samples, info)
    own = dict(metric.tolerance or {})
    own.pop("k", None), own.pop("spread", None)  # noise terms belong to a baseline, not to a level
    if model == "deterministic":
        return Rule(model, own, "the test's own tolerance" if own else "exact: any change")
    from ..compare.engine import DEFAULT_K

    is_cpu = bool(device.get("is_cpu"))
    host = classes.is_host_timed(info)
    few = None
    if own:
        tol, source = own, "the test's own tolerance"
    else:
        # as the gate: the 1 % GPU floor only beside the k × spread term of three runs or more (Rule.tol);
        # a level of fewer runs, whose spread is unknown, takes the one-run floor (3 %)
        floor = classes.floor(metric.unit, is_cpu, host_timed=host)
        floor_few = classes.floor(metric.unit, is_cpu, host_timed=host, spread_known=False)
        tol = {"rel": floor}
        few = {"rel": floor_few} if floor_few != floor else None
        kind = "host-timed figures" if host else f"{classes.metric_class(metric.unit)} on {'CPU' if is_cpu else 'GPU'}s"
        source = f"class floor {floor:.0%}" + (f" ({floor_few:.0%} from fewer than {noise.MIN_REPEATS} runs)" if few
                                              else "") + f" ({kind})"
    resolution = classes.resolution_floor(metric.unit, timer_resolution(dict(device)), info)
    if resolution > float(tol.get("abs", 0.0)):
        tol = dict(tol, abs=resolution)
    if few is not None and resolution > float(few.get("abs", 0.0)):
        few = dict(few, abs=resolution)
    return Rule(model, tol, source + f" and {DEFAULT_K:g} × the old level's run-to-run σ", few, DEFAULT_K)


@dataclass(frozen=True)
class Step:
    """A persistent shift of a metric within one identity and kernel: ``index`` is the first run at the new
    level in that identity's and kernel's series, ``run`` its uid; ``rel`` is None when the level before was 0.

    ``status``: ``confirmed`` (the new level holds ``runs_after`` ≥ k runs) or ``candidate`` (seen at
    the newest runs only). ``threshold``: the band the new level left (in the metric's unit, at the old
    level); ``confidence``: 1 − ``p_value`` of the t-test over the two levels' runs (1 for a deterministic
    change)."""

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
    status: str = CONFIRMED
    runs_before: int = 0
    runs_after: int = 0
    threshold: float = 0.0
    confidence: float = 1.0
    p_value: float | None = None
    model: str = ""
    rule: str = ""

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["commit_range"] = self.commit_range()
        return doc

    def commit_range(self) -> str:
        """``last-at-old..first-at-new``: what to bisect (``git log A..B`` lists the suspects)."""
        return f"{self.previous_commit[:12] or '?'}..{self.commit[:12] or '?'}"

    def size(self) -> str:
        """The step's size: relative when the level before was not 0, else the absolute change."""
        return f"{self.delta:+.5g} {self.unit}".rstrip() if self.rel is None else f"{self.rel:+.1%}"

    @property
    def worse(self) -> bool:
        return self.direction in ("worse", "changed")

    def describe(self) -> str:
        unit = "" if self.unit in ("1", "ratio") else self.unit  # a dimensionless figure: no unit after its number
        levels = f"{self.before:.5g} → {self.after:.5g} {unit}".rstrip()
        if self.rel is None:
            levels += "; from 0, so no relative size"
        status = (f"confirmed by {self.runs_after} runs" if self.status == CONFIRMED
                  else f"CANDIDATE: {self.runs_after} run(s) so far")
        sure = "exact figure" if self.model == "deterministic" else (
            f"confidence {self.confidence:.4f}" + ("" if self.p_value is None else f", p={self.p_value:.2g}"))
        return (f"{self.device_key}/{self.backend} {self.name}: {self.direction.upper()} {self.size()} ({levels}; "
                f"band ±{self.threshold:.3g}, σ {self.sigma:.3g}) {status}, {sure} — commits {self.commit_range()} "
                f"({self.previous_date} .. {self.date})")


@dataclass(frozen=True)
class SeriesBreak:
    """Where one metric's series is split between two runs (the run after the split and the run before it)."""

    device_key: str
    backend: str
    name: str
    commit: str
    previous_commit: str
    date: str
    previous_date: str

    def what(self) -> str:
        """What changed, in words."""
        raise NotImplementedError


@dataclass(frozen=True)
class IdentityChange(SeriesBreak):
    """A metric whose identity changed between two runs: the series is split there, not compared."""

    before: dict[str, Any] = field(hash=False)
    after: dict[str, Any] = field(hash=False)
    run: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def what(self) -> str:
        """What changed, in words (:func:`identity_difference`)."""
        return identity_difference(self.before, self.after)


@dataclass(frozen=True)
class KernelChange(SeriesBreak):
    """A metric whose kernels changed between two runs of one identity (their ``source_digest`` differ): the
    series is split there, the two sides are never compared, so a move across it is no step."""

    before: str  # the digest of the old kernels
    after: str  # of the new ones
    run: str = ""  # the uid of the first run with the new kernels
    previous_run: str = ""  # of the run before it
    identity: dict[str, Any] = field(default_factory=dict, hash=False)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "change": Trend.KERNEL_CHANGED,
                "commit_range": f"{self.previous_commit[:12] or '?'}..{self.commit[:12] or '?'}"}

    def what(self) -> str:
        return f"{Trend.KERNEL_CHANGED}: {self.before[:8]} → {self.after[:8]}"


def kernel_segments(points: Sequence[Point]) -> tuple[list[list[Point]], list[tuple[Point, Point]]]:
    """``points`` (one identity's, in date order) cut where the kernel changed: (the segments, the (last run
    before, first run after) of each cut). A run without a digest is unknown, never a change: it continues
    the segment it follows, and the next known digest is compared with the last known one."""
    segments: list[list[Point]] = [[]]
    cuts: list[tuple[Point, Point]] = []
    known: str | None = None
    for p in points:
        if p.digest is not None and known is not None and p.digest != known:
            cuts.append((segments[-1][-1], p))
            segments.append([])
        segments[-1].append(p)
        known = p.digest if p.digest is not None else known
    return [seg for seg in segments if seg], cuts


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
    """What :func:`detect_all` found: steps (confirmed and candidates), identity changes, and the runs
    left out of the trends."""

    steps: list[Step]
    identity_changes: list[IdentityChange]
    left_out: list[tuple[RunRecord, str]]
    kernel_changes: list[KernelChange] = field(default_factory=list)

    @property
    def confirmed(self) -> list[Step]:
        return [s for s in self.steps if s.status == CONFIRMED]

    @property
    def candidates(self) -> list[Step]:
        return [s for s in self.steps if s.status == CANDIDATE]

    def to_json(self) -> dict[str, Any]:
        return {"steps": [s.to_json() for s in self.steps],
                "identity_changes": [c.to_json() for c in self.identity_changes],
                "kernel_changes": [c.to_json() for c in self.kernel_changes],
                "left_out": [{"run": r.uid, "date": r.date, "commit": r.commit, "device_key": r.device_key,
                              "backend": r.backend, "source": r.source, "why": why} for r, why in self.left_out]}


SeriesKey = tuple[str, str, str]  # device_key, backend, name


@dataclass
class Series:
    """One metric of one device and backend over the trend's runs (every identity), with what its
    newest run says of how it is gated."""

    unit: str
    better: str
    points: list[Point]
    latest: TrendMetric
    device: dict[str, Any]
    samples: bool = False

    def rule(self) -> Rule:
        return rule_for(self.latest, self.device, self.samples)


def series(runs: Iterable[RunRecord]) -> dict[SeriesKey, Series]:
    """Group runs into per-metric series (date order, every identity), without the figures the observers
    marked as not the code's (:data:`NOT_THE_CODES`).

    Runs are taken as given; :func:`trend_runs` is what leaves the planted and interrupted ones out."""
    out: dict[SeriesKey, Series] = {}
    for run in sorted(runs, key=lambda r: r.date):
        uid = run.uid
        for m in run.metrics:
            if m.value is None or not math.isfinite(m.value) or m.verdict in NOT_THE_CODES:
                continue
            key = (run.device_key, run.backend, m.name)
            s = out.get(key)
            if s is None:
                s = out[key] = Series(m.unit, m.better, [], m, run.device)
            s.unit, s.better, s.latest, s.device = m.unit or s.unit, m.better or s.better, m, run.device or s.device
            s.samples = s.samples or bool(m.samples)
            s.points.append(Point(run.date, run.commit, float(m.value), m.mad, run.driver, run.toolkit, uid,
                                  identity_key(m.identity), m.source_digest))
    return out


def noise_sigma(values: Sequence[float], mads: Sequence[float | None] = (),
                groups: Sequence[Any] | None = None) -> float:
    """σ of a series' noise between runs: the largest of the run-to-run σ from successive differences, the
    median within-run σ and, where ``groups`` names each run's code and environment (commit, driver,
    toolkit), the pooled σ of runs that share one — A/A runs, whose spread is noise by definition, and
    which shows noise that clusters by session where successive differences miss it."""
    xs = np.asarray(values, dtype=np.float64)
    aa = aa_sigma(xs, groups) if groups is not None else 0.0
    diffs = np.diff(xs)
    between = MAD_TO_SIGMA * mad(diffs) / math.sqrt(2) if diffs.size else 0.0
    within_raw = [m for m in mads if m is not None and math.isfinite(m)]
    within = MAD_TO_SIGMA * float(np.median(within_raw)) if within_raw else 0.0
    floor = 1e-9 * max(1e-300, float(np.median(np.abs(xs)))) if xs.size else 1e-300
    return max(between, within, aa, floor)


def aa_sigma(values: Sequence[float], groups: Sequence[Any]) -> float:
    """Pooled standard deviation of the runs within each group of equal ``groups`` labels (0 when fewer
    than two degrees of freedom)."""
    by: dict[Any, list[float]] = defaultdict(list)
    for v, g in zip(values, groups):
        by[g].append(float(v))
    sq, dof = 0.0, 0
    for xs in by.values():
        if len(xs) > 1:
            arr = np.asarray(xs)
            sq += float(np.sum((arr - arr.mean()) ** 2))
            dof += len(xs) - 1
    return math.sqrt(sq / dof) if dof >= 2 else 0.0


def direction(better: str, delta: float) -> str:
    """``worse``/``better`` from the metric's ``better`` and the sign of the change; ``changed`` for exact."""
    if better == "exact":
        return "changed"
    up_is_good = better == "higher"
    return "better" if (delta > 0) == up_is_good else "worse"


#: How far a level (the run values ``new``) lies from the one before it (``old``): ≥ 1 is a step.
Shift = Callable[[np.ndarray, np.ndarray], float]


def noise_term(sigma: float, k_sigma: float, n_before: int, n_after: int) -> float:
    """The change two levels must exceed to stand out of the noise between runs: ``k_sigma`` standard
    errors of the difference of their means, σ·√(1/n_before + 1/n_after) — a level of many runs is known
    better than one run, a candidate of one run must clear ``k_sigma`` σ by itself."""
    return k_sigma * sigma * math.sqrt(1.0 / max(n_before, 1) + 1.0 / max(n_after, 1))


def relative_shift(sigma: float, min_rel: float, k_sigma: float) -> Shift:
    """A shift that must exceed both ``min_rel`` of the level and the noise (:func:`noise_term`): a rule
    without a gate's band."""
    def shift(old: np.ndarray, new: np.ndarray) -> float:
        before, after = float(np.median(old)), float(np.median(new))
        gap = abs(after - before)
        rel = gap / (min_rel * abs(before)) if min_rel * abs(before) > 0 else math.inf
        need = noise_term(sigma, k_sigma, old.size, new.size)
        return min(rel, gap / need if need > 0 else math.inf) if gap > 0 else 0.0
    return shift


def overlap(old: np.ndarray, new: np.ndarray) -> bool:
    """Whether either level's median lies within the other's range of runs: the old level already held
    runs like the new one (or the other way round) — two modes of one noisy figure taking turns, as a
    buffer's placement or a clock's step makes them, not a new level."""
    before, after = float(np.median(old)), float(np.median(new))
    return bool(old.min() <= after <= old.max() or new.min() <= before <= new.max())


def gate_shift(rule: Rule, better: str, sigma: float, k_sigma: float) -> Shift:
    """A shift that must leave the gate's band around the old level *and* stand out of the noise between
    runs (:func:`noise_term`), between levels that do not overlap (:func:`overlap`)."""
    def shift(old: np.ndarray, new: np.ndarray) -> float:
        before, after = float(np.median(old)), float(np.median(new))
        gap = abs(after - before)
        if gap == 0 or overlap(old, new):
            return 0.0
        need = noise_term(sigma, k_sigma, old.size, new.size)
        spread = between_run_sigma(old)
        return min(rule.outside(before, after, better, old.size, spread), gap / need if need > 0 else math.inf)
    return shift


@functools.cache
def _running_l2() -> type:
    """ruptures' L2 cost (a segment's squared deviations from its mean, ``CostL2``) from running sums of the
    series and of its squares, centred on its median so the sums stay of the noise's size: each segment's cost
    is two subtractions, where ``CostL2`` takes a NumPy variance of the segment's slice, which PELT asks for
    hundreds of thousands of times over a history. Where two segmentations cost the same (a series of equal
    values, a penalty of 0) the last digits can pick the other one; the merge of levels that do not differ by a
    step that follows gives the same levels (a test checks it on a saved slice of the project's own history)."""
    from ruptures.base import BaseCost  # noqa: PLC0415 - imported where PELT is: seconds a process need not pay
    from ruptures.exceptions import NotEnoughPoints  # noqa: PLC0415

    class RunningL2(BaseCost):
        model = "l2_running"

        def __init__(self) -> None:
            self.min_size = 1
            self.signal: np.ndarray | None = None
            self._s1: list[float] = []
            self._s2: list[float] = []

        def fit(self, signal: np.ndarray) -> "RunningL2":
            x = np.asarray(signal, dtype=np.float64).reshape(-1)
            c = x - np.median(x) if x.size else x
            self.signal = x.reshape(-1, 1)
            self._s1 = np.concatenate(([0.0], np.cumsum(c))).tolist()
            self._s2 = np.concatenate(([0.0], np.cumsum(c * c))).tolist()
            return self

        def error(self, start: int, end: int) -> float:
            n = end - start
            if n < self.min_size:
                raise NotEnoughPoints
            total = self._s1[end] - self._s1[start]
            cost = self._s2[end] - self._s2[start] - total * total / n
            return cost if cost > 0.0 else 0.0

    return RunningL2


def _segments(xs: np.ndarray, sigma: float, beta: float, shift: Shift) -> list[int]:
    """Segment bounds ``[0, …, n]`` of one series: PELT (L2 cost, penalty ``beta σ² ln n``), then merging of
    the closest adjacent segments while their medians do not differ by a step (``shift`` < 1)."""
    import ruptures as rpt

    n = xs.size
    penalty = beta * sigma * sigma * math.log(n)
    ends = rpt.Pelt(custom_cost=_running_l2()(), min_size=1, jump=1).fit(xs).predict(pen=penalty)
    return _merged(xs, [0, *ends[:-1], n], shift)


def _merged(xs: np.ndarray, bounds: list[int], shift: Shift) -> list[int]:
    """``bounds`` (segment i spans ``bounds[i]:bounds[i+1]``) after merging the closest adjacent segments while
    their medians do not differ by a step (``shift`` < 1)."""
    bounds = list(bounds)
    while len(bounds) > 2:
        parts = [xs[a:b] for a, b in zip(bounds, bounds[1:])]
        ratio, i = min((shift(parts[i - 1], parts[i]), i) for i in range(1, len(parts)))
        if ratio >= 1.0:
            break
        del bounds[i]  # merge segment i into i-1
    return bounds


@dataclass(frozen=True)
class Levels:
    """A series cut into levels: ``starts`` (the index where each level after the first begins),
    ``outliers`` (runs of transient excursions, left out), and whether the newest level is a candidate
    (fewer than k runs so far)."""

    starts: list[int]
    outliers: list[int]
    candidate: bool = False


def levels(values: Sequence[float], sigma: float, shift: Shift, beta: float = DEFAULT_BETA,
           k: int = DEFAULT_MIN_RUNS) -> Levels:
    """The levels of a noisy series.

    A level in the middle needs ``k`` runs and the first :data:`MIN_SEGMENT`: a shorter one is an
    excursion (a blip, a transient), left out before the series is segmented again, so it neither
    counts as a step nor drags a neighbour into a level of its own. The newest level with fewer than
    ``k`` runs is a candidate."""
    xs = np.asarray(values, dtype=np.float64)
    keep = np.arange(xs.size)
    outliers: list[int] = []
    k = max(int(k), 1)
    while keep.size >= MIN_SEGMENT + 1:
        bounds = _segments(xs[keep], sigma, beta, shift)
        spans = list(zip(bounds, bounds[1:]))
        short = [i for j, (a, b) in enumerate(spans[:-1]) if b - a < (MIN_SEGMENT if j == 0 else k)
                 for i in range(a, b)]
        if not short:
            last = spans[-1][1] - spans[-1][0] < k and len(spans) > 1
            return Levels([int(keep[b]) for b in bounds[1:-1]], sorted(outliers), last)
        outliers += [int(keep[i]) for i in short]
        keep = np.delete(keep, short)
    return Levels([], sorted(outliers))


def change_points(values: Sequence[float], sigma: float, beta: float = DEFAULT_BETA, min_rel: float = 0.02,
                  k_sigma: float = DEFAULT_K_SIGMA, min_runs: int = DEFAULT_MIN_RUNS) -> tuple[list[int], list[int]]:
    """(indices where a confirmed new level starts, indices of outliers) of one series, judged by a
    relative threshold ``min_rel`` and ``k_sigma`` σ rather than a metric's gate (:func:`levels`)."""
    found = levels(values, sigma, relative_shift(sigma, min_rel, k_sigma), beta, min_runs)
    return (found.starts[:-1] if found.candidate else found.starts), found.outliers


def _identity_changes(key: SeriesKey, points: Sequence[Point]) -> list[IdentityChange]:
    out = []
    for prev, cur in zip(points, points[1:]):
        if prev.identity != cur.identity:
            out.append(IdentityChange(key[0], key[1], key[2], cur.commit, prev.commit, cur.date, prev.date,
                                      json.loads(prev.identity), json.loads(cur.identity), cur.run))
    return out


def exact_shift(rule: Rule, better: str) -> Shift:
    """A deterministic figure's shift: any change beyond its own tolerance is a step (no noise to beat)."""
    def shift(old: np.ndarray, new: np.ndarray) -> float:
        before, after = float(np.median(old)), float(np.median(new))
        return rule.outside(before, after, better, old.size) if after != before else 0.0
    return shift


def _can_step(values: Sequence[float], rule: Rule, better: str) -> bool:
    """Whether any two levels of the series could lie outside each other's band at all: for positive
    values the widest gap (lowest to highest, and back) is the most any pair of levels can show, so a
    series whose whole range fits in its band needs no segmenting. Other series are always segmented."""
    lo, hi = min(values), max(values)
    if lo == hi:
        return False
    if lo <= 0:
        return True
    return rule.outside(lo, hi, better) >= 1.0 or rule.outside(hi, lo, better) >= 1.0  # the narrowest band


def _code(p: Point) -> tuple[str, str, str]:
    """What a run measured with: commit, driver, toolkit (runs that share it are A/A runs)."""
    return p.commit, p.driver, p.toolkit


def series_steps(key: SeriesKey, s: Series, pts: Sequence[Point], beta: float = DEFAULT_BETA,
                 k_sigma: float = DEFAULT_K_SIGMA, k: int = DEFAULT_MIN_RUNS, newest: bool = True) -> list[Step]:
    """The steps of one identity's (and kernel's) points of a series, by the series' :class:`Rule`.

    ``newest``: these points end the series (no later identity or kernel took over), so a move at their end is a
    candidate; otherwise a short level at their end is an excursion that was never confirmed. A step
    whose two sides ran the same commit with the same driver and toolkit has no cause and is noise; a
    metric its test marks ``gate: if-stable`` steps only from an old level as stable as the gate demands
    (:func:`pytest_gpuperf.baselines.verdicts.stability`)."""
    from ..baselines.verdicts import stability

    rule = s.rule()
    if rule.model == "informational" or len(pts) < 2:
        return []
    values = [p.value for p in pts]
    if not _can_step(values, rule, s.better):
        return []
    if rule.model == "deterministic":  # no noise: PELT splits at every change, the shift keeps those that count
        sigma = 0.0
        found = levels(values, noise_sigma(values), exact_shift(rule, s.better), 0.0, k)
    else:
        sigma = noise_sigma(values, [p.mad for p in pts], [_code(p) for p in pts])
        found = levels(values, sigma, gate_shift(rule, s.better, sigma, k_sigma), beta, k)
    starts, outliers, candidate = found.starts, found.outliers, found.candidate
    if candidate and not newest:  # an excursion at the end of a superseded identity: never confirmed
        outliers = sorted(set(outliers) | set(range(starts[-1], len(values))))
        starts, candidate = starts[:-1], False
    kept = [i for i in range(len(values)) if i not in set(outliers)]
    bounds = [0, *starts, len(values)]
    if_stable = (s.latest.info or {}).get("gate") == "if-stable"
    out = []
    for j, cp in enumerate(starts):
        old = [values[i] for i in kept if bounds[j] <= i < cp]
        new = [values[i] for i in kept if cp <= i < bounds[j + 2]]
        prev = max(i for i in kept if i < cp)  # the last run at the old level: bisect from there
        if _code(pts[prev]) == _code(pts[cp]):
            continue  # the same code on the same driver and toolkit on both sides: nothing can have caused it
        before, after = float(np.median(old)), float(np.median(new))
        if if_stable and not stability({"value": before, "run_values": old, "tolerance": rule.tol(len(old))})[0]:
            continue  # the gate would not judge it against that level either
        delta = after - before
        rel = delta / abs(before) if before else None  # from 0 a relative change is undefined
        p_value = None
        confidence = 1.0
        if rule.model != "deterministic" and len(old) + len(new) >= 3:
            p_value = run_difference(old, new).p_value
            confidence = 1.0 - p_value
        status = CANDIDATE if candidate and j == len(starts) - 1 else CONFIRMED
        out.append(Step(key[0], key[1], key[2], s.unit, s.better, cp, pts[cp].commit, pts[prev].commit,
                        pts[cp].date, pts[prev].date, before, after, delta, rel, sigma, direction(s.better, delta),
                        pts[cp].run, json.loads(pts[cp].identity), status, len(old), len(new),
                        rule.width(before, len(old), between_run_sigma(old) if rule.k else 0.0), confidence,
                        p_value, rule.model, rule.source))
    return out


def detect_all(runs: Iterable[RunRecord], device_key: str | None = None, beta: float = DEFAULT_BETA,
               k_sigma: float = DEFAULT_K_SIGMA, names: str | None = None,
               min_runs: int = DEFAULT_MIN_RUNS) -> Detection:
    """Steps of every series within each identity and kernel, the identity and kernel changes, and the runs
    left out (optionally of one device key, or of metrics whose name contains ``names``); ``min_runs`` is k,
    the runs a new level must hold to be confirmed."""
    kept, dropped = trend_runs(r for r in runs if not device_key or r.device_key == device_key)
    steps: list[Step] = []
    changes: list[IdentityChange] = []
    kernels: list[KernelChange] = []
    for key, s in sorted(series(kept).items()):
        if names and names not in key[2]:
            continue
        changes += _identity_changes(key, s.points)
        by_identity: dict[str, list[Point]] = defaultdict(list)
        for p in s.points:
            by_identity[p.identity].append(p)
        for pts in by_identity.values():
            segments, cuts = kernel_segments(pts)
            kernels += [KernelChange(key[0], key[1], key[2], b.commit, a.commit, b.date, a.date, a_digest,
                                     b.digest or "", b.run, a.run, json.loads(b.identity))
                        for (a, b), a_digest in zip(cuts, _known_before(segments))]
            for seg in segments:
                steps += series_steps(key, s, seg, beta, k_sigma, min_runs, newest=seg[-1] is s.points[-1])
    steps.sort(key=lambda s: (s.device_key, s.backend, s.name, s.date))
    kernels.sort(key=lambda c: (c.device_key, c.backend, c.name, c.date))
    return Detection(steps, changes, dropped, kernels)


def _known_before(segments: Sequence[Sequence[Point]]) -> list[str]:
    """The last known digest of each segment but the last: the kernel each cut left."""
    return [next(p.digest for p in reversed(seg) if p.digest is not None) for seg in segments[:-1]]


def detect(runs: Iterable[RunRecord], device_key: str | None = None, beta: float = DEFAULT_BETA,
           k_sigma: float = DEFAULT_K_SIGMA, names: str | None = None,
           min_runs: int = DEFAULT_MIN_RUNS) -> list[Step]:
    """Every step of every series, confirmed and candidates (optionally of one device key, or metrics whose
    name contains ``names``)."""
    return detect_all(runs, device_key, beta, k_sigma, names, min_runs).steps


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
