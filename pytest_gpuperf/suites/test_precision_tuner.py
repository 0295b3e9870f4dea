"""The precision auto-tuner (Surineni, ch. 6–7) on six double-precision kernels: Gaussian elimination,
LU decomposition and LavaMD (the thesis' ch. 5 applications), a stencil, an n-body step and a reduction.

Each kernel is a typed template (``pytest_gpuperf/precision/programs``); the tuner lowers its operations
to single precision level by level along the data-flow graph (step size 8 → 4 → 2 → 1, cut points),
validates every step on the test inputs against the double original, keeps the best programs by the
thesis' cost and reports the cheapest. Threshold: normwise relative error ≤ 2^-23 (binary32 epsilon)
against the double original (:data:`pytest_gpuperf.precision.cost.EPS32`).

Metrics ``precision.tuner.<kernel>.speedup`` (original / chosen median device time, timed alternately;
higher is better), ``.error`` (the chosen program's error in the threshold's unit; lower),
``.iterations`` (validations the search ran; lower) and ``.fp32_fraction`` (share of the operations the
chosen mix runs in single precision). Info: the chosen mix, the furthest mix that passed, tuning time,
the search's trace, and the iterations the same search needs without the speed-ups (step 1, no cut
points: §7.4.2.3's claim measured). On a CPU device (PoCL) single and double precision run at nearly the same rate, so
a speedup near 1 — or a chosen mix that is the original — is the finding, not a failure.
"""

from __future__ import annotations

import pytest

from pytest_gpuperf.precision.programs import PROGRAMS
from pytest_gpuperf.precision.runner import tune
from pytest_gpuperf.timing.measure import MeasureConfig
from pytest_gpuperf.timing.profiles import profile


@pytest.mark.parametrize("kernel", list(PROGRAMS))
@pytest.mark.gpuperf(requires=["fp64"])
def test_precision_tuner(gpu_device, gpu_measure, gpuperf_record, accuracy_rng, kernel):
    program = PROGRAMS[kernel]
    is_cpu = gpu_device.info.is_cpu
    base = gpu_measure.config.__dict__
    res = tune(gpu_device, program, accuracy_rng,
               search_config=MeasureConfig(**{**base, **profile("precision_search", is_cpu)}),
               final_config=MeasureConfig(**{**base, **profile("precision_final", is_cpu)}), compare_plain=True)
    out, thr = res.outcome, res.threshold
    # the tuner's contract: what it returns meets the threshold, re-checked after the final timing run
    assert res.chosen_error <= thr.value, f"{kernel}: chosen mix misses {thr.describe()}: {res.chosen_error:.3g}"
    assert out.furthest.error <= thr.value
    assert 1 <= out.trace.iterations <= 4 * res.n_ops + 8, out.trace.steps
    assert res.tuning_s > 0
    # both searches validate every step against the same threshold; the one-level search may keep a
    # different (finer-grained) set, but never an invalid one
    assert res.plain.furthest.error <= thr.value
    lowered = sorted(n for n, t in res.mix.items() if t == "float")
    info = {"threshold": thr.describe(), "chosen_lowered": lowered, "chosen_cost": out.best.cost,
            "furthest_lowered": sorted(out.furthest.lowered), "furthest_error": out.furthest.error,
            "furthest_speedup_search": out.original.time_s / out.furthest.time_s,
            "tuning_s": round(res.tuning_s, 3), "ops": res.n_ops, "levels": res.depth, "blocks": res.blocks,
            "trace": [{"lowered": list(s[0]), "passed": s[1], "step": s[2], "mode": s[3]} for s in out.trace.steps],
            "skipped": out.trace.skipped, "cut_point_fallback": out.trace.fell_back,
            "errors": res.chosen_errors, "size": res.size,
            "iterations_without_speedups": res.plain.trace.iterations,
            "furthest_without_speedups": sorted(res.plain.furthest.lowered),
            "tuning_time": "host wall clock of the whole search (compiles, validations, pool timings)"}
    ident = {"threshold": f"{thr.kind}:{thr.value:g}", "step": 8, "cut_points": True, **res.size}
    sp = res.original.stats.median / res.chosen.stats.median
    gpuperf_record(f"precision.tuner.{kernel}.speedup", sp, "ratio", better="higher", info=info, identity=ident,
                   valid=(0.0, 1e3))
    gpuperf_record(f"precision.tuner.{kernel}.error", res.chosen_error, "1" if thr.kind == "rel" else "ulp",
                   better="lower", identity=ident, valid=(0.0, thr.value),
                   tolerance={"rel": 1.0, "abs": thr.value})
    gpuperf_record(f"precision.tuner.{kernel}.iterations", out.trace.iterations, "iterations", better="lower",
                   identity=ident, valid=(1, 1e6))
    gpuperf_record(f"precision.tuner.{kernel}.fp32_fraction", res.fp32_fraction, "ratio", better="higher",
                   identity=ident, valid=(0.0, 1.0))
