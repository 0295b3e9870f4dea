"""The cohort noise model: a card's figure judged against the same figure of its peers, each card one value.

A fleet's cohort (cards of one model, driver, clock and power limit) has no reviewed baseline of its
own; its cards are the reference. The spread between cards, not one card's repeats, is the noise, so a
card is judged by how far it lies from the cohort's centre in units of that spread. This module holds the
statistics and the decisions; ``fleet.fleetreport`` and ``fleet.rollout`` only gather the values, call
them and format the result.

Statistics (pure functions over numbers):

* :func:`center_and_spread` — the cohort's median and MAD (normal σ,
  ``scipy.stats.median_abs_deviation(scale="normal")``), the mean absolute deviation × √(π/2) where more
  than half the cohort reads one value;
* :func:`robust_cv`, :func:`median_se_rel` — one card's own within-run noise and the standard error of its
  value, from its samples;
* :func:`robust_z` — a card's one-sided robust z in the *worse* direction; its σ is never below the
  standard error of one card's value: a cohort whose cards agree to the last digit would otherwise make
  any wobble infinitely significant;
* :func:`p_value` — the z read against the standard normal (``scipy.stats.norm.sf``, one-sided);
* :func:`bh` — Benjamini–Hochberg adjusted p-values (``scipy.stats.false_discovery_control``) over every
  card × metric tested, so a fleet of many cards and metrics does not flag cards by chance;
* :func:`worse_effect` — how much worse than a reference a value is, relative, direction-aware;
* :func:`majority`, :func:`exact_value` — the value most share, compared bit for bit (``repr``);
* :func:`between_cards` — two cohorts with the spread between cards as the unit (Welch's t or
  Mann–Whitney, one-sided towards worse).

Decisions:

* :func:`reference` — a cohort's statistics of one metric, with its effect floor (:func:`effect_floor`);
* :func:`card_row` and :func:`flag` — a card's value against its cohort's reference (z, p, effect), and which
  rows are flagged: BH-adjusted p at most the FDR **and** worse than the median beyond the floor;
* :func:`card_verdict` — a card's fleet-relative verdict from its flags and its confirmation run;
* :func:`odd_ones` — the cards whose exact figure differs from the cohort's strict majority (bit for bit, or beyond
  the band the gate judges it within);
* :func:`timed_shift`, :func:`exact_shift` — a new cohort against an old one (the rollout gate).
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections import Counter
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Hashable, Mapping, Sequence

import numpy as np

from ..verdictwords import Compare, FleetCard
from . import catalog, classes
from .verdicts import band


def _sps() -> ModuleType:
    """``scipy.stats``, imported at the first test rather than with this module: the ``gpuperf`` command line
    reads this module's defaults to build its parser, and SciPy's statistics cost a second of every command's
    start."""
    from scipy import stats

    return stats


#: cards a cohort needs before a card is judged against its peers: with fewer, the median and the MAD
#: of the cohort are too easily the outlier's own
MIN_COHORT = 4
#: the false-discovery rate a flagged card × metric is held to (Benjamini–Hochberg)
FDR = 0.01
#: how many of a metric's own within-run noise widths (its samples' robust CV) a card must be worse by,
#: beside the metric class's floor, before it counts
NOISE_MULTIPLE = 3.0
#: the mean absolute deviation's factor to a normal σ (√(π/2)): the robust z's fallback scale where more
#: than half the cohort reads one value and the MAD is 0 (Iglewicz and Hoaglin's modified z)
MEANAD_TO_SIGMA = math.sqrt(math.pi / 2)


def finite(values: Sequence[float]) -> np.ndarray:
    """The finite values as a float array."""
    xs = np.asarray([float(v) for v in values], dtype=float)
    return xs[np.isfinite(xs)]


def center_and_spread(values: Sequence[float]) -> tuple[float, float]:
    """(median, MAD scaled to a normal σ) of the cohort's values; where the MAD is 0 (most cards read
    one value: a tuner's pick, a count) the mean absolute deviation from the median × √(π/2)."""
    xs = finite(values)
    med = float(np.median(xs))
    mad = float(_sps().median_abs_deviation(xs, scale="normal"))
    if mad == 0.0 and xs.size:
        mad = MEANAD_TO_SIGMA * float(np.mean(np.abs(xs - med)))
    return med, mad


