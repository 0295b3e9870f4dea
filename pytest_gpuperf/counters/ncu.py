"""Nsight Compute counters for the kernel-class dataset (paper 004 §4.3, §5.1) — one job: collect counters.

Paper 004 classifies each run of K1–K10 from the hardware counters ``nvprof`` reported on a TITAN V:
the union of the non-zero *efficiency/utilisation* and *throughput* metrics (48 inputs; §5.4: the
absolute counts "mislead the ML classifiers" and were dropped), and it quotes Nsight Compute's SM % and
Mem % (Table 1). ``nvprof`` does not support sm_90, so :data:`METRICS` maps the paper's metric kinds onto
the ``ncu`` metric names NVIDIA lists as their equivalents (the nvprof→Perfworks table of the CUPTI /
Nsight Compute docs, and the metrics of ncu's own SpeedOfLight, Occupancy, ComputeWorkloadAnalysis,
MemoryWorkloadAnalysis and WarpStateStats sections). Every one is a ratio, a percentage of peak or a
per-cycle rate — the paper's efficiency/throughput kind — and a hardware counter, so a handful of
replay passes collects them all. :data:`UNMAPPED` lists what the paper names and this list leaves out.

Collection: the parent writes the plan (:mod:`.ncu_worker`), runs ::

    ncu --csv --print-units base --metrics <list> --target-processes all --cache-control all \
        --clock-control none -k regex:^(K1|…|spmv)$ python -m pytest_gpuperf.counters.ncu_worker spec.json

under a timeout, parses the CSV into one value per (run, metric) and checks every profiled kernel against
the worker's launch log (the n-th profiled kernel is the n-th planned run). ``--clock-control none``
is deliberate: ncu's default locks the clocks to base, and this project must never change the card's
clocks. ``--cache-control all`` flushes the caches before every replay pass, so each pass of a run
starts from the same cache state.

Failures say what to do: no ``ncu`` → :class:`NcuUnavailable` (skip, with where it was looked for);
``ERR_NVGPUCTRPERM`` → :class:`NcuUnavailable` with the fix; a timeout → :class:`NcuTimeout` naming it;
a metric this ncu does not know → :class:`NcuMetricError` (``profile`` drops it once and says so).

``python -m pytest_gpuperf.counters.ncu [--device N] [--per-kernel K]`` profiles K runs of each kernel and
prints the values and the time per launch: a cheap check of the metric list before the whole dataset.
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..corpora import kernel_classes as kc
from ..errors import GpuPerfError
from .ncu_worker import PlannedRun, plan, write_spec


@dataclass(frozen=True)
class CounterMetric:
    """One feature: the ncu metric (sm_90, ncu 2025.3), the paper's nvprof metric it stands for, and
    what it separates among the classes."""

    name: str
    paper: str
    why: str


METRICS: tuple[CounterMetric, ...] = (
    # Table 1's two columns (Nsight Compute's Speed-of-Light header)
    CounterMetric("sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM % (Table 1)",
                  "compute-bound (K3–K8) vs memory-bound (K1, K2, K9) classes"),
    CounterMetric("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "Mem % (Table 1)",
                  "memory-bound classes near the roofline"),
    # SM efficiency / occupancy / issue
    CounterMetric("smsp__cycles_active.avg.pct_of_peak_sustained_elapsed", "sm_efficiency",
                  "idle SMs: tail effects of small grids and large groups"),
    CounterMetric("sm__warps_active.avg.pct_of_peak_sustained_active", "achieved_occupancy",
                  "group size, shared memory and registers per class"),
    CounterMetric("smsp__issue_active.avg.pct_of_peak_sustained_active", "issue_slot_utilization",
                  "instruction-bound vs stalled kernels"),
    CounterMetric("sm__inst_executed.avg.per_cycle_active", "ipc", "instruction throughput"),
    CounterMetric("smsp__thread_inst_executed_per_inst_executed.ratio", "warp_execution_efficiency",
                  "divergence: stencil borders, SpMV rows, guarded tails (threads per warp instruction, of 32)"),
    CounterMetric("smsp__warps_eligible.avg.per_cycle_active", "eligible_warps_per_cycle",
                  "latency hiding (K4–K6 ILP)"),
    # instruction mix as pipe utilisation (the paper's *_fu_utilization)
    CounterMetric("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "single_precision_fu_utilization",
                  "K1 (one add) vs K2 (two multiplies) per streamed element; GEMM"),
    CounterMetric("sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", "special_fu_utilization",
                  "sinf/cosf of K3–K6"),
    CounterMetric("sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", "ldst_fu_utilization",
                  "memory instructions per work: K4 (32-bit) vs K5 (64-bit) vs K6 (128-bit) loads"),
    CounterMetric("sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active",
                  "inst_integer / inst_bit_convert (as a rate)", "index arithmetic of stencils and GEMM"),
    # memory hierarchy
    CounterMetric("dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram_utilization",
                  "DRAM-bound streaming vs cache-resident kernels"),
    CounterMetric("lts__t_sectors.avg.pct_of_peak_sustained_elapsed", "l2_utilization", "L2 traffic (K7 re-reads)"),
    CounterMetric("lts__t_sector_hit_rate.pct", "l2_tex_hit_rate", "operand reuse through L2 (K7, stencils)"),
    CounterMetric("l1tex__t_sector_hit_rate.pct", "global_hit_rate", "neighbour reuse in L1 (K9 vs K10)"),
    CounterMetric("l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed",
                  "shared_utilization", "shared-memory classes K8, K10 vs K7, K9"),
    # stall reasons (per issued instruction, ncu's WarpStateStats form of nvprof's stall_* percentages)
    CounterMetric("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
                  "stall_memory_dependency", "latency-bound loads"),
    CounterMetric("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", "stall_sync",
                  "__syncthreads of K8, K10"),
    CounterMetric("smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio", "stall_pipe_busy",
                  "compute-bound classes"),
)
METRIC_NAMES: tuple[str, ...] = tuple(m.name for m in METRICS)

#: Metrics the paper names (or its nvprof set holds) that this list leaves out, and why.
UNMAPPED: dict[str, str] = {
    "gld_requested_throughput": "named in §5.1; NVIDIA's nvprof→ncu table lists no equivalent (requested bytes "
                                "exist only as SASS-patched smsp__sass_* counters); global load traffic is seen "
                                "through dram/lts/l1tex utilisation and hit rates instead",
    "gld_efficiency, gst_efficiency, shared_efficiency, branch_efficiency, flop_sp_efficiency":
        "their ncu equivalents are smsp__sass_* metrics, collected by SASS patching (instrumented replays) — "
        "left out to keep the whole dataset within the profiling budget; the LSU/FMA pipe utilisation and "
        "threads per warp instruction cover load width, arithmetic and divergence",
    "double/half precision, tensor, atomic, texture-unit metrics":
        "zero for these fp32 kernels without atomics or textures (the paper dropped its zero counters too)",
    "absolute counts (inst_executed, *_transactions, …)": "the paper found they mislead the classifiers (§5.4)",
}

_NAMES = "|".join(re.escape(n) for n in kc.CLASSES + kc.UNSEEN)
#: Only the dataset's kernels are profiled, not anything CuPy might launch itself.
KERNEL_FILTER = f"regex:^({_NAMES})$"
#: ncu options every collection uses (the order is the command line's).
NCU_OPTIONS: tuple[str, ...] = ("--csv", "--print-units", "base", "--target-processes", "all",
                                "--cache-control", "all", "--clock-control", "none")
DEFAULT_TIMEOUT_S = 240.0
_CANDIDATES = ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu", "/usr/local/cuda-*/bin/ncu")


class NcuUnavailable(GpuPerfError):
    """Counters cannot be collected here (no ncu, no permission): the test skips with ``reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NcuError(GpuPerfError):
    """ncu ran but the collection failed (worker error, unparsable output, launches that do not match)."""


