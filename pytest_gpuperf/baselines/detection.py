"""Detection power: the smallest change of a metric that its gate would catch.

A ``pass`` says nothing unless it says what it would have caught. For a baseline entry this module
gives the *minimum detectable effect* (MDE): the relative change in the metric's bad direction that the
gate reads ``regressed`` with probability about :data:`POWER`, given everything the verdict rests on:

* the band's bad-side edge (:func:`.verdicts.edges`, ratio-safe where the gate's is);
* the significance test where one applies: Mann–Whitney over raw samples (the median's standard
  error from the entry's own samples, both sides of the same size), or the prediction t-test of one
  new run against the baseline's runs for a ``repeated`` figure (Student's t with n − 1 degrees of
  freedom at the gate's α — three runs need a change of ~37 run-σ);
* a margin of :data:`POWER`'s one-sided z times the figure's run-to-run σ, so a change of the MDE
  lands beyond the edge in about 99 of 100 runs, not half of them.

A deterministic figure has no noise: its MDE is the band edge itself. A ``bound`` entry is judged
against its documented limit (``basis`` says so) and an ``informational`` or not-yet-gated one has no
MDE at all. The classes (:data:`CLASSES`) are what the summary counts and the gating table shows; a
figure whose MDE is over :data:`LOOSE` never reads a plain ``pass`` (``loose``,
:func:`.verdicts.compare`).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping, Sequence

from ..timing.difference import ALPHA, MIN_SAMPLES, exact_rank_test
from ..timing.stats import MAD_TO_SIGMA, mad
from . import noise

#: probability with which a change of the MDE is caught in one run (the margin's one-sided z)
POWER = 0.99
#: an MDE above this reads ``loose`` instead of ``pass``: the band is too wide to call the metric gated
LOOSE = 0.25
#: the classes of detection power, tightest first: (upper MDE, label); beyond the last, ``loose``
CLASSES = ((0.02, "≤2 %"), (0.05, "≤5 %"), (0.10, "≤10 %"), (LOOSE, "≤25 %"))
LOOSE_LABEL = "loose"
#: labels of entries that carry no relative MDE, in the order the summary lists them after the classes:
#: judged against a documented limit, an exact zero (an absolute band), or not gated at all
UNRATED = ("bound", "absolute", "ungated")
#: units whose figures are points of an integer grid, and the grid's step: a band under one step catches any
#: move, however large a share of a small value one step is (an ILP of 1 moving to 2); an entry's tolerance may
#: name its own grid (``step``: a tuner's count of evaluations, one configuration of its kernel's space)
STEPS = {"ilp": 1.0}
#: asymptotic standard error of a sample median in units of σ/√n (normal data: √(π/2))
MEDIAN_SE = math.sqrt(math.pi / 2)


@dataclass(frozen=True)
class Detection:
    """What a gate on one entry would catch: ``mde`` (relative change in the bad direction, None when
    the entry has none) and ``basis`` (what sets it: ``band``, ``samples``, ``runs``, ``bound``,
    ``ungated``)."""

    mde: float | None
    basis: str
    absolute: float | None = None  # a zero-valued entry's band in the metric's unit: any larger change is caught
    step: float | None = None  # the grid a point-valued entry lies on: any move of one step is caught

    @property
    def label(self) -> str:
        """The class this entry counts in (:data:`CLASSES`, :data:`LOOSE_LABEL` or :data:`UNRATED`)."""
        if self.mde is None:
            return self.basis if self.basis in UNRATED else "ungated"
        return label_of(self.mde)

    @property
    def loose(self) -> bool:
        return self.mde is not None and self.mde > LOOSE

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"mde": self.mde, "basis": self.basis, "class": self.label}
        if self.absolute is not None:
            doc["absolute"] = self.absolute
        return doc

    def phrase(self) -> str:
        """``catches ≥ 3.1 % (runs)``: the MDE as the verdict line shows it."""
        if self.step is not None:
            return f"catches any move of one step ({self.step:.3g}) of its grid"
        if self.absolute is not None:
            return f"catches any change > {self.absolute:.3g} (absolute band of a zero value)"
        if self.mde is None:
            return f"no detection power ({self.basis})"
        return f"catches ≥ {100 * self.mde:.3g} % ({self.basis})"


def label_of(mde: float) -> str:
    """The class of a relative MDE (a band of exactly 10 % of a value computes to 0.1 plus a rounding: it is ≤10 %)."""
    for top, label in CLASSES:
        if mde <= top * (1.0 + 1e-9):
            return label
    return LOOSE_LABEL


@lru_cache(maxsize=64)
def _z(p: float) -> float:
    """The standard normal quantile (cached: scipy's distributions take ~1 ms a call and a gate asks for the same
    few quantiles for every metric)."""
    from scipy import stats as sps  # noqa: PLC0415 - 0.4 s to import; every pytest process loads this module

    return float(sps.norm.ppf(p))


@lru_cache(maxsize=256)
def _t(p: float, df: int) -> float:
    """Student's t quantile (cached as :func:`_z`)."""
    from scipy import stats as sps  # noqa: PLC0415 - see _z

    return float(sps.t.ppf(p, df))


