"""Pure-Python parts of the quantization study (pytest_gpuperf.precision.quant_scale): scale choices on
known histograms, the quantize/dequantize round trip, the percentile and noise scales, and the
adaptive-precision step."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.precision import quant_scale as qs


def test_scale_for_is_eq_4_4():
    # s = (2^b - 1) / (2·MAX|x|): MAX maps to 127.5, which rounds half up to 128 and clamps to 127;
    # -MAX maps to -127.5, which rounds half up to -127 (the code -128 is never used by a MAX scale)
    assert qs.scale_for(2.0, 8) == pytest.approx(255 / 4)
    assert qs.quantize(np.array([2.0, -2.0]), qs.scale_for(2.0, 8), 8).tolist() == [127, -127]
    with pytest.raises(ValueError):
        qs.scale_for(0.0)
    with pytest.raises(ValueError):
        qs.scale_for(float("inf"))


def test_round_half_up_and_clamp():
    q = qs.quantize(np.array([0.5, 1.5, -0.5, -1.5, 2.49, 1e9, -1e9]), 1.0, 8)
    assert q.tolist() == [1, 2, 0, -1, 2, 127, -128]  # floor(x + 0.5): halves go up, also for negatives
    assert qs.qrange(4) == (-8.0, 7.0)


def test_round_trip_error_is_half_a_step_inside_the_clip():
    rng = np.random.default_rng(3)
    x = rng.uniform(-3.0, 3.0, 100_000)
    s = qs.scale_for(float(np.abs(x).max()), 8)
    err = np.abs(qs.dequantize(qs.quantize(x, s, 8), s) - x)
    assert err.max() <= 0.5 / s * (1 + 1e-12)
    assert err.max() > 0.45 / s  # and the bound is reached, not vacuous
    # codes are exact: dequantize then quantize again is the identity
    q = qs.quantize(x, s, 8)
    assert np.array_equal(qs.quantize(qs.dequantize(q, s), s, 8), q)


def test_clipping_saturates_above_the_clip():
    s = qs.scale_for(1.0, 8)
    y = qs.dequantize(qs.quantize(np.array([5.0, -5.0]), s, 8), s)
    assert y[0] == pytest.approx(127 / 127.5) and y[1] == pytest.approx(-128 / 127.5)


def test_histogram_of_known_values():
    # 1000 values 0..999: MAX is 999, the median ~500, the 99 % point ~990, 10 % lie above 899.1
    h = qs.Histogram.of(np.arange(1000.0), bins=1000)
    assert qs.clip_max(h) == 999.0
    assert h.quantile(0.5) == pytest.approx(499.5, abs=1.0)
    assert qs.clip_percentile(h, 99.0) == pytest.approx(989.0, abs=1.0)
    assert h.tail_fraction(h.top * 0.9) == pytest.approx(0.1, abs=0.002)
    assert h.tail_fraction(1e9) == 0.0 and h.tail_fraction(-1.0) == 1.0
    assert qs.clip_percentile(h, 100.0) == pytest.approx(999.0)


def test_histogram_averages_over_tensors_and_uses_magnitudes():
    h = qs.Histogram.of([np.array([-4.0, 1.0]), np.array([2.0, 3.0])], bins=4)
    assert h.top == 4.0 and h.n == 2.0
    assert h.counts.sum() == pytest.approx(2.0)  # averaged over the two tensors
    with pytest.raises(ValueError):
        qs.Histogram.of([np.array([1.0, np.nan])])
    with pytest.raises(ValueError):
        qs.Histogram.of([])


def test_percentile_scale_on_an_outlier():
    # one huge outlier among 10,000 unit values: MAX is the outlier, the 99.9th percentile is ~1
    x = np.concatenate([np.ones(10_000) * np.linspace(0, 1, 10_000), [100.0]])
    h = qs.Histogram.of(x, bins=100_000)
    assert qs.clip_max(h) == 100.0
    assert qs.clip_percentile(h, 99.9) == pytest.approx(1.0, abs=0.01)
    # the percentile scale resolves the bulk 100× finer than MAX's
    assert qs.scale_for(qs.clip_percentile(h, 99.9)) / qs.scale_for(qs.clip_max(h)) == pytest.approx(100, rel=0.02)


def test_noise_p_keeps_the_tail_fraction():
    x = np.linspace(0.0, 1.0, 100_001)
    h = qs.Histogram.of(x, bins=10_000)
    p = qs.noise_p(h, 0.01)  # 1 % of a uniform tensor lies in [0.99, 1]
    assert p == pytest.approx(0.01, abs=2e-4)
    assert h.tail_fraction(h.top * (1 - p)) <= 0.01 + 1e-9
    assert qs.noise_p(h, 0.0) == pytest.approx(0.0, abs=1e-4)
    rng = np.random.default_rng(0)
    draws = np.array([qs.clip_noise(10.0, 0.2, rng) for _ in range(2000)])
    assert draws.min() >= 8.0 and draws.max() <= 10.0  # eq. 4.6: MAX − random(0, p·MAX)
    assert draws.mean() == pytest.approx(9.0, abs=0.05)
    with pytest.raises(ValueError):
        qs.clip_noise(1.0, 1.5, rng)


def test_kl_divergence():
    p = np.array([0.5, 0.5])
    assert qs.kl_divergence(p, p) == pytest.approx(0.0, abs=1e-9)
    assert qs.kl_divergence(p, np.array([0.25, 0.75])) == pytest.approx(
        0.5 * np.log2(2) + 0.5 * np.log2(0.5 / 0.75))
    with pytest.raises(ValueError):
        qs.kl_divergence(p, np.ones(3))


def test_precision_step_moves_toward_the_target_and_stops_there():
    rng = np.random.default_rng(1)
    h = qs.Histogram.of(np.maximum(rng.standard_normal(20_000), 0.0))
    # at the target the quantized distribution is P_T itself: no divergence, no step
    assert qs.kl_divergence(qs.quantized_distribution(h, 8), qs.quantized_distribution(h, 8)) == pytest.approx(0.0, abs=1e-9)
    assert qs.precision_gradient(h, 8.0, 8) == 0.0
    g = qs.precision_gradient(h, 32.0, 8)
    assert g > 0.0  # b above the target: the divergence falls as b falls
    b, path = 32.0, []
    for _ in range(200):
        b = qs.precision_step(h, b, 8, beta=400.0)
        path.append(b)
    assert all(a >= c for a, c in zip(path, path[1:]))  # monotone
    assert path[0] < 32.0 and path[-1] == 8.0  # it moves, and ends at the target, never below
    assert qs.precision_step(h, 8.0, 8, beta=1e9) == 8.0


def test_kernel_source_for_both_backends():
    from pytest_gpuperf.precision import quant_kernels

    cu, cl = quant_kernels.source("cuda"), quant_kernels.source("opencl")
    assert "__dp4a" in cu and "__dp4a" not in cl  # the dp4a path on CUDA, plain int8 multiply-add on OpenCL
    for src in (cu, cl):
        for name in ("q_dense", "q_fake_quant", "q_gemm_i8", "q_gemm_f32", "q_quantize"):
            assert f"void {name}(" in src
    with pytest.raises(ValueError):
        quant_kernels.source("metal")


def test_host_int8_network_matches_the_float_one_closely():
    from pytest_gpuperf.precision import quant_mlp as qm

    rng = np.random.default_rng(5)
    x = rng.uniform(0, 1, (200, qm.FEATURES))
    tr = qm.Trained("t", rng.standard_normal((qm.FEATURES, 16)) * 0.2, rng.standard_normal(16) * 0.1,
                    rng.standard_normal((16, qm.CLASSES)) * 0.3, np.zeros(qm.CLASSES), 1.0, 0.0, 0, 0.0)
    h = np.maximum(x @ tr.w1 + tr.b1, 0)
    z = h @ tr.w2 + tr.b2
    tr.clip_h = float(h.max())
    s = {"x": qs.scale_for(1.0), "h": qs.scale_for(tr.clip_h), "w1": qs.scale_for(float(np.abs(tr.w1).max())),
         "w2": qs.scale_for(float(np.abs(tr.w2).max()))}
    logits, codes = qm.host_int8(x, tr, s)
    assert set(codes) == {"x", "w1", "h", "w2"} and all(np.abs(c).max() <= 128 for c in codes.values())
    rel = np.abs(logits - z).max() / np.abs(z).max()
    assert 0 < rel < 0.05  # int8 is close to, and not identical with, the float network
    assert np.mean(np.argmax(logits, 1) == np.argmax(z, 1)) > 0.9
    # given its own codes back, the integer path reproduces itself exactly
    again, _ = qm.host_int8(x, tr, s, codes=codes)
    assert np.array_equal(again, logits)
