"""Mixed-precision solve of Ax = b: LU in fp32 with fp64 iterative refinement (LAPACK's dsgesv scheme;
Lim ch. VI cites Baboulin et al. 2009 and Haidar et al. 2017), against the all-fp64 solve, on the device.

Mixed: A → fp32, PA = LU in fp32, x₀ = U⁻¹L⁻¹Pb in fp32, promoted; then repeat r = b − Ax (fp64),
d = U⁻¹L⁻¹P r (fp32), x += d (fp64), until the normwise backward error of x is at most √n·ε₆₄ (the
dsgesv stopping rule's size), ``max_iter`` (30, dsgesv's ITERMAX) refinements have run, or refinement has
stalled (:func:`stagnant`).

The convergence test needs x on the host, so each solve runs twice: first step by step, reading x back
after every refinement to count the iterations k and measure the backward error (host, extended-precision
residual: :func:`.conditioned.backward_error`); then, timed, the same k refinements back to back, with the
final residual that the stopping test needs — no host round trip inside the timed span. The fp64 solve is
LU in fp64 plus one pair of triangular solves; both are timed alternately (``measure_pair``), and the
speedup is the median over those pairs of fp64 time / mixed time, the ratios kept as its samples.

Why the pairs, and what the figure is at small n: the LU launches three kernels per column, so a solve
of order n is ~3n launches. Where the device time per launch is near the cost of issuing one, the two
solves' times follow the launch path (the host, the driver's queue), not the arithmetic, and that path
moves between runs far more than the arithmetic does. :attr:`Comparison.launches` and
:attr:`Comparison.us_per_launch` say where a size stands; the ratio of each alternating pair sees the
same state of that path on both sides, which a ratio of two separately taken medians does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..devices.base import Device
from ..timing.measure import MeasureConfig, Measurement, measure_pair
from .conditioned import backward_error, product, with_condition
from .lukernels import Kernels

EPS64 = float(np.finfo(np.float64).eps)
MAX_ITER = 30


def backward_error_tolerance(n: int) -> dict[str, float]:
    """The band of the mixed solve's final backward error at order ``n``: 10 % of it, the target of a
    derived figure. The matrices and right-hand sides are the same bits on every host (``conditioned``), and
    so is the solve's arithmetic on a GPU: unchanged runs on many H100 machines read the same residue, bit for
    bit, and the H200 reads it too (``tests/test_precision_quant_runs.py`` reads it off the shipped baselines), so a
    wider band — up to the stopping rule's √n·ε₆₄, tens of times the value — would pass a solve that lost
    most of its accuracy."""
    return {"rel": 0.1}


@dataclass
class Solve:
    x: np.ndarray
    iterations: int  # refinements run (0 for the plain solve)
    converged: bool
    backward_error: float
    history: list[float]  # backward error after the initial solve and after each refinement


@dataclass
class Comparison:
    n: int
    mixed: Solve
    fp64: Solve
    t_mixed: Measurement
    t_fp64: Measurement
    launches: dict[str, int] = field(default_factory=dict)  # kernels launched per solve, "mixed" / "fp64"

    @property
    def ratios(self) -> list[float]:
        """fp64 time / mixed time of each alternating pair."""
        return [f / m for m, f in zip(self.t_mixed.samples, self.t_fp64.samples)]

    @property
    def speedup(self) -> float:
        return float(np.median(self.ratios))

    @property
    def us_per_launch(self) -> dict[str, float]:
        """Median device time per launched kernel of each solve (µs): near the cost of one launch, the
        solve's time is the launch path's, not the arithmetic's."""
        t = {"mixed": self.t_mixed.stats.median, "fp64": self.t_fp64.stats.median}
        return {k: 1e6 * t[k] / n for k, n in self.launches.items() if n}

    def info(self) -> dict[str, Any]:
        return {"t_mixed_us": self.t_mixed.stats.median * 1e6, "t_fp64_us": self.t_fp64.stats.median * 1e6,
                "fp64_backward_error": self.fp64.backward_error, "history": self.mixed.history,
                "launches": dict(self.launches), "us_per_launch": self.us_per_launch, "pairs": len(self.ratios),
                "statistic": "median over alternating pairs of fp64 time / mixed time"}


def stagnant(hist: list[float], window: int = 3) -> bool:
    """Refinement has stalled: ``window`` refinements did not halve the backward error. (Not a dsgesv rule —
    dsgesv simply runs to ITERMAX; this ends a diverging or stalled solve early, with the same verdict,
    since a refinement that stopped contracting does not resume.)"""
    return len(hist) > window and hist[-1] > 0.5 * hist[-1 - window]


