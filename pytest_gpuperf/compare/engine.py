"""One row per metric: run B judged against run A, with the verdicts of the baseline gate.

Run A plays the part of a baseline entry — the one ``gpuperf baseline from-results`` would make of its
runs (:func:`entry_from_side`: its value, raw samples, identity, and a band of the metric class's minimum
effect or the test's own tolerance) — and :func:`pytest_gpuperf.baselines.verdicts.compare` gives the
band verdict: direction semantics, ratio-safe band edges and the identity rule are the gate's own. How a
verdict may be reached is the metric's noise model (:mod:`pytest_gpuperf.baselines.noise`):

* ``deterministic`` (seeded ulp errors, counts, sizes): an exact compare within the row's own
  tolerance — any change beyond it is real, no test needed;
* ``sampled`` (a timing with raw samples on both sides): one run against one run, the band *and* the
  significance of the two runs' samples (:func:`pytest_gpuperf.timing.difference.difference`: bootstrap
  interval of the median ratio + Mann–Whitney U); once a side pools several runs, the run is the unit —
  one value per run, a t-test over runs (:func:`~pytest_gpuperf.timing.difference.run_difference`) —
  so placement noise between runs, which no run's own samples show, is not read as a change;
* ``repeated`` (a figure derived from timings without samples: a tuner's pick, a model's error, a
  speedup, watts): a verdict only when both sides carry a spread — at least
  :data:`~pytest_gpuperf.baselines.noise.MIN_REPEATS` values (one per run, or the figure's own
  ``info["repeats"]``) — tested over those values; with fewer the row reads ``informational`` and says
  how many values each side has;
* ``informational``: shown, never judged, with the table's reason.

The gate's words map onto the comparison's: ``regressed`` → ``worse``, ``improved`` → ``better``,
``pass`` → ``same`` (within the band, or not significant); ``incomparable`` stays (measured another way,
measured with other kernels — both sides carry a ``source_digest`` and they differ —, recorded by one side only,
or a device-specific figure across two cards, :mod:`.crosscard`);
``informational`` is never gated. ``error``: an impossible value on either side
(:mod:`pytest_gpuperf.baselines.validity`) — a broken measurement is neither better nor worse, and a
NaN in B is ``worse`` whatever the model. ``bound`` metrics (a documented limit, e.g. 0 ulp for an IEEE
operation) are ``worse`` only when B exceeds the documented bound — a found input, not noise, so this
holds for every model; within it they move ``better`` or stay ``same`` by their model's rule.

A metric its test marks ``gate: if-stable`` (one kernel's model error) is gated only when side A has
runs that agree (:func:`pytest_gpuperf.baselines.verdicts.stability`); otherwise its row keeps its
direction verdict with ``gated = False`` and does not set the exit status.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from ..verdictwords import GATE_TO_COMPARE, Compare, Gate
from ..baselines import classes, noise, validity
from ..baselines.verdicts import (Comparison, band, compare, identity_problem, kind_problem, over_runs, source_problem,
                                  stability)
from ..baselines.baseline_file import make_entry
from ..devices.base import timer_resolution
from ..timing.observers import (FAR_BEYOND, contended_metric, shared_metric, throttled_metric, worse_factor,
                                would_regress)
from ..timing.stats import between_run_sigma
from . import crosscard
from .load import Side, SideMetric

#: verdicts, worst first (also the order rows are listed in within an area). ``informational``: shown,
#: never judged — the metric's noise model does not allow a verdict on what the two sides carry.
VERDICTS = Compare.ALL


@dataclass(frozen=True)
class Options:
    """``--threshold`` (None: per metric class), ``--raw`` (absolute figures across cards), ``--alpha``;
    ``run_spread``: per metric, how far unchanged runs of side B's card move it (relative) and where that is
    known from (:func:`run_spread`), which a side of too few runs cannot show."""

    threshold: float | None = None
    raw: bool = False
    alpha: float | None = None
    run_spread: Mapping[str, tuple[float, str]] | None = None


def run_spread(metrics: Mapping[str, Mapping[str, Any]], source: str) -> dict[str, tuple[float, str]]:
    """From a baseline section's entries, the relative band of each one measured over at least
    :data:`~pytest_gpuperf.baselines.noise.MIN_REPEATS` runs — the spread unchanged runs of that card show,
    which the gate allows — with ``source`` and the run count said."""
    out: dict[str, tuple[float, str]] = {}
    for name, entry in metrics.items():
        runs = noise.run_values(entry)
        value = float(entry.get("value", 0.0) or 0.0)
        if not noise.enough_repeats(len(runs)) or value == 0 or entry.get("better") not in ("lower", "higher"):
            continue
        width = band(value, entry.get("tolerance") or {}) / abs(value)
        out[name] = (width, f"{source}: ±{width:.1%} from {len(runs)} runs")
    return out


@dataclass
class Row:
    """The comparison of one metric: values, the statistics, the verdict and why."""

    name: str
    unit: str
    better: str
    a: float | None
    b: float | None
    verdict: str
    reason: str | None = None
    ratio: float | None = None  # B/A: of sample medians (one run a side), of per-run means (runs as the unit)
    delta_rel: float | None = None  # (B − A)/|A|
    ci: tuple[float, float] | None = None  # interval of that ratio (confidence 1 − alpha)
    p_value: float | None = None  # two-sided: Mann–Whitney U on samples, a t-test over runs (extra["stat_test"])
    significant: bool | None = None  # None: no significance test was possible
    basis: str = "threshold"  # "samples", "runs" (one value per run), "repeats", "threshold", "bound", "none"
    threshold: float | None = None  # the relative effect the verdict required
    gated: bool = True  # False: a worse verdict here does not fail the comparison
    note: str | None = None  # how it was compared (fraction of peak, raw across cards)
    test: str = ""
    runs: tuple[int, int] = (0, 0)
    compared_unit: str | None = None  # the unit of a and b when normalised (fraction of peak)
    noise: str | None = None  # the noise model the verdict followed (baselines.noise.MODELS)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def area(self) -> str:
        """The first component of the dotted name: memory, latency, accuracy, model, tuning, ..."""
        return self.name.split(".", 1)[0]

    @property
    def fails(self) -> bool:
        """Whether this row sets exit status 1: a gated significant regression, or an impossible value."""
        return self.verdict == Compare.ERROR or (self.verdict == Compare.WORSE and self.gated)

    def line(self, a_label: str = "A", b_label: str = "B") -> str:
        """One line for annotations, pytest failures and logs: values, ratio, statistics, verdict, why
        (``--gpuperf-compare`` names the sides ``reference`` and ``this run``)."""
        u = self.compared_unit or self.unit

        def g(x: float | None) -> str:
            return "-" if x is None else f"{x:.6g}"

        stat = ""
        if self.ci is not None and self.p_value is not None:
            stat = f" [{self.ci[0]:.4g}, {self.ci[1]:.4g}] p={self.p_value:.2g}"
        ratio = "" if self.ratio is None else f", ratio {self.ratio:.4g}{stat}"
        why = "; ".join(x for x in (self.reason, self.note) if x)
        gated = "" if self.gated or self.verdict == Compare.INFORMATIONAL else " (ungated)"
        return (f"{self.name}: {self.verdict.upper()}{gated} — {a_label} {g(self.a)} {u}, {b_label} {g(self.b)} {u} "
                f"({self.better} is better){ratio}" + (f" — {why}" if why else ""))

    def sort_key(self) -> tuple[Any, ...]:
        size = abs(math.log(self.ratio)) if self.ratio and self.ratio > 0 and math.isfinite(self.ratio) else 0.0
        return (VERDICTS.index(self.verdict), self.p_value if self.p_value is not None else 2.0, -size, self.name)

    def to_json(self) -> dict[str, Any]:
        def num(x: float | None) -> float | str | None:
            return x if x is None or math.isfinite(x) else repr(x)

        return {"name": self.name, "area": self.area, "test": self.test, "unit": self.unit,
                "compared_unit": self.compared_unit or self.unit, "better": self.better,
                "a": num(self.a), "b": num(self.b), "ratio": num(self.ratio), "delta_rel": num(self.delta_rel),
                "ci": None if self.ci is None else [num(self.ci[0]), num(self.ci[1])],
                "p_value": self.p_value, "significant": self.significant, "basis": self.basis,
                "threshold": self.threshold, "verdict": self.verdict, "gated": self.gated, "fails": self.fails,
                "reason": self.reason, "note": self.note, "runs": list(self.runs),
                "band": self.extra.get("band"), "bound": self.extra.get("bound"), "only_in": self.extra.get("only"),
                "noise": self.noise, "stat_test": self.extra.get("stat_test"), "n": self.extra.get("n"),
                **({"would_regress": self.extra["would_regress"]} if self.extra.get("would_regress") else {})}


def threshold_for(unit: str, device_a: Mapping[str, Any], device_b: Mapping[str, Any], opts: Options,
                  host_timed: bool = False, runs: int = 1) -> float:
    """The smallest relative effect that counts: ``--threshold``, else the metric class's floor
    (:func:`pytest_gpuperf.baselines.classes.floor`; the CPU floors if either side is a CPU device, the
    host class's for host-timed figures; a GPU side of fewer than three runs, ``runs``, does not know
    its run-to-run spread)."""
    if opts.threshold is not None:
        return float(opts.threshold)
    is_cpu = bool(device_a.get("is_cpu")) or bool(device_b.get("is_cpu"))
    return classes.floor(unit, is_cpu, host_timed=host_timed, spread_known=noise.enough_repeats(runs))


#: k of the noise term k × spread: the default of ``--gpuperf-tolerance-k`` and ``gpuperf baseline from-results --k``
DEFAULT_K = 6.0


def entry_from_side(a: SideMetric, device_a: Mapping[str, Any], threshold: float, scale: float = 1.0,
                    explicit_threshold: bool = False) -> dict[str, Any]:
    """Side A as the baseline entry ``gpuperf baseline from-results`` would make of its runs
    (:func:`pytest_gpuperf.baselines.baseline_file.make_entry`, the single rule): value = median of the runs,
    band = the widest of the class floor (or ``--threshold``), the timer's resolution, and k × the
    between-run σ of A's runs (0 for one run). Unlike a baseline, the band leaves out the within-run σ:
    a baseline gates runs whose samples it may lack, a comparison tests B's samples against A's, so the
    within-run noise is the significance test's to judge — counted twice, k × σ would hide a 10 % shift
    in 2 % noise that 200 samples per side show beyond doubt. A tolerance the test set itself replaces the floor,
    as in the gate (``--threshold`` given explicitly still applies as a minimum). ``scale`` divides
    every figure by the card's own peak (:mod:`.crosscard`)."""
    values = [v * scale for v in a.values]
    value = float(np.median(values))
    between = between_run_sigma(values)
    spread = between  # within-run noise is the significance test's job (both sides' samples), not the band's
    resolution = classes.resolution_floor(a.unit, timer_resolution(dict(device_a)), a.info) * scale
    entry = make_entry(value=value, worst=max(values), unit=a.unit, better=a.better, test=a.test, info=a.info,
                       tolerance=a.tolerance, spread=spread, k=DEFAULT_K, floor_rel=threshold, provenance={},
                       between=between, identity=a.identity, run_values=values, resolution=resolution)
    entry.pop("provenance", None)
    tol = entry.setdefault("tolerance", {})
    if explicit_threshold or (a.better == "bound" and not tol):
        tol["rel"] = max(float(tol.get("rel", 0.0)), threshold)
    return entry


