"""Saturation points, sampling plans and the linear model (Dao thesis §2.4–2.5.1), and the SVR split."""

from __future__ import annotations

import math

import numpy as np

import pytest

from pytest_gpuperf.devices.base import DeviceInfo
from pytest_gpuperf.studies.sampled import svr
from pytest_gpuperf.studies.sampled.sampling import (GEOMETRY, SampledRun, SamplePlan, linear_model, multiple_for,
                                            sample_waves, saturation_point, waves_for_overhead)
from pytest_gpuperf.timing.measure import Measurement
from pytest_gpuperf.timing.stats import Stats

H100 = DeviceInfo(backend="cuda", index=0, name="H100", vendor="NVIDIA", key="h100", compute_capability="9.0",
                  compute_units=132, warp_size=32)
POCL = DeviceInfo(backend="opencl", index=0, name="cpu", vendor="pocl", key="cpu", compute_units=2, is_cpu=True)


def test_saturation_point_thesis_example_and_limits():
    # thesis: 256 work-items, occupancy 1.0 on a 48-warp SM → 6 groups; on sm_90 (64 warps) → 8
    assert saturation_point(H100, {"num_regs": 32}, 256).p_sat == 8
    s = saturation_point(H100, {"num_regs": 64}, 256)  # 64 regs × 256 = 16384 per group → 4 groups
    assert (s.p_sat, s.limit) == (4, "registers")
    s = saturation_point(H100, {"num_regs": 16, "shared_size_bytes": 48 * 1024}, 128)
    assert (s.p_sat, s.limit) == (4, "local memory")
    s = saturation_point(H100, {"num_regs": 8}, 32)
    assert (s.p_sat, s.limit) == (32, "blocks")
    assert s.wave == 32 * 132
    assert saturation_point(POCL, {}, 64).wave == 2
    with pytest.raises(ValueError):
        saturation_point(H100, {}, 0)


def test_linear_model_is_exact_on_linear_times():
    # t(N) = 5 µs + 0.1 µs per group
    t = lambda n: 5e-6 + 1e-7 * n  # noqa: E731
    assert linear_model(t(200), t(300), 200, 300, 10_000) == pytest.approx(t(10_000))
    with pytest.raises(ValueError):
        linear_model(1.0, 2.0, 300, 200, 1000)


def test_sample_plan_points_and_overhead():
    sat = saturation_point(H100, {"num_regs": 32}, 256)
    plan = SamplePlan(sat, 400 * sat.wave, 256, multiple=3)
    assert (plan.p1, plan.p2) == (6 * sat.wave, 9 * sat.wave)
    plan.check()
    with pytest.raises(ValueError, match="second sampling point"):
        SamplePlan(sat, 3 * sat.wave, 256).check()
    assert waves_for_overhead(0.05) == 100 and waves_for_overhead(0.05, 2) == 200
    assert multiple_for(400, 0.04) == 3 and multiple_for(50, 0.04) == 1
    for w in (100, 200, 400, 1000):
        m = multiple_for(w, 0.04)
        assert 5 * m / w <= 0.04 or m == 1


def test_wide_geometry_spends_the_same_waves_with_a_quarter_of_the_amplification():
    """The suite's 800-wave run, m = 5: the thesis points (10, 15 waves) magnify a shift of t_P2 − t_P1
    158×; the wide points (2, 23 waves) cost the same 25 sampled waves and magnify it 38×."""
    sat = saturation_point(H100, {"num_regs": 16}, 256)
    m = multiple_for(800, 0.035)
    thesis = SamplePlan(sat, 800 * sat.wave, 256, m, "thesis")
    wide = SamplePlan(sat, 800 * sat.wave, 256, m, "wide")
    assert m == 5 and thesis.waves == (10, 15) and wide.waves == (2, 23)
    assert sum(thesis.waves) == sum(wide.waves)  # same sampling overhead
    assert thesis.amplification == pytest.approx(158.0) and wide.amplification == pytest.approx(798 / 21)
    assert sample_waves(1, "wide") == (2, 3) == sample_waves(1, "thesis")  # m = 1: the thesis' 2·P_sat, 3·P_sat
    assert GEOMETRY in ("thesis", "wide")
    with pytest.raises(ValueError, match="unknown sampling geometry"):
        sample_waves(2, "narrow")
    with pytest.raises(ValueError):
        sample_waves(0, "wide")


def _measurement(xs):
    return Measurement(tuple(xs), Stats.of(xs), True)