class Solver:
    """Buffers of one system on one device."""

    def __init__(self, dev: Device, a: np.ndarray, b: np.ndarray) -> None:
        self.dev, self.n = dev, int(b.size)
        self.a, self.b = np.ascontiguousarray(a, dtype=np.float64), np.ascontiguousarray(b, dtype=np.float64)
        self.k32, self.k64 = Kernels(dev, "float"), Kernels(dev, "double")
        n = self.n
        self.a64 = dev.to_device(self.a.ravel())  # pristine A (the residual reads it)
        self.b64 = dev.to_device(self.b)
        self.perm0 = dev.to_device(np.arange(n, dtype=np.int32))
        self.lu64, self.lu32 = dev.empty(n * n * 8), dev.empty(n * n * 4)
        self.perm = dev.empty(n * 4)
        self.b32, self.r32, self.d32 = dev.empty(n * 4), dev.empty(n * 4), dev.empty(n * 4)
        self.x64, self.r64 = dev.empty(n * 8), dev.empty(n * 8)
        self.criterion = math.sqrt(n) * EPS64

    # ---- enqueue pieces ------------------------------------------------------------------------
    def reset(self) -> list[Any]:
        return [self.dev.copy(self.lu64, self.a64), self.dev.copy(self.perm, self.perm0)]

    def _start_mixed(self) -> list[Any]:
        n, k = self.n, self.k32
        ev = [k.demote(self.a64, self.lu32, n * n)]
        ev += k.factor(self.lu32, self.perm, n)
        ev.append(k.demote(self.b64, self.b32, n))
        ev.append(k.solve(self.lu32, self.perm, self.b32, self.r32, n))
        ev.append(k.promote(self.r32, self.x64, n))
        return ev

    def _refine_once(self) -> list[Any]:
        n, k = self.n, self.k32
        return [k.residual(self.a64, self.x64, self.b64, self.r64, n), k.demote(self.r64, self.r32, n),
                k.solve(self.lu32, self.perm, self.r32, self.d32, n), k.update(self.x64, self.d32, n)]

    def mixed_enqueue(self, iterations: int) -> list[Any]:
        ev = self._start_mixed()
        for _ in range(iterations):
            ev += self._refine_once()
        ev.append(self.k32.residual(self.a64, self.x64, self.b64, self.r64, self.n))  # the stopping test's residual
        return ev

    def fp64_enqueue(self) -> list[Any]:
        ev = self.k64.factor(self.lu64, self.perm, self.n)
        ev.append(self.k64.solve(self.lu64, self.perm, self.b64, self.x64, self.n))
        return ev

    # ---- step-by-step runs (counting and checking) ----------------------------------------------
    def _x(self) -> np.ndarray:
        self.dev.synchronize()
        return self.dev.to_host(self.x64, np.float64, self.n)

    def run_mixed(self, max_iter: int = MAX_ITER) -> Solve:
        self.reset()
        self._start_mixed()
        x = self._x()
        hist = [backward_error(self.a, x, self.b)]
        it = 0
        while hist[-1] > self.criterion and it < max_iter and math.isfinite(hist[-1]) and not stagnant(hist):
            self._refine_once()
            x = self._x()
            it += 1
            hist.append(backward_error(self.a, x, self.b))
        return Solve(x, it, hist[-1] <= self.criterion, hist[-1], hist)

    def run_fp64(self) -> Solve:
        self.reset()
        self.fp64_enqueue()
        x = self._x()
        be = backward_error(self.a, x, self.b)
        return Solve(x, 0, be <= self.criterion, be, [be])


def compare(dev: Device, a: np.ndarray, b: np.ndarray, config: MeasureConfig) -> Comparison:
    """Solve both ways, check, and time both alternately."""
    s = Solver(dev, a, b)
    mixed, fp64 = s.run_mixed(), s.run_fp64()
    k = mixed.iterations
    launches: dict[str, int] = {}

    def counted(key: str, enqueue: Any) -> Any:
        def run() -> list[Any]:
            ev = enqueue()
            launches[key] = len(ev)
            return ev
        return run

    t_mixed, t_fp64 = measure_pair(dev, counted("mixed", lambda: s.mixed_enqueue(k)), counted("fp64", s.fp64_enqueue),
                                   config, before_each=s.reset)
    return Comparison(s.n, mixed, fp64, t_mixed, t_fp64, launches)


@dataclass
class SweepPoint:
    kappa: float
    iterations: int
    converged: bool
    backward_error: float
    forward_error: float  # ‖x − x_true‖∞ / ‖x_true‖∞


def sweep(dev: Device, n: int, kappas: list[float], rng: np.random.Generator) -> list[SweepPoint]:
    """Mixed-precision solves of matrices of condition κ (:func:`.conditioned.with_condition`) and a known
    solution; where refinement stops converging is the first κ whose solve does not converge."""

    out: list[SweepPoint] = []
    for kappa in kappas:
        if out and not out[-1].converged:
            break  # the limit is found; larger κ only fail more slowly
        a = with_condition(n, kappa, rng)
        x_true = rng.uniform(-1.0, 1.0, n)
        b = product(a, x_true)
        sol = Solver(dev, a, b).run_mixed()
        fwd = float(np.max(np.abs(sol.x - x_true)) / np.max(np.abs(x_true))) if np.all(np.isfinite(sol.x)) else math.inf
        out.append(SweepPoint(kappa, sol.iterations, sol.converged, sol.backward_error, fwd))
    return out


def kappa_limit(points: list[SweepPoint]) -> float | None:
    """The smallest κ of the sweep at which refinement did not converge (None: all converged)."""
    failed = [p.kappa for p in points if not p.converged]
    return min(failed) if failed else None