def edge_fraction(expected: float, width: float, direction: str, ratio_safe: bool) -> float:
    """The relative distance from ``expected`` to the band's bad-side edge (:func:`.verdicts.edges`: only a
    higher-is-better figure's low edge is a ratio; ``exact`` is linear both ways)."""
    if expected == 0:
        return math.inf if width > 0 else 0.0
    w = width / abs(expected)
    if direction == "higher" and ratio_safe and expected > 0:
        return w / (1.0 + w)
    return w


def min_p_value(n_a: int, n_b: int, ties: bool = True, exact: bool = True) -> float:
    """The smallest two-sided Mann–Whitney p-value two sides of ``n_a`` and ``n_b`` samples can reach (no
    overlap at all) under the gate's test (:func:`pytest_gpuperf.timing.difference.rank_p_value`): the exact
    permutation distribution where the sides have few arrangements (ties or not: 2 / C(n_a + n_b, n_b)),
    scipy's exact distribution where a side is small and no value repeats, else the normal approximation with
    continuity correction — under which five timer-quantized samples against three runs' fifteen stayed above
    α = 0.001 (the reason the exact test is taken there). ``exact=False``: without the exact permutation test
    (scipy's ``method='auto'`` alone, the gate's test before it), to find the gates it gave power."""
    if (exact and exact_rank_test(n_a, n_b)) or (not ties and min(n_a, n_b) <= 8):
        return min(1.0, 2.0 / math.comb(n_a + n_b, n_b))
    mean = n_a * n_b / 2.0
    sd = math.sqrt(n_a * n_b * (n_a + n_b + 1) / 12.0)
    z = (mean - 0.5) / sd
    return 2.0 * (1.0 - 0.5 * (1.0 + math.erf(z / math.sqrt(2.0))))


def samples_per_run(entry: Mapping[str, Any]) -> int:
    """How many samples a run of an entry's metric takes: its samples over the runs they came from."""
    n = len(entry.get("samples") or ())
    return max(1, round(n / max(1, int(entry.get("runs", 1) or 1))))


def sample_sigma(samples: Sequence[float] | None) -> float | None:
    """Robust relative σ of one run's raw samples (MAD × 1.4826 / median), None without enough of them."""
    if samples is None or len(samples) < MIN_SAMPLES:
        return None
    xs = [float(x) for x in samples if isinstance(x, (int, float)) and math.isfinite(float(x))]
    if len(xs) < MIN_SAMPLES:
        return None
    med = statistics.median(xs)
    if med == 0:
        return None
    return MAD_TO_SIGMA * mad(xs) / abs(med)


@lru_cache(maxsize=4096)
def _stdev(values: tuple[float, ...]) -> float:
    """``statistics.stdev`` (exact rational sums, ~0.1 ms a call), cached: a gate or a script judging many runs
    against one baseline asks for the same entry's runs' spread once per run."""
    return statistics.stdev(values)


def run_sigma(entry: Mapping[str, Any]) -> tuple[float | None, int]:
    """Relative run-to-run σ of an entry and the run count behind it: the standard deviation of its
    ``run_values`` over |mean| (two runs or more), else the measured ``spread`` of its tolerance."""
    values = noise.run_values(entry)
    mean = statistics.fmean(values) if values else 0.0
    if len(values) >= 2 and mean != 0:
        return _stdev(tuple(values)) / abs(mean), len(values)
    spread = (entry.get("tolerance") or {}).get("spread")
    value = float(entry.get("value", 0.0) or 0.0)
    if isinstance(spread, (int, float)) and value != 0:
        return float(spread) / abs(value), max(1, len(values))
    return None, max(1, len(values))


