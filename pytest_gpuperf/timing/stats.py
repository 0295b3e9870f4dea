"""Robust summary statistics of repeated device timings.

Medians and MADs rather than means and standard deviations: GPU timings have one-sided outliers
(a context switch, a clock ramp) that would drag a mean and inflate a standard deviation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

#: MAD × 1.4826 estimates the standard deviation of normally distributed noise.
MAD_TO_SIGMA = 1.4826


def mad(values: Any) -> float:
    """The raw median absolute deviation (unscaled: × :data:`MAD_TO_SIGMA` estimates σ), the value of
    ``scipy.stats.median_abs_deviation``. Finite samples take its two medians straight from NumPy: SciPy's
    argument handling costs twenty times the arithmetic on a few samples, and a gate or a compare takes one for
    every metric it judges. Empty or non-finite samples go through SciPy for its NaN and warnings; its statistics
    load then, not with this module, which every pytest process and ``gpuperf`` command imports."""
    xs = np.asarray(values, dtype=np.float64)
    if xs.size and np.isfinite(xs).all():
        return float(np.median(np.abs(xs - np.median(xs))))
    from scipy.stats import median_abs_deviation  # noqa: PLC0415 - 0.4 s to import

    return float(median_abs_deviation(xs))


#: From this many runs on, the run-to-run σ is the robust MAD estimate; below, the sample standard deviation.
ROBUST_FROM_RUNS = 5


def between_run_sigma(values: Sequence[float]) -> float:
    """The run-to-run σ of one metric's per-run values (0 for one run).

    Few runs cannot afford a robust estimate: the MAD of three values is the middle deviation, so two
    runs in one mode and a third in another read σ ≈ 0, and a fourth run in the second mode then reads as a
    significant change (GPU timings can be bimodal across runs while tight within each). Below :data:`ROBUST_FROM_RUNS` runs every run counts
    (sample standard deviation); from there on one odd run no longer inflates the estimate."""
    xs = np.asarray([float(v) for v in values], dtype=float)
    if xs.size < 2:
        return 0.0
    if xs.size < ROBUST_FROM_RUNS:
        return float(np.std(xs, ddof=1))
    return MAD_TO_SIGMA * mad(xs)


def run_spread(values: Iterable[Any]) -> float | None:
    """A baseline's run-to-run σ (:func:`between_run_sigma`) over the median of its runs' finite values: how far
    one card's unchanged runs move a metric. None for fewer than two finite values or a median of 0."""
    xs = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v)]
    mid = float(np.median(xs)) if len(xs) >= 2 else 0.0
    return None if mid == 0 else between_run_sigma(xs) / abs(mid)


def spread_pct(values: Sequence[float]) -> float:
    """(largest − smallest) / median of ``values``, in percent (0 for fewer than two values or a median ≤ 0)."""
    mid = float(np.median(values)) if len(values) else 0.0
    return 0.0 if len(values) < 2 or mid <= 0 else (max(values) - min(values)) / mid * 100.0


def modes_sigma(values: Sequence[float]) -> float:
    """The run-to-run σ a baseline's band must cover: the sample standard deviation of the runs without the
    one farthest from their median (0 for fewer than three runs: :func:`between_run_sigma` then). One odd
    run is left out, as the robust estimate leaves it out, but a second mode held by two or more runs (the
    runs of another machine, whose figure sits a step away while each machine's runs agree closely) stays
    in: the MAD of six runs on one machine and three on another reads the first machine's spread alone,
    and the next run on the second machine would then read as a change."""
    xs = np.asarray([float(v) for v in values], dtype=float)
    if xs.size < 3:
        return 0.0
    keep = np.delete(xs, int(np.argmax(np.abs(xs - np.median(xs)))))
    return float(np.std(keep, ddof=1))


@dataclass(frozen=True)
class Stats:
    """Summary of one measured quantity: ``mad`` is the raw median absolute deviation.

    ``samples`` keeps the raw repeats (in the metric's unit once :meth:`scaled`/:meth:`reciprocal`
    mapped them): a verdict on a timing needs the noise of both runs, not only their medians, so the
    samples travel into results and baselines (see :mod:`pytest_gpuperf.timing.difference`)."""

    median: float
    mad: float
    min: float
    max: float
    n: int
    samples: tuple[float, ...] | None = None

    @classmethod
    def of(cls, samples: Iterable[float]) -> "Stats":
        xs = np.asarray(list(samples), dtype=np.float64)
        if xs.size == 0:
            raise ValueError("no samples")
        med = float(np.median(xs))
        return cls(med, mad(xs), float(xs.min()), float(xs.max()), int(xs.size),
                   tuple(float(x) for x in xs))

    @property
    def rel_spread(self) -> float:
        """Robust relative standard deviation (≈ CV for normal noise); 0 for a zero median."""
        return MAD_TO_SIGMA * self.mad / abs(self.median) if self.median else 0.0

    def scaled(self, factor: float) -> "Stats":
        """Stats of ``factor × x`` (e.g. seconds → µs, or time → bandwidth with a reciprocal below)."""
        lo, hi = sorted((self.min * factor, self.max * factor))
        xs = None if self.samples is None else tuple(x * factor for x in self.samples)
        return Stats(self.median * factor, abs(self.mad * factor), lo, hi, self.n, xs)

    def reciprocal(self, numerator: float) -> "Stats":
        """Stats of ``numerator / x``: turns a time into a rate (GB/s, ops/s). MAD maps to first order."""
        med = numerator / self.median
        mad = numerator * self.mad / (self.median ** 2)
        xs = None if self.samples is None else tuple(numerator / x for x in self.samples)
        return Stats(med, mad, numerator / self.max, numerator / self.min, self.n, xs)

    def to_json(self, samples: bool = True) -> dict[str, Any]:
        """The summary; with ``samples`` (the default) the raw repeats too, rounded to 7 significant
        digits — far below any timing noise, and it keeps results files small."""
        doc: dict[str, Any] = {"median": self.median, "mad": self.mad, "min": self.min, "max": self.max, "n": self.n}
        if samples and self.samples is not None:
            doc["samples"] = [float(f"{x:.7g}") for x in self.samples]
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> "Stats":
        """Inverse of :meth:`to_json` (results and baseline files)."""
        xs = doc.get("samples")
        return cls(float(doc["median"]), float(doc["mad"]), float(doc["min"]), float(doc["max"]), int(doc["n"]),
                   None if xs is None else tuple(float(x) for x in xs))


def noise_floor(samples: Sequence[float]) -> float:
    """Relative robust spread of a sample set (see :attr:`Stats.rel_spread`)."""
    return Stats.of(samples).rel_spread
