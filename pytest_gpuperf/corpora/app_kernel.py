"""One kernel of the application-kernel corpus (Dao, thesis ch. 2): its origin, its text, its inputs at
a size, its NumPy reference and its cost.

Dao evaluated the sampled-kernel model on kernels taken from benchmark suites (Parboil, SHOC, SNU NPB,
AMD and NVIDIA samples), each run with hundreds of work-groups for at least 0.1 s (§2.6.1). Every kernel
here is ported from such a suite or its maintained successor (Rodinia, PolyBench/GPU), written once in
OpenCL C with the project's neutral macros so that the same text compiles as CUDA through the dialect's
prelude (:func:`~pytest_gpuperf.devices.dialect.portable`).

What the sampled model needs of a kernel, and every kernel here does: a 1-D NDRange of work-groups whose
count can be chosen, each group's work decided by its group id and the problem alone (never by the
number of groups launched), so that the first ``k`` groups of a shorter launch do exactly the work they
do in the full run. A kernel with a ``reps`` argument repeats its group's share that many times: the
benchmark's host-side loop of passes or time steps folded into the kernel, so that a run lasts 0.1 s on
an H100, whose memory could not hold one pass's worth of data for that long. Every pass either rewrites
the same outputs or accumulates into them, so no compiler can drop a pass, and the app kernels use no
``restrict`` (a store may alias a later pass's loads).

The cost of a kernel is an *estimate*, a lower bound of its H100 run time: its arithmetic operations (fp32
or integer, a fused multiply-add as two; a kernel's cost function says how it counts the rest, e.g. sin
and cos) at :data:`H100_FLOPS`, and the bytes that must cross DRAM (each buffer once per pass; reads that
caches can serve are not counted) at :data:`H100_BYTES_S`, whichever is longer. The GPU run measures the
real time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Union

import numpy as np
from scipy.stats import binom

from ..devices.dialect import portable

#: The H100's rates the estimates use (SXM: ~3 TB/s of HBM3 reached by a copy, ~50 TFLOP/s fp32 in practice)
H100_BYTES_S = 3.0e12
H100_FLOPS = 50.0e12
#: Work-items an H100 holds at once at full occupancy (2048 per SM, 132 SMs): a wave can be no larger
H100_WAVE_ITEMS = 2048 * 132
#: The run time every kernel is sized for on an H100 (Dao §2.6.1: "longer than one tenth of a second")
MIN_RUN_S = 0.1

#: What each behaviour tag means (an entry's ``behaviour`` holds one or more)
BEHAVIOURS: Mapping[str, str] = {
    "regular": "every work-group does the same work on similar access patterns (§2.5.1's two conditions)",
    "compute": "bound by arithmetic (or the special-function units) rather than memory",
    "memory": "bound by DRAM bandwidth",
    "local": "stages data in local (shared) memory with work-group barriers",
    "irregular": "data-dependent gathers (indices read from memory)",
    "imbalanced": "work per work-group depends on its id or its data, so the first groups are not typical",
    "atomics": "accumulates with atomic operations whose contention depends on the data",
    "warm-up": "reads data many work-groups share, so the first groups meet cold caches that later ones find "
               "warm (the warm-up Dao names as a source of the linear model's error, §2.6.2)",
}


@dataclass(frozen=True)
class Origin:
    """Where a kernel comes from: the suite, the benchmark and the kernel function ported."""

    suite: str
    benchmark: str
    function: str

    def __str__(self) -> str:
        return f"{self.suite} {self.benchmark}: {self.function}"


@dataclass(frozen=True)
class Out:
    """A write-only output buffer: ``count`` values of ``dtype`` (no initial contents needed)."""

    dtype: Any
    count: int

    @property
    def nbytes(self) -> int:
        return int(self.count) * np.dtype(self.dtype).itemsize


Arg = Union[str, np.int32, np.uint32, np.float32]


@dataclass
class Problem:
    """A kernel's launch at one size: ``groups`` work-groups, the arguments in order (a ``str`` names a
    buffer), the buffers with initial contents (``inputs``, read or read-written), the write-only
    ``outputs``, and the reference: the expected contents of the checked buffers after one launch of all
    groups, computed with NumPy on demand (never at the GPU size). ``rtol``/``atol``: how close a
    device's float results must be (summation order and fused multiply-adds differ from NumPy's)."""

    groups: int
    args: tuple[Arg, ...]
    inputs: dict[str, np.ndarray]
    outputs: dict[str, Out]
    reference: Callable[[], dict[str, np.ndarray]]
    rtol: float = 1e-5
    atol: float = 1e-5

    def __post_init__(self) -> None:
        names = [a for a in self.args if isinstance(a, str)]
        unknown = [a for a in names if a not in self.inputs and a not in self.outputs]
        if unknown:
            raise ValueError(f"arguments {unknown} name no buffer of the problem")
        if self.groups < 1:
            raise ValueError(f"a problem needs at least one work-group, got {self.groups}")

    @property
    def footprint(self) -> int:
        """Bytes of every buffer on the device."""
        return sum(a.nbytes for a in self.inputs.values()) + sum(o.nbytes for o in self.outputs.values())


@dataclass(frozen=True)
class Cost:
    """A kernel's work at one size: arithmetic operations and DRAM bytes (counted as the module's docstring
    says), work-groups and device bytes (the buffers' footprint)."""

    ops: float
    bytes: float
    groups: int
    footprint: int

    @property
    def estimate_s(self) -> float:
        """Lower-bound H100 time: the longer of the arithmetic at peak and the DRAM traffic at bandwidth."""
        return max(self.ops / H100_FLOPS, self.bytes / H100_BYTES_S)

    @property
    def bound(self) -> str:
        """Which of the two sets the estimate."""
        return "arithmetic" if self.ops / H100_FLOPS >= self.bytes / H100_BYTES_S else "DRAM bytes"


Params = Mapping[str, int]


@dataclass(frozen=True)
class AppKernel:
    """One ported kernel. ``text`` is OpenCL C with the neutral macros and defines the entry point
    ``name``; ``build(rng, **params)`` makes its :class:`Problem`, ``cost(**params)`` its :class:`Cost`,
    at the H100 size ``gpu`` (≥ :data:`MIN_RUN_S` estimated, hundreds of work-groups) or the PoCL size
    ``tiny``. ``scatters``: groups write outputs they do not own (atomics, frontier updates), so a shorter
    launch leaves no clean prefix of the outputs to check. ``far_from_bound``: why the kernel runs far slower
    than its :class:`Cost` bound (strided or data-dependent accesses), so that its GPU size is set by its
    measured full run rather than by the bound, which would make it run for seconds; such a kernel's full
    run under :data:`MIN_RUN_S` is reported by the study (``full_runs_under_0.1s``)."""

    name: str
    origin: Origin
    differs: str
    behaviour: tuple[str, ...]
    text: str
    local_size: int
    build: Callable[..., Problem]
    cost: Callable[..., Cost]
    gpu: Params
    tiny: Params
    scatters: bool = False
    far_from_bound: str = ""

    def __post_init__(self) -> None:
        unknown = [b for b in self.behaviour if b not in BEHAVIOURS]
        if unknown:
            raise ValueError(f"{self.name}: unknown behaviour tags {unknown}; known: {', '.join(BEHAVIOURS)}")

    def source(self, backend: str) -> str:
        """The kernel's text as ``backend`` compiles it (the dialect's prelude, then the text)."""
        return portable(self.text, backend)

    def problem(self, params: Params, seed: int | None = None) -> Problem:
        """The problem at ``params`` with inputs from a seeded generator (the kernel's own seed by default)."""
        return self.build(np.random.default_rng(self.seed if seed is None else seed), **params)

    @property
    def seed(self) -> int:
        """A fixed seed per kernel, so that the inputs are the same in every run."""
        return sum((i + 1) * ord(c) for i, c in enumerate(self.name)) % (2 ** 31)

    def describe(self) -> dict[str, Any]:
        """The entry's provenance, as results and docs quote it."""
        est = self.cost(**self.gpu)
        return {"suite": self.origin.suite, "benchmark": self.origin.benchmark, "function": self.origin.function,
                "differs": self.differs, "inputs": f"generated (seed {self.seed})",
                "behaviour": list(self.behaviour), "local_size": self.local_size,
                "gpu_params": dict(self.gpu), "h100_estimate_s": round(est.estimate_s, 4),
                "h100_estimate_bound": est.bound, "groups": est.groups,
                **({"far_from_bound": self.far_from_bound} if self.far_from_bound else {})}


# ---- helpers for writing problems ---------------------------------------------------------------------

def uniform(rng: np.random.Generator, n: int, lo: float = 0.0, hi: float = 1.0) -> np.ndarray:
    """``n`` seeded float32 values in [lo, hi)."""
    out = rng.random(int(n), dtype=np.float32)
    if (lo, hi) != (0.0, 1.0):
        out *= np.float32(hi - lo)
        out += np.float32(lo)
    return out


def tiled(rng: np.random.Generator, n: int, make: Callable[[np.random.Generator, int], np.ndarray],
          block: int = 1 << 22) -> np.ndarray:
    """``n`` values: ``make(rng, m)`` for up to ``block`` of them, repeated beyond that (a GPU-size input
    of values whose order does not shape the work is made in a fraction of the time). ``make`` returns
    exactly ``m`` values in one dimension (a multi-column record is flattened by the caller)."""
    m = min(int(n), block)
    out = make(rng, m)
    if out.shape != (m,):
        raise ValueError(f"tiled: make returned shape {out.shape}, expected ({m},): flatten records and size them in values")
    return out if m == n else np.resize(out, n)


def binomial_pmf(trials: int, p: float) -> np.ndarray:
    """P(X = k) for k = 0, 1, … of a binomial count of ``trials`` draws of probability ``p`` (a row's nonzeros
    when each of its positions is filled with probability ``p``), cut where the tail is negligible."""
    if not (trials >= 1 and 0.0 < p < 1.0):
        raise ValueError(f"binomial_pmf: needs trials ≥ 1 and 0 < p < 1, got {trials}, {p}")
    mean, sd = trials * p, math.sqrt(trials * p * (1.0 - p))
    pmf = binom.pmf(np.arange(min(int(trials), int(mean + 12.0 * sd + 20.0)) + 1), trials, p)
    return pmf / pmf.sum()


def quantile_counts(pmf: np.ndarray, n: int) -> np.ndarray:
    """How many of ``n`` lengths take each value 0, 1, … when they are the quantiles at (i + 0.5)/n of the
    distribution ``pmf``: the lengths of ``n`` rows drawn from it, stratified, so that their total (and a
    size's cost) is known without a generator."""
    cdf = np.cumsum(pmf / np.sum(pmf))
    upto = np.clip(np.floor(cdf * n - 0.5).astype(np.int64) + 1, 0, n)  # quantiles at or below each cdf value
    upto[-1] = n
    return np.diff(np.concatenate([[0], upto]))


def quantile_total(pmf: np.ndarray, n: int) -> int:
    """The sum of the ``n`` lengths :func:`quantile_lengths` makes (a cost function's non-zeros or edges)."""
    return int(np.dot(np.arange(len(pmf), dtype=np.int64), quantile_counts(pmf, n)))


def quantile_lengths(rng: np.random.Generator, pmf: np.ndarray, n: int) -> np.ndarray:
    """``n`` int32 lengths distributed as ``pmf`` (its quantiles, :func:`quantile_counts`) in random order: rows
    or nodes whose lengths the original benchmark draws independently, so that every run of consecutive
    rows, the first work-groups' too, holds a typical mix."""
    lens = np.repeat(np.arange(len(pmf), dtype=np.int32), quantile_counts(pmf, n))
    rng.shuffle(lens)
    return lens


def f32(x: float) -> np.float32:
    return np.float32(x)


def i32(x: int) -> np.int32:
    return np.int32(x)


def nbytes(*counts: int, itemsize: int = 4) -> int:
    """Bytes of buffers of ``counts`` elements of ``itemsize`` bytes."""
    return int(sum(counts)) * itemsize
