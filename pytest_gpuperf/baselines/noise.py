"""The noise model of every metric class: how a figure varies between unchanged runs, and so how a
verdict on it may be reached. Which model a metric follows is the catalog's (each row of
:data:`.catalog.FAMILIES` names its own, beside its band and identity keys); this module holds what a model
means, read by the baseline gate and by ``gpuperf compare``.

* ``deterministic`` — the same build on the same inputs gives the same figure (ulp errors of seeded or
  exhaustive inputs, correct-rounding counts, summation errors of seeded data, sizes and counts):
  compared exactly (within the entry's own tolerance), and, on CPU devices, shared by every CPU
  model of one PoCL and compiler (a *family* baseline, :func:`family_entries`).
* ``sampled`` — a timing with its raw repeats (``stats.samples``): leaving the band counts only if
  the difference is also significant against both sides' samples.
* ``repeated`` — a figure derived from several timings (a tuner's pick and its quality, a model's
  error, a precision speedup or chosen mix, watts): a run carries no samples of it, so a verdict needs
  a spread on both sides — its values over ≥ :data:`MIN_REPEATS` runs (or repeats within a run).
  With fewer on a side, ``gpuperf compare`` reads it ``informational`` instead of deciding by the
  threshold alone. The baseline gate needs them on the baseline's side (``run_values``, or the entry
  reads ``ungated``) and tests the new run's value (or its repeats) against them — the prediction test of
  one new run against several — so leaving the band counts only where that test finds the change too
  (:func:`pytest_gpuperf.baselines.verdicts.compare`).
* ``informational`` — recorded and shown, never gated; the row of the table says why.

A documented bound (``better == "bound"``) and a NaN are judged whatever the model: an input past a
documented bound is a finding, not noise.

A fleet judges a card against its peers rather than a baseline: that is the cohort model, the spread between
the cards of one cohort as the noise (:mod:`.cohort`).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from . import catalog
from .catalog import MODELS, Noise

#: repeats (runs on a side, or repeats within a run) a ``repeated`` figure needs before it is judged
MIN_REPEATS = 3


def noise_of(name: str, unit: str) -> Noise:
    """How a metric's row of the catalog says it varies (:func:`.catalog.row`; the last row catches every name)."""
    noise = catalog.row(name, unit).noise
    assert noise is not None, "every row of catalog.FAMILIES names its noise model"
    return noise


def model_of(name: str, unit: str, better: str = "lower", samples: bool = False,
             info: Mapping[str, Any] | None = None) -> str:
    """The noise model of one metric: ``exact``/``bound`` directions and deterministic rows are
    ``deterministic``; an ``informational`` row stays so; a metric with raw samples is ``sampled``; a test may declare
    ``info['noise'] = 'informational'`` (with ``info['why']``) for a figure it records but must not gate."""
    declared = (info or {}).get("noise")
    if declared in MODELS:
        return str(declared)
    row = noise_of(name, unit)
    if row.model == "deterministic" or better == "exact":
        return "deterministic"
    if row.model == "informational":  # the catalog's row says the figure cannot be gated, samples or not
        return "informational"
    if samples:
        return "sampled"
    return row.model


def declared(name: str, entry: Mapping[str, Any] | None,
             info: Mapping[str, Any] | None = None) -> Mapping[str, Any] | None:
    """The ``info`` a metric's model is read with: the run's, unless its baseline entry was measured between
    machines and found too noisy to gate (:func:`.catalog.measured_informational`): then it is declared
    ``informational`` with that measured reason, whatever the run says."""
    why = None if entry is None else catalog.measured_informational(name, entry)
    if why is None:
        return info
    return {**(info or {}), "noise": "informational", "why": why}


def is_deterministic(entry: Mapping[str, Any], name: str) -> bool:
    """Whether a baseline entry (or a results metric) is a deterministic figure."""
    return model_of(name, str(entry.get("unit", "")), str(entry.get("better", "lower")),
                    bool(entry.get("samples") or (entry.get("stats") or {}).get("samples")),
                    entry.get("info") if isinstance(entry.get("info"), Mapping) else None) == "deterministic"


def family_entries(metrics: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The entries of a CPU device's baseline section that every CPU model of its family shares: the
    deterministic ones (timing figures stay with the CPU model that measured them)."""
    return {n: dict(e) for n, e in metrics.items() if is_deterministic(e, n)}


def enough_repeats(n: int) -> bool:
    """Whether ``n`` values of a ``repeated`` figure (one per run, or a run's own repeats) carry the spread a
    verdict may rest on (:data:`MIN_REPEATS`): the one count both ``gpuperf compare`` and the baseline
    gate hold such a figure to."""
    return n >= MIN_REPEATS


def why(name: str, unit: str, info: Mapping[str, Any] | None = None) -> str:
    """Why a metric follows its model: the test's own ``info["why"]`` where it declared the model
    (``info["noise"]``), else the table's row."""
    declared = (info or {}).get("why") if (info or {}).get("noise") in MODELS else None
    return str(declared or noise_of(name, unit).why)


def repeats_of(info: Any) -> list[float] | None:
    """``info["repeats"]``: a figure's within-run repeat values, when it is a non-empty list of finite
    numbers (anything else is no repeats)."""
    xs = info.get("repeats") if isinstance(info, Mapping) else None
    if not isinstance(xs, list) or not xs:
        return None
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in xs):
        return None
    return [float(x) for x in xs]


#: the key under which a figure derived from several timings carries its own standard error in one run
#: (a sampled model's per-kernel error: the slope's amplification times its sample pairs' scatter)
OWN_SE = "error_se"


def own_se(metric: Mapping[str, Any]) -> float | None:
    """The standard error a derived figure carries for itself in one run (``info[OWN_SE]``), or None:
    an estimate of how far the next unchanged run may move it, so a baseline's run-to-run σ is never
    taken below it."""
    info = metric.get("info")
    se = info.get(OWN_SE) if isinstance(info, Mapping) else None
    if isinstance(se, (int, float)) and not isinstance(se, bool) and math.isfinite(se) and se >= 0:
        return float(se)
    return None


def run_values(entry: Mapping[str, Any]) -> list[float]:
    """A baseline entry's value per baseline run (``run_values``: written by ``gpuperf baseline
    from-results``/``init`` from two runs or more), the finite ones; an entry without them stands for
    one run."""
    xs = entry.get("run_values")
    if not isinstance(xs, list) or not xs:
        return [float(entry["value"])] if isinstance(entry.get("value"), (int, float)) else []
    return [float(x) for x in xs
            if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(float(x))]
