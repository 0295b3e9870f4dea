"""The power-model corpus: which kernels at which launch configurations, and how one is measured.

Kernels come from the project's existing corpora, never written for the model: the 24 sampled-model
kernels (``corpora.corpus``), the thesis' 12 dwarf kernels (``studies.ptx_model.dwarfs``) and the loop-free or
simply-looped tuning kernels (``tuning.kernels``) — 41 kernels — plus two of the sampled-model form that
exercise what none of those does (:data:`EXTRA`: an fp64 FMA chain, contended global atomics): 43 kernels,
each at several work-group sizes or problem scales, so a held-out kernel is held out in all its
configurations.

Trip counts. Algorithm 10 multiplies a loop's blocks by its iteration count, which the user gives
(thesis §4.4.1). Each kernel lists one count per loop *of its PTX* (NVRTC's, ``-arch=compute_XY
-std=c++17``, as the CUDA backend compiles), in header order. Where that PTX has loops the source does
not show — the remainder loop of a loop NVRTC unrolled by four, the range-reduction loop inside CUDA's
``sinf``/``cosf`` — the list says so and why (:data:`CORPUS_TRIPS`, :data:`TUNING`); the compiler may
also unroll a constant source loop completely (then the PTX has no loop and its count is dropped). Any
other mismatch between the PTX's loops and the listed counts leaves the configuration out, with the
reason, rather than guessing; :func:`check_ptx` (``python -m pytest_gpuperf.studies.static_power.collect --check-ptx
90``, no GPU) compiles every kernel offline and shows the match, and a test keeps it. What was used
(``loops_in_ptx``, ``trips``, ``trips_note``) is saved with every entry.

Measuring needs PTX (CUDA, or NVIDIA's OpenCL) and a power sensor (NVML); :func:`collect` is called by
``python -m pytest_gpuperf.studies.static_power.collect`` on a GPU and by nothing else.
"""

from __future__ import annotations

import dataclasses

import math
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ...devices.base import Device, DeviceInfo
from ..ptx_model import cfg as cfgmod
from ..ptx_model import ptx as ptxmod
from ...corpora.corpus import CORPUS, CorpusKernel
from ..ptx_model.dwarfs import DWARFS
from ..ptx_model.ptx_sweep import DWARF_SWEEP
from ..ptx_model.ptx_latency import LatencyTable
from .power_model import Entry, features, load_corpus, read_corpus, save_corpus
from ..ptx_model.scheduler import memory_counts
from ...tuning.kernels import by_name as bench_by_name
from ...devices.dialect import dialect, portable
from ...timing.energy import steady_state_energy

