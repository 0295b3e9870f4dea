"""Robust summary statistics of repeated device timings.

Medians and MADs rather than means and standard deviations: GPU timings have one-sided outliers
(a context switch, a clock ramp) that would drag a mean and inflate a standard deviation.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable, Sequence

import numpy as np

#: MAD × 1.4826 estimates the standard deviation of normally distributed noise.
MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True)
class Stats:
    """Summary of one measured quantity: ``mad`` is the raw median absolute deviation."""

    median: float
    mad: float
    min: float
    max: float
    n: int

    @classmethod
    def of(cls, samples: Iterable[float]) -> "Stats":
        xs = np.asarray(list(samples), dtype=np.float64)
        if xs.size == 0:
            raise ValueError("no samples")
        med = float(np.median(xs))
        return cls(med, float(np.median(np.abs(xs - med))), float(xs.min()), float(xs.max()), int(xs.size))

    @property
    def rel_spread(self) -> float:
        """Robust relative standard deviation (≈ CV for normal noise); 0 for a zero median."""
        return MAD_TO_SIGMA * self.mad / abs(self.median) if self.median else 0.0

    def scaled(self, factor: float) -> "Stats":
        """Stats of ``factor × x`` (e.g. seconds → µs, or time → bandwidth with a reciprocal below)."""
        lo, hi = sorted((self.min * factor, self.max * factor))
        return Stats(self.median * factor, abs(self.mad * factor), lo, hi, self.n)

    def reciprocal(self, numerator: float) -> "Stats":
        """Stats of ``numerator / x``: turns a time into a rate (GB/s, ops/s). MAD maps to first order."""
        med = numerator / self.median
        mad = numerator * self.mad / (self.median ** 2)
        return Stats(med, mad, numerator / self.max, numerator / self.min, self.n)

    def to_json(self) -> dict[str, float | int]:
        return asdict(self)


def noise_floor(samples: Sequence[float]) -> float:
    """Relative robust spread of a sample set (see :attr:`Stats.rel_spread`)."""
    return Stats.of(samples).rel_spread