def _identity_reason(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    return "measured another way — " + "; ".join(f"{k}: A {a.get(k, '(unset)')!r}, B {b.get(k, '(unset)')!r}"
                                                  for k in keys)


def noise_model(a: SideMetric, b: SideMetric) -> tuple[str, str]:
    """(model, why) of a metric both sides recorded (:func:`pytest_gpuperf.baselines.noise.model_of`):
    ``sampled`` only where both sides carry raw samples in every run; a side that declares the figure
    ``informational`` (``info["noise"]``) makes it so; otherwise B's declaration, then the table, decide."""
    both = a.samples is not None and b.samples is not None
    models = {side: noise.model_of(m.name, m.unit, m.better, both, m.info) for side, m in (("A", a), ("B", b))}
    for side, m in (("B", b), ("A", a)):
        if models[side] == "informational":
            return "informational", noise.why(m.name, m.unit, m.info)
    model = models["B"]
    if model == "sampled":
        return model, "raw samples on both sides"
    return model, noise.why(b.name, b.unit, b.info if b.info.get("noise") == model else None)


def judge(a: SideMetric | None, b: SideMetric | None, device_a: Mapping[str, Any], device_b: Mapping[str, Any],
          opts: Options = Options()) -> Row:
    """The row of one metric (either side may lack it)."""
    if a is None or b is None:
        m = b if a is None else a
        assert m is not None
        only = "B" if a is None else "A"
        other = "A" if a is None else "B"
        return Row(m.name, m.unit, m.better, None if a is None else a.value, None if b is None else b.value,
                   "incomparable", f"only in {only}: {other} did not record it", basis="none", test=m.test,
                   runs=(0 if a is None else a.runs, 0 if b is None else b.runs), extra={"only": only})
    row = Row(b.name, b.unit, b.better, a.value, b.value, "incomparable", test=b.test, runs=(a.runs, b.runs))
    mismatch = kind_problem(a.unit, a.better, b.unit, b.better, "A", "B")
    if mismatch is not None:
        row.reason = mismatch
        return row
    for side, m, dev in (("A", a, device_a), ("B", b, device_b)):
        problem = (validity.problem(m.name, m.value, m.unit, peak_bandwidth_gbs=dev.get("peak_bandwidth_gbs"))
                   or m.value_problem)
        if problem is not None:
            row.verdict, row.reason = Compare.ERROR, f"{side}: {problem}"
            return row
    if a.identity_problem or b.identity_problem:
        row.reason = "; ".join(f"{s}: {p}" for s, p in (("A", a.identity_problem), ("B", b.identity_problem)) if p)
        return row
    if identity_problem(a.identity, b.identity) is not None:
        row.reason = _identity_reason(a.identity, b.identity)
        return row
    if source_problem(a.source_digest, b.source_digest) is not None:  # both carry one, and they differ
        row.reason = (f"kernel source changed — A's kernels {a.source_digest}, B's {b.source_digest}: runs of other "
                      "kernels are not compared")
        return row
    norm = crosscard.normalisation(a.unit, device_a, device_b, raw=opts.raw)
    row.note = norm.note()
    va, vb = a.value, b.value
    if norm.mode == "incomparable":
        row.reason = norm.reason
        return row
    fa = 1.0 / norm.peak_a if norm.mode == "fraction-of-peak" and norm.peak_a else 1.0
    fb = 1.0 / norm.peak_b if norm.mode == "fraction-of-peak" and norm.peak_b else 1.0
    if norm.mode == "fraction-of-peak":
        va, vb = va * fa, vb * fb
        row.a, row.b, row.compared_unit = va, vb, "fraction of peak"
    if math.isnan(va):
        row.reason = "A's value is NaN: nothing to compare B with"
        return row
    row.ratio = vb / va if va else None
    row.delta_rel = (vb - va) / abs(va) if va else None
    model, why = noise_model(a, b)
    row.noise = model
    if model == "informational":
        row.verdict, row.basis, row.gated, row.reason = Compare.INFORMATIONAL, "none", False, f"informational: {why}"
        return row
    thr = threshold_for(a.unit, device_a, device_b, opts, classes.is_host_timed(a.info), len(a.values))
    row.threshold = thr
    entry = entry_from_side(a, device_a, thr, fa, explicit_threshold=opts.threshold is not None)
    row.extra["band"] = band(float(entry["value"]) if a.better != "bound" else va, entry.get("tolerance", {}))
    entry["value"] = va  # bound metrics: judged against A here, against the documented bound in _judge_bound
    sides = _Compared(a, b, va, vb, fa, fb, model, why)
    if a.better == "bound":
        return _judge_bound(row, sides, entry, opts)
    _move(row, sides, entry, a.better, opts)
    if row.verdict == Compare.SAME and not row.reason and row.extra.get("band") is not None and va:
        row.reason = f"within the band (±{float(row.extra['band']) / abs(va):.2%} of A)"  # every row says why
    if row.verdict == Compare.INFORMATIONAL:
        return row
    if (b.info.get("gate") == "if-stable") or (a.info.get("gate") == "if-stable"):
        stable, unstable_why = stability(entry)
        if not stable:
            row.gated = False
            row.extra["ungated"] = "not gated: " + unstable_why
            row.reason = "; ".join(x for x in (row.reason, row.extra["ungated"]) if x)
            return row
    _observed_marks(row, a, b, device_a, device_b, model == "deterministic")
    _uncertain(row, a, b, opts)
    return row


def _uncertain(row: Row, a: SideMetric, b: SideMetric, opts: Options) -> None:
    """A sampled figure whose runs' samples differ significantly, but by no more than unchanged runs of this
    card move it (``opts.run_spread``), reads ``uncertain`` where a side has fewer than
    :data:`~pytest_gpuperf.baselines.noise.MIN_REPEATS` runs: one run's samples show none of the spread
    between runs (a buffer's placement, a timing's mode), so the change cannot be told from it."""
    if row.verdict not in (Compare.WORSE, Compare.BETTER) or row.noise != "sampled" or row.delta_rel is None \
            or min(a.runs, b.runs) >= noise.MIN_REPEATS or not opts.run_spread or row.name not in opts.run_spread:
        return
    width, source = opts.run_spread[row.name]
    if abs(row.delta_rel) > width:
        return
    was = row.verdict
    row.verdict, row.extra["uncertain_of"] = Compare.UNCERTAIN, was
    row.reason = (f"the runs' samples differ ({was}, p={row.p_value:.2g}), but unchanged runs of this card move it "
                  f"as far ({source}): with {a.runs} and {b.runs} run(s) a side that cannot be told apart; give each "
                  f"side {noise.MIN_REPEATS} runs (--against)" if row.p_value is not None else
                  f"{was}, but unchanged runs of this card move it as far ({source}); give each side "
                  f"{noise.MIN_REPEATS} runs (--against)")


def _observed_marks(row: Row, a: SideMetric, b: SideMetric, device_a: Mapping[str, Any], device_b: Mapping[str, Any],
                    deterministic: bool) -> None:
    """A side measured while the card throttled, or while another process shared the card (a CPU device:
    the host's cores) — its own windows, or those of the figures it was computed from
    (``info["inherited"]``, :func:`pytest_gpuperf.timing.observers.inherit`) — makes the row shown, never
    gated; a deterministic figure reads only what it inherited (the same bits whoever shared the machine).
    A worse row whose change is far beyond what B's marks explain names it (``would_regress``)."""
    throttled = [side for side, m in (("A", a), ("B", b)) if throttled_metric(m.info, deterministic)]
    contended = [side for side, m, dev in (("A", a, device_a), ("B", b, device_b))
                 if (dev.get("is_cpu") and contended_metric(m.info, deterministic)) or shared_metric(m.info, deterministic)]
    if not (throttled or contended):
        return
    row.gated = False  # one side's figure is not the code's: shown, never gated
    if throttled:
        row.extra["throttled"] = "the card throttled while " + " and ".join(throttled) + " was measured"
    if contended:
        row.extra["contended"] = ("other work held the host's CPUs or another process the card while "
                                  + " and ".join(contended) + " was measured")
    beyond = None
    if row.verdict == Compare.WORSE and "B" in throttled + contended and row.a is not None and row.b is not None:
        factor = worse_factor(row.b, row.a, b.better, row.ci)
        beyond = would_regress(factor, b.info, bool(device_b.get("is_cpu")), int(device_b.get("compute_units") or 0),
                               deterministic)
    if beyond is not None:
        row.extra["would_regress"] = beyond
        row.extra["beyond"] = (f"would have regressed: x{beyond['factor']:.3g}, more than {FAR_BEYOND:g}x the "
                               f"x{beyond['explained']:.3g} sharing or the throttle could explain; run again alone")
    row.reason = "; ".join(x for x in (row.reason, row.extra.get("throttled"), row.extra.get("contended"),
                                       row.extra.get("beyond")) if x)


@dataclass(frozen=True)
class _Compared:
    """Both sides of one metric as compared: the merged metrics, their compared values (scaled by each
    card's own peak where normalised: ``fa``, ``fb``), and the noise model with its reason."""

    a: SideMetric
    b: SideMetric
    va: float
    vb: float
    fa: float
    fb: float
    model: str
    why: str

    def spread(self) -> tuple[list[float], list[float], str]:
        """The values a test over runs uses on each side, and their unit (``runs`` or ``repeats``): a
        ``sampled`` metric always has one value per run; a ``repeated`` one may bring its repeats."""
        if self.model == "sampled":
            xa, ua, xb, ub = list(self.a.values), "runs", list(self.b.values), "runs"
        else:
            (xa, ua), (xb, ub) = self.a.spread_values(), self.b.spread_values()
        unit = "repeats" if ua == ub == "repeats" else "runs"
        return [x * self.fa for x in xa], [x * self.fb for x in xb], unit


def _move(row: Row, c: _Compared, entry: dict[str, Any], better: str, opts: Options) -> None:
    """The direction verdict of one metric by its noise model (``better``: ``lower``/``higher``/``exact``;
    a bound metric's movement within its bound is judged as ``lower``)."""
    b = c.b
    if math.isnan(c.vb) or c.model == "deterministic":
        _apply(row, compare(c.vb, better, entry, identity=b.identity, alpha=opts.alpha))
        if not math.isnan(c.vb):
            row.reason = "; ".join(x for x in (row.reason, f"deterministic: {c.why}; compared within its tolerance")
                                   if x)
        return
    if c.model == "sampled" and c.a.runs == 1 and b.runs == 1:  # one run each: their samples are the noise
        sa = None if c.a.samples is None else [x * c.fa for x in c.a.samples]
        sb = None if b.samples is None else [x * c.fb for x in b.samples]
        _apply(row, compare(c.vb, better, dict(entry, samples=sa), samples=sb, identity=b.identity, alpha=opts.alpha))
        return
    xa, xb, unit = c.spread()
    if c.model == "repeated" and not (noise.enough_repeats(len(xa)) and noise.enough_repeats(len(xb))):
        short = [f"{len(x)} value(s) on side {s}" for s, x in (("A", xa), ("B", xb))
                 if not noise.enough_repeats(len(x))]
        row.verdict, row.basis, row.gated = Compare.INFORMATIONAL, "none", False
        row.reason = f"repeated figure: {' and '.join(short)}, needs {noise.MIN_REPEATS} ({c.why})"
        return
    _apply(row, judge_spread(c.vb, better, entry, xa, xb, unit, b.identity, opts.alpha))


def judge_spread(measured: float, better: str, entry: Mapping[str, Any], xa: list[float], xb: list[float],
                 unit: str, identity: Mapping[str, Any], alpha: float | None = None) -> Comparison:
    """The band verdict of ``measured`` against ``entry``, kept only where a t-test over one value per run
    (or per repeat) also finds the difference — the baseline gate's own rule
    (:func:`pytest_gpuperf.baselines.verdicts.over_runs`): the unit of the noise is the run, not the sample
    within it."""
    return over_runs(compare(measured, better, entry, identity=identity), xa, xb, unit, alpha)


def smallest_p(n_a: int, n_b: int) -> float:
    """The smallest two-sided p-value the exact Mann–Whitney U test can give with these sample sizes
    (complete separation, no ties): 2 / C(n_a + n_b, n_a). A single run of 5 against one of 7 cannot go
    below 0.0025 — above the default α — so its row says why a clear shift is still ``same``. (Integer
    division: the binomial of a few hundred samples a side is beyond any float.)"""
    return min(1.0, 2 / math.comb(n_a + n_b, n_a))


def _apply(row: Row, cmp: Comparison) -> None:
    """Copy the gate's comparison into the row, saying what the verdict rests on."""
    row.verdict = GATE_TO_COMPARE.get(cmp.verdict, Compare.INCOMPARABLE)
    row.reason = cmp.reason
    if cmp.difference is not None:
        d = cmp.difference
        row.ratio, row.ci, row.p_value, row.significant = d.ratio, (d.ci_low, d.ci_high), d.p_value, d.significant
        if row.verdict in (Compare.WORSE, Compare.BETTER) and not row.reason:
            row.reason = f"beyond the band and significant ({d.test}, p={d.p_value:.2g} < {d.alpha:g})"
        row.basis = d.unit
        row.extra["n"] = [d.n_a, d.n_b]
        row.extra["stat_test"] = d.test
        floor_p = smallest_p(d.n_a, d.n_b)
        if d.test == "mann-whitney" and cmp.reason and not d.significant and floor_p >= d.alpha:
            row.reason = (f"{cmp.reason}; with {d.n_a} and {d.n_b} samples the U test cannot reach p < {d.alpha:g} "
                          f"(smallest possible p {floor_p:.2g}): give more runs per side or a larger --alpha")
    else:
        row.basis = "threshold"
        if row.better == "exact" and cmp.verdict != Compare.INCOMPARABLE:
            row.reason = "; ".join(x for x in (row.reason, "exact metric: any change beyond its tolerance") if x)


def _judge_bound(row: Row, c: _Compared, entry: dict[str, Any], opts: Options) -> Row:
    """A documented upper limit: worse only past the bound (for every noise model: an input past a
    documented bound is a finding, not noise); below it lower is better, by the metric's noise model."""
    a, b, va, vb = c.a, c.b, c.va, c.vb
    bound = b.info.get("bound", a.info.get("bound"))
    lower = dict(entry, better="lower")
    if bound is None:
        _move(row, c, lower, "lower", opts)
        row.basis = "bound" if row.verdict != Compare.INFORMATIONAL else row.basis
        row.reason = "; ".join(x for x in ("no documented bound recorded: compared as lower-is-better", row.reason) if x)
        return row
    limit = {"value": float(bound), "better": "bound", "tolerance": dict(b.tolerance or {})}
    past_b = compare(vb, "bound", limit).verdict == Gate.REGRESSED
    past_a = compare(va, "bound", limit).verdict == Gate.REGRESSED
    row.extra["bound"] = float(bound)
    if past_b and not past_a:
        row.verdict, row.basis = Compare.WORSE, "bound"
        row.reason = f"B exceeds the documented bound {float(bound):.6g} {row.unit} (A is within it)"
        return row
    _move(row, c, lower, "lower", opts)
    if row.verdict == Compare.INFORMATIONAL:
        return row
    row.basis = "bound"
    if row.verdict == Compare.WORSE and not past_b:
        row.verdict = Compare.SAME
        row.reason = f"higher than A but within the documented bound {float(bound):.6g} {row.unit}"
    elif past_b:
        row.reason = "; ".join(x for x in (f"both A and B exceed the documented bound {float(bound):.6g}; "
                                           "compared as lower-is-better", row.reason) if x)
    elif not row.reason:
        row.reason = f"within the documented bound {float(bound):.6g} {row.unit}"
    return row


#: environment fields printed first (field, where): device fields from ``device``, the rest from ``environment``
ENV_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("device", "device", "name"), ("device key", "device", "key"), ("backend", "device", "backend"),
    ("driver", "environment", "driver"), ("runtime", "environment", "runtime"),
    ("toolkit", "environment", "toolkit"), ("compute capability", "device", "compute_capability"),
    ("compute units", "device", "compute_units"), ("max clock MHz", "device", "clock_mhz"),
    ("clock MHz at start", "device", "current_clock_mhz"), ("memory clock MHz", "extra", "mem_clock_mhz"),
    ("bus width", "extra", "bus_width"), ("power limit W", "extra", "power_limit_w"),
    ("memory bytes", "device", "memory_bytes"), ("L2 bytes", "device", "l2_bytes"),
    ("peak bandwidth GB/s", "device", "peak_bandwidth_gbs"), ("commit", "environment", "commit"),
    ("python", "environment", "python"), ("host", "environment", "host"),
)


