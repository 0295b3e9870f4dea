"""The statistics of a fleet: one figure per card, cards of one cohort side by side.

Pure functions over numbers (no documents, no files), so each rule has one home and its tests need no
fleet:

* :func:`robust_z` — a card's one-sided robust z in the *worse* direction of its metric: the distance
  from the cohort's median in units of the cohort's MAD (scaled to a normal σ,
  ``scipy.stats.median_abs_deviation(scale="normal")``); the σ is never taken below the standard error
  of one card's value (:func:`median_se_rel`, or the baseline's run-to-run σ): a cohort whose cards agree
  to the last digit would otherwise make any wobble infinitely significant;
* :func:`p_value` — the z read against the standard normal (one-sided);
* :func:`bh` — Benjamini–Hochberg adjusted p-values (``scipy.stats.false_discovery_control``) over every
  card × metric tested, so a fleet of many cards and metrics does not flag cards by chance;
* :func:`worse_effect` — how much worse than the cohort's median a value is, relative, direction-aware;
* :func:`majority` — the value most cards share (deterministic figures: compared bit for bit);
* :func:`between_cards` — the rollout gate's test of two cohorts with the spread between cards as the
  unit (Welch's t or Mann–Whitney, one-sided towards worse).
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from types import ModuleType
from typing import Hashable, Sequence

import numpy as np


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


def finite(values: Sequence[float]) -> np.ndarray:
    """The finite values as a float array."""
    xs = np.asarray([float(v) for v in values], dtype=float)
    return xs[np.isfinite(xs)]


#: the mean absolute deviation's factor to a normal σ (√(π/2)): the robust z's fallback scale where more
#: than half the cohort reads one value and the MAD is 0 (Iglewicz and Hoaglin's modified z)
MEANAD_TO_SIGMA = math.sqrt(math.pi / 2)


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
    """(the value most cards share, how many share it); ties go to the value seen first."""
    counts = Counter(values)
    best = max(counts.values())
    for v in values:
        if counts[v] == best:
            return v, best
    raise ValueError("majority of no values")


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
