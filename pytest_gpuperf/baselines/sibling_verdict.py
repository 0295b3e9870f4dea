"""The sibling rule: one card's figure of a metric against the same figure of its siblings pooled.

Cards of one model in one host run the same code on the same driver, so the siblings are the reference
and no baseline is needed. ``fleet.siblings`` gathers each card's figure (:class:`SiblingFigure`), calls
:func:`sibling_verdict` and formats the result; every decision is made here:

* **Comparable.** A sibling whose unit or identity (the options that shaped the value) differs from the
  card's: ``incomparable``.
* **Samples.** Where the card and every sibling carry raw samples, the direction is ``lower`` or
  ``higher`` and both the card's samples and the siblings' pooled ones are usable
  (:func:`pytest_gpuperf.timing.difference.usable`): the regression gate's statistics
  (:func:`~pytest_gpuperf.timing.difference.difference`, the bootstrap interval of the median ratio and the
  Mann–Whitney U test) give the ratio median(card) / median(siblings pooled); beyond the floor on the bad
  side (:func:`.verdicts.shift`, the gate's ratio-safe edges) is ``outlier``, on the good side ``better``,
  each only where the difference is also significant — beyond the floor but not significant is ``same``
  with the reason.
* **Values.** Otherwise every card needs a finite value (else ``incomparable``) and the card's value is
  judged against the median of its siblings' values (``basis: values``): an ``exact`` figure that differs
  is an ``outlier`` (a card that computes something else); siblings that read 0 leave no ratio, so the
  sign of the card's value decides which side it lies on; else the floor alone decides the ratio.

The words are :class:`pytest_gpuperf.verdictwords.Sibling`'s.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..timing.difference import ALPHA, Difference, difference, usable
from ..verdictwords import SHIFT_TO_SIBLING, Shift, Sibling
from .verdicts import shift

#: what the judgement was based on: the raw samples, the values alone, or neither (incomparable)
BASES = ("samples", "values", "-")


@dataclass(frozen=True)
class SiblingFigure:
    """One card's figure of a metric as the sibling rule reads it.

    ``value``: the recorded value if it is a finite number, else None; ``samples``: the raw repeats as
    floats, None where the card kept none; ``unit`` and ``identity`` as recorded (what makes two figures
    one measurement)."""

    value: float | None
    samples: Sequence[float] | None = None
    unit: str | None = None
    identity: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class SiblingJudgement:
    """The sibling rule's verdict of one card's figure and the figures it rests on."""

    verdict: str  # a Sibling word
    basis: str  # one of BASES
    siblings_value: float | None = None  # median of the siblings' pooled samples, or of their values
    ratio: float | None = None  # card / siblings (None where the siblings read 0, or not comparable)
    reason: str = ""
    difference: Difference | None = None  # the significance test, where the samples decided


def sibling_verdict(card: SiblingFigure, siblings: Sequence[SiblingFigure], better: str, floor: float,
                    alpha: float = ALPHA) -> SiblingJudgement:
    """The verdict of ``card``'s figure against its ``siblings``' pooled, for a metric whose ``better`` is
    ``lower``, ``higher``, ``bound`` or ``exact``; ``floor``: the smallest relative effect that counts (the
    metric class's floor, or one threshold for every metric); ``alpha``: the significance level."""
    if not siblings:
        raise ValueError("the sibling rule needs at least one sibling figure to judge a card against "
                         "(a group of one card has no siblings: leave it out)")
    for s in siblings:
        if s.unit != card.unit or dict(s.identity or {}) != dict(card.identity or {}):
            return SiblingJudgement(Sibling.INCOMPARABLE, "-",
                                    reason="measured another way on a sibling (unit or identity differs)")
    if better in ("lower", "higher") and card.samples is not None and all(s.samples for s in siblings):
        judged = _by_samples(card.samples, [x for s in siblings for x in (s.samples or [])], better, floor, alpha)
        if judged is not None:
            return judged
    values = [s.value for s in siblings]
    if card.value is None or any(v is None for v in values):
        return SiblingJudgement(Sibling.INCOMPARABLE, "-", reason="no finite value on every card")
    return _by_values(card.value, float(statistics.median(values)), better, floor)  # type: ignore[arg-type]


def _by_samples(mine: Sequence[float], pooled: Sequence[float], better: str, floor: float,
                alpha: float) -> SiblingJudgement | None:
    """The card's samples against the siblings' pooled ones, or None where either side is not usable."""
    if not (usable(mine) and usable(pooled)):
        return None
    d = difference(pooled, mine, alpha=alpha)
    ref = float(statistics.median(pooled))
    side = shift(d.ratio, better, floor)
    if side != Shift.SAME and not d.significant:
        reason = (f"beyond the {floor:.0%} floor but not significant (p={d.p_value:.2g}, interval "
                  f"[{d.ci_low:.4g}, {d.ci_high:.4g}])")
        return SiblingJudgement(Sibling.SAME, "samples", ref, d.ratio, reason, d)
    return SiblingJudgement(SHIFT_TO_SIBLING[side], "samples", ref, d.ratio, "", d)


def _by_values(value: float, ref: float, better: str, floor: float) -> SiblingJudgement:
    """The card's value against the median of its siblings' values (``ref``), without samples."""
    if better == "exact":
        differs = value != ref
        return SiblingJudgement(Sibling.OUTLIER if differs else Sibling.SAME, "values", ref,
                                reason="an exact figure that differs from its siblings'" if differs else "")
    if ref == 0.0:
        if value == 0.0:
            return SiblingJudgement(Sibling.SAME, "values", ref)
        # 0 on the siblings, not 0 here: no ratio, the sign of the direction decides
        worse = value > 0 if better in ("lower", "bound") else value < 0
        return SiblingJudgement(Sibling.OUTLIER if worse else Sibling.BETTER, "values", ref,
                                reason="the siblings read 0")
    ratio = value / ref
    side = shift(ratio, better, floor) if ratio > 0 else Shift.SAME
    return SiblingJudgement(SHIFT_TO_SIBLING[side], "values", ref, ratio,
                            "no raw samples on every card: the floor alone decides")