class NcuTimeout(NcuError):
    """ncu did not finish within the timeout."""


class NcuMetricError(NcuError):
    """ncu rejected some requested metrics (unknown on this chip or version)."""

    def __init__(self, metrics: Sequence[str], lines: Sequence[str]) -> None:
        super().__init__(f"ncu rejected metric(s) {', '.join(metrics)}: " + " | ".join(lines[:5]))
        self.metrics = list(metrics)


# ---- finding ncu ------------------------------------------------------------------------------------
def find_ncu(candidates: Sequence[str] = _CANDIDATES, path: str | None = None) -> str | None:
    """``ncu`` on PATH, else the toolkit's and the standalone installs' usual places; None if absent."""
    found = shutil.which("ncu", path=path)
    if found:
        return found
    for pattern in candidates:
        for hit in sorted(glob.glob(pattern), reverse=True):
            if os.path.isfile(hit) and os.access(hit, os.X_OK):
                return hit
    return None


def require_ncu(candidates: Sequence[str] = _CANDIDATES, path: str | None = None) -> str:
    found = find_ncu(candidates, path)
    if found is None:
        raise NcuUnavailable("Nsight Compute CLI (ncu) not found on PATH nor in " + ", ".join(candidates) +
                             "; it ships with the CUDA toolkit (nsight-compute) — install it or put it on PATH")
    return found


