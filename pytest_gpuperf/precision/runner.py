"""The tuner on a device: compile a precision mix of a program, validate it on the test inputs, time it.

:func:`tune` profiles the original (its outputs are the ground truth, §7.4.1), runs the lowering search
(:mod:`.search`) with validation and timing on the device (each candidate timed alternately with the
original, so the pool's costs are paired ratios), and finally times the chosen program against
the original *alternately* (:func:`~pytest_gpuperf.timing.measure.measure_pair`), so the reported speedup
does not carry a drift of the device between two blocks of runs. Tuning time is the host's wall clock
of the whole search (compiles included), as the thesis' iterations count whole pipeline passes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..devices.base import Device
from ..timing.measure import MeasureConfig, Measurement, measure, measure_pair
from . import dialect, graph as dataflow
from .cost import Threshold, errors
from .programs import Program, Setup
from .search import Outcome, Validation, lower
from .template import TypedTemplate, lint


class Bench:
    """One program's buffers on one device; runs any mix of its template."""

    def __init__(self, dev: Device, program: Program, setup: Setup) -> None:
        self.dev, self.program, self.setup = dev, program, setup
        self.template = TypedTemplate.parse(program.template)
        problems = lint(self.template)
        if problems:
            raise ValueError(f"template of {program.name} breaks the typed-template conventions:\n" + "\n".join(problems))
        self.graph = dataflow.of_template(self.template)
        self.pristine = {k: dev.to_device(np.ascontiguousarray(v)) for k, v in setup.arrays.items()}
        self.bufs = dict(self.pristine)
        for k in setup.mutable:
            self.bufs[k] = dev.empty(setup.arrays[k].nbytes)

    def kernels(self, lowered: frozenset[str]) -> dict[str, Any]:
        return self.compile(self.template.render(self.template.lowered_mix(lowered)))

    def compile(self, text: str) -> dict[str, Any]:
        """Every kernel of a rendering of the template (a mix, or a VPREC rewrite)."""
        src = dialect.source(text, self.dev.info.backend)
        return self.dev.compile_many(src, list(self.template.kernels))

    def reset(self) -> Any:
        return [self.dev.copy(self.bufs[k], self.pristine[k]) for k in self.setup.mutable]

    def output(self, lowered: frozenset[str], timeout_s: float = 60.0) -> np.ndarray:
        return self.output_of(self.kernels(lowered), timeout_s)

    def output_of(self, ks: dict[str, Any], timeout_s: float = 60.0) -> np.ndarray:
        self.reset()
        self.setup.launch(self.dev, ks, self.bufs)
        self.dev.synchronize(timeout_s)

        def read(name: str) -> np.ndarray:
            a = self.setup.arrays[name]
            return self.dev.to_host(self.bufs[name], a.dtype, a.size)

        return np.asarray(self.setup.result(read), dtype=np.float64)

    def runner(self, lowered: frozenset[str]):
        ks = self.kernels(lowered)
        return lambda: self.setup.launch(self.dev, ks, self.bufs)

    def time(self, lowered: frozenset[str], config: MeasureConfig) -> Measurement:
        return measure(self.dev, self.runner(lowered), config, before_each=self.reset)


@dataclass
class Tuned:
    """What :func:`tune` found."""

    program: str
    threshold: Threshold
    outcome: Outcome
    chosen_error: float  # in the threshold's unit
    chosen_errors: dict[str, float]
    speedup: float  # original median / chosen median, timed alternately
    original: Measurement
    chosen: Measurement
    tuning_s: float
    n_ops: int
    depth: int
    blocks: int
    mix: dict[str, str] = field(default_factory=dict)
    size: dict[str, int] = field(default_factory=dict)
    plain: Outcome | None = None  # the same search with step 1 and no cut points (``compare_plain``)

    @property
    def fp32_fraction(self) -> float:
        return sum(t == "float" for t in self.mix.values()) / max(len(self.mix), 1)


def tune(dev: Device, program: Program, rng: np.random.Generator, *, threshold: Threshold | None = None,
         step: int = 8, cut_points: bool = True, pool_size: int = 4, search_config: MeasureConfig,
         final_config: MeasureConfig, compare_plain: bool = False) -> Tuned:
    """Tune ``program`` on ``dev`` (see the module docstring); ``search_config`` times the pool's
    candidates, ``final_config`` the closing original-vs-chosen comparison."""
    threshold = threshold or program.threshold
    t_start = time.perf_counter()
    setup = program.setup(rng, dev.info.is_cpu)
    bench = Bench(dev, program, setup)
    reference = bench.output(frozenset())

    checked: dict[frozenset[str], Validation] = {}

    def validate(lowered: frozenset[str]) -> Validation:
        # a mix is rendered, compiled and run once: the plain search below asks for many of the same ones
        # (each call still counts as an iteration of the search that asked)
        if lowered not in checked:
            e = errors(bench.output(lowered), reference)
            checked[lowered] = Validation(e[threshold.kind] <= threshold.value, e[threshold.kind], e["abs"])
        return checked[lowered]

    t0 = bench.time(frozenset(), search_config).stats.median

    def timer(lowered: frozenset[str]) -> float:
        # each candidate is timed alternately with the original, and its time is the original's t0 scaled
        # by their paired ratio: on a noisy device two separate blocks of runs let a drift between them pick
        # the pool's winner (seen on PoCL: an all-float LU 0.3 % "faster" in the search, 7 % slower paired)
        if not lowered:
            return t0
        m0, m1 = measure_pair(bench.dev, bench.runner(frozenset()), bench.runner(lowered), search_config,
                              before_each=bench.reset)
        return t0 * m1.stats.median / m0.stats.median

    outcome = lower(bench.graph, validate, timer, step=step, cut_points=cut_points, pool_size=pool_size)
    tuning_s = time.perf_counter() - t_start
    chosen = outcome.best.lowered
    m_orig, m_chosen = measure_pair(dev, bench.runner(frozenset()), bench.runner(chosen), final_config,
                                    before_each=bench.reset)
    plain = None
    if compare_plain:
        # §7.4.2.3's claim, measured: the same search one level per iteration, blocks one at a time. Only
        # its validations are counted (timing does not steer which candidates are tried), so it is untimed.
        plain = lower(bench.graph, validate, lambda m: t0, step=1, cut_points=False, pool_size=pool_size)
    errs = errors(bench.output(chosen), reference)
    return Tuned(program.name, threshold, outcome, errs[threshold.kind], errs,
                 m_orig.stats.median / m_chosen.stats.median, m_orig, m_chosen, tuning_s,
                 len(bench.template.ops), bench.graph.depth, len(bench.graph.blocks),
                 bench.template.lowered_mix(chosen), dict(setup.size), plain)
