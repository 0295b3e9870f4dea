"""The power-model corpus: which kernels at which launch configurations, and how one is measured.

Kernels come from the project's existing corpora, never written for the model: the 24 sampled-model
kernels (``models.corpus``), the thesis' 12 dwarf kernels (``models.dwarfs``) and the loop-free or
simply-looped tuning kernels (``tuning.kernels``) — 41 kernels, each at several work-group sizes or
problem scales, so a held-out kernel is held out in all its configurations.

Trip counts. Algorithm 10 multiplies a loop's blocks by its iteration count, which the user gives
(thesis §4.4.1). Each kernel here lists the counts of its *source* loops; the compiler may unroll a
constant loop completely (then the PTX has no loop and the counts are dropped) — any other mismatch
between the PTX's loops and the listed counts leaves the configuration out, with the reason, rather
than guessing. What was used (``loops_in_ptx``, ``trips``) is saved with every entry.

Measuring needs PTX (CUDA, or NVIDIA's OpenCL) and a power sensor (NVML); :func:`collect` is called by
``python -m pytest_gpuperf.power.collect`` on a GPU and by nothing else.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..devices.base import Device
from ..models import cfg as cfgmod
from ..models import ptx as ptxmod
from ..models.corpus import CORPUS
from ..models.dwarfs import DWARFS
from ..models.latency import LatencyTable
from ..models.power import Entry, features, load_corpus, read_corpus, save_corpus
from ..tuning.kernels import by_name as bench_by_name
from ..devices.dialect import portable
from .energy import steady_state_energy

#: source-loop trip counts of the sampled-model corpus kernels (``models.corpus``; per work-item)
CORPUS_TRIPS: dict[str, list[float]] = {
    "poly8": [8], "poly32": [32], "poly128": [128], "intmix": [16], "branchy": [24], "stencil7": [7],
    "dot16": [16], "matvec64": [64], "sinloop": [8], "group_reduce": [math.nan],  # log2(LSIZE): per launch
}
CORPUS_LOCALS = (64, 128, 256, 512)  # 64–256 for the two local-memory kernels
DWARF_SCALES = (1, 2, 4)
#: tuning kernels whose loops are simple functions of the problem: name → trip counts from the sizes
TUNING: dict[str, Callable[[dict[str, int]], list[float]]] = {
    "stencil2d": lambda s: [], "transpose_naive": lambda s: [], "matvec_row": lambda s: [float(s["n"])],
    "sgemm_naive": lambda s: [float(s["K"])], "bfs_step": lambda s: [],
}
TUNING_LOCALS = {1: ((64,), (128,), (256,), (512,)), 2: ((16, 4), (16, 16), (32, 8), (32, 16))}
N_ITEMS = 1 << 22  # corpus kernels' problem size (work-items)


@dataclass(frozen=True)
class Job:
    """One (kernel, configuration) to measure: the kernel text and name, the launch, its trip counts."""

    kernel: str
    config: str
    source: str
    entry: str
    options: tuple[str, ...]
    global_size: tuple[int, ...]
    local_size: tuple[int, ...]
    args: Callable[[], list[Any]]
    trips: list[float]
    origin: str


def _trips_for(cfg: cfgmod.Cfg, trips: Sequence[float]) -> tuple[list[float] | None, str]:
    """The counts Algorithm 10 gets for this PTX, or None with the reason (see the module's docstring)."""
    if len(cfg.loops) == len(trips):
        return list(trips), "as listed"
    if not cfg.loops:
        return [], "the compiler unrolled every loop"
    return None, f"PTX has {len(cfg.loops)} loop(s), the source {len(trips)}: trip counts unknown"


def jobs(device: Device, backend: str) -> list[Job]:
    """Every (kernel, configuration) of the corpus on ``device`` (buffers are allocated here)."""
    out: list[Job] = []
    rng = np.random.default_rng(7)
    a = device.to_device(rng.random(N_ITEMS, dtype=np.float32) + 0.5)
    b = device.to_device(rng.random(N_ITEMS, dtype=np.float32) + 0.5)
    c = device.empty(4 * N_ITEMS)
    for k in CORPUS:
        # the local-memory kernels declare 256-float work-group arrays (models.corpus): no larger groups
        for local in [x for x in CORPUS_LOCALS if not k.local_mem or x <= 256]:
            trips = list(CORPUS_TRIPS.get(k.name, []))
            if k.name == "group_reduce":
                trips = [float(int(math.log2(local)))]
            out.append(Job(k.name, f"local={local}", k.source(backend), k.name, (), (N_ITEMS,), (local,),
                           lambda: [a, b, c, np.int32(N_ITEMS)], trips, "models.corpus"))
    for d in DWARFS:
        for scale in DWARF_SCALES:
            launch = d.setup(device, scale)
            out.append(Job(d.name, f"scale={scale}", d.source, d.name, (), (launch.grid * launch.block,),
                           (launch.block,), lambda launch=launch: list(launch.args), list(launch.trips),
                           "models.dwarfs"))
    for name, trips_of in TUNING.items():
        bench = bench_by_name(name)
        sizes = bench.sizes(device)
        prepared = bench.prepare(device, rng, sizes)
        for local in TUNING_LOCALS[bench.dims]:
            out.append(Job(name, "x".join(map(str, local)), portable(bench.source, backend), bench.kernel,
                           bench.options(local), bench.ndrange(sizes, local, device), local, prepared.args,
                           trips_of(sizes), "tuning.kernels"))
    return out


def measure_job(device: Device, sensor: Any, job: Job, table: LatencyTable, timeout_s: float = 10.0) -> Entry | str:
    """The corpus entry of one job (features + steady-state power), or why it was left out."""
    info = device.info
    kern = device.compile(job.source, job.entry, job.options)
    text = device.kernel_ptx(kern)
    if not text:
        return f"{info.name} yields no PTX for {job.entry}"
    graph = cfgmod.build(ptxmod.parse(text, job.entry))
    trips, how = _trips_for(graph, job.trips)
    if trips is None:
        return how
    res = device.kernel_resources(kern)
    grid = int(np.prod(job.global_size)) // int(np.prod(job.local_size))
    block = int(np.prod(job.local_size))
    feats = features(graph, table, grid=grid, block=block, regs=int(res.regs), shared=int(res.shared), trips=trips,
                     n_sm=int(info.compute_units), cc=info.compute_capability, l2_bytes=int(info.l2_bytes or 0),
                     warp=int(info.warp_size or 32))
    args = job.args()
    e = steady_state_energy(device, sensor, lambda: device.launch(kern, job.global_size, job.local_size, args), 1.0,
                            timeout_s)
    return Entry(job.kernel, job.config, feats, e.watts, e.joules_per_launch,
                 {**e.info(), "origin": job.origin, "trips": trips, "trips_source": how,
                  "loops_in_ptx": len(graph.loops), "grid": grid, "block": block})


def collect(device: Device, table: LatencyTable, path: Path, budget_s: float, backend: str,
            log: Callable[[str], None] = print, todo: Sequence[Job] | None = None) -> tuple[int, int, list[str]]:
    """Measure the corpus (``todo``, default :func:`jobs`) into ``path``, resuming: entries already in the
    file are kept and skipped, the file is rewritten after every entry (a killed call loses one entry at
    most). Stops after ``budget_s``. Returns (entries in the file, jobs in all, reasons left out)."""
    sensor, why = device.power_sensor()
    if sensor is None:
        raise RuntimeError(f"no power sensor on {device.info.spec}: {why}")
    entries: list[Entry] = []
    if path.exists():
        _, entries = load_corpus(path)
    done = {(e.kernel, e.config) for e in entries}
    left_out: list[str] = []
    todo = list(todo) if todo is not None else jobs(device, backend)
    t_end = time.perf_counter() + budget_s
    meta = {"jobs": len(todo), "latency_sources": sorted(set(table.sources.values()) | {table.global_source})}
    for job in todo:
        if (job.kernel, job.config) in done:
            continue
        if time.perf_counter() > t_end:
            log(f"budget of {budget_s:g} s spent: {len(entries)}/{len(todo)} entries; run again to go on")
            break
        try:
            got = measure_job(device, sensor, job, table)
        except Exception as exc:  # noqa: BLE001 - one kernel's failure must not cost the corpus
            got = f"{type(exc).__name__}: {exc}"[:300]
        if isinstance(got, str):
            left_out.append(f"{job.kernel} {job.config}: {got}")
            log(f"left out {job.kernel} {job.config}: {got}")
            continue
        entries.append(got)
        save_corpus(path, device.info.to_json(), entries, {**meta, "left_out": left_out})
        log(f"{job.kernel} {job.config}: {got.watts:.1f} W, {got.joules_per_launch * 1e3:.4g} mJ/launch")
    save_corpus(path, device.info.to_json(), entries, {**meta, "left_out": left_out})
    return len(entries), len(todo), left_out


def merge(paths: Sequence[Path]) -> tuple[dict[str, Any], list[Entry], dict[str, Any]]:
    """One corpus from several collections of the same device (a device call that could not resume the
    last one's file measures its first configurations again). The first measurement of a configuration
    is its entry; every later one is kept in the entry's ``info["repeats"]`` (watts, J/launch, file), so
    the merged file also says how repeatable the corpus is (:func:`repeatability`). Files of different
    devices are refused: a corpus is one card's."""
    if not paths:
        raise ValueError("merge needs at least one corpus file")
    device: dict[str, Any] = {}
    by_key: dict[tuple[str, str], Entry] = {}
    left_out: list[str] = []
    jobs_n = 0
    sources: set[str] = set()
    for path in paths:
        dev, entries, meta = read_corpus(path)
        if device and dev.get("key") != device.get("key"):
            raise ValueError(f"{path} is a corpus of {dev.get('key')!r}, the others of {device.get('key')!r}: "
                             "merge one device's files only")
        device = device or dev
        jobs_n = max(jobs_n, int(meta.get("jobs") or 0))
        sources |= set(meta.get("latency_sources") or [])
        left_out += [x for x in meta.get("left_out") or [] if x not in left_out]
        for e in entries:
            k = (e.kernel, e.config)
            if k not in by_key:
                by_key[k] = e
                continue
            first = by_key[k]
            repeats = list(first.info.get("repeats") or [])
            repeats.append({"watts": e.watts, "joules_per_launch": e.joules_per_launch, "file": Path(path).name})
            by_key[k] = Entry(first.kernel, first.config, first.features, first.watts, first.joules_per_launch,
                              {**first.info, "repeats": repeats})
    meta_out = {"jobs": jobs_n, "latency_sources": sorted(sources), "left_out": left_out,
                "merged_from": [Path(p).name for p in paths]}
    return device, list(by_key.values()), meta_out


def repeatability(entries: Sequence[Entry]) -> dict[str, float]:
    """|repeat − first| / first of the watts of every configuration measured more than once: how far the
    corpus' own targets move between two measurements (the floor under any model's MAPE)."""
    rel = [abs(r["watts"] - e.watts) / e.watts for e in entries for r in e.info.get("repeats") or []]
    if not rel:
        return {"n": 0}
    return {"n": len(rel), "median_rel": float(statistics.median(rel)), "max_rel": float(max(rel)),
            "mean_rel": float(statistics.fmean(rel))}