def parse_version(text: str) -> str:
    """``Version 2025.3.1.0 (build …)`` → ``2025.3.1.0`` (empty if absent)."""
    m = re.search(r"Version\s+(\d+(?:\.\d+)+)", text)
    return m.group(1) if m else ""


def version(ncu: str) -> str:
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({exc})"
    return parse_version(out.stdout + out.stderr) or (out.stdout + out.stderr).strip()[:200]


#: the module ncu profiles for the kernel-class dataset
WORKER = "pytest_gpuperf.counters.ncu_worker"


def command(ncu: str, metrics: Sequence[str], spec: Path, python: str = sys.executable,
            kernel_filter: str = KERNEL_FILTER, worker: str = WORKER) -> list[str]:
    """The ncu command line that profiles ``worker`` (a module run with ``-m``) on ``spec``, profiling
    the kernels ``kernel_filter`` names (the kernel-class dataset's by default)."""
    return [ncu, *NCU_OPTIONS, "--metrics", ",".join(metrics), "--kernel-name", kernel_filter,
            python, "-m", worker, str(spec)]


# ---- parsing ----------------------------------------------------------------------------------------
@dataclass
class KernelResult:
    """One profiled kernel launch: ncu's ID, name, launch shape and metric values (base units)."""

    id: int
    kernel: str
    block: tuple[int, ...]
    grid: tuple[int, ...]
    values: dict[str, float] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    process: str = ""


_PREFIX = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "m": 1e-3, "u": 1e-6, "n": 1e-9}
_BASE_UNITS = {"byte", "second", "cycle", "inst", "warp", "sector", "request", "thread", "block", "wavefront",
               "hz"}


def _unit_scale(part: str) -> tuple[float, str]:
    if part in _BASE_UNITS or not part:
        return 1.0, part
    if part[0] in _PREFIX and part[1:] in _BASE_UNITS:
        return _PREFIX[part[0]], part[1:]
    return 1.0, part


def parse_value(text: str, unit: str = "") -> tuple[float, str]:
    """``"4,587,520"`` → 4587520.0; ``n/a`` → NaN; scaled units (``Kbyte``, ``Gbyte/second``, ``usecond``)
    → base units, in case a run prints them although ``--print-units base`` is passed."""
    t = text.strip().replace(",", "")
    if t.lower() in ("", "n/a", "nan", "-"):
        value = math.nan
    else:
        try:
            value = float(t)
        except ValueError:
            value = math.nan
    num, _, den = unit.partition("/")
    sn, bn = _unit_scale(num)
    sd, bd = _unit_scale(den) if den else (1.0, "")
    return value * sn / sd, (f"{bn}/{bd}" if den else bn)


def _shape(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in re.findall(r"\d+", text))


