"""A results document read back as typed records: :class:`ResultsDocument` and its :class:`MetricRecord` s.

The writer (``report/results.py``) emits plain dicts; the tools that read saved runs (compare, history, fleet,
baselines from runs, the gate check, offline collect, the docs' evidence tables) read them through these
records instead of indexing raw dicts, so a malformed file fails once, here, with its name and the problem.
It sits with the schema, in the base layer, so every layer that reads a saved run may use it. Nothing is
lost on the way: keys a record does not name are kept in ``extra``, the order of the keys is kept too, and
:meth:`ResultsDocument.to_json` gives back the very dict :meth:`ResultsDocument.from_json` read (key order included).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import GpuPerfError
from ..util import jsonio

#: the keys the writer emits for one metric (``report.results.Metric.to_json``), in its order
METRIC_KEYS = ("test", "name", "value", "unit", "better", "stats", "baseline", "verdict", "info", "tolerance",
               "identity")
#: the top-level keys of a results document the record names, in the writer's order
DOCUMENT_KEYS = ("schema", "device", "environment", "run", "metrics", "card", "missing", "detection", "tests")


def relative_delta(measured: Any, expected: Any) -> float | None:
    """(measured − expected) / |expected|, as the baseline gate computes a metric's ``delta_rel``
    (``baselines.verdicts``); None where either is not a finite number or ``expected`` is 0."""
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
               for x in (measured, expected)):
        return None
    return (float(measured) - float(expected)) / abs(float(expected)) if expected else None


def card_uuid(card: Any) -> str:
    """The UUID a results document's ``card`` section names: the same board across runs and folders ('' where it
    names none: a CPU device, or a run that recorded no card)."""
    return str(card.get("uuid") or "") if isinstance(card, Mapping) else ""


class ResultsDocumentError(GpuPerfError, ValueError):
    """A results document that cannot be read as one: names the file and what is wrong with it. A
    ``ValueError`` too, so a reader that reports malformed input reports this one as well."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}; a results document is what `--gpuperf-json` writes "
                         "(schema pytest-gpuperf/1, a 'metrics' list of objects)")
        self.where = where
        self.problem = problem


@dataclass(frozen=True)
class MetricRecord:
    """One metric of a results document as stored. A key absent from the file reads as ``None`` (``info`` and
    ``identity`` as empty dicts) and stays absent when written back (``keys`` keeps which were there)."""

    test: str | None = None
    name: str | None = None
    value: Any = None  # a float, or its string where it was not finite
    unit: str | None = None
    better: str | None = None
    stats: dict[str, Any] | None = None
    baseline: dict[str, Any] | None = None
    verdict: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    tolerance: dict[str, Any] | None = None
    identity: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # keys the writer did not emit when this was written
    keys: tuple[str, ...] = METRIC_KEYS  # the keys present in the file, in its order

    @property
    def samples(self) -> list[Any] | None:
        """The raw repeats the stats kept, or ``None`` (no stats, or written with ``--gpuperf-no-samples``)."""
        return self.stats.get("samples") if isinstance(self.stats, dict) else None

    @property
    def delta_rel(self) -> float | None:
        """How far the value lies from the baseline's, relative: the ``baseline`` copy's ``delta_rel``, or where
        a saved run's form left it out (``report.results.saved_form``: it equals this) :func:`relative_delta`
        of the value and the copy's value; None without a baseline copy."""
        base = self.baseline if isinstance(self.baseline, dict) else {}
        if "delta_rel" in base or "value" not in base:
            return base.get("delta_rel")
        return relative_delta(self.value, base["value"])

    def get(self, key: str, default: Any = None) -> Any:
        """The stored value of ``key`` as the raw dict gives it: ``default`` where the file lacks it."""
        if key not in self.keys:
            return default
        return self.extra[key] if key in self.extra else getattr(self, key)

    def require(self, *keys: str) -> "MetricRecord":
        """This record, after a ``KeyError`` for the first of ``keys`` the file lacks: a reader that needs a
        field fails as indexing the stored dict would."""
        for k in keys:
            if k not in self.keys:
                raise KeyError(k)
        return self

    @classmethod
    def from_json(cls, doc: Any, where: str = "<metric>") -> "MetricRecord":
        """The record of one stored metric; :class:`ResultsDocumentError` where it is not an object."""
        if not isinstance(doc, dict):
            raise ResultsDocumentError(where, f"a metric is {type(doc).__name__}, not an object")
        named = {k: doc[k] for k in METRIC_KEYS if k in doc}
        return cls(**named, extra={k: v for k, v in doc.items() if k not in METRIC_KEYS}, keys=tuple(doc))

    def to_json(self) -> dict[str, Any]:
        """The stored dict this record was read from (same keys, same order)."""
        return {k: self.get(k) for k in self.keys}


