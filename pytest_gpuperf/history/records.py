"""The neutral shape of one history run: what a store writes and what every reader gets back.

A run is one device and backend in one pytest session. It is built either from the live session
(:func:`from_session`) or from a results JSON document written earlier (:func:`from_results`), so a
backfill from ``results/`` and a live run land in the store identically.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping

import numpy as np

from ..verdictwords import Gate
from .. import RESULTS_SCHEMA
from ..schemas.results_doc import MetricRecord, ResultsDocument
from ..util.redaction import redact_argv

#: Quantiles kept of a metric's raw samples: enough to draw a distribution, small enough to store.
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


class NotResultsError(ValueError):
    """A JSON document that is not a pytest-gpuperf results document; the message says why."""


def dumps(obj: Any, **kwargs: Any) -> str:
    """Strict JSON (``allow_nan=False``): every JSON the history writes must parse in a browser or in
    another language, and a NaN or infinity that slipped into a computed figure fails here, loudly."""
    return json.dumps(obj, allow_nan=False, **kwargs)


def finite(obj: Any) -> Any:
    """``obj`` with every non-finite float replaced by None (recursively): what a store keeps of a foreign
    document (a device description, options) that may hold NaN, which strict JSON cannot write."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


@dataclass
class TrendMetric:
    """One metric of one run as the history keeps it: the results document's
    :class:`~pytest_gpuperf.schemas.results_doc.MetricRecord` summarised (its samples as quantiles, the
    ``info`` that decides its gate); ``identity`` holds the options that shape the figure (size, mode, …)."""

    name: str
    test: str
    value: float | None
    unit: str
    better: str
    median: float | None = None
    mad: float | None = None
    min: float | None = None
    max: float | None = None
    n: int | None = None
    samples: dict[str, Any] | None = None  # {"n": .., "q05": .., ...}: a summary, never the raw samples
    verdict: str = Gate.NEW
    baseline_value: float | None = None
    band: float | None = None
    identity: dict[str, Any] = field(default_factory=dict)
    tolerance: dict[str, float] | None = None  # the band the test set itself (None: its class's floor)
    info: dict[str, Any] = field(default_factory=dict)  # what of Metric.info decides its gate (GATE_INFO)
    #: the digest of the kernels its test compiled (``util.source_digest``); None: unknown (a figure of the host
    #: alone, a run recorded before digests were, a planted run) — never a change of kernel by itself
    source_digest: str | None = None


#: the keys of a metric's ``info`` that decide how it is gated (host-timed class, declared noise model,
#: ``gate: if-stable``, a documented bound): kept so trends judge a step as the gate judges a run
GATE_INFO = ("host_timed", "noise", "why", "gate", "bound")


@dataclass
class RunRecord:
    """One device+backend of one session, with its metrics."""

    date: str
    commit: str
    device_key: str
    backend: str
    device_name: str = ""
    driver: str = ""
    runtime: str = ""
    toolkit: str = ""
    clock_mhz: float | None = None
    mem_clock_mhz: float | None = None
    host: str = ""
    argv: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    device: dict[str, Any] = field(default_factory=dict)  # the full DeviceInfo JSON
    source: str = ""  # "pytest", or the file a backfill came from
    metrics: list[TrendMetric] = field(default_factory=list)
    #: each test's duration (``{"test", "duration_s", "outcome"}``, results ``tests``): the suite's own cost
    tests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def uid(self) -> str:
        """The identity of the run within one reading (detection, the dashboard) and the store's original
        unique key; :attr:`run_key` is what tells a live record and the import of its file to be one run.

        Two cards of one model in one run share date, key, backend, argv and metric names: the
        device index keeps their results files apart on import. It is hashed only when it is not 0, so the
        uids of runs already imported from single-device files do not change."""
        ident = [self.date, self.commit, self.device_key, self.backend, self.host, self.argv,
                 sorted(m.name for m in self.metrics), self.options.get("session", "")]
        index = self.device.get("index") if isinstance(self.device, dict) else None
        if index not in (None, 0, "0"):
            ident.append(f"index={index}")
        text = json.dumps(ident)
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    @property
    def run_key(self) -> str:
        """What makes a run the same run however it reached the store (:func:`run_key`): recorded live by
        ``--gpuperf-history`` and its results file imported later are one run, stored once."""
        return run_key(self.device_key, self.backend, self.device, self.options, self.host, self.commit, self.date,
                       ((m.name, m.value) for m in self.metrics))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "RunRecord":
        data = dict(doc)
        metrics = [TrendMetric(**m) for m in data.pop("metrics", [])]
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["tests"] = durations_from(known.get("tests"))
        return cls(**known, metrics=metrics)