def robust_cv(samples: Sequence[float]) -> float | None:
    """A run's within-run noise of one metric: the MAD of its samples (normal σ) over their median, or
    None without at least three finite samples or with a zero median."""
    xs = finite(samples)
    if xs.size < 3:
        return None
    med = float(np.median(xs))
    if med == 0.0:
        return None
    return float(_sps().median_abs_deviation(xs, scale="normal")) / abs(med)


def median_se_rel(samples: Sequence[float]) -> float | None:
    """The relative standard error of the median of a run's samples: √(π/2) × robust CV / √n (the median of
    n samples from a normal spread moves by that much), or None where :func:`robust_cv` has none."""
    cv = robust_cv(samples)
    return None if cv is None else math.sqrt(math.pi / 2) * cv / math.sqrt(finite(samples).size)


def worse_sign(better: str) -> float:
    """+1 where a larger value is worse (``lower`` and ``bound`` are better low), −1 where smaller is."""
    return -1.0 if better == "higher" else 1.0


def robust_z(value: float, median: float, sigma: float, better: str, noise_rel: float = 0.0) -> float:
    """One-sided robust z of ``value`` in the worse direction: (value − median) / σ for lower-is-better,
    the mirror for higher-is-better; positive = worse. σ is the cohort's MAD (normal), never below
    ``noise_rel`` × |median| (the relative standard error of one card's value) nor below a relative 1e-12
    (a cohort whose cards all read the same value)."""
    scale = max(sigma, noise_rel * abs(median), 1e-12 * max(abs(median), 1e-300))
    return worse_sign(better) * (value - median) / scale


def p_value(z: float) -> float:
    """One-sided p of a robust z under the standard normal (the chance a card this far on the worse
    side comes from the cohort's own spread)."""
    return float(_sps().norm.sf(z))


