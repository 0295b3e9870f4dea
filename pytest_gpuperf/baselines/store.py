"""Baseline files: ``<dir>/<device.key>.json``, one section per backend, reviewed like code.

    {"schema": "pytest-gpuperf-baseline/1",
     "device": {"key": "nvidia-h100-80gb-hbm3", "name": "NVIDIA H100 80GB HBM3"},
     "backends": {"cuda": {"provenance": {driver, runtime, toolkit, date, commit},
                           "metrics": {"memory.copy.bandwidth.64MiB":
                                       {"value": 2900.0, "unit": "GB/s", "better": "higher",
                                        "tolerance": {"rel": 0.03, "k": 6, "spread": 4.1},
                                        "test": "suites/test_memory.py::test_copy_bandwidth",
                                        "provenance": {...}, "citation": "..."}}}}}

Loading validates everything and raises :class:`BaselineFileError` naming the file and the
problem; a malformed file is never silently treated as empty and never overwritten.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .. import BASELINE_SCHEMA
from ..errors import BaselineFileError
from ..util.atomic import atomic_write_json
from .compare import DIRECTIONS

TOLERANCE_KEYS = {"rel", "abs", "k", "spread"}


@dataclass
class BaselineFile:
    """A parsed baseline file; ``data`` keeps unknown keys so rewriting preserves reviewers' notes."""

    path: Path
    data: dict[str, Any] = field(default_factory=dict)

    def section(self, backend: str) -> dict[str, Any]:
        return self.data.get("backends", {}).get(backend, {"metrics": {}, "provenance": {}})

    def metrics(self, backend: str) -> dict[str, dict[str, Any]]:
        return self.section(backend).get("metrics", {})

    def provenance(self, backend: str) -> dict[str, Any]:
        return self.section(backend).get("provenance", {})


def path_for(directory: str | Path, key: str) -> Path:
    return Path(directory) / f"{key}.json"


def load(directory: str | Path, key: str) -> BaselineFile:
    """Load ``<directory>/<key>.json``; an absent file is an empty baseline, a bad one an error."""
    path = path_for(directory, key)
    if not path.exists():
        return BaselineFile(path, {"schema": BASELINE_SCHEMA, "device": {"key": key}, "backends": {}})
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineFileError(str(path), f"cannot be read ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise BaselineFileError(str(path), f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    validate(str(path), data)
    return BaselineFile(path, data)


def validate(path: str, data: Any) -> None:
    """Check the schema; every problem names the metric and field concerned."""
    if not isinstance(data, dict):
        raise BaselineFileError(path, "top level must be a JSON object")
    if data.get("schema") != BASELINE_SCHEMA:
        raise BaselineFileError(path, f"'schema' must be {BASELINE_SCHEMA!r}, found {data.get('schema')!r}")
    backends = data.get("backends")
    if not isinstance(backends, dict):
        raise BaselineFileError(path, "'backends' must be an object mapping backend name to a section")
    for backend, section in backends.items():
        if not isinstance(section, dict) or not isinstance(section.get("metrics", {}), dict):
            raise BaselineFileError(path, f"backends.{backend} must be an object with a 'metrics' object")
        for name, entry in section.get("metrics", {}).items():
            _validate_entry(path, f"backends.{backend}.metrics[{name!r}]", entry)


def _validate_entry(path: str, where: str, entry: Any) -> None:
    if not isinstance(entry, dict):
        raise BaselineFileError(path, f"{where} must be an object")
    value = entry.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BaselineFileError(path, f"{where}.value must be a finite number, found {value!r}")
    if entry.get("better") not in DIRECTIONS:
        raise BaselineFileError(path, f"{where}.better must be one of {DIRECTIONS}, found {entry.get('better')!r}")
    tol = entry.get("tolerance", {})
    if not isinstance(tol, dict):
        raise BaselineFileError(path, f"{where}.tolerance must be an object")
    unknown = set(tol) - TOLERANCE_KEYS
    if unknown:
        raise BaselineFileError(path, f"{where}.tolerance has unknown keys {sorted(unknown)}; use {sorted(TOLERANCE_KEYS)}")
    for k, v in tol.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or not math.isfinite(v):
            raise BaselineFileError(path, f"{where}.tolerance.{k} must be a non-negative number, found {v!r}")
    if ("k" in tol) != ("spread" in tol):
        raise BaselineFileError(path, f"{where}.tolerance needs both 'k' and 'spread' or neither")
    if not isinstance(entry.get("identity", {}), dict):
        raise BaselineFileError(path, f"{where}.identity must be an object of the options that shaped the value")
    rv = entry.get("run_values", [])
    if not isinstance(rv, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in rv):
        raise BaselineFileError(path, f"{where}.run_values must be a list of numbers (one per baseline run)")
    xs = entry.get("samples")
    if xs is not None and (not isinstance(xs, list) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in xs)):
        raise BaselineFileError(path, f"{where}.samples must be a list of finite numbers")


def noise_tolerance(value: float, spread: float, k: float, floor_rel: float) -> dict[str, float]:
    """Tolerance derived from measured noise: k × robust σ, never tighter than ``floor_rel`` × value."""
    tol: dict[str, float] = {"k": float(k), "spread": float(spread)}
    if floor_rel > 0:
        tol["rel"] = float(floor_rel)
    return tol