#: the key of a run's options that holds its run id (the results document's ``run.id``)
RUN_ID = "run_id"


def run_key(device_key: str, backend: str, device: Any, options: Mapping[str, Any], host: str, commit: str,
            date: str, values: Iterable[tuple[str, float | None]]) -> str:
    """The stable identity of one device's run: the session's run id (``run.id`` of its results document,
    the same in the live record and in the file) with the device; for runs written before run ids, a digest
    of the device, host, commit, start time and every metric's value — what a live record and the import of
    its file share, where the old uid hashed a session nonce only the live record had."""
    index = device.get("index") if isinstance(device, Mapping) else None
    where = [device_key, backend, None if index in (None, 0, "0") else str(index)]
    rid = options.get(RUN_ID) if isinstance(options, Mapping) else None
    if isinstance(rid, str) and rid:
        ident: list[Any] = ["id", rid, *where]
    else:
        ident = ["digest", *where, host, commit, date, sorted((n, _num(v)) for n, v in values)]
    return hashlib.sha256(json.dumps(ident).encode()).hexdigest()[:32]


def _num(x: Any) -> float | None:
    """Finite float or None: JSON and SQL have no portable NaN/inf (results JSON writes them as strings)."""
    if type(x) is float:  # the common case, answered without a conversion
        return x if math.isfinite(x) else None
    if x is None:  # an absent figure, answered without raising
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def sample_summary(samples: Iterable[float] | None) -> dict[str, Any] | None:
    """n and quantiles of raw samples (``Stats.samples`` once main has it); None when there are none."""
    return None if samples is None else sample_summaries([finite_samples(samples)])[0]


#: the keys of :data:`QUANTILES` in a summary (``q05``, ``q25``, …)
_QUANTILE_KEYS = tuple(f"q{int(q * 100):02d}" for q in QUANTILES)


def finite_samples(samples: Iterable[Any]) -> np.ndarray:
    """The finite numbers among raw samples, in order, as float64 (what :func:`_num` keeps). A list of plain
    floats and ints — what a results file holds — is converted by numpy at once; anything else one by one."""
    if isinstance(samples, (list, tuple)) and all(type(s) is float or type(s) is int for s in samples):
        try:
            xs = np.array(samples, dtype=np.float64)
        except OverflowError:  # an int beyond float: the slow path raises it as it always did
            pass
        else:
            return xs[np.isfinite(xs)]
    return np.asarray([s for s in samples if _num(s) is not None], dtype=np.float64)


def sample_summaries(sets: list[np.ndarray]) -> list[dict[str, Any] | None]:
    """:func:`sample_summary` of each set of finite samples (:func:`finite_samples`); None for an empty one.
    Sets of one size share one ``numpy.quantile`` call (one row each): the same figures as a call per set,
    for a fraction of its fixed cost, where a results document holds thousands of sets of a few sizes."""
    out: list[dict[str, Any] | None] = [None] * len(sets)
    by_size: dict[int, list[int]] = {}
    for i, xs in enumerate(sets):
        if xs.size:
            by_size.setdefault(int(xs.size), []).append(i)
    for size, where in by_size.items():
        qs = np.quantile(np.stack([sets[i] for i in where]), QUANTILES, axis=1).T.tolist()
        for i, row in zip(where, qs):
            out[i] = {"n": size, **dict(zip(_QUANTILE_KEYS, row))}
    return out


def metric_from_json(m: MetricRecord) -> TrendMetric:
    """A metric of a results document (``Metric.to_json()``; ``identity``/``samples`` when present), read as
    its :class:`~pytest_gpuperf.schemas.results_doc.MetricRecord`."""
    if "name" not in m.keys:
        raise KeyError("name")
    return metrics_from_json([m])[0]


def metrics_from_json(metrics: Iterable[MetricRecord]) -> list[TrendMetric]:
    """:func:`metric_from_json` of each metric (each must have its name), their raw samples summarised
    together (:func:`sample_summaries`); a malformed metric raises as it would read alone, in order."""
    out: list[TrendMetric] = []
    pending: list[tuple[TrendMetric, np.ndarray]] = []
    for m in metrics:
        stats = m.stats or {}
        samples = m.get("samples", stats.get("samples"))  # a top-level "samples" (summary) where a file has one
        xs = None if samples is None or isinstance(samples, dict) else finite_samples(samples)
        metric = _trend(m, stats, samples if isinstance(samples, dict) else None)
        if xs is not None and xs.size:
            pending.append((metric, xs))
        out.append(metric)
    for (metric, _), summary in zip(pending, sample_summaries([xs for _, xs in pending])):
        metric.samples = summary
    return out