#: |x| from which CUDA's ``sinf``/``cosf`` leave their fast path for the Payne–Hanek range reduction (PTX:
#: ``setp.ltu.f32 %p, |x|, 0f47CE4780`` — 105615.0f — guards the 6-step loop over ``__cudart_i2opi_f``)
SIN_SLOW_PATH = 105615.0
#: the largest |argument| of the corpus kernels' ``sinf``/``cosf``: ``a`` and ``b`` are ``random() + 0.5``
#: in binary32, in [0.5, 1.5] (:func:`jobs`; the sum may round up to 1.5), and ``sinloop``'s
#: ``x = sinf(x) + b`` stays in [-0.5, 2.5]
SIN_ARG_MAX = 2.5
#: trip counts per PTX loop (header order) of the sampled-model corpus kernels (``corpora.corpus``; per
#: work-item). Constant source loops NVRTC unrolls completely (poly*, intmix, branchy, stencil7, dot16)
#: leave no PTX loop: their counts are dropped. One it unrolls in part: ``matvec64``'s 64-step loop becomes
#: a loop of 16 steps per trip (PTX: ``add.s32 %r, %r, 16; setp.ne.s32 %p, %r, 64``), run 4 times — 64
#: would count its 32 loads and 16 FMAs 64 times, 16 × too many. Two kernels have PTX loops their source
#: does not show:
#: - ``trig``: ``sinf(a[i])`` and ``cosf(b[i])`` each inline CUDA's range reduction, whose loop (6 steps)
#:   runs only on the slow path |x| ≥ :data:`SIN_SLOW_PATH`; the arguments are at most :data:`SIN_ARG_MAX`,
#:   so both loops run 0 times (the slow path's straight-line blocks still count once, as every branch's
#:   blocks do in Alg. 10);
#: - ``sinloop``: NVRTC unrolls ``for (j < 8) x = sinf(x) + b[i]`` completely, so its 8 iterations are 8
#:   copies of ``sinf``, each with its own range-reduction loop — 8 PTX loops, each run 0 times.
#: On NVIDIA's OpenCL compiler these kernels' loops may differ: a mismatch leaves them out (the reason said).
CORPUS_TRIPS: dict[str, list[float]] = {
    "poly8": [8], "poly32": [32], "poly128": [128], "intmix": [16], "branchy": [24], "stencil7": [7],
    "dot16": [16], "matvec64": [64 / 16], "group_reduce": [math.nan],  # log2(LSIZE): per launch
    "trig": [0.0, 0.0], "sinloop": [0.0] * 8,
}
#: kernels of the sampled-model form (same signature and buffers as ``corpora.corpus``) that only the power
#: corpus measures: the other corpora have no fp64 arithmetic (the H100's FP64 units: half the FP32 rate,
#: their own power) and no global atomics under contention (L2 atomic units, serialised per address).
#: ``dpoly128`` is ``poly128`` in binary64 (NVRTC unrolls its constant loop completely: no PTX loop);
#: ``atomic_hist`` adds 1 to one of 256 counters in ``c`` chosen by ``a[i]`` (uniform over the 256).
EXTRA: tuple[CorpusKernel, ...] = (
    CorpusKernel("dpoly128", "  double x = a[i], y = b[i];\n  for (int j = 0; j < 128; ++j) x = x * 0.999 + y;\n"
                             "  c[i] = (float)x;"),
    CorpusKernel("atomic_hist", "  atomic_add((GLOBAL int*)c + ((int)(a[i] * 256.0f) & 255), 1);"),
)
EXTRA_TRIPS: dict[str, list[float]] = {"dpoly128": [128], "atomic_hist": []}
EXTRA_FP64 = frozenset({"dpoly128"})
#: work-group sizes of the corpus kernels (the local-memory kernels' arrays hold 256: at most that), and the
#: problem sizes they run at (work-items): the first plan's 2^22 and a four times larger one, whose buffers no
#: longer fit in L2. A configuration of the first plan keeps its label (``local=256``); the others name their
#: size too (``local=256,n=16777216``).
CORPUS_LOCALS = (32, 64, 128, 256, 512, 1024)
CORPUS_SIZES = (1 << 22, 1 << 24)
#: the dwarf kernels' problem scales at their own block size (the first plan's, ``scale=2``), beside the block
#: sizes and scales the PTX study sweeps (``ptx_sweep.DWARF_SWEEP``: ``scale=0.25,block=256``)
DWARF_SCALES = (1, 2, 4)


