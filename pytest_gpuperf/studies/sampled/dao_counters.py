"""Dao's hardware counters (thesis Table 2.1) on a modern NVIDIA GPU, through Nsight Compute — one job:
collect the counters of the application study's two samples.

Dao read the GTX 280's and GTX 580's counters from OpenCL at his two sampling runs (``P_sat1``, ``P_sat2``
work-groups per SM, §2.5.2). Those counters (CUPTI events of compute capability 1.x/2.x) do not exist on
sm_90, and ``nvprof`` does not support it: :data:`COUNTERS` maps each of his counters onto the ``ncu``
metrics NVIDIA lists as its equivalent (the nvprof→Perfworks table of the Nsight Compute docs) and says why
where it is a substitute; :data:`NOT_COUNTED` lists his features that come from elsewhere here. Every metric
is an absolute count over the whole GPU (``.sum``), except the CTA launches per SM, which Dao read on one SM:
its ``.max`` over its ``.avg`` over the SMs gives the imbalance he used it for.

Collection: for each kernel the study measured, ncu profiles one launch of its first ``P1`` and one of its
first ``P2`` work-groups — the same launches the study timed, from the same problem at the same size — in a
worker process (:mod:`.dao_counters_worker`), under ``ncu.NCU_OPTIONS`` (clocks left alone, caches flushed
before every replay pass). Two launches a kernel, once per study run: the full runs are never profiled (the
model's instruction count of a run of ``N`` groups is ``I_P2 · N / P2``, Dao's own formula, §2.5.2).
The machinery is :mod:`.ncu`'s: the command, the timeout that kills ncu and its worker, the diagnosis (no
ncu or no counter permission → :class:`.ncu.NcuUnavailable`, a skip with the fix; a metric this ncu rejects
is dropped once and the collection retried), the CSV parser and the launch-log check.
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...counters import ncu
from .dao_counters_worker import SampleLaunch, write_spec

#: the identity of the counter set (:data:`COUNTERS`): a change of the table is another figure
COUNTER_SET = "dao-table-2.1-ncu-1"
#: the two sampling points whose counters are read, as the worker's plan names them
POINTS = ("p1", "p2")


@dataclass(frozen=True)
class DaoCounter:
    """One of Dao's counters (Table 2.1's name, the GPUs he read it on), the ncu metrics that stand for it
    on sm_90 and why they do (or what differs)."""

    dao: str
    gpus: str
    metrics: tuple[str, ...]
    why: str


ISSUED = "smsp__inst_issued.sum"
EXECUTED = "smsp__inst_executed.sum"
BRANCHES = "smsp__sass_branch_targets.sum"
DIVERGENT = "smsp__sass_branch_targets_threads_divergent.sum"
L1_HIT = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"
L1_MISS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum"
L2_HIT = "lts__t_sectors_srcunit_tex_lookup_hit.sum"
L2_MISS = "lts__t_sectors_srcunit_tex_lookup_miss.sum"
BANK_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"
SHARED_LD = "smsp__inst_executed_op_shared_ld.sum"
SHARED_ST = "smsp__inst_executed_op_shared_st.sum"
GLOBAL_LD = "smsp__inst_executed_op_global_ld.sum"
GLOBAL_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
CTAS_MAX = "sm__ctas_launched.max"
CTAS_AVG = "sm__ctas_launched.avg"

COUNTERS: tuple[DaoCounter, ...] = (
    DaoCounter("issued instructions", "GTX 280", (ISSUED,),
               "nvprof inst_issued's equivalent: warp instructions issued, re-issues included (Dao's I of t_ML)"),
    DaoCounter("executed instructions", "GTX 280/580", (EXECUTED,), "nvprof inst_executed's equivalent"),
    DaoCounter("branches", "GTX 280/580", (BRANCHES,),
               "nvprof branch's equivalent (a SASS-patched metric: ncu instruments the kernel for it)"),
    DaoCounter("divergent branches", "GTX 280", (DIVERGENT,),
               "nvprof divergent_branch's equivalent (SASS-patched, as branches)"),
    DaoCounter("L1 miss rate, total L1 accesses", "GTX 580", (L1_HIT, L1_MISS),
               "nvprof l1_global_load_hit / _miss: Fermi counted 128-byte global-load requests that hit or missed "
               "L1, sm_90 counts 32-byte sectors of global loads that hit or missed; accesses = hits + misses"),
    DaoCounter("L2 miss rate", "GTX 580", (L2_HIT, L2_MISS),
               "Fermi's l2_subp*_read_sector_misses / _queries counted L2 sectors per slice; sm_90 counts the "
               "L2 sectors the SMs' L1 requested (reads and writes) that hit or missed, over all slices"),
    DaoCounter("bank conflicts", "GTX 580", (BANK_CONFLICTS,),
               "nvprof l1_shared_bank_conflict's equivalent (shared loads and stores together)"),
    DaoCounter("shared loads/stores", "GTX 580", (SHARED_LD, SHARED_ST),
               "nvprof shared_load / shared_store's equivalents: warp-level shared-memory instructions"),
    DaoCounter("global loads/coalesced", "GTX 280", (GLOBAL_LD, GLOBAL_SECTORS),
               "the GT200 counted global load requests and the coalesced ones; sm_90 has no 'coalesced' "
               "request: coalescing is read as the 32-byte sectors a global-load instruction needs (nvprof "
               "gld_request and gld_transactions' equivalents)"),
    DaoCounter("sm_cta_launch (§2.6.2)", "GTX 580", (CTAS_MAX, CTAS_AVG),
               "Dao read the work-groups launched on the one SM his counters covered, which exposed uneven "
               "distribution; ncu counts every SM: the most on one SM against the mean gives that imbalance"),
)
METRIC_NAMES: tuple[str, ...] = tuple(dict.fromkeys(m for c in COUNTERS for m in c.metrics))

#: Dao's features (Table 2.1) that are not ncu metrics here, and where they come from instead
NOT_COUNTED: Mapping[str, str] = {
    "execution time": "the study's own device-timed medians of the two samples (what the linear model uses); "
                      "ncu's replayed durations run with flushed caches and its own launch overhead",
    "work-items": "the launch's work-groups × work-group size, exact (the GT200's counter counted them)",
    "warp serializes (GTX 280)": "no sm_90 counter: Volta and later re-issue no serialized warp instructions "
                                 "the way the GT200 did; its causes are read as bank conflicts and as the "
                                 "issued/executed instruction difference",
    "active work-groups, registers per work-item": "the compiler's, as Dao's: P_sat from the occupancy rules "
                                                   "and the kernel's register count",
    "IPS of the linear model": "computed from the issued instructions and the linear model's time (as Dao's)",
}


def table() -> list[dict[str, str]]:
    """:data:`COUNTERS` as JSON rows (what the records' ``info`` holds)."""
    return [{"dao": c.dao, "dao_gpus": c.gpus, "ncu": ", ".join(c.metrics), "why": c.why} for c in COUNTERS]


def kernel_filter(names: Sequence[str]) -> str:
    """ncu's ``--kernel-name`` regex matching exactly the kernels ``names``."""
    if not names:
        raise ValueError("no kernel to profile: the study measured none")
    return "regex:^(" + "|".join(re.escape(n) for n in dict.fromkeys(names)) + ")$"


def plan(samples: Mapping[str, tuple[int, int, int]], size: str) -> list[SampleLaunch]:
    """The launches to profile, in order: per kernel (``name → (P1 groups, P2 groups, work-group size)``,
    sorted by name) its ``P1`` then its ``P2`` launch, on the problem at ``size``."""
    out: list[SampleLaunch] = []
    for name in sorted(samples):
        p1, p2, local = samples[name]
        if not 0 < p1 < p2:
            raise ValueError(f"{name}: sampling points must satisfy 0 < P1 < P2, got P1={p1}, P2={p2}")
        for point, groups in zip(POINTS, (p1, p2)):
            out.append(SampleLaunch(len(out), name, size, point, int(groups), int(local)))
    return out


@dataclass
class SampleCounters:
    """The counters of every planned launch, by kernel and point (base units, as ncu reported them), and
    how they were collected (what the records say)."""

    values: dict[str, dict[str, dict[str, float]]]
    metrics: list[str]
    dropped: list[str] = field(default_factory=list)
    version: str = ""
    wall_s: float = 0.0
    passes: dict[str, int] = field(default_factory=dict)
    raw: str = ""

    def info(self) -> dict[str, Any]:
        return {"ncu_version": self.version, "metrics": list(self.metrics), "dropped": list(self.dropped),
                "wall_s": round(self.wall_s, 1), "launches": 2 * len(self.values), "counter_table": table(),
                "not_counted": dict(NOT_COUNTED)}


def by_point(launches: Sequence[SampleLaunch], results: Sequence[ncu.KernelResult],
             metrics: Sequence[str]) -> dict[str, dict[str, dict[str, float]]]:
    """``kernel → point → metric → value`` from ncu's results in launch order. A launch lacking a metric
    is an error naming it (the collection is incomplete); a non-finite value too (these are counts)."""
    if len(results) != len(launches):
        raise ncu.NcuError(f"{len(results)} profiled kernels for {len(launches)} planned launches")
    out: dict[str, dict[str, dict[str, float]]] = {}
    for launch, res in zip(launches, results):
        if res.kernel != launch.kernel:
            raise ncu.NcuError(f"profiled kernel ID {res.id} is {res.kernel}, planned launch {launch.tag} is "
                               f"{launch.kernel}")
        missing = [m for m in metrics if m not in res.values]
        bad = [m for m in metrics if m in res.values and not math.isfinite(res.values[m])]
        if missing or bad:
            raise ncu.NcuError(f"{launch.kernel} at {launch.point} (ncu ID {res.id}): "
                               + (f"no value for {', '.join(missing)}" if missing else "")
                               + ("; " if missing and bad else "")
                               + (f"non-finite {', '.join(bad)}" if bad else "")
                               + f"; the profile's metrics are {', '.join(sorted(res.values))}")
        out.setdefault(launch.kernel, {})[launch.point] = {m: float(res.values[m]) for m in metrics}
    return out


def collect(launches: Sequence[SampleLaunch], device_index: int, timeout_s: float = ncu.DEFAULT_TIMEOUT_S,
            workdir: Path | None = None, ncu_path: str | None = None,
            metrics: Sequence[str] = METRIC_NAMES) -> SampleCounters:
    """Profile every planned launch once on ``cuda:<device_index>`` (module docstring). A metric this ncu
    rejects is dropped and the collection retried once (``dropped`` says which); what else goes wrong is an
    :class:`.ncu.NcuError` (:class:`.ncu.NcuTimeout` after ``timeout_s``) or :class:`.ncu.NcuUnavailable`."""
    path = ncu_path or ncu.require_ncu()
    work = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="gpuperf-dao-ncu-"))
    work.mkdir(parents=True, exist_ok=True)
    spec, log = work / "dao-ncu-spec.json", work / "dao-ncu-launches.json"
    write_spec(spec, launches, device_index, log)
    names = [la.kernel for la in launches]
    filt = kernel_filter(names)
    wanted, dropped = list(metrics), []
    version = ncu.version(path)
    while True:
        if log.exists():
            log.unlink()
        cmd = ncu.command(path, wanted, spec, kernel_filter=filt, worker="pytest_gpuperf.studies.sampled.dao_counters_worker")
        rc, out, err, wall = ncu.run_command(cmd, timeout_s, cwd=str(work), env=ncu.worker_env())
        problem = ncu.diagnose(out + "\n" + err, rc, wanted, kernel_filter=filt)
        if isinstance(problem, ncu.NcuMetricError) and not dropped:
            dropped = [m for m in wanted if m in problem.metrics]
            wanted = [m for m in wanted if m not in problem.metrics]
            if ISSUED in dropped:
                raise ncu.NcuError(f"this ncu ({version}) rejects {ISSUED}, the issued instructions Dao's t_ML "
                                   "is computed from: " + str(problem))
            if wanted:
                continue
        if problem is not None:
            raise problem
        break
    results = ncu.parse_csv(out) or ncu.parse_csv(out + "\n" + err)
    if not results:
        raise ncu.NcuError(f"no CSV rows in ncu's output (command: {' '.join(cmd)})")
    if not log.exists():
        raise ncu.NcuError(f"the worker wrote no launch log ({log})")
    ncu.match(results, json.loads(log.read_text()))
    return SampleCounters(by_point(launches, results, wanted), wanted, dropped, version, wall,
                          ncu.passes(out + err), out)


def counter_set(dropped: Sequence[str]) -> str:
    """The identity of the counters a profile holds: :data:`COUNTER_SET`, less what this ncu dropped."""
    return COUNTER_SET + (f" without {','.join(sorted(dropped))}" if dropped else "")
