"""The precision auto-tuner (Surineni, ch. 6–7) on six double-precision kernels: Gaussian elimination,
LU decomposition and LavaMD (the thesis' ch. 5 applications), a stencil, an n-body step and a reduction.

Each kernel is a typed template (``pytest_gpuperf/precision/programs``); the tuner lowers its operations
to single precision level by level along the data-flow graph (step size 8 → 4 → 2 → 1, cut points),
validates every step on the test inputs against the double original and reports the passing mix that
lowers the most operations — a choice made without a clock, so unchanged runs choose the same mix
(``precision.runner.CHOICES``; the thesis' timed cost pool stays available as ``choice="cost"``).
Threshold: normwise relative error ≤ 2^-23 (binary32 epsilon) against the double original
(:data:`pytest_gpuperf.precision.cost.EPS32`).

Metrics ``precision.tuner.<kernel>.speedup`` (median over alternating pairs of original / chosen device
time, the pairs' ratios as its samples; higher is better), ``.error`` (the chosen program's error in the
threshold's unit; lower), ``.iterations`` (validations the search ran; lower) and ``.fp32_fraction`` (share of the operations the
chosen mix runs in single precision). Info: the chosen mix, the furthest mix that passed, tuning time,
the search's trace, and the iterations the same search needs without the speed-ups (step 1, no cut
points: §7.4.2.3's claim measured). On a CPU device (PoCL) single and double precision run at nearly the
same rate, so a speedup near 1 — or below 1 for a mix that lowers much but gains nothing — is the finding, not a failure.
"""

from __future__ import annotations

import pytest

from pytest_gpuperf.precision.programs import PROGRAMS
from pytest_gpuperf.precision.runner import metrics, tune
from pytest_gpuperf.timing.measure import MeasureConfig
from pytest_gpuperf.timing.profiles import profile


@pytest.mark.parametrize("kernel", list(PROGRAMS))
@pytest.mark.gpuperf(requires=["fp64"])
def test_precision_tuner(gpu_device, gpu_measure, gpuperf_record, accuracy_rng, kernel):
    is_cpu = gpu_device.info.is_cpu
    base = gpu_measure.config.__dict__
    res = tune(gpu_device, PROGRAMS[kernel], accuracy_rng,
               search_config=MeasureConfig(**{**base, **profile("precision_search", is_cpu)}),
               final_config=MeasureConfig(**{**base, **profile("precision_final", is_cpu)}), compare_plain=True)
    out, thr = res.outcome, res.threshold
    # the tuner's contract: what it returns meets the threshold, re-checked after the final timing run
    assert res.chosen_error <= thr.value, f"{kernel}: chosen mix misses {thr.describe()}: {res.chosen_error:.3g}"
    assert sorted(out.furthest.lowered) == res.lowered  # the choice is the search's furthest passing mix
    assert 1 <= out.trace.iterations <= 4 * res.n_ops + 8, out.trace.steps
    assert res.tuning_s > 0
    # both searches validate every step against the same threshold; the one-level search may keep a
    # different (finer-grained) set, but never an invalid one
    assert res.plain.furthest.error <= thr.value
    for m in metrics(res):
        gpuperf_record(**m)