def detection(entry: Mapping[str, Any] | None, *, name: str, width: float, ratio_safe: bool,
              unit: str | None = None, better: str | None = None, info: Mapping[str, Any] | None = None,
              n_new: int | None = None, alpha: float = ALPHA) -> Detection:
    """The detection power of the gate on ``entry`` for metric ``name`` (see the module's docstring).

    ``width``/``ratio_safe``: the band's half-width as the verdict computes it (:func:`.verdicts.band`) and
    whether its low edge is a ratio; ``n_new``: the new run's sample count (the entry's own count when absent)."""
    if entry is None:
        return Detection(None, "ungated")
    direction = str(entry.get("better", better or "lower"))
    if direction == "bound":
        return Detection(None, "bound")
    unit = str(unit if unit is not None else entry.get("unit", ""))
    info = noise.declared(name, entry, info)
    expected = float(entry["value"])
    ref_samples = entry.get("samples")
    has_samples = bool(ref_samples)
    model = noise.model_of(name, unit, direction, has_samples, info)
    if model == "informational":
        return Detection(None, "ungated")
    if expected == 0:  # a relative change of zero means nothing: any change beyond the absolute band is caught
        return Detection(None, "absolute", absolute=width)
    # a point of a grid (the unit's, or the step its band was set from): any move to the next point is caught
    step = STEPS.get(unit) or (entry.get("tolerance") or {}).get("step")
    if step is not None and width < float(step):
        return Detection(None, "absolute", absolute=width, step=float(step))
    edge = edge_fraction(expected, width, direction, ratio_safe)
    if model == "deterministic" or direction == "exact":
        return Detection(edge, "band")
    margin = _z(POWER)
    sigma_run, runs = run_sigma(entry)
    if model == "sampled":
        s = sample_sigma(ref_samples)
        n_a = len(ref_samples) if ref_samples else 0
        n_b = n_new or samples_per_run(entry)
        if s is None or n_b < MIN_SAMPLES:  # no significance test: the band alone decides
            return Detection(edge + margin * (sigma_run or 0.0), "band")
        ties = len(set(map(float, ref_samples))) < n_a
        if min_p_value(n_a, n_b, ties) >= alpha:  # even two sample sets that do not overlap at all are not significant
            return Detection(math.inf, "samples")
        se = MEDIAN_SE * s * math.sqrt(1.0 / n_a + 1.0 / n_b)
        sig = _z(1.0 - alpha / 2) * se
        noise_run = max(sigma_run or 0.0, MEDIAN_SE * s / math.sqrt(n_b))
        basis = "samples" if sig > edge else "band"
        return Detection(max(edge, sig) + margin * noise_run, basis)
    # repeated: the prediction t-test of one new run against the baseline's runs
    if not noise.enough_repeats(runs) or sigma_run is None:
        return Detection(None, "ungated")
    sig = _t(1.0 - alpha / 2, runs - 1) * sigma_run * math.sqrt(1.0 + 1.0 / runs)
    basis = "runs" if sig > edge else "band"
    return Detection(max(edge, sig) + margin * sigma_run, basis)


#: the families of hardware figures a driver or card change moves (the first part of a metric's name)
HARDWARE = ("launch", "memory", "latency", "throughput", "clock", "power")
#: what a hardware figure must gate within: 5 % …
HARDWARE_MDE = 0.05
#: … and one the device's own timer measured (:func:`device_timed`) 2 %
DEVICE_TIMED_MDE = 0.02


def hardware(name: str) -> bool:
    """Whether a metric is a hardware figure (:data:`HARDWARE`): launch, memory, latency, throughput, clock,
    power — not the studies built on them (``power.tuning``, a model over kernels, stays out) nor a fit's
    goodness (``….r2``: how well a model describes the figures, not a figure of the card)."""
    head = name.split(".")[0]
    return head in HARDWARE and not name.startswith("power.tuning.") and not name.endswith(".r2")


def device_timed(name: str) -> bool:
    """Whether a hardware figure is read off the device's own timer (events or the SM clock): every one but
    the power sensor's (``power.*``), the host clock's (``….host_us``) and a size read off a grid of timed
    footprints (``….size.bytes``, gated to one step of its grid)."""
    return (hardware(name) and not name.startswith("power.") and not name.endswith("host_us")
            and not name.endswith(".size.bytes"))


def target(name: str) -> float | None:
    """The smallest change a hardware figure's gate must catch (:data:`DEVICE_TIMED_MDE` where it is device-timed,
    else :data:`HARDWARE_MDE`); None for any other figure."""
    if not hardware(name):
        return None
    return DEVICE_TIMED_MDE if device_timed(name) else HARDWARE_MDE


def tally(detections: Sequence[Detection]) -> dict[str, int]:
    """Counts per class, tightest first, then ``loose`` and the unrated (only the classes present)."""
    order = [label for _, label in CLASSES] + [LOOSE_LABEL, *UNRATED]
    counts = {label: 0 for label in order}
    for d in detections:
        counts[d.label] = counts.get(d.label, 0) + 1
    return {k: v for k, v in counts.items() if v}
