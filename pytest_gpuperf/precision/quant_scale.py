"""Integer quantization as in Dao's thesis, chapter 4 (pure Python, numpy only).

* :func:`quantize` / :func:`dequantize` — eq. 4.1/4.2 with the signed range of §4.3.2:
  ``q = clamp(floor(x·s + 0.5), -2^(b-1), 2^(b-1) - 1)``, ``x ≈ q / s``.
* :func:`scale_for` — eq. 4.4, ``s = (2^b - 1) / (2·c)`` for a clip value ``c`` (the tensor's
  MAX(|x|) for the MAX method, something smaller for the others).
* :class:`Histogram` — the histogram of |x| the scale choices read (§4.4.5: averaged over η
  iterations).
* Scale choices: :func:`clip_max` (MAX), :func:`clip_percentile` (a histogram percentile),
  :func:`noise_p` + :func:`clip_noise` (Rand, eq. 4.6: ``MAX_new = MAX - random(0, p·MAX)`` with p
  from the histogram so that at most ``threshold`` of the elements lie in ``[MAX_new, MAX]``).
* Adaptive precision (§4.4.4, eq. 4.7–4.13): :func:`kl_divergence`, :func:`quantized_distribution`
  and :func:`precision_step`, one gradient step ``b ← b − β·∂D(P_T‖P_b)/∂b`` with the derivative taken
  by a finite difference on the histogram (see :func:`precision_gradient` for which one, and why).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

#: a precision at or above this many bits is not representable in binary32 (24-bit significand): the
#: fake-quantizer passes such tensors through unchanged
PASS_THROUGH_BITS = 24


def levels(bits: float) -> float:
    """``2^b - 1``: the number of steps of a b-bit signed quantizer's code range."""
    if not bits >= 1:
        raise ValueError(f"precision must be at least 1 bit, got {bits!r}")
    return 2.0 ** bits - 1.0


def scale_for(clip: float, bits: float = 8) -> float:
    """Eq. 4.4: the scale that maps ``clip`` to the top of the signed b-bit range."""
    if not clip > 0 or not math.isfinite(clip):
        raise ValueError(f"clip value must be positive and finite, got {clip!r}")
    return levels(bits) / (2.0 * clip)


def qrange(bits: float) -> tuple[float, float]:
    """The signed b-bit integer range ``[-2^(b-1), 2^(b-1) - 1]`` (§4.3.2)."""
    half = (levels(bits) + 1.0) / 2.0
    return -half, half - 1.0


def quantize(x: np.ndarray, scale: float, bits: float = 8) -> np.ndarray:
    """Eq. 4.1 (signed form): round half up (``floor(x·s + 0.5)``), then clamp. Returns int64 codes."""
    if not scale > 0:
        raise ValueError(f"scale must be positive, got {scale!r}")
    lo, hi = qrange(bits)
    q = np.floor(np.asarray(x, np.float64) * scale + 0.5)
    return np.clip(q, lo, hi).astype(np.int64)


def dequantize(q: np.ndarray, scale: float) -> np.ndarray:
    """Eq. 4.2: ``q / s``."""
    return np.asarray(q, np.float64) / scale


@dataclass(frozen=True)
class Histogram:
    """Histogram of |x| over ``[0, top]`` (``top`` = the largest |x| seen), counts averaged over the
    tensors it was made from (§4.4.5's η iterations)."""

    counts: np.ndarray  # float64, per bin, averaged over the tensors
    top: float
    n: float  # elements per tensor (average)

    @classmethod
    def of(cls, tensors: Sequence[np.ndarray] | np.ndarray, bins: int = 2048) -> "Histogram":
        if isinstance(tensors, np.ndarray):
            tensors = [tensors]
        vals = [np.abs(np.asarray(t, np.float64)).ravel() for t in tensors]
        if not vals or any(v.size == 0 for v in vals):
            raise ValueError("a histogram needs at least one non-empty tensor")
        if any(not np.all(np.isfinite(v)) for v in vals):
            raise ValueError("a tensor to quantize holds inf or nan")
        top = float(max(v.max() for v in vals))
        counts = np.zeros(bins)
        for v in vals:
            counts += np.histogram(v, bins=bins, range=(0.0, top if top > 0 else 1.0))[0]
        k = len(vals)
        return cls(counts / k, top, float(sum(v.size for v in vals)) / k)

    @property
    def bins(self) -> int:
        return int(self.counts.size)

    @property
    def width(self) -> float:
        return (self.top if self.top > 0 else 1.0) / self.bins

    @property
    def centers(self) -> np.ndarray:
        return (np.arange(self.bins) + 0.5) * self.width

    def quantile(self, q: float) -> float:
        """The value below which a fraction ``q`` of the elements lie (linear within a bin)."""
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"quantile must be in [0, 1], got {q!r}")
        cum = np.concatenate([[0.0], np.cumsum(self.counts)]) / self.counts.sum()
        i = int(np.searchsorted(cum, q, side="left"))
        if i == 0:
            return 0.0
        if i > self.bins:
            return self.top
        lo, hi = cum[i - 1], cum[i]
        t = 0.0 if hi == lo else (q - lo) / (hi - lo)
        return float((i - 1 + t) * self.width)

    def tail_fraction(self, value: float) -> float:
        """Fraction of the elements above ``value`` (linear within a bin)."""
        if value >= self.top:
            return 0.0
        if value < 0:
            return 1.0
        pos = value / self.width
        i = int(pos)
        above = self.counts[i + 1:].sum() + self.counts[i] * (1.0 - (pos - i))
        return float(above / self.counts.sum())