def environment_difference(a: Side, b: Side) -> list[dict[str, Any]]:
    """Each environment field of both sides, ``changed`` where they differ (packages: only those that do)."""
    def get(side: Side, where: str, key: str) -> Any:
        src = side.device if where == "device" else side.environment if where == "environment" else \
            (side.device.get("extra") or {})
        return src.get(key)

    out = []
    for label, where, key in ENV_FIELDS:
        va, vb = get(a, where, key), get(b, where, key)
        if va is None and vb is None:
            continue
        out.append({"field": label, "a": va, "b": vb, "changed": va != vb})
    pa, pb = a.environment.get("packages") or {}, b.environment.get("packages") or {}
    for name in sorted(set(pa) | set(pb)):
        if pa.get(name) != pb.get(name):
            out.append({"field": f"package {name}", "a": pa.get(name), "b": pb.get(name), "changed": True})
    return out


@dataclass(frozen=True)
class Duration:
    """One test's duration on both sides (seconds, setup + call + teardown; the median over a side's runs,
    None where the side did not run it): the suite's own cost, shown beside the rows, never judged."""

    test: str
    a: float | None
    b: float | None

    @property
    def delta(self) -> float | None:
        """B − A in seconds (None unless both sides ran the test)."""
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def delta_rel(self) -> float | None:
        """(B − A) / A (None where A is 0 or a side did not run it)."""
        return None if self.delta is None or not self.a else self.delta / self.a


