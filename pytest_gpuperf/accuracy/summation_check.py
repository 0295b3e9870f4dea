"""Summation accuracy × time on the device (thesis ch. 4.1, Figs. 7–8): float, double, Kahan,
float2/double2 (CMP) and pairwise sums of Taufer's zero-sum data set against the exact MPFR sum, per
layout (serial, parallel, pairwise) and size, and the accuracy ordering the thesis reports.

Why records come one size and variant at a time (:meth:`SummationRun.records` is a generator): each
figure is recorded as soon as it is measured, so the host-load readings it carries are those of its own
measurement window, not of the whole test."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from ..timing.profiles import profile
from . import summation

#: (label, element type, method) of every summed variant
VARIANTS = [("float", np.float32, "plain"), ("float.kahan", np.float32, "kahan"), ("float2", np.float32, "cmp2"),
            ("double", np.float64, "plain"), ("double.kahan", np.float64, "kahan"), ("double2", np.float64, "cmp2")]
#: the layouts summed: one work-item, 64 × 32 work-items then one, and a pairwise tree
LAYOUTS = ["serial", "parallel", "pairwise"]
#: how far a compensated or composite sum may trail the plain one of its precision, in machine epsilons
ORDERING_SLACK_EPS = 1e3


def sizes(layout: str, is_cpu: bool) -> list[int]:
    """log2 of the sizes summed: one work-item streams ~1e8 elements/s at best on a GPU, so serial stops at
    2^16 there (time budget), as every layout does on a CPU device."""
    return [12, 16] if is_cpu or layout == "serial" else [12, 16, 20, 24]


def variants(layout: str) -> list[tuple[str, type, str]]:
    """The variants summed in ``layout``: the pairwise tree sums plainly only."""
    return [v for v in VARIANTS if layout != "pairwise" or v[2] == "plain"]


@dataclass
class SummationRun:
    """One layout's sums on a device: iterate :meth:`records`, then ask :meth:`ordering_problem`."""

    device: Any
    measure: Any  # the ``gpu_measure`` fixture's object: ``enqueue(run_once, **profile)``
    layout: str
    rng: np.random.Generator
    #: the gate check's ``summation`` plant (:func:`summation.source`): every sum scaled by 1 + plant
    plant: float = 0.0
    #: |sum − exact| per (variant label, log2 n), filled while :meth:`records` runs
    errs: dict[tuple[str, int], float] = field(default_factory=dict)

    def records(self) -> Iterator[dict[str, Any]]:
        """Sum every variant at every size: per sum ``accuracy.sum.<variant>.<layout>.n<log2 n>.abs_err`` and
        ``....time_us`` (device time of the whole reduction, all its launches), as each is measured."""
        info = self.device.info
        layout = self.layout
        for lg in sizes(layout, info.is_cpu):
            n = 1 << lg
            data_seed = int(self.rng.integers(0, 2 ** 31))
            data: dict[type, tuple[np.ndarray, float]] = {}
            for label, dtype, method in variants(layout):
                # the same draws, generated in each precision (double sums get binary64 data, as in the thesis)
                if dtype not in data:
                    xd = summation.thesis_data(n, dtype, np.random.default_rng(data_seed))
                    data[dtype] = xd, summation.exact_sum(xd)
                x, exact = data[dtype]
                got, us = self._sum(x, n, dtype, method)
                err = abs(got - exact)
                self.errs[label, lg] = err
                base = f"accuracy.sum.{label}.{layout}.n{lg}"
                yield {"name": f"{base}.abs_err", "value": err, "unit": "1", "better": "lower",
                       "info": {"exact_mpfr": exact, "result": got, "n": n, "data": "thesis Fig. 8: U(1e-3,1e-2) & "
                                "U(1e2,1e3) with negatives", "layout": layout,
                                **({"planted_slowdown": self.plant} if self.plant > 0 else {})},
                       "identity": {"inputs": "seeded", "n": n, "seed": data_seed}}
                yield {"name": f"{base}.time_us", "value": us.median, "unit": "us", "better": "lower", "stats": us,
                       "info": {"n": n}}

    def _sum(self, x: np.ndarray, n: int, dtype: type, method: str) -> tuple[float, Any]:
        """Sum ``x`` once for the result, then time the reduction: (the result, its device time in µs)."""
        device = self.device
        s = summation.Summer(device, dtype, method, self.plant)
        xbuf = device.to_device(x)
        scratch = [device.empty(max(n, 4096) * x.itemsize) for _ in range(2)]
        out = {}

        def run_once() -> list:
            ev, out["buf"] = s.sum_enqueue(xbuf, n, self.layout, scratch)
            return ev

        run_once()
        device.synchronize()
        got = s.result(out["buf"])
        m = self.measure.enqueue(run_once, **profile("summation", device.info.is_cpu))
        return got, m.stats.scaled(1e6)

    def ordering_problem(self) -> str | None:
        """:func:`ordering_problem` of the sums this run made (call after :meth:`records`)."""
        return ordering_problem(self.errs, self.layout, sizes(self.layout, self.device.info.is_cpu))


def ordering_problem(errs: dict[tuple[str, int], float], layout: str, lgs: list[int]) -> str | None:
    """The first size (log2 in ``lgs``) where Kahan or float2/double2 is less accurate than the plain sum of
    its precision by more than :data:`ORDERING_SLACK_EPS` epsilons (None: the thesis's ordering holds).
    ``errs``: |sum − exact| per (variant label, log2 n).

    Only the serial layout is judged: in the parallel one each thread compensates its own part but the
    partials meet in an order the device chooses, so there the compensated and plain errors can swap places
    between unchanged runs (the metrics still gate both)."""
    if layout != "serial":
        return None
    for lg in lgs:
        for prec in ("float", "double"):
            eps = float(np.finfo(np.float32 if prec == "float" else np.float64).eps)
            for better in (f"{prec}2", f"{prec}.kahan"):
                if (better, lg) in errs:
                    plain, comp = errs[prec, lg], errs[better, lg]
                    if not comp <= plain + ORDERING_SLACK_EPS * eps:
                        return f"{better} sum less accurate than {prec} at n=2^{lg} ({layout}): {comp} > {plain}"
    return None
