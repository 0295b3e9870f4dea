"""Verdicts: how a measured value relates to its reviewed expectation.

Tolerance is a band around the expected value, the widest of three optional terms:
``rel`` × |expected|, ``abs`` (metric units), and ``k`` × ``spread`` (spread = robust σ of the
noise measured when the baseline was taken). Directions:

* ``lower`` / ``higher`` — which way is better; leaving the band on the bad side is ``regressed``,
  on the good side ``improved`` (a prompt to refresh the baseline, not a failure).
* ``bound`` — the expected value is an upper limit (e.g. a documented ULP bound): above it (plus any
  tolerance) is ``regressed``, anything else ``pass``.
* ``exact`` — must equal the expected value within the band (counts, sizes, bit-exact results).

Three rules keep the verdicts trustworthy:

* **Identity.** A metric's value may depend on options (sample count, seed, sweep mode); those
  options are its ``identity``, stored with the baseline entry. A run whose identity differs from the
  entry's gets ``incomparable`` with the reason — never ``regressed`` or ``pass``. So does a run whose
  kernels differ from those the entry was measured with: both carry ``source_digest`` (a digest of the
  kernel sources and build options the test compiled, ``util.source_digest``) and the digests differ. An
  entry made before digests were recorded carries none and judges as before.
* **Ratio-safe bands.** For a positive lower/higher-is-better metric the bad-side edge is a ratio:
  a band of half-width w around e accepts down to e / (1 + w/e) for higher-is-better, so a band wider
  than the value (the CPU devices' floors) still has an edge a real regression can cross.
* **Significance.** When both the baseline and the run carry raw samples, leaving the band counts only
  if the difference is also significant (:mod:`pytest_gpuperf.timing.difference`): an effect beyond
  the class's threshold *and* beyond the noise of both runs.

Given the metric's name (the baseline gate passes it), :func:`compare` follows the metric's noise model
(:mod:`.noise`, the table ``gpuperf compare`` follows too): a ``repeated`` figure (derived from timings
without raw samples) is judged only against a baseline of :data:`.noise.MIN_REPEATS` runs or more, and
leaving the band counts only where the new value is also significant against those runs
(:func:`over_runs`); against fewer, and for an ``informational`` figure, the verdict is ``ungated`` with
the reason. A documented bound and a NaN are judged whatever the model.

Each noise model is judged here, once, whoever asks:

* ``deterministic`` — the band alone (:func:`_band_verdict` through :func:`compare`): the baseline gate, and
  ``gpuperf compare`` (run A as the entry);
* ``sampled`` — the band, kept outside it only where both sides' samples also differ significantly
  (:func:`_band_verdict`); several runs on a side: over runs (:func:`over_runs`). The sibling check's card
  against its siblings pooled is judged by the same edges (:func:`shift`) in :mod:`.sibling_verdict`;
* ``repeated`` — the band kept only where a test over one value per run or repeat agrees (:func:`over_runs`);
  too few values: ``ungated`` (:func:`unjudged`), ``informational`` in ``gpuperf compare``;
* ``informational`` — never judged (:func:`unjudged`).

A card against its fleet cohort (robust z, Benjamini–Hochberg, the bit-for-bit majority, two cohorts by the
spread between cards) is the cohort noise model's, judged in :mod:`.cohort` for the fleet report and the
rollout gate; what the fleet report reads of a card's runs is their verdicts here. The words of every
verdict are :mod:`pytest_gpuperf.verdictwords`'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..verdictwords import Gate, Shift
from ..timing.difference import ALPHA, Difference, difference, run_difference, usable
from . import noise
from .detection import Detection, detection

DIRECTIONS = ("lower", "higher", "bound", "exact")
VERDICTS = Gate.ALL  # worst first (the words: pytest_gpuperf.verdictwords)
# "loose": inside a band so wide that the gate would miss changes up to its detection power
#   (detection.LOOSE, info in the results' baseline["detect"]): judged, but not a pass one may rely on
# "known": out of band in a test marked xfail (a documented finding); it does not fail the run
# "incomparable": the baseline was made another way (its identity differs); it does not fail the run
# "ungated": recorded, not gated: its noise model needs what the baseline lacks (a repeated figure from fewer
#   than noise.MIN_REPEATS runs), it is informational, or the test gates it only where the baseline's runs
#   agree, and they do not
# "contended": recorded, not gated: a CPU device's figure measured while other work held the host's cores
#   after re-measuring (info["host"]["contended"]; timing.observers.contended_verdict)
# "throttled": recorded, not gated: the card slowed itself down (thermal, power cap, hardware slowdown)
#   while it was measured (info["power"]["throttled"]; timing.observers.throttled_verdict, devices.nvml)


#: the verdicts of a metric whose band was applied (what the observers may still overrule)
JUDGED = Gate.JUDGED


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


def edges(expected: float, width: float, direction: str, ratio_safe: bool = True) -> tuple[float, float]:
    """(low, high) edges of the accepted band; with ``ratio_safe`` (a band set by a relative floor or by
    measured noise) the low edge of a positive metric is e / (1 + w/e), so a band wider than the value
    keeps an edge; an absolute band a test chose stays linear (it means what it says)."""
    low, high = expected - width, expected + width
    if ratio_safe and expected > 0 and direction in ("lower", "higher"):
        low = expected / (1.0 + width / expected)
    return low, high


def shift(ratio: float, better: str, floor: float) -> str:
    """Which side of a relative ``floor`` a ratio (this figure / the other side's) lies on: ``worse``,
    ``better`` or ``same`` (:class:`~pytest_gpuperf.verdictwords.Shift`), by the band's own ratio-safe edges
    around 1 (:func:`edges`): worse beyond 1 + floor for lower-is-better (and a bound), below 1 / (1 + floor)
    for higher-is-better. An exact figure (or no direction) has no side: ``same``. The sibling check's rule,
    the gate's band edges."""
    if better not in ("lower", "higher", "bound"):
        return Shift.SAME
    low, high = edges(1.0, floor, "higher" if better == "higher" else "lower")
    if better == "higher":
        return Shift.WORSE if ratio < low else Shift.BETTER if ratio > high else Shift.SAME
    return Shift.WORSE if ratio > high else Shift.BETTER if ratio < low else Shift.SAME


def identity_problem(expected: Mapping[str, Any] | None, measured: Mapping[str, Any] | None) -> str | None:
    """Why a baseline made with ``expected`` options cannot judge a run made with ``measured``, or None."""
    a, b = dict(expected or {}), dict(measured or {})
    if a == b:
        return None
    diffs = [f"{k}: baseline {a.get(k, '(unset)')!r}, this run {b.get(k, '(unset)')!r}"
             for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return "measured another way — " + "; ".join(diffs) + " (re-make the baseline with this run's options)"


#: what re-makes entries whose identity or kernel source changed, keeping every other entry as reviewed
REBASELINE = "gpuperf baseline from-results R1.json R2.json R3.json --identity-changed"


def source_problem(expected: str | None, measured: str | None) -> str | None:
    """Why a baseline entry measured with the kernels of digest ``expected`` cannot judge a run whose test
    compiled the kernels of digest ``measured``, or None: only where both sides carry one (an entry made
    before kernel digests were recorded, or a figure of the host alone, judges as before)."""
    if expected is None or measured is None or expected == measured:
        return None
    return (f"kernel source changed since the baseline — baseline kernels {expected}, this run {measured} "
            f"(re-make the entry from runs of the new kernels: {REBASELINE})")


def kind_problem(unit_a: str | None, better_a: str | None, unit_b: str | None, better_b: str | None,
                 a: str = "the baseline", b: str = "this run") -> str | None:
    """Why a figure recorded in ``unit_a`` with ``better_a`` cannot judge one in ``unit_b`` with ``better_b``,
    or None: the one rule of the baseline gate and of ``gpuperf compare``. 1000 us against 1.5 ms is not
    an improvement, and a flipped direction turns a regression into one; a unit or direction a side does
    not state (None) is not held against it."""
    unit_differs = unit_a is not None and unit_b is not None and unit_a != unit_b
    better_differs = better_a is not None and better_b is not None and better_a != better_b
    if not (unit_differs or better_differs):
        return None
    return (f"{a} records it in {unit_a} ({better_a} is better), {b} in {unit_b} ({better_b} is better): "
            "a figure in another unit or direction cannot be judged against it (re-make the baseline)")


@dataclass(frozen=True)
class Comparison:
    verdict: str
    expected: float | None
    band: float | None
    delta_rel: float | None  # (measured − expected) / |expected|
    reason: str | None = None
    difference: Difference | None = field(default=None)
    detect: Detection | None = field(default=None)  # what this gate would have caught (.detection)

    def line(self, name: str, measured: float, unit: str, better: str) -> str:
        """The one-line verdict message: expected, measured, tolerance, delta and the statistics."""
        if self.expected is None:
            return f"{name}: {self.verdict} (measured {measured:.6g} {unit})"
        if self.verdict == Gate.INCOMPARABLE:
            return f"{name}: INCOMPARABLE — {self.reason}"
        why = f" — {self.reason}" if self.verdict in (Gate.UNGATED, Gate.LOOSE) and self.reason else ""
        if self.detect is not None and self.verdict == Gate.PASS:
            why = f" — {self.detect.phrase()}"
        delta = "" if self.delta_rel is None else f", delta {self.delta_rel:+.1%}"
        stat = ""
        if self.difference is not None:
            d = self.difference
            stat = f", ratio {d.ratio:.4g} [{d.ci_low:.4g}, {d.ci_high:.4g}] p={d.p_value:.2g}"
        return (f"{name}: {self.verdict.upper()} — expected {self.expected:.6g} {unit} ± {self.band:.3g} "
                f"({better} is better), measured {measured:.6g} {unit}{delta}{stat}{why}")

    def to_json(self) -> dict[str, Any]:
        """What the results file keeps of the comparison (beside the baseline entry)."""
        doc: dict[str, Any] = {"band": self.band, "delta_rel": self.delta_rel}
        if self.reason:
            doc["reason"] = self.reason
        if self.difference is not None:
            doc["difference"] = self.difference.to_json()
        if self.detect is not None:
            doc["detect"] = self.detect.to_json()
        return doc


def compare(measured: float, better: str, entry: Mapping[str, Any] | None, *,
            samples: Sequence[float] | None = None, identity: Mapping[str, Any] | None = None,
            gate_if_stable: bool = False, alpha: float | None = None, name: str | None = None,
            unit: str | None = None, info: Mapping[str, Any] | None = None,
            source_digest: str | None = None) -> Comparison:
    """Verdict of one metric against its baseline entry (``None`` → ``new``).

    ``samples``: this run's raw repeats (in the metric's unit); with the entry's ``samples`` they make
    the significance test. ``identity``: the options that shaped this value; ``source_digest``: the digest of
    the kernels its test compiled (against an entry that carries another: ``incomparable``). ``gate_if_stable``: the test
    marked the metric as gated only where the baseline's runs agree (:func:`stability`).
    ``alpha``: significance level of that test (default: :data:`..timing.difference.ALPHA`; ``gpuperf
    compare --alpha`` sets it, so the run-against-run verdicts stay these verdicts).

    ``name``, ``unit`` and ``info`` (the metric's; the baseline gate passes them): follow the metric's
    noise model (:func:`gate_model`) — ``informational`` and a ``repeated`` figure against fewer than
    :data:`.noise.MIN_REPEATS` baseline runs read ``ungated``; a ``repeated`` figure against enough runs
    keeps a verdict outside the band only where its value (or ``info["repeats"]``) is significant against
    them (:func:`over_runs`). Without ``name`` the band alone (and the samples) decide: for callers that
    applied the model themselves (``gpuperf compare``'s engine, a family's deterministic entries)."""
    if entry is None:
        return Comparison(Gate.NEW, None, None, None)
    expected = float(entry["value"])
    width = band(expected, entry.get("tolerance", {}))
    delta = (measured - expected) / abs(expected) if expected else None
    problem = (kind_problem(entry.get("unit"), entry.get("better"), unit, better)
               or identity_problem(entry.get("identity"), identity)
               or source_problem(entry.get("source_digest"), source_digest))
    if problem is not None:
        return Comparison(Gate.INCOMPARABLE, expected, width, delta, reason=problem)
    direction = entry.get("better", better)
    if gate_if_stable:
        stable, why = stability(entry)
        if not stable:
            return Comparison(Gate.UNGATED, expected, width, delta, reason="not gated: " + why)
    if math.isnan(measured):
        return Comparison(Gate.REGRESSED, expected, width, delta, reason="the measured value is NaN")
    model = None
    if name is not None:
        info = noise.declared(name, entry, info)
        unit = str(unit if unit is not None else entry.get("unit", ""))
        model = gate_model(name, unit, direction, entry, samples, info)
        held = unjudged(model, name, unit, direction, entry, info)
        if held is not None:
            return Comparison(Gate.UNGATED, expected, width, delta, reason=held)
    cmp = _band_verdict(measured, direction, entry, expected, width, delta, samples, alpha)
    if model == "repeated" and direction in ("lower", "higher"):
        repeats = noise.repeats_of(info)
        new = repeats if repeats is not None and len(repeats) > 1 else [measured]
        cmp = over_runs(cmp, noise.run_values(entry), new, "runs", alpha,
                        advice="a baseline from more runs sharpens the test")
    if name is None:
        return cmp
    tol = entry.get("tolerance", {})
    power = detection(entry, name=name, width=width, ratio_safe=float(tol.get("abs", 0.0)) < width, unit=unit,
                      better=direction, info=info, n_new=None if samples is None else len(samples),
                      alpha=ALPHA if alpha is None else alpha)
    return with_detection(cmp, power)


def with_detection(cmp: Comparison, power: Detection) -> Comparison:
    """The comparison with its detection power; an in-band verdict of a gate that would miss changes up to
    more than :data:`.detection.LOOSE` reads ``loose``, never a plain ``pass``."""
    verdict, reason = cmp.verdict, cmp.reason
    if verdict == Gate.PASS and power.loose:
        verdict = Gate.LOOSE
        reason = "; ".join(x for x in (f"in band, but this gate {power.phrase()}: narrow the band by "
                                       "measuring it better (more runs, more repeats) or declare the figure "
                                       "informational", reason) if x)
    return Comparison(verdict, cmp.expected, cmp.band, cmp.delta_rel, reason=reason, difference=cmp.difference,
                      detect=power)


#: runs that must agree before a metric marked ``gate: if-stable`` is gated (figures that switch between modes
#: from run to run: a CPU device's per-ILP points and one-wave model errors, a power front). Three are not
#: enough: per-kernel figures that agreed over three baseline runs have moved several-fold in the next one.
STABLE_RUNS = 5


def stability(entry: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether a metric whose test marked it ``gate: if-stable`` (a figure that can switch modes between
    unchanged runs, :data:`STABLE_RUNS`) is stable
    enough to gate: its baseline came from at least :data:`STABLE_RUNS` runs (``run_values``) whose
    values span at most half the band *its test* set (``rel``/``abs``). Not the stored band: that one
    was widened by k × the same runs' σ, so judging the runs against it is circular: runs that disagree
    widely pass against the band their own spread made."""
    values = [float(v) for v in entry.get("run_values", [entry["value"]])]
    own = {k: v for k, v in (entry.get("tolerance") or {}).items() if k in ("rel", "abs")}
    width = band(float(entry["value"]), own)
    spread = max(values) - min(values)
    if len(values) < STABLE_RUNS:
        return False, f"{len(values)} run(s): stability across runs unknown (gated from {STABLE_RUNS} agreeing runs)"
    if spread > width / 2:
        return False, (f"runs disagree: {', '.join(f'{v:.4g}' for v in values)} span {spread:.3g} > half the "
                       f"band ({width / 2:.3g})")
    return True, ""


def gate_model(name: str, unit: str, better: str, entry: Mapping[str, Any],
               samples: Sequence[float] | None = None, info: Mapping[str, Any] | None = None) -> str:
    """The noise model the baseline gate judges a metric by (:func:`.noise.model_of`): ``sampled`` where
    the run or the baseline entry carries raw samples (the band and, where both do, their significance:
    a timing's verdict as before), ``deterministic`` for exact figures and deterministic rows; a
    ``bound`` metric keeps its model but is judged against its bound whatever it is."""
    has_samples = bool(samples is not None and len(samples) > 0) or bool(entry.get("samples"))
    return noise.model_of(name, unit, better, has_samples, info)


def unjudged(model: str, name: str, unit: str, better: str, entry: Mapping[str, Any],
             info: Mapping[str, Any] | None = None) -> str | None:
    """Why the baseline gate does not judge a metric of this model against ``entry``, or None: an
    ``informational`` figure never; a ``repeated`` one not before its baseline holds
    :data:`.noise.MIN_REPEATS` runs (one baseline run says nothing of how far the next unchanged run
    lands). A documented bound is always judged."""
    if better == "bound" or model in ("deterministic", "sampled"):
        return None
    if model == "informational":
        return f"informational: {noise.why(name, unit, info)}"
    runs = len(noise.run_values(entry))
    if noise.enough_repeats(runs):
        return None
    return (f"repeated figure: baseline from {runs} run(s), needs {noise.MIN_REPEATS} — re-make it from "
            f"{noise.MIN_REPEATS} runs (gpuperf baseline from-results R1 R2 R3 or init --runs "
            f"{noise.MIN_REPEATS}); {noise.why(name, unit, info)}")


def over_runs(cmp: Comparison, xa: Sequence[float], xb: Sequence[float], unit: str = "runs",
              alpha: float | None = None, advice: str = "give each side 3 or more") -> Comparison:
    """Keep a band verdict outside the band only where a t-test over one value per run (or per repeat)
    also finds the difference (:func:`pytest_gpuperf.timing.difference.run_difference`; one value on a
    side: Student's t with the other side's spread, the prediction test of one new run): the unit of the
    noise is the run, not the sample within it. ``advice``: what the reason suggests when a side holds
    fewer than three values. Verdicts other than regressed/improved/pass pass through."""
    if cmp.verdict not in JUDGED:
        return cmp
    level = ALPHA if alpha is None else alpha
    diff = run_difference(xa, xb, alpha=level, unit=unit)
    if cmp.verdict in Gate.OUT_OF_BAND and not diff.significant:
        hint = ""
        if min(len(xa), len(xb)) < 3:
            hint = f"; with {len(xa)} and {len(xb)} {unit} the test rarely reaches p < {level:g}: {advice}"
        reason = (f"outside the band but not significant over {unit} ({diff.test} t-test on {len(xa)} and {len(xb)} "
                  f"values: p={diff.p_value:.2g}, ratio interval [{diff.ci_low:.4g}, {diff.ci_high:.4g}] holds 1 "
                  f"or p ≥ α){hint}")
        return Comparison(Gate.PASS, cmp.expected, cmp.band, cmp.delta_rel, reason=reason, difference=diff)
    return Comparison(cmp.verdict, cmp.expected, cmp.band, cmp.delta_rel, reason=cmp.reason, difference=diff)


def _band_verdict(measured: float, direction: str, entry: Mapping[str, Any], expected: float, width: float,
                  delta: float | None, samples: Sequence[float] | None, alpha: float | None) -> Comparison:
    """The band verdict by direction, and where both the entry and the run carry raw samples, their
    significance (a verdict outside the band that the samples do not support becomes ``pass``)."""
    tol = entry.get("tolerance", {})
    # ratio-safe unless the test's own absolute band sets the width (a relative floor or measured noise
    # wider than the value must still leave an edge a halved bandwidth crosses)
    low, high = edges(expected, width, direction, ratio_safe=float(tol.get("abs", 0.0)) < width)
    if direction == "bound":
        verdict = Gate.REGRESSED if measured > high else Gate.PASS
    elif direction == "exact":
        verdict = Gate.PASS if low <= measured <= high else Gate.REGRESSED
    elif direction == "lower":
        verdict = Gate.REGRESSED if measured > high else Gate.IMPROVED if measured < low else Gate.PASS
    elif direction == "higher":
        verdict = Gate.REGRESSED if measured < low else Gate.IMPROVED if measured > high else Gate.PASS
    else:
        raise ValueError(f"unknown direction {direction!r}")
    diff = None
    reason = None
    ref = entry.get("samples")
    if direction in ("lower", "higher") and usable(ref) and usable(samples):
        diff = difference(ref, samples) if alpha is None else difference(ref, samples, alpha=alpha)
        if verdict in Gate.OUT_OF_BAND and not diff.significant:
            reason = (f"outside the band but not significant (p={diff.p_value:.2g}, ratio interval "
                      f"[{diff.ci_low:.4g}, {diff.ci_high:.4g}] holds 1 or p ≥ α)")
            verdict = Gate.PASS
    return Comparison(verdict, expected, width, delta, reason=reason, difference=diff)