def durations(a: Side, b: Side) -> list[Duration]:
    """Every test either side ran, the costliest first (the larger of its two durations)."""
    def med(xs: list[float] | None) -> float | None:
        return None if not xs else float(np.median(xs))

    rows = [Duration(t, med(a.durations.get(t)), med(b.durations.get(t))) for t in set(a.durations) | set(b.durations)]
    return sorted(rows, key=lambda d: (-max(x for x in (d.a, d.b) if x is not None), d.test))


@dataclass
class Report:
    """The whole comparison: both sides, the environment difference and the sorted rows."""

    a: Side
    b: Side
    rows: list[Row]
    options: Options
    environment: list[dict[str, Any]]

    @property
    def same_card(self) -> bool:
        return crosscard.same_card(self.a.device, self.b.device)

    @property
    def exit_code(self) -> int:
        """1 when a gated significant regression (or an impossible value) exists, else 0."""
        return 1 if any(r.fails for r in self.rows) else 0

    @property
    def failing(self) -> list[Row]:
        """The rows that set exit status 1 (gated worse rows and impossible values), worst first: the one
        count of failures every format states."""
        return sorted((r for r in self.rows if r.fails), key=Row.sort_key)

    def counts(self) -> dict[str, int]:
        """Rows per verdict, plus ``failing`` (:attr:`failing`) and ``worse_ungated`` (worse rows that do not
        fail: a figure gated only if stable, a throttled or shared measurement)."""
        out = {v: 0 for v in VERDICTS}
        for r in self.rows:
            out[r.verdict] += 1
        out["failing"] = len(self.failing)
        out["worse_ungated"] = sum(r.verdict == Compare.WORSE and not r.gated for r in self.rows)
        return out

    @property
    def durations(self) -> list[Duration]:
        """The tests' durations of both sides (:func:`durations`)."""
        return durations(self.a, self.b)

    def areas(self) -> list[tuple[str, list[Row]]]:
        """Rows grouped by area; areas with failing rows first, then by name; rows by verdict, p, size."""
        groups: dict[str, list[Row]] = {}
        for r in self.rows:
            groups.setdefault(r.area, []).append(r)
        ordered = sorted(groups.items(), key=lambda kv: (min(VERDICTS.index(r.verdict) for r in kv[1]), kv[0]))
        return [(area, sorted(rows, key=Row.sort_key)) for area, rows in ordered]


#: metrics between two calls of ``compare_sides``'s ``progress``
PROGRESS_EVERY = 10_000


def compare_sides(a: Side, b: Side, opts: Options = Options(),
                  progress: Callable[[int, int], None] | None = None) -> Report:
    """Judge every metric of either side; ``progress(done, total)`` is called every
    :data:`PROGRESS_EVERY` metrics (the CLI shows it for large inputs)."""
    names = sorted(set(a.metrics) | set(b.metrics))
    rows = []
    for i, n in enumerate(names, 1):
        rows.append(judge(a.metrics.get(n), b.metrics.get(n), a.device, b.device, opts))
        if progress is not None and (i % PROGRESS_EVERY == 0 or i == len(names)):
            progress(i, len(names))
    return Report(a, b, rows, opts, environment_difference(a, b))
