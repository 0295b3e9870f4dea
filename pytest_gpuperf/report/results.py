"""The results document (schema ``pytest-gpuperf/1``), one per device and backend.

    {"schema": "pytest-gpuperf/1",
     "device": {...DeviceInfo fields, "key", "spec"},
     "environment": {"python", "platform", "host", "packages", "commit", "driver", "runtime", "toolkit"},
     "run": {"started", "finished", "argv", "update_baselines",
             "interrupted": Ctrl-C ended the run before every test ran (only what finished is here)},
     "metrics": [{"test": nodeid, "name": "dotted.name", "value": float, "unit": str,
                  "better": "lower|higher|bound|exact", "stats": {median, mad, min, max, n, samples: [raw repeats]} | null,
                  "baseline": {value, tolerance, band, ...} | null, "verdict": str, "info": {...},
                  "tolerance": explicit tolerance asked for by the test | null,
                  "identity": {option: value} — the options that shaped the value (see baselines.verdicts),
                  "source_digest": digest of the kernels its test compiled (util.source_digest; absent: none)}],
     "missing": [names of baseline metrics a passed test no longer records],
     "card": {uuid, serial, host, pci_bus_id, driver, vbios, clocks, power_limit_w, ecc_mode, ...}:
             the physical card (:func:`card_identity`), so a fleet tells its cards apart}

Later suites and tools read this format: add keys, never rename or remove them. A results file is written
compact (no indentation) and keeps a metric's one-line message ``info.line`` only where it says more than the
stored fields (:data:`RESTATED_LINE`): saved runs are evidence kept in the repository, read by tools. A saved
run kept in a repository stores of each metric's ``baseline`` only the fields its readers take
(:func:`saved_form`, :data:`SAVED_BASELINE_KEYS`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..verdictwords import Gate
from .. import RESULTS_SCHEMA
from ..devices.base import DeviceInfo
from ..schemas.results_doc import relative_delta
from ..timing.stats import Stats, run_spread
from ..util.atomic import atomic_write_text


@dataclass
class Metric:
    """One recorded figure of one test on one device."""

    test: str
    name: str
    value: float
    unit: str
    better: str
    stats: Stats | None = None
    baseline: dict[str, Any] | None = None
    verdict: str = Gate.NEW
    info: dict[str, Any] = field(default_factory=dict)
    tolerance: dict[str, float] | None = None  # explicit tolerance asked for by the test, if any
    identity: dict[str, Any] = field(default_factory=dict)  # the options that shaped the value
    #: the digest of the kernel sources its test compiled before recording it (``util.source_digest``);
    #: None (and absent from the results) where it compiled none
    source_digest: str | None = None

    def to_json(self, samples: bool = True) -> dict[str, Any]:
        """The metric as results JSON; ``samples=False`` (``--gpuperf-no-samples``) drops the raw repeats."""
        doc = {"test": self.test, "name": self.name, "value": _finite(self.value), "unit": self.unit,
               "better": self.better, "stats": None if self.stats is None else self.stats.to_json(samples),
               "baseline": self.baseline, "verdict": self.verdict, "info": self.info,
               "tolerance": self.tolerance, "identity": self.identity}
        if self.source_digest is not None:
            doc["source_digest"] = self.source_digest
        return doc


def _finite(x: float) -> float | str:
    """JSON has no NaN/inf; keep them visible as strings instead of failing the write."""
    return x if math.isfinite(x) else repr(x)


def jsonable(value: Any) -> Any:
    """``value`` with every non-finite float (anywhere in nested dicts, lists, numpy scalars) turned
    into its string: a NaN in some test's ``info`` must never cost a run its results file."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        return _finite(value)
    try:  # numpy scalars and the like
        import numpy as np

        if isinstance(value, np.generic):
            return jsonable(value.item())
    except ImportError:  # pragma: no cover
        pass
    return value


#: the keys of a card's identity (:func:`card_identity`) taken from the device section's ``extra`` as the
#: backends record them (CUDA through NVML, ``devices.nvml.card_identity``; NVIDIA's OpenCL gives the PCI address)
CARD_EXTRA_KEYS = ("uuid", "serial", "pci_bus_id", "vbios", "application_sm_clock_mhz", "application_mem_clock_mhz",
                   "max_sm_clock_mhz", "max_mem_clock_mhz", "power_limit_w", "ecc_mode")
#: the settings that put cards of one model into one cohort: cards that differ in one of them are not
#: expected to measure alike (a lower power limit or application clock is a configuration, not a fault)
COHORT_KEYS = ("key", "backend", "driver", "application_sm_clock_mhz", "max_sm_clock_mhz", "power_limit_w")


def card_identity(device: Mapping[str, Any], environment: Mapping[str, Any]) -> dict[str, Any]:
    """The physical card a results document measured: what tells it apart in a fleet (UUID and serial
    where NVML gives them, else host, PCI address, device index and name) and the settings that decide its
    cohort (driver, clocks, power limit, ECC mode). Built from the device section and the environment, so
    a document written before the ``card`` section existed yields the same fields it can."""
    extra = device.get("extra") if isinstance(device.get("extra"), Mapping) else {}
    card: dict[str, Any] = {"host": environment.get("host"), "backend": device.get("backend"),
                            "index": device.get("index"), "name": device.get("name"), "key": device.get("key"),
                            "driver": device.get("driver_version") or environment.get("driver")}
    for k in CARD_EXTRA_KEYS:
        if extra.get(k) not in (None, ""):
            card[k] = extra[k]
    return {k: v for k, v in card.items() if v is not None}


