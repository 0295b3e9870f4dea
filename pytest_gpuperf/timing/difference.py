"""Is run B different from run A? The statistics behind every timing verdict and every compare.

Two runs of an unchanged system never give the same median: a verdict on a timing therefore needs
both a *significant* difference — judged from the raw samples of both runs, as nvbench's compare
uses the noise of both — and an *effect* larger than the smallest change the metric's class can
resolve. This module gives the first half:

* the ratio of medians B/A with a bootstrap percentile interval (resampling both runs' samples independently,
  a fixed seed so a verdict is reproducible), and
* the two-sided Mann–Whitney U p-value, which needs no normality and is robust to the one-sided
  outliers GPU timings have: exact over every arrangement of the pooled samples where there are few
  (:func:`rank_p_value`), scipy's normal approximation with its tie correction where there are many.

Samples of one run share that run's placement, clocks and code layout, so they say nothing about how far
a second unchanged run lands: where several runs are pooled, or a figure carries repeats instead of
samples, :func:`run_difference` tests with the run (or repeat) as the unit — a t-test on one value per run.

The effect threshold is policy and lives with the verdicts (:mod:`pytest_gpuperf.baselines.verdicts`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from typing import Sequence

import numpy as np

#: Confidence of the interval and significance level of the test. A gate runs ~1,500 metrics per
#: device: at α = 0.001 an unchanged system raises about 1.5 significant-but-tiny differences per
#: run, which the effect threshold then absorbs; the planted 5 % changes give p far below 1e-6.
CONFIDENCE = 0.999
ALPHA = 1.0 - CONFIDENCE
BOOTSTRAP_RESAMPLES = 2000
MIN_SAMPLES = 5  # below this per side neither the test nor the interval means anything
#: the most arrangements of two sides' pooled samples, C(n_a + n_b, n_b), over which :func:`rank_p_value`
#: enumerates the exact permutation distribution of U: 15 baseline samples (three runs of five) against a run's
#: 5 are 15,504, 20 against 5 are 53,130; beyond, the normal approximation is close and used
EXACT_ARRANGEMENTS = 60_000


#: the tests behind a :class:`Difference` (``test``) and what each side's values were (``unit``)
TESTS = ("mann-whitney", "welch", "student")
UNITS = ("samples", "runs", "repeats")


@dataclass(frozen=True)
class Difference:
    """How B relates to A: ``ratio`` = median(B)/median(A) of samples (mean(B)/mean(A) of per-run values),
    its interval, the test's p-value, and which test on which unit gave them."""

    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    n_a: int
    n_b: int
    alpha: float = ALPHA  # the level of the test; the interval's confidence is 1 − alpha
    test: str = "mann-whitney"  # one of TESTS
    unit: str = "samples"  # one of UNITS: raw samples, one value per run, a figure's within-run repeats

    @property
    def significant(self) -> bool:
        """Both the test and the interval say the medians differ (at ``alpha``, default :data:`ALPHA`)."""
        return self.p_value < self.alpha and not (self.ci_low <= 1.0 <= self.ci_high)

    def to_json(self) -> dict[str, float | int | bool]:
        return {"ratio": self.ratio, "ci": [self.ci_low, self.ci_high], "confidence": 1.0 - self.alpha,
                "p_value": self.p_value, "n_a": self.n_a, "n_b": self.n_b, "significant": self.significant,
                "test": self.test, "unit": self.unit}


def usable(samples: Sequence[float] | None) -> bool:
    """Enough finite samples of one sign to form a ratio of medians."""
    if samples is None or len(samples) < MIN_SAMPLES:
        return False
    xs = np.asarray(samples, dtype=np.float64)
    return bool(np.all(np.isfinite(xs))) and float(np.median(xs)) != 0.0


def _medians(m: np.ndarray) -> np.ndarray:
    """``np.median(m, axis=-1)``, bit for bit, by one sort of the rows: numpy's median partitions each row
    around both middle elements, several times slower on the bootstrap's short rows, which made a
    comparison of 100,000 metrics take minutes."""
    s = np.sort(m, axis=-1)
    k = m.shape[-1] // 2
    return s[..., k] if m.shape[-1] % 2 else (s[..., k - 1] + s[..., k]) / 2


