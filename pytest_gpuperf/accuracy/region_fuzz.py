"""Hypothesis fuzzing of one function's dangerous region (:mod:`.region_strategies`) on the device: batches
drawn from the region's strategy, each checked against the reference; a batch exceeding the documented
bound (or with an inf/nan mismatch) fails, shrinks to a minimal input list, and the message names the
hypothesis seed.

Why the worst batch is kept outside hypothesis: the maximum seen over every batch is the figure recorded,
whether or not a batch failed — so a run that found a violation still records how bad it was."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from . import check, expr_kernels, fp_formats, functions, mpfr, region_strategies
from .seeded_hypothesis import seed_only

#: the gate's band of a function without a documented bound: the maximum over hypothesis's seeded batches
#: is the same every run of the test id, so a move by more than 1 ulp is a change of the library
UNBOUNDED_BAND = {"abs": 1.0}


def cases() -> list[tuple[str, str, str]]:
    """(format, function, region) of every fuzzed region: every binary32 region, and binary64 for sin, cos,
    log and exp."""
    return [(fmt, fn, region) for fmt in ("fp32", "fp64")
            for fn, regs in region_strategies.regions(fp_formats.get(fmt)).items()
            for region, _ in regs if fmt == "fp32" or fn in ("sin", "cos", "log", "exp")]


def examples_per_region(is_cpu: bool) -> int:
    """Hypothesis examples (batches) per region: fewer on a CPU device, whose run is CI's time share."""
    return 10 if is_cpu else 25


@dataclass
class RegionFuzz:
    """One region's fuzz run: build with :meth:`start`, then :meth:`run`, then :meth:`records` (also after
    an error: the worst batch seen so far is still a figure)."""

    device: Any
    fmt_name: str
    fn: str
    region: str
    hseed: int
    examples: int
    worst_max: float = 0.0
    worst_at: dict | None = None
    #: the function's documented bound in this format on the device's backend (None: none documented)
    bound: float | None = None
    #: the bound violation or inf/nan mismatch hypothesis found and shrank; None: none
    problem: str | None = None

    @classmethod
    def start(cls, device: Any, fmt_name: str, fn: str, region: str, rng: np.random.Generator) -> "RegionFuzz":
        """A run whose hypothesis seed is drawn from the test's seeded ``rng``."""
        hseed = int(rng.integers(0, 2 ** 31))
        bound = functions.FUNCTIONS[fn].bound(device.info.backend, fmt_name)
        return cls(device, fmt_name, fn, region, hseed, examples_per_region(device.info.is_cpu), bound=bound)

    @property
    def key(self) -> str:
        """The findings key of this region."""
        return f"fuzz.{self.fmt_name}.{self.fn}.{self.region}"

    def run(self) -> None:
        """Fuzz the region; a failing batch (after shrinking) becomes :attr:`problem`."""
        device, fmt_name, fn, region, hseed = self.device, self.fmt_name, self.fn, self.region, self.hseed
        fmt = fp_formats.get(fmt_name)
        f = functions.FUNCTIONS[fn]
        strat = dict(region_strategies.regions(fmt)[fn])[region]
        backend = device.info.backend
        bound = self.bound
        metric = f.metric(backend, fmt_name)
        expr = f.expr(backend, fmt_name, ["x0"])
        ref = functions.reference_fn(fn, fmt_name)

        @seed(hseed)
        @settings(max_examples=self.examples, deadline=None, database=None, print_blob=True)
        @given(st.lists(strat, min_size=1, max_size=64))
        def check_batch(xs: list[float]) -> None:
            x = np.array(xs, fmt.dtype)
            y = expr_kernels.evaluate(device, fmt, expr, [x])
            exact, sgn = (ref(x), 0) if ref is not None else mpfr.exact_pairs(fn, [x])
            sc = check.score(y, [x], exact, fmt, fn, metric, sgn, confirm_top=4)
            if sc.max > self.worst_max:
                self.worst_max, self.worst_at = sc.max, sc.worst([x], y)
            assert not sc.mismatches, f"inf/nan mismatch {sc.mismatch_example} (hypothesis seed {hseed})"
            assert bound is None or sc.max <= bound, (f"{fn} {fmt_name} {region}: {sc.max} ulp ({metric}) > {bound} "
                                                      f"at {sc.worst([x], y)} (hypothesis seed {hseed})")

        try:
            with seed_only():  # the same batches whatever else was imported (seeded_hypothesis)
                check_batch()
        except AssertionError as exc:
            self.problem = str(exc)

    def records(self) -> list[dict[str, Any]]:
        """``accuracy.fuzz.<fmt>.<fn>.<region>.max_ulp``: the worst batch's maximum, gated by the documented
        bound where there is one, else against the baseline within :data:`UNBOUNDED_BAND`."""
        f = functions.FUNCTIONS[self.fn]
        backend = self.device.info.backend
        bound = self.bound
        return [{"name": f"accuracy.fuzz.{self.fmt_name}.{self.fn}.{self.region}.max_ulp", "value": self.worst_max,
                 "unit": "ulp", "better": "bound" if bound is not None else "lower",
                 "bound": None if bound is None else float(bound),
                 "tolerance": None if bound is not None else dict(UNBOUNDED_BAND),
                 "info": check.jsonable({"citation": f.citation(backend, self.fmt_name),
                                         "metric": f.metric(backend, self.fmt_name), "worst": self.worst_at,
                                         "hypothesis_seed": self.hseed, "examples": self.examples}),
                 # hypothesis draws from its seed: the same batches every run of this test id
                 "identity": {"inputs": "hypothesis", "seed": self.hseed, "examples": self.examples}}]
