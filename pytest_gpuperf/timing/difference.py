"""Is run B different from run A? The statistics behind every timing verdict and every compare.

Two runs of an unchanged system never give the same median: a verdict on a timing therefore needs
both a *significant* difference — judged from the raw samples of both runs, as nvbench's compare
uses the noise of both — and an *effect* larger than the smallest change the metric's class can
resolve. This module gives the first half:

* the ratio of medians B/A with a bootstrap percentile interval (resampling both runs' samples
  independently, a fixed seed so a verdict is reproducible), and
* the two-sided Mann–Whitney U p-value (scipy.stats), which needs no normality and is robust to
  the one-sided outliers GPU timings have.

The effect threshold is policy and lives with the verdicts (:mod:`pytest_gpuperf.baselines.compare`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats as sps

#: Confidence of the interval and significance level of the test. A gate runs ~1,500 metrics per
#: device: at α = 0.001 an unchanged system raises about 1.5 significant-but-tiny differences per
#: run, which the effect threshold then absorbs; the planted 5 % changes give p far below 1e-6.
CONFIDENCE = 0.999
ALPHA = 1.0 - CONFIDENCE
BOOTSTRAP_RESAMPLES = 2000
MIN_SAMPLES = 5  # below this per side neither the test nor the interval means anything


@dataclass(frozen=True)
class Difference:
    """How B relates to A: ``ratio`` = median(B)/median(A), its interval, the U test's p-value."""

    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    n_a: int
    n_b: int
    alpha: float = ALPHA  # the level of the test; the interval's confidence is 1 − alpha

    @property
    def significant(self) -> bool:
        """Both the test and the interval say the medians differ (at ``alpha``, default :data:`ALPHA`)."""
        return self.p_value < self.alpha and not (self.ci_low <= 1.0 <= self.ci_high)

    def to_json(self) -> dict[str, float | int | bool]:
        return {"ratio": self.ratio, "ci": [self.ci_low, self.ci_high], "confidence": 1.0 - self.alpha,
                "p_value": self.p_value, "n_a": self.n_a, "n_b": self.n_b, "significant": self.significant}


def usable(samples: Sequence[float] | None) -> bool:
    """Enough finite samples of one sign to form a ratio of medians."""
    if samples is None or len(samples) < MIN_SAMPLES:
        return False
    xs = np.asarray(samples, dtype=np.float64)
    return bool(np.all(np.isfinite(xs))) and float(np.median(xs)) != 0.0


def difference(a: Sequence[float], b: Sequence[float], *, resamples: int = BOOTSTRAP_RESAMPLES,
               seed: int = 0x9E3779B9, alpha: float = ALPHA) -> Difference:
    """Ratio of medians B/A with its bootstrap interval and the Mann–Whitney U p-value.

    ``alpha``: level of the test, and 1 − confidence of the interval (``gpuperf compare --alpha``);
    the gate keeps the default :data:`ALPHA`. Raises ``ValueError`` when either side is not :func:`usable`."""
    if not usable(a) or not usable(b):
        raise ValueError(f"need at least {MIN_SAMPLES} finite samples with a non-zero median on each side")
    xa = np.asarray(a, dtype=np.float64)
    xb = np.asarray(b, dtype=np.float64)
    ma, mb = float(np.median(xa)), float(np.median(xb))
    rng = np.random.default_rng(seed)
    ra = np.median(rng.choice(xa, size=(resamples, xa.size), replace=True), axis=1)
    rb = np.median(rng.choice(xb, size=(resamples, xb.size), replace=True), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = rb / ra
    ratios = ratios[np.isfinite(ratios)]
    tail = alpha / 2
    lo, hi = (float(q) for q in np.quantile(ratios, [tail, 1.0 - tail])) if ratios.size else (math.nan, math.nan)
    if np.ptp(np.concatenate([xa, xb])) == 0.0:
        p = 1.0  # identical constant samples: no difference at all (scipy would warn and return nan)
    else:
        p = float(sps.mannwhitneyu(xa, xb, alternative="two-sided").pvalue)
    return Difference(mb / ma, lo, hi, p, int(xa.size), int(xb.size), float(alpha))