def _median_ratio(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """median(B)/median(A) of each resample (one resample per row)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _medians(b) / _medians(a)


def difference(a: Sequence[float], b: Sequence[float], *, resamples: int = BOOTSTRAP_RESAMPLES,
               seed: int = 0x9E3779B9, alpha: float = ALPHA) -> Difference:
    """Ratio of medians B/A with its bootstrap interval and the Mann–Whitney U p-value.

    The interval: both runs are resampled independently from a generator seeded with ``seed`` — the draws of
    ``scipy.stats.bootstrap(..., paired=False, method="percentile")`` with that generator, index for index,
    without its per-call overhead, which a comparison of thousands of metrics pays thousands of times — and
    each resample's ratio of medians taken; the percentiles are taken over the resamples that have a ratio
    (a resample of A whose median is 0 has none), as ``np.quantile`` does.

    ``alpha``: level of the test, and 1 − confidence of the interval (``gpuperf compare --alpha``);
    the gate keeps the default :data:`ALPHA`. Raises ``ValueError`` when either side is not :func:`usable`."""
    if not usable(a) or not usable(b):
        raise ValueError(f"need at least {MIN_SAMPLES} finite samples with a non-zero median on each side")
    xa = np.asarray(a, dtype=np.float64)
    xb = np.asarray(b, dtype=np.float64)
    ma, mb = float(np.median(xa)), float(np.median(xb))
    rng = np.random.default_rng(seed)
    ra = xa[rng.integers(0, xa.size, (resamples, xa.size))]
    rb = xb[rng.integers(0, xb.size, (resamples, xb.size))]
    ratios = _median_ratio(ra, rb)
    ratios = ratios[np.isfinite(ratios)]
    tail = alpha / 2
    lo, hi = (float(q) for q in np.quantile(ratios, [tail, 1.0 - tail])) if ratios.size else (math.nan, math.nan)
    if np.ptp(np.concatenate([xa, xb])) == 0.0:
        p = 1.0  # identical constant samples: no difference at all (scipy would warn and return nan)
    else:
        p = rank_p_value(xa, xb)
    return Difference(mb / ma, lo, hi, p, int(xa.size), int(xb.size), float(alpha))


def exact_rank_test(n_a: int, n_b: int) -> bool:
    """Whether :func:`rank_p_value` takes the exact permutation distribution for sides of these sizes."""
    return math.comb(n_a + n_b, n_b) <= EXACT_ARRANGEMENTS


@lru_cache(maxsize=16)
def _arrangements(n: int, k: int) -> np.ndarray:
    """Every choice of ``k`` of ``n`` pooled positions for side B (C(n, k) rows of ``k`` indices)."""
    return np.fromiter((i for c in combinations(range(n), k) for i in c), dtype=np.int16,
                       count=math.comb(n, k) * k).reshape(-1, k)


def rank_p_value(xa: np.ndarray, xb: np.ndarray) -> float:
    """The two-sided Mann–Whitney U p-value of A against B.

    Where the sides have at most :data:`EXACT_ARRANGEMENTS` arrangements, the exact permutation test: the rank
    sum of B (mid-ranks for tied values) against its value over every way to split the pooled samples into sides
    of these sizes, two-sided as scipy's ``permutation_test`` (twice the smaller tail, at most 1), the same p as
    ``scipy.stats.mannwhitneyu(method=PermutationMethod(n_resamples=EXACT_ARRANGEMENTS))`` (a test pins it).

    Why exact: timer-quantized GPU samples repeat, and with ties scipy's ``method='auto'`` falls to the normal
    approximation, whose p for three baseline runs' 15 samples against a run's 5 never falls below 0.0012 even
    when the sides do not overlap at all: at α = 0.001 such a gate could never read ``regressed`` (throughput,
    summation times, launch grids, pointer chases). The permutation distribution conditions on the ties, so it
    is exact — a level-α test — with them, and two sides that do not overlap reach 2/C(20, 5) = 1.3e-4: the
    sample counts the suites take already suffice, and no probe runs longer. Enumerated here rather than by
    ``permutation_test`` itself, which takes ~0.1 s for 15,504 arrangements: a gate judges hundreds of sampled
    metrics a run and ``gpuperf compare`` up to 100,000. Beyond the limit, scipy's asymptotic test (exact where
    a side is small and no value repeats)."""
    from scipy import stats as sps  # noqa: PLC0415 - 0.4 s to import: every pytest process loads this module

    if not exact_rank_test(xa.size, xb.size):
        return float(sps.mannwhitneyu(xa, xb, alternative="two-sided").pvalue)
    ranks = midranks(np.concatenate([xa, xb]))
    side = ranks[xa.size:] if xb.size <= xa.size else ranks[:xa.size]  # the smaller side: fewer columns, same p
    sums = ranks[_arrangements(xa.size + xb.size, side.size)].sum(axis=1)
    observed = float(side.sum())
    eps = 1e-9 * max(1.0, observed)  # mid-ranks are halves: sums are exact, the slack only guards rounding
    low = np.count_nonzero(sums <= observed + eps) / sums.size
    high = np.count_nonzero(sums >= observed - eps) / sums.size
    return float(min(1.0, 2.0 * min(low, high)))


def midranks(x: np.ndarray) -> np.ndarray:
    """The ranks of ``x`` (1 for the smallest), tied values sharing the mean of their ranks: what
    ``scipy.stats.rankdata(x)`` gives for finite values, bit for bit (every rank is a whole or a half), without the
    ~0.5 ms its argument checks cost a call, which the gate pays for every sampled metric."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    edges = np.flatnonzero(np.concatenate(([True], xs[1:] != xs[:-1], [True])))  # where each run of ties starts
    out = np.empty(x.size, dtype=np.float64)
    out[order] = np.repeat((edges[:-1] + edges[1:] + 1) / 2.0, np.diff(edges))
    return out