@dataclass(frozen=True)
class ResultsDocument:
    """One results document (schema ``pytest-gpuperf/1``): one device's run and the metrics it recorded.
    The sections stay the dicts the file holds; ``metrics`` are :class:`MetricRecord` s."""

    schema: str | None = None
    device: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    run: dict[str, Any] = field(default_factory=dict)
    metrics: tuple[MetricRecord, ...] = ()
    card: dict[str, Any] | None = None
    missing: list[Any] | None = None
    detection: Any = None
    tests: Any = None
    extra: dict[str, Any] = field(default_factory=dict)
    keys: tuple[str, ...] = DOCUMENT_KEYS[:5]
    source: str | None = None  # the file it was read from, for messages

    @classmethod
    def from_json(cls, doc: Any, source: str | os.PathLike[str] | None = None) -> "ResultsDocument":
        """The typed document; :class:`ResultsDocumentError` naming ``source`` and the problem where ``doc``
        is not an object, has no ``metrics`` list, or a section that is neither an object nor null."""
        where = str(source) if source is not None else "<results document>"
        if not isinstance(doc, dict):
            raise ResultsDocumentError(where, f"holds a JSON {type(doc).__name__}, not an object")
        if not isinstance(doc.get("metrics"), list):
            raise ResultsDocumentError(where, "has no 'metrics' list")
        for k in ("device", "environment", "run"):
            if doc.get(k) is not None and not isinstance(doc[k], dict):
                raise ResultsDocumentError(where, f"its '{k}' is {type(doc[k]).__name__}, not an object")
        named: dict[str, Any] = {k: doc[k] for k in DOCUMENT_KEYS if k in doc and k != "metrics"}
        metrics = tuple(MetricRecord.from_json(m, f"{where}: metrics[{i}]") for i, m in enumerate(doc["metrics"]))
        return cls(**named, metrics=metrics, extra={k: v for k, v in doc.items() if k not in DOCUMENT_KEYS},
                   keys=tuple(doc), source=None if source is None else str(source))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "ResultsDocument":
        """The results file ``path`` (``x.json`` or ``x.json.gz``, :func:`.jsonio.read_json`). A missing or
        unreadable file raises ``OSError`` as before; a file that is not JSON or not a results document raises
        :class:`ResultsDocumentError`."""
        try:
            raw = jsonio.read_json(path)
        except ValueError as e:  # JSONDecodeError, a bad gzip stream, undecodable text
            raise ResultsDocumentError(str(path), f"not valid JSON ({e})") from e
        return cls.from_json(raw, path)

    def get(self, key: str, default: Any = None) -> Any:
        """The stored value of a top-level ``key`` as the raw dict gives it (``metrics`` as stored dicts)."""
        if key not in self.keys:
            return default
        if key == "metrics":
            return [m.to_json() for m in self.metrics]
        return self.extra[key] if key in self.extra else getattr(self, key)

    def metric(self, name: str) -> MetricRecord | None:
        """The first metric called ``name``, or ``None``."""
        return next((m for m in self.metrics if m.name == name), None)

    def to_json(self) -> dict[str, Any]:
        """The dict this document was read from (same keys, same order)."""
        return {k: self.get(k) for k in self.keys}
