"""Verdicts: how a measured value relates to its reviewed expectation.

Tolerance is a band around the expected value, the widest of three optional terms:
``rel`` × |expected|, ``abs`` (metric units), and ``k`` × ``spread`` (spread = robust σ of the
noise measured when the baseline was taken). Directions:

* ``lower`` / ``higher`` — which way is better; leaving the band on the bad side is ``regressed``,
  on the good side ``improved`` (a prompt to refresh the baseline, not a failure).
* ``bound`` — the expected value is an upper limit (e.g. a documented ULP bound): above it (plus any
  tolerance) is ``regressed``, anything else ``pass``.
* ``exact`` — must equal the expected value within the band (counts, sizes, bit-exact results).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

DIRECTIONS = ("lower", "higher", "bound", "exact")
VERDICTS = ("regressed", "missing", "known", "new", "improved", "pass")  # summary order: worst first
# "known": out of band in a test marked xfail (a documented finding); it does not fail the run


def band(expected: float, tolerance: Mapping[str, float]) -> float:
    """Half-width of the accepted band around ``expected``, in metric units."""
    terms = [0.0]
    if "rel" in tolerance:
        terms.append(float(tolerance["rel"]) * abs(expected))
    if "abs" in tolerance:
        terms.append(float(tolerance["abs"]))
    if "k" in tolerance and "spread" in tolerance:
        terms.append(float(tolerance["k"]) * float(tolerance["spread"]))
    return max(terms)


@dataclass(frozen=True)
class Comparison:
    verdict: str
    expected: float | None
    band: float | None
    delta_rel: float | None  # (measured − expected) / |expected|

    def line(self, name: str, measured: float, unit: str, better: str) -> str:
        """The one-line regression message: expected, measured, tolerance and delta."""
        if self.expected is None:
            return f"{name}: {self.verdict} (measured {measured:.6g} {unit})"
        delta = "" if self.delta_rel is None else f", delta {self.delta_rel:+.1%}"
        return (f"{name}: {self.verdict.upper()} — expected {self.expected:.6g} {unit} ± {self.band:.3g} "
                f"({better} is better), measured {measured:.6g} {unit}{delta}")


def compare(measured: float, better: str, entry: Mapping[str, Any] | None) -> Comparison:
    """Verdict of one metric against its baseline entry (``None`` → ``new``)."""
    if entry is None:
        return Comparison("new", None, None, None)
    expected = float(entry["value"])
    width = band(expected, entry.get("tolerance", {}))
    delta = (measured - expected) / abs(expected) if expected else None
    direction = entry.get("better", better)
    if math.isnan(measured):
        return Comparison("regressed", expected, width, delta)
    if direction == "bound":
        verdict = "regressed" if measured > expected + width else "pass"
    elif direction == "exact":
        verdict = "pass" if abs(measured - expected) <= width else "regressed"
    elif direction == "lower":
        verdict = "regressed" if measured > expected + width else "improved" if measured < expected - width else "pass"
    elif direction == "higher":
        verdict = "regressed" if measured < expected - width else "improved" if measured > expected + width else "pass"
    else:
        raise ValueError(f"unknown direction {direction!r}")
    return Comparison(verdict, expected, width, delta)
