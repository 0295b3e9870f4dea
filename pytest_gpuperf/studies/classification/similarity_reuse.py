"""Reusing a tuned work-group size by CFG similarity (Lim, dissertation ch. IV) on the device under test:
tune each known class kernel's work-group size, match each unseen kernel to its most similar known kernel
by the transition probabilities of their PTX control-flow graphs, and run it at the reused size.

Why a module: the figure (the slowdown against the query's own best size) is only meaningful with the
problem sizes, group sizes and seed fixed, so they live here once. CUDA only: the CFG comes from PTX.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ptx_model import cfg as cfgmod, ptx as ptxmod
from . import similarity
from ...corpora import kernel_classes as kc
from .class_dataset import Timer, timer
from ...devices.base import Device, Kernel
from ...helpers import KernelHelper, Measurer

#: the generator's seed: every card and run draws the same inputs
SEED = 11
#: the work-group sizes tuned over
LOCALS = (64, 128, 256, 512, 1024)
#: problem size per kind of kernel (elements; matrix and grid side N; SpMV rows)
SIZES = {"vector": 1 << 24, "matrix": 512, "stencil": 4096, "spmv": 1 << 17}


def size_of(name: str) -> int:
    """The problem size a kernel is tuned at."""
    if name in ("K7",):
        return SIZES["matrix"]
    if name in ("K9", "K10", "stencil9", "stencil9_shared"):
        return SIZES["stencil"]
    if name == "spmv":
        return SIZES["spmv"]
    return SIZES["vector"]


@dataclass(frozen=True)
class Reuse:
    """One unseen kernel run at the group size tuned for its most similar known kernel."""

    query: str
    match: str
    distance: float
    reused_local: int
    own_best_local: int
    times_s: dict[int, float]  # group size → median time of the query
    distances: dict[str, float]  # known kernel → CFG distance to the query

    @property
    def slowdown(self) -> float:
        """Time at the reused size over time at the query's own best size (1.0: the reuse is optimal)."""
        return self.times_s[self.reused_local] / self.times_s[self.own_best_local]


def _transitions(dev: Device, kern: Kernel, name: str) -> np.ndarray:
    return similarity.transition_matrix(cfgmod.build(ptxmod.parse(dev.ptx(kern), name)))


def _tune(name: str, dev: Device, kernels: KernelHelper, time: Timer, rng: np.random.Generator
          ) -> tuple[int, dict[int, float]]:
    """The best group size of ``name`` at its problem size, and its time at every group size."""
    kern = kernels.compile(kc.source(name, "cuda"), name)
    ts = {}
    base = kc.generate(name, size_of(name), LOCALS[0], dev, rng)
    for local in LOCALS:
        inst = base.with_local(local)
        ts[local] = time(kern, inst.global_size, local, inst.args)
    return min(ts, key=ts.get), ts


def measure(dev: Device, kernels: KernelHelper, measurer: Measurer) -> list[Reuse]:
    """Tune every known class kernel but K8 (its 16×16 tile fixes its group size), then each unseen
    kernel's reuse, on ``dev`` (CUDA) with the GPU measurement profile."""
    rng = np.random.default_rng(SEED)
    time = timer(measurer, False)
    known = [k for k in kc.CLASSES if k != "K8"]
    mats, tuned = {}, {}
    for name in known:
        kern = kernels.compile(kc.source(name, "cuda"), name)
        mats[name] = _transitions(dev, kern, name)
        tuned[name] = _tune(name, dev, kernels, time, rng)[0]
    out = []
    for q in kc.UNSEEN:
        kern = kernels.compile(kc.source(q, "cuda"), q)
        mq = _transitions(dev, kern, q)
        match, dist = similarity.most_similar(mq, mats)
        best, ts = _tune(q, dev, kernels, time, rng)
        out.append(Reuse(q, match, dist, tuned[match], best, ts,
                         {k: similarity.distance(mq, m) for k, m in mats.items()}))
    return out


def records(reuses: list[Reuse]) -> list[dict[str, Any]]:
    """``model.similarity.<query>.slowdown`` of each reuse, with the match and the times in ``info``."""
    return [dict(name=f"model.similarity.{r.query}.slowdown", value=r.slowdown, unit="ratio", better="lower",
                 info={"match": r.match, "distance": r.distance, "reused_local": r.reused_local,
                       "own_best_local": r.own_best_local, "times_s": {str(k): v for k, v in r.times_s.items()},
                       "distances": r.distances})
            for r in reuses]