def _trend(m: MetricRecord, stats: Any, summary: dict[str, Any] | None) -> TrendMetric:
    """The :class:`TrendMetric` of one stored metric, ``summary`` its samples' (None: none, or filled in later)."""
    base = m.baseline or {}
    info = m.info if isinstance(m.info, dict) else {}
    return TrendMetric(
        name=str(m.name), test=str(m.get("test", "")), value=_num(m.value), unit=str(m.get("unit", "")),
        better=str(m.get("better", "lower")), median=_num(stats.get("median")), mad=_num(stats.get("mad")),
        min=_num(stats.get("min")), max=_num(stats.get("max")),
        n=int(stats["n"]) if isinstance(stats.get("n"), (int, float)) else None, samples=summary,
        verdict=str(m.get("verdict", Gate.NEW)), baseline_value=_num(base.get("value")), band=_num(base.get("band")),
        identity=dict(m.identity or {}), tolerance=_tolerance(m.tolerance),
        info={k: info[k] for k in GATE_INFO if k in info}, source_digest=_digest(m.get("source_digest")))


def _digest(value: Any) -> str | None:
    """A metric's ``source_digest`` as stored: its text, or None where the file has none (or not a string)."""
    return value if isinstance(value, str) and value else None


def _tolerance(tol: Any) -> dict[str, float] | None:
    """The finite numeric terms of a test's own tolerance, or None where it set none."""
    if not isinstance(tol, dict):
        return None
    out = {str(k): float(v) for k, v in tol.items()
           if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}
    return out or None


def durations_from(tests: Any) -> list[dict[str, Any]]:
    """The well-formed entries of a results document's ``tests`` (test id, a finite duration in seconds, the
    outcome), in order; anything else is left out (older files have no ``tests``)."""
    out = []
    for t in tests if isinstance(tests, list) else []:
        if isinstance(t, dict) and isinstance(t.get("test"), str) and _num(t.get("duration_s")) is not None:
            out.append({"test": t["test"], "duration_s": _num(t["duration_s"]), "outcome": str(t.get("outcome") or "")})
    return out


def not_results(doc: Any) -> str | None:
    """Why ``doc`` is not a results document that can be imported, or None when it is one.

    A results folder also holds other JSON (Nsight Compute exports, gate-check reports, power corpora,
    tuning caches): each is recognised by its ``schema`` key, or by its shape where it has none (results
    files older than the key), and named with the reason instead of failing the whole import."""
    if not isinstance(doc, dict):
        return f"a JSON {type(doc).__name__}, not a results document (an object with schema {RESULTS_SCHEMA!r})"
    schema = doc.get("schema")
    if schema is not None and schema != RESULTS_SCHEMA:
        return f"schema {schema!r}, not a results document ({RESULTS_SCHEMA!r})"
    dev = doc.get("device")
    if not (isinstance(dev, dict) and isinstance(dev.get("key"), str) and dev["key"]):
        return "no device.key, so not a results document"
    metrics = doc.get("metrics")
    if not isinstance(metrics, list):
        return "no 'metrics' list, so not a results document"
    for i, m in enumerate(metrics):
        if not (isinstance(m, dict) and isinstance(m.get("name"), str)):
            return (f"metrics[{i}] is a {type(m).__name__}, not a metric object with a name, so not a "
                    f"results document" + ("" if schema else " (it names no schema)"))
    if not metrics:
        return "a results document without metrics: nothing to record"
    for key in ("environment", "run"):
        if doc.get(key) is not None and not isinstance(doc[key], dict):
            return f"'{key}' is a {type(doc[key]).__name__}, not an object, so not a results document"
    return None


def read_results(doc: Any, source: str = "") -> ResultsDocument:
    """``doc``, the JSON of the file ``source``, as a :class:`ResultsDocument` to import; :class:`NotResultsError`
    (saying why, :func:`not_results`) for any other JSON."""
    why = not_results(doc)
    if why:
        raise NotResultsError(f"{source or 'document'}: {why}")
    return ResultsDocument.from_json(doc, source or None)


def run_problem(doc: ResultsDocument) -> str | None:
    """Why a typed results document cannot be recorded as a run (:func:`not_results`' words), or None."""
    if doc.schema is not None and doc.schema != RESULTS_SCHEMA:
        return f"schema {doc.schema!r}, not a results document ({RESULTS_SCHEMA!r})"
    key = (doc.device or {}).get("key")
    if not (isinstance(key, str) and key):
        return "no device.key, so not a results document"
    for i, m in enumerate(doc.metrics):
        if not isinstance(m.name, str):
            return (f"metrics[{i}] is a dict, not a metric object with a name, so not a results document"
                    + ("" if doc.schema else " (it names no schema)"))
    return None if doc.metrics else "a results document without metrics: nothing to record"


