"""Baseline files: ``<dir>/<device.key>.json``, one section per backend, reviewed like code.

Code works on the expanded document (what :attr:`BaselineFile.data` holds)::

    {"schema": "pytest-gpuperf-baseline/1",
     "device": {"key": "nvidia-h100-80gb-hbm3", "name": "NVIDIA H100 80GB HBM3", "class": "gpu"},
     "backends": {"cuda": {"provenance": {driver, runtime, toolkit, date, commit},
                           "metrics": {"memory.copy.bandwidth.64MiB":
                                       {"value": 2900.0, "unit": "GB/s", "better": "higher",
                                        "tolerance": {"rel": 0.03, "k": 6, "spread": 4.1},
                                        "test": "suites/test_memory.py::test_copy_bandwidth",
                                        "provenance": {...}, "citation": "..."}}}}}

The device header names the device and its class (``gpu`` or ``cpu``: which floors and catalog bands its
entries took, :func:`device_class`), recorded when the file is made; older files lack the class.

Files are written in the lean form (:mod:`.fileformat`, schema ``/2``: one provenance header per section,
sample digests, one line per metric); both forms are read. Loading validates everything and raises
:class:`BaselineFileError` naming the file and the problem; a malformed file is never silently treated
as empty and never overwritten.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from filelock import FileLock

from .. import BASELINE_SCHEMA
from ..devices.backend_registry import backends
from ..errors import BaselineFileError
from ..paths import safe_name
from ..util import jsonio
from ..util.atomic import atomic_write_text, remove_stale_temps
from ..util.locks import file_lock
from . import fileformat, problems

#: how long an update waits for another process's update of the same file (they take milliseconds)
LOCK_TIMEOUT_S = 120.0


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
    """``<directory>/<key>.json``: the baseline file of a device key (checked by :func:`~pytest_gpuperf.paths.safe_name`)."""
    return Path(directory) / f"{safe_name(key)}.json"


def load(directory: str | Path, key: str) -> BaselineFile:
    """Load ``<directory>/<key>.json`` (:func:`load_file`)."""
    return load_file(path_for(directory, key), key)


def load_file(path: str | Path, key: str | None = None) -> BaselineFile:
    """Load the baseline file ``path``; where nothing is there (not even a link) it is an empty baseline of
    ``key``, a bad one an error that lists every problem of the file (:mod:`.problems`), duplicated keys
    included. Only a regular file is read (:func:`~pytest_gpuperf.util.jsonio.read_regular`): a FIFO, a
    device or a link to nothing is an error, never an empty baseline nor a read that does not end."""
    path = Path(path)
    if not os.path.lexists(path):
        return BaselineFile(path, {"schema": BASELINE_SCHEMA, "device": {"key": key or path.stem}, "backends": {}})
    try:
        doc, duplicates = problems.parse(jsonio.read_regular(path).decode("utf-8"))
    except FileNotFoundError as exc:
        raise BaselineFileError(str(path), f"is a link to nothing ({exc.filename or os.readlink(path)} is not there); "
                                "point it at a baseline file or remove it") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineFileError(str(path), f"cannot be read ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise BaselineFileError(str(path), f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    data, lean_problems = fileformat.expand(doc)
    _raise_if(str(path), duplicates + lean_problems + problems.problems(data))
    return BaselineFile(path, data)


def validate(path: str, data: Any) -> None:
    """Raise :class:`BaselineFileError` listing every problem; each names the metric and field concerned."""
    _raise_if(path, problems.problems(data))


#: problems shown in one error message; the rest are counted (``gpuperf baseline check`` lists them all)
SHOWN_PROBLEMS = 10


def _raise_if(path: str, found: list[str]) -> None:
    if not found:
        return
    text = "; ".join(found[:SHOWN_PROBLEMS])
    if len(found) > SHOWN_PROBLEMS:
        text += f"; and {len(found) - SHOWN_PROBLEMS} more (gpuperf baseline check {path} lists them all)"
    error = BaselineFileError(path, text)
    error.problems = list(found)
    raise error


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
               resolution: float = 0.0, source_digest: str | None = None) -> dict[str, Any]:
    """One baseline entry from a measured metric — the single rule both a pytest run
    (``--gpuperf-update-baselines``) and ``gpuperf baseline from-results`` write by.

    ``value``: the figure (median over runs); ``worst``: the largest seen (what a ``bound`` metric
    without a documented limit is held to); ``spread``: robust σ of the noise; ``between``: the
    run-to-run σ, which widens even a tolerance the test set itself — a band that two runs already
    disagree by is a flaky gate, not a strict one. ``samples``: the raw repeats of every run pooled
    (a lower/higher entry keeps a summary, for the significance test); ``identity``: the options that
    shaped the value, which a later run must share to be compared; ``source_digest``: the digest of the kernels
    its test compiled (``util.source_digest``; None: none, or runs made before digests were recorded), which a
    later run that carries one must share to be compared."""
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
    # gate: "if-stable" (the table and reviewers read it); differenced: a figure of one's own that is a difference
    # of two timings, whose stored samples may then be negative (validity.DIFFERENCED)
    for key in ("citation", "unit_note", "gate", "differenced"):
        if key in info:
            entry[key] = info[key]
    entry["identity"] = dict(identity or {})
    if source_digest is not None:
        entry["source_digest"] = str(source_digest)
    if better in ("lower", "higher") and samples is not None and len(samples) > 0:
        entry["samples"] = sample_summary(samples)
    if run_values is not None and len(run_values) > 1:
        entry["run_values"] = [float(f"{v:.7g}") for v in run_values]  # what stability() judges
    return entry


def lock_for(path: Path) -> FileLock:
    """The lock every writer of one baseline file holds around its read-modify-write (in the folder's
    ``.gpuperf-locks/``, which ignores itself: :mod:`pytest_gpuperf.util.locks`)."""
    return file_lock(path, timeout=LOCK_TIMEOUT_S)


def update(baseline: BaselineFile, backend: str, device: Mapping[str, Any], provenance: Mapping[str, Any],
           entries: Mapping[str, Mapping[str, Any]]) -> None:
    """Merge ``entries`` (name → entry) into the backend section and write the file atomically.

    Entries not named are kept untouched; so are unknown keys of updated entries (notes, citations), and the
    section's provenance unless the update re-makes every entry the section holds (a CPU family's
    ``cpu_dependent`` list is merged: the entries each update left out, less those it brings in).
    The merge happens under the file's lock on the file as it is *now*, not as this process loaded it
    at start-up: two runs updating one file at once (``-k copy`` and ``-k launch``) each keep the
    other's entries instead of the last writer silently dropping them. Temporary files that killed
    writers left behind are removed under the same lock (no live writer can own them then). A user's
    first baseline creates its folder. ``device``: its key, name and, where the caller knows it, ``class``
    (:func:`device_class`), which must not contradict the class the file records."""
    baseline.path.parent.mkdir(parents=True, exist_ok=True)
    with lock_for(baseline.path):
        remove_stale_temps(baseline.path)
        baseline.data = load_file(baseline.path).data
        data = baseline.data
        data.setdefault("schema", BASELINE_SCHEMA)
        header = data.setdefault("device", {})
        if "class" in device and header.get("class", device["class"]) != device["class"]:
            raise BaselineFileError(str(baseline.path), f"records device class {header['class']!r}, and entries of a "
                                    f"{device['class']} device are being written into it: write them to another "
                                    f"baseline folder, or correct the file's device class if it is wrong")
        header.update({k: device[k] for k in ("key", "name", "class") if k in device})
        section = data.setdefault("backends", {}).setdefault(backend, {})
        metrics = section.setdefault("metrics", {})
        # the section's provenance is the runs the section was made from: a partial update (a few entries re-made,
        # ``--identity-changed``, ``--match``, ``-k``) leaves it, its entries carrying their own runs' provenance
        if "provenance" not in section or set(metrics) <= set(entries):
            section["provenance"] = dict(provenance)
        elif "cpu_dependent" in provenance or "cpu_dependent" in section["provenance"]:
            # a CPU family's figures another CPU model did not reproduce, whichever update found them: kept beside
            # the section's runs, less any that an update now brings into the family
            kept = {n: why for n, why in section["provenance"].get("cpu_dependent", {}).items() if n not in entries}
            kept.update(provenance.get("cpu_dependent", {}))
            section["provenance"] = {k: v for k, v in section["provenance"].items() if k != "cpu_dependent"}
            if kept:
                section["provenance"]["cpu_dependent"] = dict(sorted(kept.items()))
        for name, entry in entries.items():
            merged = dict(metrics.get(name, {}))
            # the measurement replaced (an entry re-made from runs without a kernel digest keeps no old one)
            for stale in ("samples", "runs", "measured", "run_values", "differenced", "source_digest"):
                merged.pop(stale, None)
            merged.update(entry)
            metrics[name] = merged
        section["metrics"] = dict(sorted(metrics.items()))
        validate(str(baseline.path), data)
        write(baseline.path, data)


def write(path: Path, data: Mapping[str, Any]) -> None:
    """Write an expanded document to ``path`` in the lean form, atomically (callers hold its lock)."""
    atomic_write_text(path, fileformat.dumps(data))


#: the device classes a baseline file records (``device.class``)
DEVICE_CLASSES = ("gpu", "cpu")

#: key prefixes of PoCL's CPU drivers (a PoCL key alone proves nothing: PoCL also drives NVIDIA GPUs)
POCL_CPU_KEYS = ("pocl-pthread-", "pocl-cpu-", "pocl-basic-")


def device_class(is_cpu: bool) -> str:
    """The device class a baseline file records for a device (``device.class``)."""
    return "cpu" if is_cpu else "gpu"


def device_header(device: Mapping[str, Any]) -> dict[str, Any]:
    """A baseline file's device header from a results document's ``device`` section: key, name and class (where
    the results say whether the device is a CPU; older results do not, and the class is then left out)."""
    header = {"key": device["key"], "name": device["name"]}
    if isinstance(device.get("is_cpu"), bool):
        header["class"] = device_class(device["is_cpu"])
    return header


def recorded_class(data: Mapping[str, Any]) -> str | None:
    """The device class the file's device header records, or None (a file made before it was recorded)."""
    device = data.get("device")
    found = device.get("class") if isinstance(device, Mapping) else None
    return str(found) if found is not None else None


