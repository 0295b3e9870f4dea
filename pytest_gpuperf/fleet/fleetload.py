"""A fleet run read from its folder: job folders, results documents, cards and cohorts.

The layout (what ``gpuperf fleet submit`` writes, and what any other way of gathering runs can copy)::

    ROOT/<fleet-run-id>/<job-label>/...        one folder per job (``node1-1234``: node and job id)
        **/*.json (or .json.xz, .json.gz)      every results document (``gpuperf run --gpuperf-json``) at
                                               any depth is one run of one card; other JSON is skipped
        job.json                               optional: {"fleet_run", "job_id", "node", "array_task",
                                               "confirm": a confirmation re-run of flagged cards}

A **card** is a physical device, named by its recorded identity (``report.results.card_identity``: the
UUID where NVML gives one, else host + PCI address + device index + name). Several documents of one card
in one job folder (several suites, or repeated runs) are pooled: a metric's value is the median over them.
When documents from *different* job folders share an identity (a test cluster running several jobs on
one host with one PoCL device; a node visited twice), each job's share is its own card, named
``<job-label>/<device key>``. A **cohort** is the cards of one model that should measure alike: one device
key and backend, driver, application/maximum clock and power limit (``report.results.COHORT_KEYS``).
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..verdictwords import Gate
from .. import RESULTS_SCHEMA
from ..baselines import cohort, noise
from ..errors import GpuPerfError
from ..schemas.results_doc import MetricRecord, ResultsDocument
from .slurm_jobs import MANIFEST
from ..report.results import COHORT_KEYS, card_identity
from ..timing.stats import run_spread
from ..timing.observers import contended_metric, shared_metric, throttled_metric
from ..util import jsonio, locks

JOB_FILE = "job.json"
#: verdicts of the baseline gate that mean the figure was not the card's own (excluded from the fleet)
DISTURBED = Gate.DISTURBED


@dataclass
class CardMetric:
    """One metric of one card, pooled over the card's documents."""

    name: str
    value: float | None  # the median over the card's runs (None: no finite value)
    values: list[Any]  # each run's value as recorded (deterministic figures compare these bit for bit)
    unit: str
    better: str
    identity: str  # the options that shaped the value, as sorted JSON
    info: Mapping[str, Any]
    #: the metric's own noise, relative: its samples' (or repeats') robust CV within a run, or the run-to-run σ
    #: of the reviewed baseline's runs (``run_values``) over their median, whichever is larger; None: unknown
    noise_rel: float | None
    deterministic: bool
    disturbed: str | None  # "throttled" / "contended" when a run measured it disturbed
    verdicts: list[str]
    #: the relative standard error of the card's value: its samples' robust CV over √n (the median of n
    #: samples moves that much), or the baseline's run-to-run σ where larger; None: unknown
    se_rel: float | None = None
    cvs: list[float] = field(default_factory=list, repr=False)  # each run's noise_rel
    ses: list[float] = field(default_factory=list, repr=False)  # each run's se_rel


@dataclass(eq=False)
class Card:
    """One physical device of one fleet run (one job's share of it where jobs share a device)."""

    name: str
    label: str  # the job folder
    identity: dict[str, Any]
    ident_key: str
    job: dict[str, Any]
    paths: list[str]
    docs: list[ResultsDocument]
    metrics: dict[str, CardMetric] = field(default_factory=dict)

    @property
    def node(self) -> str:
        """The Slurm node the card is in: job.json's ``node``, else the recorded host."""
        return str(self.job.get("node") or self.identity.get("host") or self.label)

    @property
    def is_cpu(self) -> bool:
        return any(bool(d.device.get("is_cpu")) for d in self.docs)

    @property
    def cohort(self) -> tuple[Any, ...]:
        return tuple(self.identity.get(k) for k in COHORT_KEYS)

    def to_json(self) -> dict[str, Any]:
        return {"card": self.name, "job": self.label, "node": self.node, "identity": self.identity,
                "files": self.paths, "job_info": self.job}


@dataclass
class Fleet:
    """One fleet run: its cards, the jobs that left no results, the files that could not be read."""

    root: str
    run_id: str
    cards: list[Card]
    empty_jobs: list[dict[str, Any]]  # {"job", "node", "why"}
    problems: list[dict[str, str]]  # {"path", "why"}
    confirm_cards: list[Card] = field(default_factory=list)  # jobs marked "confirm" in job.json


def cohort_label(cohort: Sequence[Any]) -> str:
    """``nvidia-h100-80gb-hbm3/cuda driver=580.159.04 max_sm_clock_mhz=1980 power_limit_w=700.0``."""
    named = dict(zip(COHORT_KEYS, cohort))
    head = f"{named.pop('key')}/{named.pop('backend')}"
    return " ".join([head] + [f"{k}={v}" for k, v in named.items() if v is not None])