def from_results(typed: ResultsDocument, source: str = "") -> RunRecord:
    """A run from a results document (schema ``pytest-gpuperf/1``, read by :func:`read_results` or
    :meth:`ResultsDocument.load`); :class:`NotResultsError` (saying why) where it holds no run.
    ``environment.commit`` is the measured repository's commit; the plugin's own version and commit
    (``environment.plugin``) are kept in the run's options."""
    why = run_problem(typed)
    if why:
        raise NotResultsError(f"{source or 'document'}: {why}")
    dev = dict(typed.device or {})
    env = dict(typed.environment or {})
    run = dict(typed.run or {})
    extra = dev.get("extra") if isinstance(dev.get("extra"), dict) else {}
    options: dict[str, Any] = {"update_baselines": bool(run.get("update_baselines", False)),
                               "interrupted": bool(run.get("interrupted", False))}  # Ctrl-C: the tests that finished
    if isinstance(env.get("plugin"), dict):
        options["plugin"] = {k: str(v) for k, v in env["plugin"].items()}
    if isinstance(run.get("profile"), str):  # the suite profile (quick runs measure part of the suites)
        options["profile"] = run["profile"]
    if isinstance(run.get("id"), str) and run["id"]:  # the session's run id: the live record's too
        options[RUN_ID] = run["id"]
    return RunRecord(
        date=str(run.get("started") or run.get("finished") or ""), commit=str(env.get("commit") or ""),
        device_key=str(dev["key"]), backend=str(dev.get("backend", "")), device_name=str(dev.get("name", "")),
        driver=str(env.get("driver") or dev.get("driver_version") or ""),
        runtime=str(env.get("runtime") or dev.get("runtime_version") or ""),
        toolkit=str(env.get("toolkit") or dev.get("toolkit_version") or ""),
        clock_mhz=_num(extra.get("sm_clock_mhz", dev.get("current_clock_mhz", dev.get("clock_mhz")))),
        mem_clock_mhz=_num(extra.get("mem_clock_mhz")), host=str(env.get("host", "")),
        argv=redact_argv(run.get("argv") or []),  # a results file written before passwords were redacted
        options=options, device=dev, source=source, metrics=metrics_from_json([m for m in typed.metrics if m.name]),
        tests=durations_from(typed.tests))


def from_legacy_line(rec: Mapping[str, Any], source: str = "") -> RunRecord:
    """A run from a line of the old ``--gpuperf-history`` JSONL (date, key, backend, driver, commit,
    metrics: {name: value}); lines this module writes carry the full record under ``run``."""
    if "run" in rec and isinstance(rec["run"], dict):
        return RunRecord.from_json(rec["run"])
    return RunRecord(date=str(rec.get("date", "")), commit=str(rec.get("commit", "")), device_key=str(rec["key"]),
                     backend=str(rec.get("backend", "")), driver=str(rec.get("driver", "")), source=source,
                     metrics=[TrendMetric(name=str(k), test="", value=_num(v), unit="", better="lower")
                              for k, v in (rec.get("metrics") or {}).items()])


def from_session(info: Any, environment: Mapping[str, Any], run_meta: Mapping[str, Any],
                 metrics: Iterable[Any], options: Mapping[str, Any] | None = None,
                 tests: Iterable[Mapping[str, Any]] = ()) -> RunRecord:
    """A run from the live session: ``info`` is a DeviceInfo, ``metrics`` are ``results.Metric``, ``tests``
    the durations the results document carries (``{"test", "duration_s", "outcome"}``).

    ``Metric.identity`` and ``Stats.samples`` are read with getattr: they are newer than this module."""
    records = []
    for m in metrics:
        doc = m.to_json()
        doc["identity"] = dict(getattr(m, "identity", None) or {})
        samples = getattr(m.stats, "samples", None) if m.stats is not None else None
        if samples is not None:
            doc["samples"] = sample_summary(samples)
        records.append(MetricRecord.from_json(doc, f"metric {m.name}"))
    env = dict(environment)
    env.update({"driver": info.driver_version, "runtime": info.runtime_version, "toolkit": info.toolkit_version})
    typed = ResultsDocument(device=info.to_json(), environment=env, run=dict(run_meta), metrics=tuple(records),
                            tests=[dict(t) for t in tests], keys=("device", "environment", "run", "metrics", "tests"),
                            source="pytest")
    record = from_results(typed, source="pytest")
    record.options.update(options or {})
    # two runs of one host can finish within the same second (the dates have second resolution): a
    # session nonce keeps them apart, while a results file imported twice still maps to one run
    record.options.setdefault("session", uuid.uuid4().hex)
    return record