def document(info: DeviceInfo, environment: dict[str, Any], run: dict[str, Any], metrics: list[Metric],
             samples: bool = True) -> dict:
    env = dict(environment)
    env.update({"driver": info.driver_version, "runtime": info.runtime_version, "toolkit": info.toolkit_version})
    device = info.to_json()
    return {"schema": RESULTS_SCHEMA, "device": device, "environment": env, "run": run,
            "metrics": [m.to_json(samples) for m in metrics], "card": card_identity(device, env)}


#: the verdicts whose one-line message (``info.line``) only restates what the metric stores beside it (its value,
#: the baseline's value, band, delta, detection power and reason): a results file leaves that line out. It keeps
#: the line of every other verdict (regressed, incomparable, contended…), which says why the metric needs a look
#: and which the gate check's summary quotes
RESTATED_LINE = (Gate.PASS, Gate.LOOSE)


def stored(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` as a results file keeps it: the metrics' ``info.line`` left out where :data:`RESTATED_LINE` says
    it restates the stored fields (a tenth of a saved run's compressed bytes); ``doc`` itself is not changed."""
    metrics = doc.get("metrics")
    if not isinstance(metrics, list):
        return doc
    return {**doc, "metrics": [_without_restated_line(m) for m in metrics]}


def _without_restated_line(metric: Any) -> Any:
    info = metric.get("info") if isinstance(metric, dict) else None
    if not isinstance(info, dict) or "line" not in info or metric.get("verdict") not in RESTATED_LINE:
        return metric
    return {**metric, "info": {k: v for k, v in info.items() if k != "line"}}


#: what a saved run kept in a repository (``scripts/compact_saved.py``) keeps of each metric's ``baseline``: the
#: fields its readers take — the entry's value and direction (the history), the comparison's band, delta and
#: reason (the history, the gate check's realized plant size), the detection power (``detect``: the smallest
#: change that gate would have caught, what a saved run's ``pass`` was worth), and a run-against-run comparison's
#: ``source`` and ``compare``; of the entry's runs' values only their spread (``run_spread``, :data:`RUN_SPREAD`:
#: the fleet report's between-run noise), since a pooled entry's copy of tens of values in every metric of every
#: saved run was a fifth of its bytes. The rest is left out: a copy of the baseline entry's own fields (tolerance,
#: identity, test, citation, unit, runs) that the reviewed baseline file holds and the significance test's
#: figures (``difference``), which only the run that wrote them used. A tool that judges a saved run again judges
#: it against a baseline file, not this copy.
SAVED_BASELINE_KEYS = ("value", "better", "band", "delta_rel", "reason", "detect", "source", "compare")
#: the key a saved baseline copy keeps its runs' spread under (:func:`~pytest_gpuperf.timing.stats.run_spread`)
RUN_SPREAD = "run_spread"


def saved_form(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` as a saved run kept in a repository stores it: :func:`stored`, and each metric's ``baseline``
    with only the keys :data:`SAVED_BASELINE_KEYS` names (in the order it had them) and its runs' spread
    (:data:`RUN_SPREAD`) in place of their values, its ``delta_rel`` left out
    where it is the one the metric's value and the copy's value give
    (:func:`~pytest_gpuperf.schemas.results_doc.relative_delta`, which ``MetricRecord.delta_rel`` reads back);
    ``doc`` itself is not changed."""
    doc = stored(doc)
    metrics = doc.get("metrics")
    if not isinstance(metrics, list):
        return doc
    return {**doc, "metrics": [_with_saved_baseline(m) for m in metrics]}


def _with_saved_baseline(metric: Any) -> Any:
    base = metric.get("baseline") if isinstance(metric, dict) else None
    if not isinstance(base, dict):
        return metric
    kept = {k: base[k] for k in base if k in SAVED_BASELINE_KEYS or k == RUN_SPREAD}
    spread = run_spread(base["run_values"]) if isinstance(base.get("run_values"), list) else None
    if spread is not None:
        kept[RUN_SPREAD] = spread
    if "delta_rel" in kept and "value" in kept and _same(kept["delta_rel"], relative_delta(metric.get("value"),
                                                                                            kept["value"])):
        del kept["delta_rel"]
    return {**metric, "baseline": kept}


def _same(a: Any, b: Any) -> bool:
    """Whether two stored figures are the same JSON value (a float equal to a float, None to None)."""
    return type(a) is type(b) and a == b


def dumps(doc: dict[str, Any]) -> str:
    """The text of a results file: :func:`stored`, compact JSON (indentation would add a tenth to a saved run's
    compressed bytes, and nobody reviews a results file as a diff), one trailing newline."""
    return json.dumps(stored(jsonable(doc)), separators=(",", ":"), allow_nan=False) + "\n"


def write(path: str, doc: dict[str, Any]) -> None:
    """Write the results file ``path`` atomically (:func:`dumps`)."""
    atomic_write_text(path, dumps(doc))
