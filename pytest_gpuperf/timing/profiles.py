"""Timing profiles: the repeat settings each kind of measurement uses, per device type, in one place.

A profile is the set of :class:`~pytest_gpuperf.timing.measure.MeasureConfig` overrides a measurement
passes to ``gpu_measure`` (warm-up launches, minimum and maximum repeats, time budget). Each value
shapes a baselined figure, so they live here rather than beside each call: changing one is a visible
change of one line, reviewed with the baselines it affects, and a suite cannot drift from the library's
protocol by copying a dict. The values are the ones the committed baselines were measured with.

``profile(name, is_cpu)`` returns a fresh dict (callers may add per-call overrides). CPU devices (PoCL on
two shared cores) take fewer, shorter repeats where a figure is a difference or a fit over many points;
launch-grid points take more (the lower quartile of 21–41 launches: see ``probes.memory``).
"""

from __future__ import annotations

from typing import Any, Mapping

Overrides = Mapping[str, Any]


def _same(overrides: Overrides) -> tuple[Overrides, Overrides]:
    """A profile whose GPU and CPU overrides are the same."""
    return overrides, overrides


#: name → (GPU overrides, CPU overrides)
PROFILES: Mapping[str, tuple[Overrides, Overrides]] = {
    # latency suite: clock measurement and ops without a chain of their own
    "latency": _same({"warmup": 1, "min_repeats": 5, "max_repeats": 10, "budget_s": 0.3}),
    # event-timed dependent chains (OpenCL): two sections, many repeats of short kernels
    "chain_events": ({"warmup": 1, "min_repeats": 5, "max_repeats": 15, "budget_s": 0.5},
                     {"warmup": 1, "min_repeats": 5, "max_repeats": 15, "budget_s": 0.25}),
    # memory hierarchy probes: pointer chases, shared/loaded latency, bandwidth points
    "memory_probe": _same({"warmup": 1, "min_repeats": 3, "max_repeats": 5, "budget_s": 0.3}),
    # launch-vs-grid points of the launch fit (extra to memory_probe)
    "launch_grid": ({}, {"min_repeats": 21, "max_repeats": 41}),
    # sampled-kernel model: the full run and the sampled points
    "sampled_model": ({"warmup": 2, "min_repeats": 10, "max_repeats": 40, "budget_s": 0.15},
                      {"warmup": 1, "min_repeats": 5, "max_repeats": 9, "budget_s": 0.1}),
    # sampled-kernel model on the application corpus: full runs of ≥ 0.1 s (few repeats), millisecond samples
    "sampled_apps": ({"warmup": 1, "min_repeats": 3, "max_repeats": 10, "budget_s": 1.0},
                     {"warmup": 1, "min_repeats": 3, "max_repeats": 5, "budget_s": 0.1}),
    # PTX model calibration: launch overhead and throughput regressions
    "ptx_calibration": _same({"min_repeats": 10, "max_repeats": 40, "budget_s": 0.2}),
    # PTX model study: 108 launches of 10 µs to a few ms, each timed warm like the model suite's kernels
    "ptx_study": _same({"warmup": 3, "min_repeats": 10, "max_repeats": 100, "budget_s": 0.25}),
    # kernel-class features (portable timing)
    "kernel_classes": ({"warmup": 2, "min_repeats": 5, "max_repeats": 30, "budget_s": 0.1},
                       {"warmup": 1, "min_repeats": 3, "max_repeats": 7, "budget_s": 0.05}),
    # summation suite: one multi-pass reduction per sample
    "summation": ({"warmup": 1, "min_repeats": 5, "budget_s": 0.25},
                  {"warmup": 1, "min_repeats": 3, "budget_s": 0.2}),
    # precision tuner: each validated mix is timed briefly for the pool's cost; the chosen mix is
    # re-timed against the original alternately (measure_pair) for the reported speedup
    "precision_search": ({"warmup": 1, "min_repeats": 5, "max_repeats": 15, "budget_s": 0.05},
                         {"warmup": 1, "min_repeats": 3, "max_repeats": 5, "budget_s": 0.05}),
    "precision_final": ({"warmup": 2, "min_repeats": 10, "max_repeats": 40, "budget_s": 0.3},
                        {"warmup": 1, "min_repeats": 7, "max_repeats": 15, "budget_s": 0.3}),
    # mixed-precision solvers: one whole solve (LU + substitutions + refinement) per sample
    "precision_solve": ({"warmup": 1, "min_repeats": 5, "max_repeats": 20, "budget_s": 0.3},
                        {"warmup": 1, "min_repeats": 3, "max_repeats": 7, "budget_s": 0.2}),
    # work-group tuning: one point per configuration (quality is re-timed at the end)
    # (its watchdog is the session's --gpuperf-timeout, like every other measurement's: tuning.tuner)
    "tuning": ({"warmup": 1, "min_repeats": 5, "max_repeats": 15, "target_rel_spread": 0.02, "budget_s": 0.04},
               {"warmup": 1, "min_repeats": 3, "max_repeats": 5, "target_rel_spread": 0.05, "budget_s": 0.03}),
    # quantization suite: the int8 and fp32 GEMMs of the throughput ratio (one launch per sample)
    "quant_gemm": ({"warmup": 2, "min_repeats": 10, "max_repeats": 50, "budget_s": 0.5},
                   {"warmup": 1, "min_repeats": 5, "max_repeats": 15, "budget_s": 0.5}),
}


def profile(name: str, is_cpu: bool) -> dict[str, Any]:
    """The overrides of profile ``name`` for a CPU or a GPU device (a new dict each call)."""
    try:
        gpu, cpu = PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown timing profile {name!r}; known: {', '.join(sorted(PROFILES))}") from None
    return dict(cpu if is_cpu else gpu)