def test_noise_reports_the_difference_and_the_error_it_implies():
    """A 0.1 µs scatter of the paired differences, amplified 158× over a 940 µs run of 10 pairs, is a
    standard error of ≈ 0.5 percentage points of the prediction error."""
    sat = saturation_point(H100, {"num_regs": 16}, 256)
    plan = SamplePlan(sat, 800 * sat.wave, 256, 5, "thesis")
    t1 = [15.4e-6 + (0.1e-6 if i % 2 else -0.1e-6) for i in range(10)]
    t2 = [21.2e-6] * 10
    run = SampledRun(plan, _measurement(t1), _measurement(t2), _measurement([940e-6] * 10))
    n = run.noise()
    assert n["n_pairs"] == 10 and n["amplification"] == pytest.approx(158.0)
    assert n["diff_s"] == pytest.approx(5.8e-6) and n["paired_diff_s"] == pytest.approx(5.8e-6)
    assert n["error_se"] == pytest.approx(158.0 * 1.4826 * 0.1e-6 / math.sqrt(10) / 940e-6, rel=1e-6)
    assert n["t_p2_rel_spread"] == 0.0 and n["t_p1_rel_spread"] > 0.0


def _inst(kernel: str, n: int, rate: float, regs: float) -> svr.Instance:
    t = lambda g: 2e-6 + g / rate  # noqa: E731
    return svr.Instance(kernel, 8, regs, 0.0, 256, 2112, 3168, n, t(2112), t(3168), t(n) * 0.97)


def test_svr_leave_one_kernel_out_never_trains_on_the_kernel():
    inst = [_inst(f"k{j}", n, 1e9 * (j + 1), 16.0 + j) for j in range(5) for n in (105600, 211200, 422400)]
    out = svr.leave_one_kernel_out(inst)
    assert set(out) == {f"k{j}" for j in range(5)}
    for k, preds in out.items():
        assert len(preds) == 3 and all(p[0].kernel == k for p in preds)
        assert all(math.isfinite(t) and t > 0 for _, t in preds)
    assert svr.split_report(inst) == {"kernels": 5, "instances": 15, "train_kernels_per_fold": 4}
    with pytest.raises(ValueError, match="at least 3 kernels"):
        svr.leave_one_kernel_out(inst[:6])
    # the target inverts exactly: time_from(target) == t_full
    i = inst[0]
    assert i.time_from(i.target) == pytest.approx(i.t_full)


def test_steady_state_flush_launches_the_kernel_over_the_scratch_buffers():
    """The pre-run is the same kernel over the scratch arguments, whole groups covering ``n`` items."""
    from pytest_gpuperf.studies.sampled.sampling import steady_state_flush

    calls = []

    class Recorder:
        def launch(self, kernel, global_size, local_size, args):
            calls.append((kernel, global_size, local_size, args))

    args = ["a2", "b2", "c2", np.int32(4096)]
    run = steady_state_flush(Recorder(), "k", 256, args)
    assert calls == []  # nothing runs until the measurement asks for it
    run()
    assert calls == [("k", (4096,), (256,), args)]


def test_sampling_points_are_timed_alternately_on_a_real_device(cl_device):
    """P1 and P2 are timed in pairs (see run_pair): both points get the same number of samples, every
    run is preceded by its own cold-cache step, and the pairs stop together."""
    from pytest_gpuperf.studies.sampled.sampling import run_pair
    from pytest_gpuperf.timing.measure import MeasureConfig

    src = """__kernel void k(__global float *x, int n) { int i = get_global_id(0);
             if (i < n) { float v = x[i]; for (int r = 0; r < 200; ++r) v = v * 0.999f + 1.0f; x[i] = v; } }"""
    kern = cl_device.compile(src, "k")
    buf = cl_device.to_device(np.ones(64 * 64, np.float32))
    order: list[int] = []
    calls = iter(range(1 << 30))

    def note() -> None:
        order.append(next(calls))

    cfg = MeasureConfig(warmup=1, min_repeats=6, max_repeats=6, budget_s=5.0)
    t1, t2 = run_pair(cl_device, kern, 4, 16, 64, [buf, np.int32(64 * 64)], cfg, flush=note)
    assert len(t1.samples) == len(t2.samples) == 6
    assert len(order) == 2 * (1 + 6)  # warm-up pair plus six pairs, each run preceded by its flush
    assert t2.stats.median > 0 and t1.stats.median > 0