def run_difference(a: Sequence[float], b: Sequence[float], *, alpha: float = ALPHA, unit: str = "runs") -> Difference:
    """Mean(B)/mean(A) of one value per run (or per within-run repeat), with a t-test over those values.

    Welch's t-test when both sides have two values or more; Student's when one side has a single value —
    then the other side's spread stands for both (the prediction test of one new run against the
    reference runs). The interval is the t interval of mean(B) − mean(A) at confidence 1 − ``alpha``,
    expressed as a ratio to |mean(A)|, so "holds 1" means "holds no difference" as for samples. Sides
    without any spread (every value equal on each side) differ exactly or not at all (p = 0 or 1).
    Raises ``ValueError`` for non-finite values, an empty side, or a single value on both sides."""
    xa = np.asarray(a, dtype=np.float64)
    xb = np.asarray(b, dtype=np.float64)
    if xa.size < 1 or xb.size < 1 or xa.size + xb.size < 3:
        raise ValueError("a test over runs needs one value on each side and two or more on one of them")
    if not (np.all(np.isfinite(xa)) and np.all(np.isfinite(xb))):
        raise ValueError("a test over runs needs finite values")
    ma, mb = float(xa.mean()), float(xb.mean())
    flat_a = xa.size < 2 or np.ptp(xa) == 0.0
    flat_b = xb.size < 2 or np.ptp(xb) == 0.0
    if flat_a and flat_b:  # no spread anywhere: the values are the figures
        p = 1.0 if ma == mb else 0.0
        lo = hi = mb - ma
        test = "welch" if min(xa.size, xb.size) >= 2 else "student"
    else:
        equal_var = min(xa.size, xb.size) < 2
        p, lo, hi = _t_test(xb, xa, equal_var, alpha)
        test = "student" if equal_var else "welch"
    if ma != 0.0:
        ratio, ci_low, ci_high = mb / ma, 1.0 + lo / abs(ma), 1.0 + hi / abs(ma)
    else:
        ratio, ci_low, ci_high = math.nan, math.nan, math.nan
    return Difference(ratio, ci_low, ci_high, p, int(xa.size), int(xb.size), float(alpha), test, unit)


def _t_test(xb: np.ndarray, xa: np.ndarray, equal_var: bool, alpha: float) -> tuple[float, float, float]:
    """The two-sided p-value of ``scipy.stats.ttest_ind(xb, xa, equal_var=equal_var)`` and its interval of
    mean(B) − mean(A) at confidence 1 − ``alpha``, by scipy's own formulas and distribution functions
    (``scipy.special.stdtr``/``stdtrit``: a test pins them to ``ttest_ind``). Computed here because
    ``ttest_ind`` spends ~5 ms a call on checks of its array arguments: the gate runs this test for every
    repeated figure of a baseline, and ``gpuperf compare`` or a baseline script for thousands."""
    from scipy import special  # noqa: PLC0415 - see rank_p_value

    n1, n2 = np.float64(xb.size), np.float64(xa.size)
    m1, m2 = xb.mean(), xa.mean()
    with np.errstate(divide="ignore", invalid="ignore"):
        v1 = np.mean((xb - m1) ** 2) * (n1 / (n1 - 1.0))
        v2 = np.mean((xa - m2) ** 2) * (n2 / (n2 - 1.0))
        if equal_var:  # one value on a side: its variance is undefined and its squares sum to zero
            v1 = 0.0 if xb.size == 1 else v1
            v2 = 0.0 if xa.size == 1 else v2
            df = n1 + n2 - 2.0
            denom = np.sqrt(((n1 - 1.0) * v1 + (n2 - 1.0) * v2) / df * (1.0 / n1 + 1.0 / n2))
        else:
            vn1, vn2 = v1 / n1, v2 / n2
            df = (vn1 + vn2) ** 2 / (vn1 ** 2 / (n1 - 1.0) + vn2 ** 2 / (n2 - 1.0))
            df = 1.0 if np.isnan(df) else df  # both variances zero: any df will do
            denom = np.sqrt(vn1 + vn2)
        t = np.divide(m1 - m2, denom)
    p = 2.0 * special.stdtr(df, -np.abs(t))
    tail = (1.0 - (1.0 - alpha)) / 2.0
    low, high = special.stdtrit(df, np.array([tail, 1.0 - tail]))
    estimate = m1 - m2
    return float(p), float(low * denom + estimate), float(high * denom + estimate)