def ident_key(identity: Mapping[str, Any]) -> str:
    """What tells one card from another: the UUID, else host + PCI address + device index + name."""
    if identity.get("uuid"):
        return f"uuid:{identity['uuid']}"
    where = identity.get("pci_bus_id") or f"{identity.get('backend')}:{identity.get('index')}"
    return f"{identity.get('host')}/{where}/{identity.get('backend')}:{identity.get('index')}/{identity.get('name')}"


def _finite(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _larger(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


def _between_rel(baseline: Any) -> float | None:
    """The reviewed baseline's run-to-run σ of a metric over its value, from its runs' values (``run_values``, a
    run as it was written) or as a saved run keeps it (``run_spread``, :func:`..report.results.saved_form`), or
    None: how far one card's unchanged runs move it."""
    if not isinstance(baseline, Mapping):
        return None
    kept = _finite(baseline.get("run_spread"))
    return kept if kept is not None else run_spread(baseline.get("run_values") or [])


def _disturbed(m: MetricRecord, is_cpu: bool) -> str | None:
    info = m.info if isinstance(m.info, Mapping) else {}
    if m.verdict in DISTURBED:
        return str(m.verdict)
    if throttled_metric(info):
        return "throttled"
    if shared_metric(info) or (is_cpu and contended_metric(info)):
        return "contended"
    return None


def pool_metrics(docs: Sequence[ResultsDocument]) -> dict[str, CardMetric]:
    """Each metric of one card's documents, pooled (value: the median of the runs' finite values). A
    metric recorded with another unit, direction or identity in one of the runs keeps the first run's
    and drops the others (their values are not the same measurement)."""
    out: dict[str, CardMetric] = {}
    for doc in docs:
        is_cpu = bool(doc.device.get("is_cpu"))
        for m in doc.metrics:
            name = str(m.name)
            ident = json.dumps(m.identity or {}, sort_keys=True)
            xs = m.samples or noise.repeats_of(m.info) or []
            within = cohort.robust_cv(xs)
            between = _between_rel(m.baseline)
            cv = _larger(within, between)
            se = _larger(cohort.median_se_rel(xs), between)
            dist = _disturbed(m, is_cpu)
            cur = out.get(name)
            if cur is None:
                out[name] = CardMetric(name, None, [m.value], str(m.get("unit", "")),
                                       str(m.get("better", "lower")), ident,
                                       m.info if isinstance(m.info, Mapping) else {},
                                       None, noise.is_deterministic(m, name), dist, [str(m.verdict)],
                                       None, [cv] if cv is not None else [], [se] if se is not None else [])
                continue
            if (cur.unit, cur.better, cur.identity) != (str(m.get("unit", "")), str(m.get("better", "lower")), ident):
                continue
            cur.values.append(m.value)
            cur.verdicts.append(str(m.verdict))
            cur.disturbed = cur.disturbed or dist
            cur.cvs += [cv] if cv is not None else []
            cur.ses += [se] if se is not None else []
    for cm in out.values():
        finite = [x for x in map(_finite, cm.values) if x is not None]
        cm.value = float(statistics.median(finite)) if finite else None
        cm.noise_rel = float(statistics.median(cm.cvs)) if cm.cvs else None
        # several runs of one card: their pooled median is √runs steadier than one
        cm.se_rel = float(statistics.median(cm.ses)) / math.sqrt(len(cm.ses)) if cm.ses else None
    return out


def _job_info(folder: Path) -> dict[str, Any]:
    path = folder / JOB_FILE
    if not path.is_file():
        return {}
    try:
        data = jsonio.read_json(path)
    except (OSError, ValueError) as exc:
        raise GpuPerfError(f"{path}: not readable JSON ({exc}); fix or remove the job file") from None
    if not isinstance(data, dict):
        raise GpuPerfError(f"{path}: a job file holds one JSON object ({{\"fleet_run\", \"job_id\", \"node\", ...}})")
    return data


def _result_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and jsonio.is_results_name(p.name)
                  and p.name != JOB_FILE)


#: why a file of the results schema is left out of the fleet: no device section, or no metrics list
WITHOUT_DEVICE_OR_METRICS = "a results document without device or metrics"


def _results_document(path: Path) -> ResultsDocument | str | None:
    """The results document ``path`` holds; None for other JSON (a job file, a sibling report, a gate check's
    summary); why it is left out (a str) where it is not readable JSON or a results document without device or
    metrics. One malformed otherwise (a metric that is not an object) raises :class:`ResultsDocumentError`
    naming the file."""
    try:
        raw = jsonio.read_json(path)
    except (OSError, ValueError) as exc:
        return f"not readable JSON ({exc})"
    if not isinstance(raw, dict) or raw.get("schema") != RESULTS_SCHEMA:
        return None
    if not isinstance(raw.get("device"), dict) or not isinstance(raw.get("metrics"), list):
        return WITHOUT_DEVICE_OR_METRICS
    return ResultsDocument.from_json(raw, path)


def read_jobs(jobs: Iterable[tuple[str, dict[str, Any], list[Path]]], root: str, run_id: str) -> Fleet:
    """A fleet from (job label, job info, result files) triples: the one path every way of naming the
    runs (a fleet folder, a list of labelled files) goes through."""
    problems: list[dict[str, str]] = []
    empty: list[dict[str, Any]] = []
    shares: list[tuple[str, dict[str, Any], str, dict[str, Any], list[tuple[str, ResultsDocument]]]] = []
    for label, job, files in jobs:
        by_card: dict[str, tuple[dict[str, Any], list[tuple[str, ResultsDocument]]]] = {}
        for path in files:
            doc = _results_document(path)
            if doc is None:
                continue  # another JSON file (a job file, a sibling report, a gate check's summary)
            if isinstance(doc, str):
                problems.append({"path": str(path), "why": doc})
                continue
            ident = dict(doc.card or card_identity(doc.device, doc.environment or {}))
            by_card.setdefault(ident_key(ident), (ident, []))[1].append((str(path), doc))
        if not by_card:
            empty.append({"job": label, "node": job.get("node"), "job_info": job,
                          "why": "no results document in the job folder (the job died, or was cancelled, "
                                 "before writing results)"})
        for key, (ident, pairs) in by_card.items():
            shares.append((label, job, key, ident, pairs))
    seen: dict[str, set[str]] = {}
    for label, _job, key, _ident, _pairs in shares:
        seen.setdefault(key, set()).add(label)
    cards, confirm = [], []
    for label, job, key, ident, pairs in shares:
        if len(seen[key]) > 1:
            name = f"{label}/{ident.get('key')}"
        else:
            name = str(ident["uuid"]) if ident.get("uuid") else f"{ident.get('host')}/{ident.get('backend')}:{ident.get('index')}"
        card = Card(name, label, ident, key, job, [p for p, _ in pairs], [d for _, d in pairs])
        card.metrics = pool_metrics(card.docs)
        (confirm if job.get("confirm") else cards).append(card)
    return Fleet(root, run_id, cards, empty, problems, confirm)


def load(root: str | Path) -> Fleet:
    """The fleet run in folder ``root`` (``ROOT/<fleet-run-id>``): one job per subfolder. A folder that
    does not exist, holds no job folders, or whose jobs hold no results document is an error (nothing
    would be checked, and a CI job must not read that as a pass)."""
    base = Path(root)
    if not base.is_dir():
        raise GpuPerfError(f"{base}: no such fleet-run folder (ROOT/<fleet-run-id>, one subfolder per job)")
    jobs = []
    for sub in sorted(p for p in base.iterdir() if p.is_dir() and p.name != locks.FOLDER):  # not the writers' locks
        jobs.append((sub.name, _job_info(sub), _result_files(sub)))
    loose = [p for p in sorted(base.iterdir()) if p.is_file() and p.name != MANIFEST
             and jsonio.is_results_name(p.name)]
    for p in loose:  # a results file beside the job folders: its own job, named by the file
        jobs.append((p.name.split(".json")[0], {}, [p]))
    fleet = read_jobs(jobs, str(base), base.name)
    if not fleet.cards and not fleet.confirm_cards:
        raise GpuPerfError(f"{base}: no results documents (schema {RESULTS_SCHEMA}) in any job folder: nothing to "
                           f"check. Point at ROOT/<fleet-run-id>, whose job folders hold the runs' --gpuperf-json files")
    return fleet


def load_labelled(pairs: Sequence[tuple[str, str]], run_id: str = "files") -> Fleet:
    """A fleet from ``LABEL=FILE`` pairs (``gpuperf fleet report --files``): files with one label are one
    job's (saved runs that record no UUID are told apart by the label their owner gives them)."""
    jobs: dict[str, list[Path]] = {}
    for label, path in pairs:
        if not Path(path).is_file():
            raise GpuPerfError(f"{path}: no such results file (--files LABEL=FILE)")
        jobs.setdefault(label, []).append(Path(path))
    fleet = read_jobs([(label, {}, files) for label, files in jobs.items()], "", run_id)
    if not fleet.cards:
        raise GpuPerfError("none of the --files is a results document: nothing to check")
    return fleet