#: raw samples kept per baseline entry: more are summarised by this many evenly spaced quantiles,
#: which keeps the distribution (for the significance test) without bloating reviewed files
BASELINE_SAMPLES = 64


def sample_summary(samples: Sequence[float]) -> list[float]:
    """At most :data:`BASELINE_SAMPLES` values that stand for ``samples`` (quantiles if more)."""
    xs = np.sort(np.asarray(samples, dtype=np.float64))
    if xs.size > BASELINE_SAMPLES:
        xs = np.quantile(xs, (np.arange(BASELINE_SAMPLES) + 0.5) / BASELINE_SAMPLES)
    return [float(f"{x:.7g}") for x in xs]


def make_entry(*, value: float, worst: float, unit: str, better: str, test: str, info: Mapping[str, Any],
               tolerance: Mapping[str, float] | None, spread: float, k: float, floor_rel: float,
               provenance: Mapping[str, Any], between: float = 0.0, samples: Sequence[float] | None = None,
               identity: Mapping[str, Any] | None = None, run_values: Sequence[float] | None = None,
               resolution: float = 0.0) -> dict[str, Any]:
    """One baseline entry from a measured metric — the single rule both a pytest run
    (``--gpuperf-update-baselines``) and ``gpuperf-baseline from-results`` write by.

    ``value``: the figure (median over runs); ``worst``: the largest seen (what a ``bound`` metric
    without a documented limit is held to); ``spread``: robust σ of the noise; ``between``: the
    run-to-run σ, which widens even a tolerance the test set itself — a band that two runs already
    disagree by is a flaky gate, not a strict one. ``samples``: the raw repeats of every run pooled
    (a lower/higher entry keeps a summary, for the significance test); ``identity``: the options that
    shaped the value, which a later run must share to be compared."""
    entry: dict[str, Any] = {"value": float(value), "unit": unit, "better": better, "test": test,
                             "provenance": dict(provenance)}
    if better == "bound":
        if "bound" in info:
            entry["value"], entry["measured"] = float(info["bound"]), float(worst)
        else:
            entry["value"] = float(worst)
    if tolerance is not None:
        entry["tolerance"] = dict(tolerance)
        if better in ("lower", "higher") and between > 0:
            entry["tolerance"].update(k=float(k), spread=max(between, entry["tolerance"].get("spread", 0.0)))
    elif better in ("lower", "higher"):
        entry["tolerance"] = noise_tolerance(value, spread, k, floor_rel)
        if resolution > 0:  # never narrower than the timer can resolve (classes.resolution_floor)
            entry["tolerance"]["abs"] = max(float(resolution), float(entry["tolerance"].get("abs", 0.0)))
    else:
        entry["tolerance"] = {}
    for key in ("citation", "unit_note"):
        if key in info:
            entry[key] = info[key]
    entry["identity"] = dict(identity or {})
    if better in ("lower", "higher") and samples is not None and len(samples) > 0:
        entry["samples"] = sample_summary(samples)
    if run_values is not None and len(run_values) > 1:
        entry["run_values"] = [float(f"{v:.7g}") for v in run_values]  # what stability() judges
    return entry


#: runs that must agree before a metric marked ``gate: if-stable`` is gated
STABLE_RUNS = 3


def stability(entry: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether a metric whose test marked it ``gate: if-stable`` (a per-kernel model error: the mean
    over kernels is the figure, one kernel's error can swing between unchanged runs) is stable
    enough to gate: its baseline came from at least :data:`STABLE_RUNS` runs (``run_values``) whose
    values span at most half its band."""
    from .compare import band

    values = [float(v) for v in entry.get("run_values", [entry["value"]])]
    width = band(float(entry["value"]), entry.get("tolerance", {}))
    spread = max(values) - min(values)
    if len(values) < STABLE_RUNS:
        return False, f"{len(values)} run(s): stability across runs unknown (gated from {STABLE_RUNS} agreeing runs)"
    if spread > width / 2:
        return False, (f"runs disagree: {', '.join(f'{v:.4g}' for v in values)} span {spread:.3g} > half the "
                       f"band ({width / 2:.3g})")
    return True, ""


def update(baseline: BaselineFile, backend: str, device: Mapping[str, Any], provenance: Mapping[str, Any],
           entries: Mapping[str, Mapping[str, Any]]) -> None:
    """Merge ``entries`` (name → entry) into the backend section and write the file atomically.

    Entries not named are kept untouched; so are unknown keys of updated entries (notes, citations)."""
    data = baseline.data
    data.setdefault("schema", BASELINE_SCHEMA)
    data.setdefault("device", {}).update({"key": device["key"], "name": device["name"]})
    section = data.setdefault("backends", {}).setdefault(backend, {})
    section["provenance"] = dict(provenance)
    metrics = section.setdefault("metrics", {})
    for name, entry in entries.items():
        merged = dict(metrics.get(name, {}))
        for stale in ("samples", "runs", "measured", "run_values"):  # belong to the measurement being replaced
            merged.pop(stale, None)
        merged.update(entry)
        metrics[name] = merged
    section["metrics"] = dict(sorted(metrics.items()))
    validate(str(baseline.path), data)
    atomic_write_json(baseline.path, data)