def proven_class(data: Mapping[str, Any]) -> tuple[str, str] | None:
    """(class, how) where a file that records no class proves one — a CUDA section (CUDA devices are GPUs),
    the key of a PoCL CPU driver's device or a CPU family's name — else None."""
    device = data.get("device") if isinstance(data.get("device"), Mapping) else {}
    key, name = str(device.get("key") or ""), str(device.get("name") or "")
    sections = data.get("backends") or {}
    for b in backends():
        if b.gpus_only and b.name in sections:
            return "gpu", f"it has a {b.name} section, and {b.label} devices are GPUs"
    if key.startswith(POCL_CPU_KEYS):
        return "cpu", f"its device key {key!r} names a PoCL CPU driver"
    if name.startswith("CPU family "):
        return "cpu", f"it is a CPU family file ({name!r})"
    return None


def known_class(data: Mapping[str, Any]) -> str | None:
    """The device class a file records or, failing that, proves (:func:`proven_class`); None where neither."""
    proven = proven_class(data)
    return recorded_class(data) or (proven[0] if proven else None)


@dataclass
class Migration:
    """What :func:`migrate` did to one file: whether it changed, the entries dropped as retired, the bands
    re-applied (``backend: name: old → new``) and the entries whose catalog band could not be computed
    (``backend: name: why``)."""

    changed: bool = False
    dropped: list[str] = field(default_factory=list)
    rebanded: list[str] = field(default_factory=list)
    unbanded: list[str] = field(default_factory=list)


