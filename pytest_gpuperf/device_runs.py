"""What one device recorded in a run, and whether the run could gate it.

A :class:`DeviceRun` holds one device's metrics, baseline and test durations. A run that could not judge
a device's figures — a CPU device's host busy with other work, a card shared with another process or
throttled through more than a tenth of its metrics — is not a valid gate of that device: the functions
here say so, one line per device (what :class:`~.report.run_outcome.RunOutcome` settles the exit status
from and the summary prints), and :func:`busy_stop` stops a run early on a card another process holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from . import baselines as bl
from .baselines import lookup
from .devices import Device, DeviceInfo
from .report.results import Metric
from .timing import observers
from .verdictwords import Gate


@dataclass
class DeviceRun:
    """Everything recorded on one device during the session."""

    info: DeviceInfo
    source: lookup.Source
    metrics: dict[str, Metric] = field(default_factory=dict)
    device: Device | None = None
    reference: Any = None  # compare.load.Side of --gpuperf-compare, which replaces the baseline
    #: test id → {"duration_s": setup + call + teardown, "outcome": the call's (or the failing phase's)}
    tests: dict[str, dict[str, Any]] = field(default_factory=dict)
    busy_streak: int = 0  # tests in a row whose measurements all shared the card with another process
    stopped_busy: str | None = None  # why the run stopped early on a card held by another process

    @property
    def baseline(self) -> bl.BaselineFile:
        """The baseline entries this run is gated against (:mod:`.baselines.lookup`)."""
        return self.source.file

    @property
    def expected(self) -> dict[str, dict[str, Any]]:
        """What this run is gated against: the baseline's entries, or the reference run's metrics."""
        if self.reference is not None:
            return {n: {"test": m.test, "value": m.value} for n, m in self.reference.metrics.items()}
        return self.baseline.metrics(self.info.backend)

    def provenance(self) -> dict[str, Any]:
        """Driver/runtime/toolkit of what this run is gated against (the summary's upgrade-gate lines)."""
        if self.reference is not None:
            return {k: self.reference.environment.get(k) for k in ("driver", "runtime", "toolkit")}
        return self.baseline.provenance(self.info.backend)


def host_too_busy(runs: Iterable[DeviceRun]) -> list[str]:
    """One line per CPU device on which more than ``observers.CONTENDED_RUN_LIMIT`` of the metrics read
    ``contended`` because other work held the host's CPUs: the run could not judge them, so it is not a
    valid gate (empty when none). Metrics contended by another process on the card count in
    :func:`gpu_too_busy` instead."""
    out = []
    for run in runs:
        if not run.info.is_cpu or not run.metrics:
            continue
        n = sum(1 for m in run.metrics.values()
                if m.verdict == Gate.CONTENDED and not observers.shared_metric(m.info))
        if n > observers.CONTENDED_RUN_LIMIT * len(run.metrics):
            out.append(f"{run.info.spec}: {n} of {len(run.metrics)} metrics were measured while other work held "
                       f"this host's CPUs (verdict 'contended', info['host']), more than "
                       f"{observers.CONTENDED_RUN_LIMIT:.0%}: this run cannot gate the device; run it again on a "
                       "quiet host")
    return out


def busy_stop(run: DeviceRun, test: str, spec: str) -> str | None:
    """After test ``test`` on ``run``'s device: why the run should stop now, or None. A card held by another
    process through every measurement of :data:`observers.BUSY_STOP_TESTS` tests in a row (each window
    already taken again) will not be judged by this run — it fails as GPU TOO BUSY TO GATE either way — so
    with ``--gpuperf-when-busy=stop`` it stops instead of spending the card's time on windows it discards.
    A test that measured nothing on the card leaves the count as it was."""
    watched = [m for m in run.metrics.values() if m.test == test and "tenants" in m.info
               and m.verdict in Gate.MEASURED]
    if not watched:
        return None
    run.busy_streak = run.busy_streak + 1 if all(observers.shared_metric(m.info) for m in watched) else 0
    if run.busy_streak < observers.BUSY_STOP_TESTS:
        return None
    shared = [m for m in run.metrics.values() if observers.shared_metric(m.info)]
    procs = observers.summarize_tenants(observers.seen([m.info for m in shared], "tenants"))
    run.stopped_busy = (f"{spec}: another process held the card through every measurement of the last "
                        f"{run.busy_streak} tests ({len(shared)} metrics 'contended' after re-measuring, "
                        f"info['tenants']): {observers.describe_processes(procs['processes'])}; the run stopped "
                        f"early (--gpuperf-when-busy=finish runs every test): run it again with the card to itself")
    return run.stopped_busy


def gpu_too_busy(runs: Iterable[DeviceRun]) -> list[str]:
    """One line per device on which more than ``observers.CONTENDED_RUN_LIMIT`` of the metrics read
    ``contended`` because another process ran on the card (``info["tenants"]``), naming the processes, or
    that stopped early on such a card (:func:`busy_stop`): the run could not judge them, so it is not a
    valid gate of that device (empty when none)."""
    out = []
    for run in runs:
        if run.stopped_busy:
            out.append(run.stopped_busy)
            continue
        shared = [m for m in run.metrics.values()
                  if m.verdict == Gate.CONTENDED and observers.shared_metric(m.info)]
        if not run.metrics or len(shared) <= observers.CONTENDED_RUN_LIMIT * len(run.metrics):
            continue
        procs = observers.summarize_tenants(observers.seen([m.info for m in shared], "tenants"))
        foreign = (" (NVML gave another PID namespace's pids: one of them is this run)"
                   if procs["foreign_pids"] else "")
        out.append(f"{run.info.spec}: {len(shared)} of {len(run.metrics)} metrics were measured while other "
                   f"processes ran on the card even after re-measuring (verdict 'contended', info['tenants']), "
                   f"more than {observers.CONTENDED_RUN_LIMIT:.0%}: "
                   f"{observers.describe_processes(procs['processes'])}{foreign}; this run cannot gate the "
                   "device: run it again with the card to itself")
    return out


def too_throttled(runs: Iterable[DeviceRun]) -> list[str]:
    """One line per device on which more than ``observers.THROTTLED_RUN_LIMIT`` of the metrics read
    ``throttled``, naming the slowdown reasons NVML gave (and how many of those metrics saw each): a
    card that slows itself down through the run cannot be gated (empty when none)."""
    from .devices.nvml import SLOWDOWN_REASONS

    out = []
    for run in runs:
        slow = [m for m in run.metrics.values() if m.verdict == Gate.THROTTLED]
        if not run.metrics or len(slow) <= observers.THROTTLED_RUN_LIMIT * len(run.metrics):
            continue
        seen: dict[str, int] = {}
        for m in slow:
            for reason in {r for p in observers.seen([m.info], "power") for r in p.get("throttle_reasons") or ()}:
                if reason in SLOWDOWN_REASONS:
                    seen[reason] = seen.get(reason, 0) + 1
        reasons = (", ".join(f"{r} ({n} metrics)" for r, n in sorted(seen.items(), key=lambda x: (-x[1], x[0])))
                   or "no reason recorded")
        out.append(f"{run.info.spec}: {len(slow)} of {len(run.metrics)} metrics were measured while the card "
                   f"slowed itself down (verdict 'throttled', info['power']), more than "
                   f"{observers.THROTTLED_RUN_LIMIT:.0%}: {reasons}; this run cannot gate the device: check its "
                   "cooling and power limit (nvidia-smi -q -d PERFORMANCE) and run it again")
    return out