def parse_csv(text: str) -> list[KernelResult]:
    """ncu's ``--csv`` output (one row per kernel and metric) → one result per kernel, in ID order.

    Lines that are not CSV rows are skipped: ``==PROF==``/``==WARNING==`` lines, the profiled program's
    own output and banners. The header is the line that names the ``ID`` and ``Metric Name`` columns."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"') and '"Metric Name"' in ln), None)
    if start is None:
        return []
    header = next(csv.reader([lines[start]]))
    col = {name: i for i, name in enumerate(header)}
    for need in ("ID", "Kernel Name", "Metric Name", "Metric Value"):
        if need not in col:
            raise NcuError(f"ncu CSV header lacks the {need!r} column: {header}")
    rows = [ln for ln in lines[start + 1:] if ln.startswith('"')]
    results: dict[int, KernelResult] = {}
    for row in csv.reader(rows):
        if len(row) != len(header) or not row[col["ID"]].strip().isdigit():
            continue
        kid = int(row[col["ID"]])
        res = results.get(kid)
        if res is None:
            res = results[kid] = KernelResult(kid, row[col["Kernel Name"]],
                                              _shape(row[col["Block Size"]]) if "Block Size" in col else (),
                                              _shape(row[col["Grid Size"]]) if "Grid Size" in col else (),
                                              process=row[col["Process ID"]] if "Process ID" in col else "")
        unit = row[col["Metric Unit"]] if "Metric Unit" in col else ""
        value, base = parse_value(row[col["Metric Value"]], unit)
        res.values[row[col["Metric Name"]]] = value
        res.units[row[col["Metric Name"]]] = base
    return [results[k] for k in sorted(results)]


def passes(text: str) -> dict[str, int]:
    """Replay passes per kernel name where ncu printed its progress lines (``… - 9 passes``)."""
    out: dict[str, int] = {}
    for m in re.finditer(r'Profiling "([^"]+)".*?(\d+) pass', text):
        out[m.group(1)] = max(out.get(m.group(1), 0), int(m.group(2)))
    return out


# ---- diagnosing ----------------------------------------------------------------------------------------
_PERMISSION = re.compile(r"ERR_NVGPUCTRPERM|permission to access NVIDIA GPU Performance Counters", re.I)
PERMISSION_FIX = ("run the profiler as root (in a container: with CAP_SYS_ADMIN), or let every user read the "
                  "counters: `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in a file under "
                  "/etc/modprobe.d/, then reload the nvidia module or reboot "
                  "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)")


def _tail(text: str, n: int = 25) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def diagnose(output: str, returncode: int, metrics: Sequence[str],
             kernel_filter: str = KERNEL_FILTER) -> GpuPerfError | None:
    """The error a finished ncu run amounts to, or None. Permission problems first (they can look like a
    normal run that profiled nothing), then rejected metrics, then a failed worker."""
    lines = output.splitlines()
    perm = next((ln for ln in lines if _PERMISSION.search(ln)), None)
    if perm is not None:
        return NcuUnavailable(f"ncu may not read the GPU performance counters here ({perm.strip()}). Fix: "
                              + PERMISSION_FIX)
    errors = [ln.strip() for ln in lines if "==ERROR==" in ln]
    bad = [m for m in metrics if any("metric" in e.lower() and (m in e or m.split(".")[0] in e) for e in errors)]
    if bad:
        return NcuMetricError(bad, [e for e in errors if "metric" in e.lower()])
    if returncode != 0:
        return NcuError(f"ncu (or the worker it profiled) exited with status {returncode}:\n{_tail(output)}")
    if "No kernels were profiled" in output:
        return NcuError(f"ncu profiled no kernel (filter {kernel_filter}):\n{_tail(output)}")
    return None


def match(results: Sequence[KernelResult], launches: Sequence[Mapping[str, Any]]) -> None:
    """The n-th profiled kernel must be the n-th launch of the worker (name, block, grid): the check that
    makes tagging by launch order safe."""
    if len(results) != len(launches):
        raise NcuError(f"ncu reported {len(results)} kernels but the worker launched {len(launches)}; a kernel "
                       "failed to profile or an unplanned kernel matched the filter")
    for res, launch in zip(results, launches):
        want = (launch["kernel"], tuple(launch["block"]), tuple(launch["grid"]))
        got = (res.kernel, tuple(res.block[:3]) + (1,) * (3 - len(res.block)),
               tuple(res.grid[:3]) + (1,) * (3 - len(res.grid)))
        if got != want:
            raise NcuError(f"profiled kernel ID {res.id} is {got} but launch {launch['tag']} was {want}: "
                           "launch order and ncu's order disagree")


# ---- running -------------------------------------------------------------------------------------------
def run_command(cmd: Sequence[str], timeout_s: float, cwd: str | None = None,
                env: Mapping[str, str] | None = None) -> tuple[int, str, str, float]:
    """Run ``cmd`` in its own process group; on timeout kill that group (ncu *and* the program it
    profiles) and raise :class:`NcuTimeout`. Returns (status, stdout, stderr, wall seconds)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                            env=None if env is None else dict(env), start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        raise NcuTimeout(f"ncu did not finish within the {timeout_s:g} s timeout (it replays every kernel once "
                         "per counter pass): shrink the plan or the metric list, or raise the timeout "
                         f"(--gpuperf-ncu-timeout). Last output:\n{_tail(out + err, 10)}") from None
    return proc.returncode, out, err, time.perf_counter() - t0