#: ``band(name, section metrics)``: the band the catalog gives an entry (None: none fixed); ValueError where it
#: cannot be computed from the section (:func:`.catalog.baseline_band`)
Band = Callable[[str, Mapping[str, Mapping[str, Any]]], Mapping[str, float] | None]


def migrate(path: Path, retired: Callable[[str], Any] | None = None, band: Band | None = None,
            device_class: str | None = None) -> Migration:
    """Rewrite one baseline file in the lean form under its lock, without the entries ``retired`` names
    (metrics the suites no longer record) and, where ``band`` gives a metric's class band (the catalog's
    row for the file's device class), with that band's parts in place of the entry's (its measured
    ``k`` × ``spread`` and floors the band does not name stay); ``device_class``: the class to record in
    the device header. A malformed file raises :class:`BaselineFileError` and is left as it is."""
    with lock_for(path):
        data = load_file(path).data
        out = Migration()
        if device_class is not None:
            data.setdefault("device", {})["class"] = device_class
        for backend, section in sorted(data.get("backends", {}).items()):
            metrics = section.get("metrics", {})
            for name in sorted(n for n in metrics if retired is not None and retired(n)):
                del metrics[name]
                out.dropped.append(f"{backend}: {name}")
            for name, entry in sorted(metrics.items()):
                try:
                    wanted = None if band is None else band(name, metrics)
                except ValueError as exc:
                    out.unbanded.append(f"{backend}: {name}: {exc}")
                    continue
                old = dict(entry.get("tolerance") or {})
                if wanted and any(old.get(k) != v for k, v in wanted.items()):
                    entry["tolerance"] = {**old, **wanted}
                    parts = lambda t: {k: t[k] for k in wanted if k in t}  # noqa: E731
                    out.rebanded.append(f"{backend}: {name}: {parts(old)} → {dict(wanted)}")
        text = fileformat.dumps(data)
        out.changed = path.read_text(encoding="utf-8") != text
        if out.changed:
            atomic_write_text(path, text)
        return out
