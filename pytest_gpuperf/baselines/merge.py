"""Baseline entries from several results documents of one device: the one merge rule that
``gpuperf baseline from-results`` and ``init`` write by (value = median of the runs, spread = the larger
of the median within-run σ and the between-run σ, the latter never below the median standard error a
figure carries for itself, :func:`.noise.own_se`, nor below the σ of a second mode that two or more runs
hold, :func:`~pytest_gpuperf.timing.stats.modes_sigma`). A run's figure that no measurement can take
(:func:`.validity.metric_problem`) is never merged: the merge is refused, naming it."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Sequence

import numpy as np

from ..devices.base import timer_resolution
from ..errors import GpuPerfError
from ..schemas.results_doc import MetricRecord, ResultsDocument
from ..timing.stats import MAD_TO_SIGMA, between_run_sigma, modes_sigma
from . import classes, noise, baseline_file, validity

#: impossible figures named in full in the refusal; the rest are counted
SHOWN_IMPOSSIBLE = 5


def merge_runs(docs: Sequence[ResultsDocument], k: float, floor: tuple[float, float] | None = None
               ) -> dict[str, dict[str, Any]]:
    """Baseline entries (name → entry) for one device/backend from several results documents."""
    interrupted = [doc.run.get("started", "?") for doc in docs if (doc.run or {}).get("interrupted")]
    if interrupted:
        raise GpuPerfError(f"{len(interrupted)} of the runs (started {', '.join(map(str, interrupted))}) were "
                           "interrupted before every test ran (run.interrupted): a baseline from a partial run "
                           "lacks the metrics it never reached and may hold figures of a disturbed one; run them "
                           "again and pass only complete runs")
    refuse_impossible(docs)
    # oldest first, whatever order they were named in: the provenance is the latest run's (its date is what
    # later A/A runs are told apart from the runs an entry was made from by), and so is each entry's reference
    docs = sorted(docs, key=lambda doc: str((doc.run or {}).get("started") or (doc.run or {}).get("finished") or ""))
    by_name: dict[str, list[MetricRecord]] = defaultdict(list)
    for doc in docs:
        for m in doc.metrics:
            if isinstance(m.require("value").value, (int, float)):
                by_name[m.require("name").name].append(m)
    last = docs[-1]
    is_cpu = bool(last.device.get("is_cpu"))
    prov = {"driver": last.environment.get("driver"), "runtime": last.environment.get("runtime"),
            "toolkit": last.environment.get("toolkit"), "device_name": last.device["name"],
            "date": last.run.get("finished"), "commit": last.environment.get("commit"),
            "runs": max((len(ms) for ms in by_name.values()), default=0)}
    entries = {}
    for name, ms in by_name.items():
        values = np.array([m.value for m in ms], dtype=float)
        value = float(np.median(values))
        within = [MAD_TO_SIGMA * m.stats["mad"] for m in ms if m.stats]
        own = [se for se in map(noise.own_se, ms) if se is not None]
        between = max(between_run_sigma(values), modes_sigma(values), float(np.median(own)) if own else 0.0)
        spread = max(float(np.median(within)) if within else 0.0, between)
        ref = ms[-1]
        identities = {json.dumps(m.get("identity", {}), sort_keys=True) for m in ms}
        if len(identities) > 1:
            raise GpuPerfError(f"metric {name!r} was measured with different options across the runs "
                               f"({' vs '.join(sorted(identities))}); pass only runs made the same way")
        digests = {m.get("source_digest") for m in ms}
        if len(digests - {None}) > 1:
            raise GpuPerfError(f"metric {name!r} was measured with different kernel sources across the runs (digests "
                               f"{', '.join(sorted(d for d in digests if d))}); pass only runs of the same kernels")
        pooled = [x for m in ms for x in (m.samples or [])]
        ref.require("unit", "better", "test")
        entry = baseline_file.make_entry(value=value, worst=float(values.max()), unit=ref.unit, better=ref.better,
                                 test=ref.test, info=ref.get("info", {}), tolerance=ref.tolerance,
                                 spread=spread, k=k, floor_rel=classes.floor(ref.unit, is_cpu, floor,
                                                                       classes.is_host_timed(ref.get("info")),
                                                                       noise.enough_repeats(len(values))),
                                 provenance=prov, between=between, samples=pooled or None,
                                 identity=ref.get("identity", {}), run_values=[float(v) for v in values],
                                 resolution=classes.resolution_floor(ref.unit, timer_resolution(last.device),
                                                                     ref.get("info")),
                                 # every run's kernels, or none where a run was made before digests were recorded
                                 source_digest=None if None in digests else digests.pop())
        entry["runs"] = len(values)
        entries[name] = entry
    return entries


def refuse_impossible(docs: Sequence[ResultsDocument]) -> None:
    """Raise :class:`GpuPerfError` naming every figure of the runs that no measurement can take (a negative
    time, a non-finite value or sample…: :func:`.validity.metric_problem`), with the run it is in: an entry
    is never made from one, and one left out quietly would hide a broken measurement."""
    found = [f"run {i} ({(doc.run or {}).get('started', '?')}): {why}"
             for i, doc in enumerate(docs, start=1) for m in doc.metrics
             if (why := validity.metric_problem(m, (doc.device or {}).get("peak_bandwidth_gbs")))]
    if not found:
        return
    more = len(found) - SHOWN_IMPOSSIBLE
    raise GpuPerfError(f"{len(found)} figure(s) of the runs hold impossible values, and a baseline entry is never made "
                       f"from one: {'; '.join(found[:SHOWN_IMPOSSIBLE])}{f'; and {more} more' if more > 0 else ''}. "
                       "Make those runs again alone, or leave the metrics out of the baseline (--match)")