def bh(p_values: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values (q-values), in the input's order; [] for none."""
    if not len(p_values):
        return []
    return [float(q) for q in _sps().false_discovery_control(np.asarray(p_values, dtype=float), method="bh")]


def worse_effect(value: float, reference: float, better: str) -> float:
    """How much worse ``value`` is than ``reference``, relative and ratio-safe: value/ref − 1 for
    lower-is-better, ref/value − 1 for higher-is-better; ≤ 0 means as good or better; ``inf`` where the
    reference is 0 and the value is worse, NaN where the sign of the values makes a ratio meaningless."""
    if better == "higher":
        if value <= 0.0:
            return math.inf if reference > 0.0 else (0.0 if value == reference else math.nan)
        return reference / value - 1.0
    if reference == 0.0:
        return 0.0 if value == 0.0 else (math.inf if value > 0.0 else -math.inf)
    if reference < 0.0:
        return math.nan
    return value / reference - 1.0


def majority(values: Sequence[Hashable]) -> tuple[Hashable, int]:
    """(the value most share, how many share it); ties go to the value seen first."""
    counts = Counter(values)
    best = max(counts.values())
    for v in values:
        if counts[v] == best:
            return v, best
    raise ValueError("majority of no values")


def exact_value(values: Sequence[Any]) -> Any:
    """The value most of one card's runs recorded, exactly as recorded (``repr`` tells floats apart bit
    for bit: it round-trips)."""
    by_repr = {repr(v): v for v in values}
    return by_repr[str(majority([repr(v) for v in values])[0])]


def between_cards(old: Sequence[float], new: Sequence[float], better: str, test: str = "welch") -> float:
    """One-sided p that the NEW cohort's cards are worse than the OLD cohort's, each card one value (the
    spread between cards is the unit, not one card's repeats). ``welch``: Welch's t test
    (``scipy.stats.ttest_ind(equal_var=False)``); ``mannwhitney``: the Mann–Whitney U test. 1.0 when
    either side has fewer than two cards or no spread at all."""
    a, b = finite(old), finite(new)
    if a.size < 2 or b.size < 2:
        return 1.0
    alternative = "less" if better == "higher" else "greater"  # new vs old, towards worse
    if test == "mannwhitney":
        return float(_sps().mannwhitneyu(b, a, alternative=alternative).pvalue)
    if float(np.std(a)) == 0.0 and float(np.std(b)) == 0.0:
        return 0.0 if worse_effect(float(b[0]), float(a[0]), better) > 0 else 1.0
    with warnings.catch_warnings():  # near-identical cards: scipy warns of precision loss, the p stays usable
        warnings.simplefilter("ignore", RuntimeWarning)
        p = float(_sps().ttest_ind(b, a, equal_var=False, alternative=alternative).pvalue)
    return 1.0 if math.isnan(p) else p


def effect_floor(unit: str, info: Mapping[str, Any], is_cpu: bool, noise_rel: float,
                 noise_multiple: float = NOISE_MULTIPLE, name: str | None = None) -> tuple[float, float]:
    """(relative, absolute) floor a card must be worse by before it counts: the largest of the metric class's
    floor and ``noise_multiple`` × the metric's own noise; given the metric's ``name``, also the catalog's
    fixed band of its family (relative and absolute) where that band stands for the noise of one card's runs
    (a tuner's path, one kernel's model error) — not where it holds the differences between boards
    (:func:`.catalog.between_machines`: a power draw, a DRAM latency), the very card-to-card differences a
    cohort is there to name."""
    floors = [classes.floor(unit, is_cpu, None, classes.is_host_timed(dict(info)), spread_known=False),
              noise_multiple * noise_rel]
    fixed: Mapping[str, Any] = {}
    if name is not None:
        fixed = {} if catalog.between_machines(name, unit) else (catalog.tolerance(name, is_cpu) or {})
        floors.append(float(fixed.get("rel", 0.0)))
    return max(floors), float(fixed.get("abs", 0.0))


@dataclass
class Reference:
    """A cohort's statistics of one metric: what a card (or its confirmation run) is measured against."""

    median: float
    sigma: float
    noise_rel: float
    floor: float
    better: str
    unit: str
    identity: str
    n: int
    floor_abs: float  # the catalog's absolute band of the metric's family, where it counts (effect_floor)
    se_rel: float  # the relative standard error of one card's value: the σ is never below it


def _median(xs: Sequence[float]) -> float:
    """The median of ``xs`` as the standard library computes it (0.0 for none)."""
    return float(statistics.median(xs)) if xs else 0.0


def reference(name: str, values: Sequence[float], noise_rels: Sequence[float], se_rels: Sequence[float], *,
              better: str, unit: str, identity: str, info: Mapping[str, Any], is_cpu: bool,
              noise_multiple: float = NOISE_MULTIPLE) -> Reference:
    """The cohort's statistics of metric ``name`` from its cards' values (each card one), their own within-run
    noise (``noise_rels``) and the standard errors of their values (``se_rels``): the median and MAD, the
    cohort's typical noise and standard error (medians over the cards that have one) and the effect floor."""
    med, sigma = center_and_spread(values)
    noise_rel, se_rel = _median(noise_rels), _median(se_rels)
    floor, floor_abs = effect_floor(unit, info, is_cpu, noise_rel, noise_multiple, name=name)
    return Reference(med, sigma, noise_rel, floor, better, unit, identity, len(values), floor_abs, se_rel)


def card_row(name: str, value: float, ref: Reference) -> dict[str, Any]:
    """One card's value of metric ``name`` against its cohort's reference: the row the report prints (the
    value, the cohort's figures, z, p and the relative effect; an infinite or NaN effect as its ``repr``)."""
    z = robust_z(value, ref.median, ref.sigma, ref.better, ref.se_rel)
    effect = worse_effect(value, ref.median, ref.better)
    return {"metric": name, "value": value, "unit": ref.unit, "better": ref.better, "cohort_median": ref.median,
            "cohort_mad": ref.sigma, "cohort_n": ref.n, "noise_rel": ref.noise_rel, "se_rel": ref.se_rel,
            "floor": ref.floor, "floor_abs": ref.floor_abs, "worse_by": worse_sign(ref.better) * (value - ref.median),
            "z": z, "p": p_value(z), "effect": effect if math.isfinite(effect) else repr(effect)}


def beyond_floor(row: Mapping[str, Any]) -> bool:
    """Worse than the cohort's median by more than the relative floor and the absolute one."""
    e = row["effect"]
    return ((isinstance(e, float) and e > row["floor"]) or e == "inf") and row["worse_by"] > row["floor_abs"]


def flag(rows: Sequence[dict[str, Any]], fdr: float = FDR) -> list[bool]:
    """Which of ``rows`` (from :func:`card_row`, every card × metric tested together) are flagged: each row gets
    its Benjamini–Hochberg q (``row["q"]``); flagged where q ≤ ``fdr`` and the card is beyond the floor."""
    out = []
    for row, q in zip(rows, bh([r["p"] for r in rows])):
        row["q"] = q
        out.append(q <= fdr and beyond_floor(row))
    return out


def card_verdict(flagged: bool, confirmed: bool | None) -> str:
    """A card's fleet-relative verdict: ``ok`` unflagged; flagged and not yet re-run (``confirmed`` None)
    ``uncertain``; flagged again by its confirmation run ``fail``; not flagged again ``warn``."""
    if not flagged:
        return FleetCard.OK
    if confirmed is None:
        return FleetCard.UNCERTAIN
    return FleetCard.FAIL if confirmed else FleetCard.WARN


def odd_ones(values: Sequence[Any], tolerance: Mapping[str, float] | None = None
             ) -> tuple[Any, int, list[bool]] | None:
    """Exact figures, one per card: (the value a strict majority of the cards share, how many share it, per card
    whether it differs), or None where no value has a strict majority. Compared bit for bit (``repr``), unless
    ``tolerance`` gives the band the gate judges the figure within (a figure read off a grid of timed points,
    such as a cache size on its footprint grid, moves one step between unchanged runs): then the shared value
    is the cards' median and a card differs where it lies beyond that band of it."""
    if tolerance:
        try:
            nums = [float(v) for v in values]
        except (TypeError, ValueError):
            nums = []
        if nums and all(math.isfinite(v) for v in nums):
            center = float(np.median(nums))
            width = band(center, tolerance)
            odd = [abs(v - center) > width for v in nums]
            count = len(odd) - sum(odd)
            return (center, count, odd) if count * 2 > len(values) else None
    shared, count = majority([repr(v) for v in values])
    if count * 2 <= len(values):
        return None
    return next(v for v in values if repr(v) == shared), count, [repr(v) != shared for v in values]


def timed_shift(q: float, effect: float, floor: float, fdr: float) -> str:
    """A new cohort against an old one, timed figure: ``worse`` (``better``) where the between-card test's
    adjusted p is at most ``fdr`` and the medians' relative effect lies beyond the floor; else ``same``."""
    if q <= fdr and effect > floor:
        return Compare.WORSE
    if q <= fdr and effect < -floor:
        return Compare.BETTER
    return Compare.SAME


def exact_shift(old: str, new: str, better: str) -> str:
    """A new cohort's majority of an exact figure against the old one's (their ``repr``s, which differ):
    ``worse`` for an ``exact`` figure or one that moved the worse way, else ``better``."""
    try:
        effect = worse_effect(float(new), float(old), better)
    except ValueError:
        effect = float("inf")
    return Compare.WORSE if better == "exact" or effect > 0 else Compare.BETTER