def unrolled_by_4(n: int) -> list[float]:
    """Counts of a source loop ``for (k = 0; k < n; ++k)`` with a run-time ``n`` that NVRTC unrolls by
    four: the unrolled loop first (4 iterations per trip, taken when n ≥ 4), then the remainder loop
    (``.pragma "nounroll"``, one iteration per trip) — n // 4 and n % 4 times."""
    return [float(n // 4), float(n % 4)]


def _bfs_trips(sizes: dict[str, int], host: dict[str, Any], items: int) -> list[float]:
    """``bfs_step``'s edge loop: ``row_ptr[v+1] - row_ptr[v]`` iterations for a vertex in the frontier
    (``level_in[v] == cur``, cur = 0 as ``tuning.kernels`` launches it), none for the others — its mean
    over the launched work-items (the degrees are heavy-tailed, so no single vertex's count is typical;
    the mean makes the per-thread instruction counts the exact totals over threads)."""
    deg = np.diff(np.asarray(host["row_ptr"], dtype=np.int64))
    frontier = np.asarray(host["level"]) == 0
    return [float(deg[frontier].sum()) / float(items)]


#: tuning kernels whose loops are simple functions of the problem: (sizes, prepared host data, work-items
#: launched) → trip counts per PTX loop. ``matvec_row`` (over n) and ``sgemm_naive`` (over K) have a
#: run-time loop bound that NVRTC unrolls by four (:func:`unrolled_by_4`: n = 128, K = 1000 on a GPU,
#: so the remainder loops run 0 times); ``bfs_step``'s loop is data-dependent (:func:`_bfs_trips`).
TUNING: dict[str, Callable[[dict[str, int], dict[str, Any], int], list[float]]] = {
    "stencil2d": lambda s, h, items: [], "transpose_naive": lambda s, h, items: [],
    "matvec_row": lambda s, h, items: unrolled_by_4(s["n"]),
    "sgemm_naive": lambda s, h, items: unrolled_by_4(s["K"]), "bfs_step": _bfs_trips,
}
TUNING_LOCALS = {1: ((32,), (64,), (128,), (256,), (512,), (1024,)),
                 2: ((8, 8), (16, 4), (16, 16), (32, 8), (32, 16), (64, 4))}
#: saved with the entries of the kernels whose PTX loops are not their source's
_NOTES = {
    "matvec64": "per PTX loop: the 64-step loop unrolled by 16, 4 trips",
    "trig": "per PTX loop: sinf's and cosf's range-reduction loops, 0 (|arguments| ≤ 2.5, slow path from 105615)",
    "sinloop": "per PTX loop: the 8-step loop unrolled into 8 sinf, each range-reduction loop 0 "
               "(|arguments| ≤ 2.5, slow path from 105615)",
    "matvec_row": "per PTX loop: the n-loop unrolled by 4 (n // 4), its remainder loop (n % 4)",
    "sgemm_naive": "per PTX loop: the K-loop unrolled by 4 (K // 4), its remainder loop (K % 4)",
    "bfs_step": "the edge loop's mean count per work-item (frontier degrees summed / work-items)",
}
N_ITEMS = 1 << 22  # the corpus kernels' first problem size (work-items), whose configurations name no size


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
    trips_note: str = ""  # why the counts are what they are where the PTX's loops differ from the source's


def _trips_for(cfg: cfgmod.Cfg, trips: Sequence[float]) -> tuple[list[float] | None, str]:
    """The counts Algorithm 10 gets for this PTX, or None with the reason (see the module's docstring)."""
    if len(cfg.loops) == len(trips):
        return list(trips), "as listed"
    if not cfg.loops:
        return [], "the compiler unrolled every loop"
    return None, f"PTX has {len(cfg.loops)} loop(s), the source {len(trips)}: trip counts unknown"


def dwarf_configs(d: Any) -> list[tuple[float, int]]:
    """A dwarf kernel's (scale, block) configurations: :data:`DWARF_SCALES` at its own block size, then the
    PTX study's sweep of it (``ptx_sweep.DWARF_SWEEP``), each launch once."""
    out = [(float(x), d.block) for x in DWARF_SCALES]
    for c in DWARF_SWEEP[d.name]:
        pair = (float(c.params["scale"]), int(c.params["block"]))
        if pair not in out:
            out.append(pair)
    return out


def jobs(device: Device, backend: str) -> list[Job]:
    """Every (kernel, configuration) of the corpus on ``device`` (buffers are allocated here, a dwarf's later)."""
    out: list[Job] = []
    rng = np.random.default_rng(7)
    most = max(CORPUS_SIZES)
    a = device.to_device(rng.random(most, dtype=np.float32) + 0.5)
    b = device.to_device(rng.random(most, dtype=np.float32) + 0.5)
    c = device.empty(4 * most)
    for k in CORPUS + EXTRA:
        source = k.source(backend)
        if k.name in EXTRA_FP64:
            source = dialect(backend).fp64_prelude + source
        for n in CORPUS_SIZES:
            # the local-memory kernels declare 256-float work-group arrays (corpora.corpus): no larger groups
            for local in [x for x in CORPUS_LOCALS if not k.local_mem or x <= 256]:
                trips = list(CORPUS_TRIPS.get(k.name, EXTRA_TRIPS.get(k.name, [])))
                if k.name == "group_reduce":
                    trips = [float(int(math.log2(local)))]
                label = f"local={local}" if n == N_ITEMS else f"local={local},n={n}"
                out.append(Job(k.name, label, source, k.name, (), (n,), (local,),
                               lambda n=n: [a, b, c, np.int32(n)], trips, "power.model_corpus" if k in EXTRA else
                               "models.corpus", _NOTES.get(k.name, "")))
    for d in DWARFS:
        for scale, block in dwarf_configs(d):
            s = d.shape(scale, block)  # its inputs are made when it is measured
            label = f"scale={scale:g}" if block == d.block and scale in DWARF_SCALES else f"scale={scale:g},block={block}"
            out.append(Job(d.name, label, d.source, d.name, (), (s.grid * s.block,), (s.block,),
                           lambda d=d, s=s: list(d.inputs(device, s)), list(s.trips), "models.dwarfs"))
    for name, trips_of in TUNING.items():
        bench = bench_by_name(name)
        sizes = bench.sizes(device)
        prepared = bench.prepare(device, rng, sizes)
        for local in TUNING_LOCALS[bench.dims]:
            ndr = bench.ndrange(sizes, local, device)
            out.append(Job(name, "x".join(map(str, local)), portable(bench.source, backend), bench.kernel,
                           bench.options(local), ndr, local, prepared.args,
                           trips_of(sizes, prepared.host, int(np.prod(ndr))), "tuning.kernels",
                           _NOTES.get(name, "")))
    return out


class PlanDevice:
    """Just enough of a CUDA device of compute capability ``cc`` for :func:`jobs` without a GPU: the problem
    sizes are a GPU's, so the planned jobs and trip counts are those of a GPU run; a "buffer" is only its
    size in bytes (inputs are generated, as for a GPU, and dropped: a plan holds no gigabytes)."""

    def __init__(self, cc: str = "9.0") -> None:
        self.info = DeviceInfo("cuda", 0, f"offline compute capability {cc}", "NVIDIA", "offline",
                               compute_capability=cc, compute_units=132, warp_size=32, fp64=True)

    def to_device(self, array: np.ndarray) -> int:
        return int(np.asarray(array).nbytes)

    def empty(self, nbytes: int) -> int:
        return int(nbytes)


def check_ptx(arch: str = "90") -> list[dict[str, Any]]:
    """Every CUDA job's PTX, compiled offline for ``compute_<arch>`` with the CUDA backend's NVRTC options
    (``devices.recompile.ptx_text``: the first libnvrtc on the path; no GPU), with its loops and the counts
    :func:`measure_job` would give them: one row per job; ``trips`` None where the job would be left out.
    ``global_per_thread``: global memory instructions one work-item executes by those counts."""
    from ...devices import recompile

    cc = f"{arch[:-1]}.{arch[-1]}"
    texts: dict[tuple[str, tuple[str, ...]], str] = {}
    rows = []
    for job in jobs(PlanDevice(cc), "cuda"):  # type: ignore[arg-type]
        key = (job.source, job.options)
        if key not in texts:
            texts[key] = recompile.ptx_text(job.source, arch, job.options)
        graph = cfgmod.build(ptxmod.parse(texts[key], job.entry))
        trips, how = _trips_for(graph, job.trips)
        rows.append({"kernel": job.kernel, "config": job.config, "loops_in_ptx": len(graph.loops),
                     "headers": [graph.blocks[min(lp)].label for lp in graph.loops], "listed": job.trips,
                     "trips": trips, "how": how, "note": job.trips_note,
                     "global_per_thread": None if trips is None else memory_counts(graph, trips)[0]})
    return rows


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
                  **({"trips_note": job.trips_note} if job.trips_note else {}),
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
    """One corpus from several collections of the same device (a session on a GPU host without network that
    could not resume the last one's file measures its first configurations again). The first measurement of a configuration
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
            repeats = [*(first.info.get("repeats") or []), *(e.info.get("repeats") or []),
                       {"watts": e.watts, "joules_per_launch": e.joules_per_launch, "file": Path(path).name}]
            distinct = distinct_repeats(dataclasses.replace(first, info={**first.info, "repeats": repeats}))
            info = {key: v for key, v in first.info.items() if key != "repeats"}
            by_key[k] = dataclasses.replace(first, info={**info, **({"repeats": distinct} if distinct else {})})
    meta_out = {"jobs": jobs_n, "latency_sources": sorted(sources), "left_out": left_out,
                "merged_from": [Path(p).name for p in paths]}
    return device, list(by_key.values()), meta_out


def distinct_repeats(entry: Entry) -> list[dict[str, Any]]:
    """The entry's repeats that are other measurements: a file merged with a copy of itself (a session on an
    offline host carries the corpus it resumes and brings it back) holds the same measurement twice — that is not a
    repeat, and counting it would read as perfect repeatability. Same (watts, J/launch) = same measurement."""
    seen = {(entry.watts, entry.joules_per_launch)}
    out = []
    for r in entry.info.get("repeats") or []:
        key = (r.get("watts"), r.get("joules_per_launch"))
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def repeatability(entries: Sequence[Entry]) -> dict[str, float]:
    """|repeat − first| / first of the watts of every configuration measured more than once: how far the
    corpus' own targets move between two measurements (the floor under any model's MAPE)."""
    rel = [abs(r["watts"] - e.watts) / e.watts for e in entries for r in e.info.get("repeats") or []]
    if not rel:
        return {"n": 0}
    return {"n": len(rel), "median_rel": float(statistics.median(rel)), "max_rel": float(max(rel)),
            "mean_rel": float(statistics.fmean(rel))}
