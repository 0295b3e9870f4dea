"""Read the two sides of a comparison: one or several results files each, validated against the schema.

Several runs per side are merged per metric, keeping what each noise model
(:mod:`pytest_gpuperf.baselines.noise`) needs:

* **one value per run** (:attr:`SideMetric.values`): the unit of every test once a side pools several
  runs, since the samples of one run share its placement, clocks and code layout and cannot show how
  far the next unchanged run lands;
* **raw samples pooled** (:attr:`SideMetric.samples`) when every run that recorded the metric carries at
  least :data:`~pytest_gpuperf.timing.difference.MIN_SAMPLES` of them — what a single run against a
  single run is tested on;
* a figure's own **within-run repeats** (``info["repeats"]``, a list of numbers) when the side is one run.

The side's value is the median of its runs' values (as ``gpuperf baseline from-results``). A side whose
runs measured a metric with different options (identities) cannot be pooled: that metric is
incomparable, with the reason. Every problem with the input is a :class:`CompareInputError` of one line,
which the CLI turns into exit 2.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .. import RESULTS_SCHEMA
from ..baselines import noise, validity
from ..errors import GpuPerfError
from ..gatecheck.plants import planted_values
from ..schemas.results_doc import MetricRecord, ResultsDocument, ResultsDocumentError
from ..timing import observers
from ..timing.difference import MIN_SAMPLES
from ..util import jsonio


class CompareInputError(GpuPerfError):
    """A results file cannot be compared: unreadable, not JSON, not a results document, or a side that
    mixes devices. The message is one line naming the file and the problem."""


@dataclass
class SideMetric:
    """One metric as one side saw it, merged over that side's runs."""

    name: str
    unit: str
    better: str
    test: str
    values: list[float]  # one per run, NaN where a run recorded a non-finite value
    samples: list[float] | None  # pooled raw samples when every run has enough of them, else None
    basis: str  # "samples" (pooled raw repeats) or "none"
    identity: dict[str, Any] = field(default_factory=dict)
    identity_problem: str | None = None  # the side's runs disagree on the identity
    info: dict[str, Any] = field(default_factory=dict)
    tolerance: dict[str, float] | None = None  # the test's explicit tolerance, if any
    repeats: list[float] | None = None  # a single run's within-run repeat values (info["repeats"])
    value_problem: str | None = None  # a run's samples are impossible or its value contradicts them (validity)
    source_digest: str | None = None  # the digest of the kernels its test compiled, where every run records one

    @functools.cached_property
    def value(self) -> float:
        """The side's value: the median of its runs' values (NaN if any run's value is NaN; computed once:
        a row reads it many times)."""
        if any(math.isnan(v) for v in self.values):
            return math.nan
        return float(np.median(self.values))

    @property
    def runs(self) -> int:
        return len(self.values)

    def spread_values(self) -> tuple[list[float], str]:
        """The values a test over runs uses, and their unit: one per run when the side pools several
        runs (``"runs"``), else the run's own repeats if it recorded them (``"repeats"``), else its one
        value (``"runs"``: a single value carries no spread)."""
        if self.runs >= 2 or not self.repeats:
            return list(self.values), "runs"
        return list(self.repeats), "repeats"


@dataclass
class Side:
    """One side of the comparison: its files, device, environment and merged metrics."""

    label: str  # "A" or "B"
    paths: list[str]
    device: dict[str, Any]
    environment: dict[str, Any]
    metrics: dict[str, SideMetric]
    runs: int
    #: test id → its duration in seconds in each run of the side that ran it (results ``tests``)
    durations: dict[str, list[float]] = field(default_factory=dict)
    #: what the side's runs planted (``--gpuperf-plant`` values: a gate check's deliberately worsened runs), and
    #: how many of them a signal ended before every test ran
    planted: list[str] = field(default_factory=list)
    interrupted: int = 0

    @property
    def key(self) -> str:
        return str(self.device.get("key", ""))

    def describe(self) -> str:
        d = self.device
        return f"{d.get('name', '?')} [{d.get('key', '?')}, {d.get('backend', '?')}]"