@dataclass
class Profile:
    """The collected dataset: every planned run with its profiled kernel, and how it was collected."""

    runs: list[PlannedRun]
    results: list[KernelResult]
    metrics: list[str]
    dropped: list[str]
    command: list[str]
    wall_s: float
    raw: str
    version: str = ""
    passes: dict[str, int] = field(default_factory=dict)
    launches: list[dict[str, Any]] = field(default_factory=list)  # the worker's launch log, one per run


def worker_env() -> dict[str, str]:
    """The worker imports this package: put its root first on PYTHONPATH whatever the current directory."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def profile(runs: Sequence[PlannedRun], device_index: int, metrics: Sequence[str] = METRIC_NAMES,
            timeout_s: float = DEFAULT_TIMEOUT_S, workdir: Path | None = None, ncu: str | None = None) -> Profile:
    """Profile every planned run once on ``cuda:<device_index>`` and return its counters.

    A metric this ncu rejects is dropped and the collection retried once (recorded in ``dropped``), so one
    unknown name does not cost the whole run; rejections on the retry are errors."""
    ncu = ncu or require_ncu()
    work = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="gpuperf-ncu-"))
    work.mkdir(parents=True, exist_ok=True)
    spec, log = work / "ncu-spec.json", work / "ncu-launches.json"
    write_spec(spec, runs, device_index, log)
    wanted, dropped = list(metrics), []
    ver = version(ncu)
    while True:
        if log.exists():
            log.unlink()
        cmd = command(ncu, wanted, spec)
        rc, out, err, wall = run_command(cmd, timeout_s, cwd=str(work), env=worker_env())
        problem = diagnose(out + "\n" + err, rc, wanted)
        if isinstance(problem, NcuMetricError) and not dropped:
            dropped = [m for m in wanted if m in problem.metrics]
            wanted = [m for m in wanted if m not in problem.metrics]
            if wanted:
                continue
        if problem is not None:
            raise problem
        break
    results = parse_csv(out) or parse_csv(out + "\n" + err)
    if not results:
        raise NcuError(f"no CSV rows in ncu's output (command: {' '.join(cmd)}):\n{_tail(out + err)}")
    if not log.exists():
        raise NcuError(f"the worker wrote no launch log ({log}):\n{_tail(err)}")
    launches = json.loads(log.read_text())
    match(results, launches)
    if len(results) != len(runs):
        raise NcuError(f"{len(results)} profiled kernels for {len(runs)} planned runs")
    return Profile(list(runs), results, wanted, dropped, cmd, wall, out, ver, passes(out + err), launches)


# ---- features ------------------------------------------------------------------------------------------
def feature_matrix(results: Sequence[KernelResult], metrics: Sequence[str]) -> tuple[np.ndarray, dict[str, int]]:
    """One row per profiled run, one column per metric (in ``metrics`` order), the values as ncu reported
    them. A metric missing from a run is an error (the collection is incomplete); a non-finite value
    (a ratio over zero events) becomes 0 and is counted per metric in the second return value."""
    rows: list[list[float]] = []
    non_finite: dict[str, int] = {}
    for res in results:
        row = []
        for m in metrics:
            if m not in res.values:
                raise NcuError(f"profiled kernel ID {res.id} ({res.kernel}) has no value for {m}")
            v = float(res.values[m])
            if not math.isfinite(v):
                non_finite[m] = non_finite.get(m, 0) + 1
                v = 0.0
            row.append(v)
        rows.append(row)
    return np.asarray(rows, dtype=float).reshape(len(rows), len(metrics)), non_finite


def compact(prof: Profile, digits: int = 5) -> dict[str, Any]:
    """The dataset as a small JSON-able dict (per run: tag, launch, values in ``metrics`` order) — what the
    suite keeps in the results beside the raw CSV."""
    x, _ = feature_matrix(prof.results, prof.metrics)
    return {"metrics": list(prof.metrics),
            "runs": [{"tag": r.tag, "kernel": r.kernel, "size": r.size, "local": r.local, "rep": r.rep,
                      "ncu_id": res.id, "block": list(res.block), "grid": list(res.grid),
                      "x": [float(f"{v:.{digits}g}") for v in row]}
                     for r, res, row in zip(prof.runs, prof.results, x)]}


def dataset_plan(per_kernel: int | None = None, reps: int = 1) -> list[PlannedRun]:
    """The counter dataset: K1–K10 and the three unseen kernels over the GPU grid of the timing dataset
    (3 sizes × 5 group sizes), ``reps`` repetitions; ``per_kernel`` keeps the first runs of each kernel."""
    runs = plan(kc.CLASSES + kc.UNSEEN, kc.GPU_GRID, reps=reps)
    if per_kernel is None:
        return runs
    kept: list[PlannedRun] = []
    seen: dict[str, int] = {}
    for r in runs:
        if seen.get(r.kernel, 0) < per_kernel:
            seen[r.kernel] = seen.get(r.kernel, 0) + 1
            kept.append(r)
    return [PlannedRun(i, r.kernel, r.size, r.local, r.rep, r.seed) for i, r in enumerate(kept)]


def main(argv: Iterable[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Profile (part of) the kernel-class dataset with ncu and print "
                                             "the counters: a check of the metric list and the cost per launch.")
    ap.add_argument("--device", type=int, default=0, help="CUDA device index")
    ap.add_argument("--per-kernel", type=int, default=1, help="runs per kernel (0: the whole dataset)")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S)
    ap.add_argument("--workdir", default=None, help="keep spec, launch log and raw CSV here")
    a = ap.parse_args(list(argv) if argv is not None else None)
    runs = dataset_plan(a.per_kernel or None)
    try:
        prof = profile(runs, a.device, timeout_s=a.timeout, workdir=Path(a.workdir) if a.workdir else None)
    except NcuUnavailable as exc:
        print(f"unavailable: {exc.reason}")
        return 2
    if a.workdir:
        (Path(a.workdir) / "ncu-raw.csv").write_text(prof.raw)
    full = len(dataset_plan())
    print(f"ncu {prof.version}: {len(runs)} launches × {len(prof.metrics)} metrics in {prof.wall_s:.1f} s "
          f"({prof.wall_s / len(runs):.2f} s/launch incl. start-up; whole dataset: {full} launches)")
    if prof.dropped:
        print(f"dropped (rejected by this ncu): {', '.join(prof.dropped)}")
    if prof.passes:
        print(f"passes: {prof.passes}")
    x, non_finite = feature_matrix(prof.results, prof.metrics)
    for j, m in enumerate(prof.metrics):
        print(f"{m:<80} " + " ".join(f"{r.kernel}={x[i, j]:.3g}" for i, r in enumerate(prof.runs)))
    if non_finite:
        print(f"non-finite values (set to 0): {non_finite}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
