"""The timing dataset of paper 004's kernel classes on the device under test: every run of K1–K10 and of
the unseen kernels over the device class's grid of problem and work-group sizes, turned into
:mod:`.classify`'s portable feature vectors (timing features, then the static code features).

Why here: the classifier figures are only as comparable as the dataset behind them, so its sizes, the
repetitions, the seed and the reference kernels that normalise the times are fixed in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from . import classify
from ...corpora import kernel_classes as kc
from ...devices.base import Device, Kernel, KernelArg, ndrange
from ...devices.dialect import portable
from ...helpers import KernelHelper, Measurer
from ...timing.profiles import profile

REF_SRC = r"""
KERNEL void ref_copy(GLOBAL const float* RESTRICT a, GLOBAL float* RESTRICT b, int n) {
  int i = GID; if (i < n) b[i] = a[i]; }
KERNEL void ref_fma(GLOBAL float* RESTRICT out, float s, int n) {
  int i = GID; if (i >= n) return; float x = (float)i * 1e-7f, y = s;
  for (int k = 0; k < 64; ++k) { x = x * 0.9999f + y; y = y * 0.9999f + x; }
  out[i] = x + y; }
"""

#: the generator's seed: every card and run draws the same inputs
SEED = 7

#: a kernel run's median time (s) at ``items`` work-items in groups of ``local``
Timer = Callable[[Kernel, int, int, Sequence[KernelArg]], float]
#: measured times of one kernel: (repetition, size, local) → (median seconds, the launched instance)
Times = Mapping[tuple[int, int, int], tuple[float, kc.Instance]]


@dataclass(frozen=True)
class ClassDataset:
    """Feature rows of the classes' runs (``x``, labels ``y``) and of each unseen kernel's runs; every row
    holds :data:`classify.FEATURES` then :data:`classify.CODE_FEATURES`."""

    x: np.ndarray
    y: list[str]
    unseen: dict[str, np.ndarray]
    grid: kc.Grid
    reps: int

    def timing_only(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The rows without the static code features."""
        nt = len(classify.FEATURES)
        return self.x[:, :nt], {k: v[:, :nt] for k, v in self.unseen.items()}


def timer(measure: Measurer, cpu: bool) -> Timer:
    """Median time of one launch under the ``kernel_classes`` measurement profile of the device class."""
    cfg = profile("kernel_classes", cpu)

    def t(kernel: Kernel, items: int, local: int, args: Sequence[KernelArg]) -> float:
        return measure(kernel, ndrange((items,), (local,)), (local,), args, **cfg).stats.median
    return t


class References:
    """The two reference kernels that normalise a run's time (a copy of the same bytes, 64 FMAs over the
    same work-items), each timed once per size and reused across kernels."""

    def __init__(self, kernels: KernelHelper, backend: str, time: Timer, scratch_elems: int) -> None:
        src = portable(REF_SRC, backend)
        self._copy = kernels.compile(src, "ref_copy")
        self._fma = kernels.compile(src, "ref_fma")
        self._time = time
        self._scratch = scratch_elems
        self._a = kernels.to_device(np.ones(scratch_elems, dtype=np.float32))
        self._b = kernels.empty(4 * scratch_elems)
        self._seen: dict[tuple[str, int], float] = {}

    def copy_time(self, nbytes: int) -> tuple[float, int]:
        """Time of copying about ``nbytes`` (read + write) and the elements copied."""
        n = min(self._scratch, max(256, nbytes // 8))
        if ("copy", n) not in self._seen:
            self._seen[("copy", n)] = self._time(self._copy, n, 256, [self._a, self._b, np.int32(n)])
        return self._seen[("copy", n)], n

    def fma_time(self, items: int) -> float:
        """Time of the compute-bound reference over ``items`` work-items."""
        items = min(items, self._scratch)
        if ("fma", items) not in self._seen:
            self._seen[("fma", items)] = self._time(self._fma, items, 256,
                                                    [self._b, np.float32(0.5), np.int32(items)])
        return self._seen[("fma", items)]


def run_times(name: str, times: Times, sizes: Sequence[int], locals_: Sequence[int], reps: int,
              copy_time: Callable[[int], tuple[float, int]], fma_time: Callable[[int], float]
              ) -> list[classify.RunTimes]:
    """The measured times behind each feature vector of one kernel: one per repetition, size but the
    largest (its neighbour gives the size exponent) and group size. K8's fixed 16×16 tile has one real
    group size, so its times over group sizes are repeated measurements and count as their median."""
    out = []
    for rep in range(reps):
        for si, size in enumerate(sizes[:-1]):
            by_local = {loc: times[(rep, size, loc)][0] for loc in locals_}
            if name == "K8":
                by_local = {256: float(np.median(list(by_local.values())))}
            for local in locals_:
                t, inst = times[(rep, size, local)]
                t_next, nxt = times[(rep, sizes[si + 1], local)]
                t_small, _ = times[(rep, size, min(locals_))]
                first, last = times[(rep, sizes[0], local)], times[(rep, sizes[-1], local)]
                t_copy, copy_n = copy_time(inst.buffer_bytes)
                out.append(classify.RunTimes(name, t, t_next, inst.buffer_bytes, nxt.buffer_bytes, t_small, t_copy,
                                             fma_time(inst.global_size), inst.global_size, copy_n, by_local,
                                             first[0], last[0], first[1].buffer_bytes, last[1].buffer_bytes))
    return out


def _kernel_rows(name: str, dev: Device, kernels: KernelHelper, time: Timer, refs: References, grid: kc.Grid,
                 reps: int, rng: np.random.Generator) -> list[list[float]]:
    """Measure one kernel over the grid (fresh inputs per repetition) and return its feature rows."""
    kern = kernels.compile(kc.source(name, dev.info.backend), name)
    code = classify.code_features(kc.SOURCES[name])
    sizes = grid.sizes(name)
    times: dict[tuple[int, int, int], tuple[float, kc.Instance]] = {}
    for rep in range(reps):
        for size in sizes:
            base = kc.generate(name, size, grid.locals[0], dev, rng)
            for local in grid.locals:
                inst = base.with_local(local)
                times[(rep, size, local)] = (time(kern, inst.global_size, inst.local, inst.args), inst)
            del base
    return [classify.features(r) + code
            for r in run_times(name, times, sizes, grid.locals, reps, refs.copy_time, refs.fma_time)]


def measure(dev: Device, kernels: KernelHelper, measurer: Measurer) -> ClassDataset:
    """The dataset on ``dev``: the classes' runs, then each unseen kernel's, over the device class's grid
    (:data:`kernel_classes.CPU_GRID` on a CPU device, 3 repetitions; else the GPU grid, 2)."""
    cpu = dev.info.is_cpu
    grid = kc.CPU_GRID if cpu else kc.GPU_GRID
    reps = 3 if cpu else 2
    time = timer(measurer, cpu)
    rng = np.random.default_rng(SEED)
    refs = References(kernels, dev.info.backend, time, 1 << 20 if cpu else 1 << 26)
    x: list[list[float]] = []
    y: list[str] = []
    for name in kc.CLASSES:
        rows = _kernel_rows(name, dev, kernels, time, refs, grid, reps, rng)
        x += rows
        y += [name] * len(rows)
    unseen = {name: np.array(_kernel_rows(name, dev, kernels, time, refs, grid, reps, rng)) for name in kc.UNSEEN}
    return ClassDataset(np.array(x), y, unseen, grid, reps)