def _number(value: Any) -> float:
    """A results value: a number, or the repr of a non-finite float (``"nan"``, ``"inf"``)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def read_results(path: str | Path) -> ResultsDocument:
    """One results file, checked against the results schema and read as a :class:`ResultsDocument`;
    one-line errors otherwise."""
    p = jsonio.saved(path)
    try:
        doc = jsonio.read_json(p)
    except FileNotFoundError:
        raise CompareInputError(f"{p}: no such file") from None
    except json.JSONDecodeError as exc:
        raise CompareInputError(f"{p}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    # EOFError: a truncated .gz or .xz; ValueError: a corrupt compressed stream, undecodable text, a bad delta
    except (OSError, EOFError, ValueError) as exc:
        raise CompareInputError(f"{p}: cannot read it ({type(exc).__name__}: {exc})") from None
    return results_document(doc, str(p))


def results_document(doc: Any, where: str) -> ResultsDocument:
    """``doc``, the JSON read from the file ``where``, checked against the results schema and read as a
    :class:`ResultsDocument` (what :func:`read_results` does once the file is parsed); one-line errors otherwise."""
    from ..schemas import SchemaError, validate

    if isinstance(doc, dict) and doc.get("schema") not in (None, RESULTS_SCHEMA):
        raise CompareInputError(f"{where}: schema {doc.get('schema')!r} is not a results document "
                                f"({RESULTS_SCHEMA!r}; write one with pytest --gpuperf-json)")
    try:
        validate(doc, RESULTS_SCHEMA, source=where)
    except SchemaError as exc:
        first = str(exc).replace("\n", " ").replace("  ", " ")
        raise CompareInputError(first if len(first) < 400 else first[:397] + "...") from None
    try:
        return ResultsDocument.from_json(doc, where)
    except ResultsDocumentError as exc:  # the schema lets no such document through; kept one line all the same
        raise CompareInputError(str(exc)) from None


def merge(name: str, entries: Sequence[MetricRecord]) -> SideMetric:
    """One :class:`SideMetric` from the metric's records in each run of a side."""
    last = entries[-1]
    values = [_number(m.require("value").value) for m in entries]
    per_run = [(m.samples or []) for m in entries]
    if all(len(s) >= MIN_SAMPLES for s in per_run):
        samples: list[float] | None = [float(x) for s in per_run for x in s]
        basis = "samples"
    else:
        samples, basis = None, "none"
    inconsistent = (validity.sample_problem(name, str(m.unit), m.samples, differenced=validity.differenced(name, m.info))
                    or validity.samples_problem(name, v, str(m.unit), m.samples)
                    for v, m in zip(values, entries))
    value_problem = next((p for p in inconsistent if p is not None), None)
    identities = {json.dumps(m.identity or {}, sort_keys=True) for m in entries}
    problem = None
    if len(identities) > 1:
        problem = f"this side's runs measured it with different options ({' vs '.join(sorted(identities))})"
    digests = {m.get("source_digest") for m in entries}
    if problem is None and len(digests - {None}) > 1:
        problem = f"this side's runs compiled different kernel sources ({' vs '.join(sorted(d for d in digests if d))})"
    info = dict(last.info or {})
    if len(entries) > 1:  # a side is shared or throttled where any of its runs was (timing.observers)
        for key, pooled in observers.pool_marks([m.info or {} for m in entries]).items():
            info[key] = {**(info.get(key) if isinstance(info.get(key), Mapping) else {}), **pooled}
    last.require("unit", "better")
    return SideMetric(name=name, unit=str(last.unit), better=str(last.better), test=str(last.get("test", "")),
                      values=values, samples=samples, basis=basis, identity=dict(last.identity or {}),
                      identity_problem=problem, info=info,
                      tolerance=None if last.tolerance is None else dict(last.tolerance),
                      repeats=noise.repeats_of(last.info) if len(entries) == 1 else None,
                      value_problem=value_problem, source_digest=None if None in digests else digests.pop())


def side_from_docs(label: str, docs: Sequence[ResultsDocument], paths: Sequence[str]) -> Side:
    """Merge the runs of one side (results documents, :func:`read_results`); all must be the same device
    model and backend."""
    if not docs:
        raise CompareInputError(f"side {label}: no results files given")
    kinds = {(d.device["key"], d.device["backend"]) for d in docs}
    if len(kinds) > 1:
        listed = ", ".join(f"{p} ({d.device['key']}, {d.device['backend']})" for p, d in zip(paths, docs))
        raise CompareInputError(f"side {label} mixes devices or backends: {listed}; give one device per side")
    by_name: dict[str, list[MetricRecord]] = {}
    for path, doc in zip(paths, docs):
        seen: set[str] = set()
        for m in doc.metrics:
            if m.require("name").name in seen:
                raise CompareInputError(f"{path}: metric {m.name!r} appears twice in one run; a results file "
                                        "records each metric once (two entries are not two runs: give each run "
                                        "its own file)")
            seen.add(m.name)
            by_name.setdefault(m.name, []).append(m)
    metrics = {name: merge(name, ms) for name, ms in by_name.items()}
    durations: dict[str, list[float]] = {}
    for doc in docs:
        for t in doc.tests or []:
            durations.setdefault(str(t["test"]), []).append(float(t["duration_s"]))
    planted = [v for doc in docs for v in planted_values([str(a) for a in (doc.run or {}).get("argv") or []])]
    interrupted = sum(bool((doc.run or {}).get("interrupted")) for doc in docs)
    return Side(label, list(paths), dict(docs[-1].device), dict(docs[-1].environment or {}), metrics,
                len(docs), durations, sorted(set(planted)), interrupted)


def load_side(label: str, paths: Iterable[str | Path]) -> Side:
    """Read and merge the results files of one side."""
    ps = [str(p) for p in paths]
    return side_from_docs(label, [read_results(p) for p in ps], ps)