def clip_max(hist: Histogram) -> float:
    """The MAX method (eq. 4.3/4.4): the largest |x|."""
    return hist.top


def clip_percentile(hist: Histogram, percentile: float = 99.99) -> float:
    """A histogram percentile of |x| as the clip value (values above it saturate)."""
    if not 0.0 < percentile <= 100.0:
        raise ValueError(f"percentile must be in (0, 100], got {percentile!r}")
    return hist.quantile(percentile / 100.0)


def noise_p(hist: Histogram, threshold: float) -> float:
    """§4.4.3: the largest p such that the fraction of elements in ``[MAX·(1 − p), MAX]`` does not exceed
    ``threshold`` (a fraction, e.g. 1e-3 for 0.1 %)."""
    if not 0.0 <= threshold < 1.0:
        raise ValueError(f"threshold must be a fraction in [0, 1), got {threshold!r}")
    if hist.top <= 0:
        return 0.0
    return float(min(1.0, max(0.0, 1.0 - hist.quantile(1.0 - threshold) / hist.top)))


def clip_noise(top: float, p: float, rng: np.random.Generator) -> float:
    """Eq. 4.6: ``MAX_new = MAX − random(0, p·MAX)``."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    return float(top - rng.uniform(0.0, p * top))


def noise_fraction(p: float, rng: np.random.Generator) -> float:
    """The same draw as a fraction of MAX (``MAX_new / MAX``), for a device kernel that finds MAX itself."""
    return clip_noise(1.0, p, rng)


# ---- adaptive precision (§4.4.4) -----------------------------------------------------------------------
def quantized_distribution(hist: Histogram, bits: float, target: float = 8, clip: float | None = None) -> np.ndarray:
    """P_b on the target's code grid: the tensor (the histogram's bin centres, with their mass) quantized
    to b bits with clip ``clip`` (default MAX), dequantized, and counted in bins one T-bit code step wide
    (``[k/s_T, (k+1)/s_T)``, k = 0 … 2^(T-1) − 1, the last bin holding everything above). At b = T every
    value sits on a bin's left edge, so P_T is the code distribution itself; at higher b the values
    spread inside the bins, which is the information the T-bit quantizer will drop."""
    c = hist.top if clip is None else clip
    if c <= 0:
        raise ValueError("a tensor of zeros has no quantization grid")
    p = hist.counts / hist.counts.sum()
    x = hist.centers
    if bits < PASS_THROUGH_BITS:
        s = scale_for(c, bits)
        x = dequantize(quantize(x, s, bits), s)
    st = scale_for(c, target)
    ncodes = int(qrange(target)[1]) + 1
    # a hair of slack so a value that dequantizes exactly onto a code edge stays in that code's bin
    idx = np.clip(np.floor(np.abs(x) * st * (1 + 1e-12)).astype(np.int64), 0, ncodes - 1)
    return np.bincount(idx, weights=p, minlength=ncodes)


def kl_divergence(p: np.ndarray, q: np.ndarray, eps: float = 1e-12) -> float:
    """Eq. 4.7 in bits: ``D(P‖Q) = Σ P log2(P/Q)`` (Q smoothed by ``eps`` where P has mass and Q none)."""
    p = np.asarray(p, np.float64)
    q = np.asarray(q, np.float64)
    if p.shape != q.shape:
        raise ValueError(f"distributions differ in shape: {p.shape} vs {q.shape}")
    p = p / p.sum()
    q = (q + eps) / (q + eps).sum()
    m = p > 0
    return float(np.sum(p[m] * np.log2(p[m] / q[m])))


def precision_gradient(hist: Histogram, bits: float, target: float = 8, clip: float | None = None) -> float:
    """Δb of eq. 4.8: the slope of D(P_T‖P_b) in b, taken as the finite difference between b and the
    target, (D(b) − D(T)) / (b − T) with D(T) = 0. (On a histogram D(P_T‖P_b) is flat in b above T + 1 —
    about 0.02 bit for a half-normal tensor at every b from 9 to 32 — so a one-bit difference is zero
    there and b would never move; the slope to the target keeps the thesis' shape: small steps while
    b is far above T, larger ones as it nears it.)"""
    b = min(float(bits), 32.0)
    if b <= target:
        return 0.0
    pt = quantized_distribution(hist, target, target, clip)
    return kl_divergence(pt, quantized_distribution(hist, b, target, clip)) / (b - target)


def precision_step(hist: Histogram, bits: float, target: float = 8, beta: float = 1.0,
                   clip: float | None = None) -> float:
    """One update of eq. 4.8, ``b ← b − β·Δb``, never below the target precision nor above 32 bits."""
    return float(min(32.0, max(target, bits - beta * precision_gradient(hist, bits, target, clip))))
