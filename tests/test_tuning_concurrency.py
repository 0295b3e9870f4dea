"""Concurrency tuner (Dao §3.5.3): λ, the λ0 micro-benchmark, and the min/max-occupancy decision."""

from __future__ import annotations

import math

import pytest

from pytest_gpuperf.tuning.concurrency import Calibration, calibrate, concurrency_filter, memory_intensiveness
from pytest_gpuperf.devices.occupancy import cuda_occupancy, sm_limits
from pytest_gpuperf.devices.resources import resources_of
from pytest_gpuperf.tuning.tuner import tuning_config

H100 = sm_limits("9.0")
CAL = Calibration(lambda0=0.6, bytes_per_s=1e12, stride_at=8, table={})


def _occ(cfg):
    return cuda_occupancy(H100, cfg, 32, 0)


def test_lambda_is_traffic_time_over_kernel_time():
    assert memory_intensiveness(5e8, 1e-3, CAL) == pytest.approx(0.5)
    assert memory_intensiveness(5e9, 1e-3, CAL) == 1.0  # clamped
    assert memory_intensiveness(1.0, 0.0, CAL) == 0.0


def test_keeps_max_occupancy_without_contention():
    sizes = [32, 64, 96, 128, 256, 1024]
    dec = concurrency_filter(sizes, _occ, lambda c: 1.0, 1e8, CAL)
    assert dec.mode == "max-occupancy" and not dec.contention
    assert sorted(dec.kept) == [64, 128, 256, 1024]  # 32 is block-limited (0.5), 96 gives 63/64 warps


def test_keeps_min_occupancy_when_contention_hurts_a_memory_intensive_kernel():
    sizes = [32, 64, 128, 256]
    times = {32: 1.0e-3, 256: 1.3e-3}  # higher occupancy 30 % slower → contention
    dec = concurrency_filter(sizes, _occ, lambda c: times.get(c, 1.1e-3), 9e8, CAL)  # λ ≈ 0.9 > λ0
    assert dec.contention and dec.mode == "min-occupancy" and dec.kept == [32]


def test_contention_alone_is_not_enough():
    times = {32: 1.0e-3, 256: 1.3e-3}
    dec = concurrency_filter([32, 64, 256], _occ, lambda c: times.get(c, 1.1e-3), 1e7, CAL)  # λ ≈ 0.01
    assert dec.contention and dec.mode == "max-occupancy"


def test_without_sm_model_nothing_is_pruned():
    dec = concurrency_filter([32, 64], lambda c: None, lambda c: 1.0, 1.0, CAL)
    assert dec.kept == [32, 64] and dec.mode == "no SM model"


def test_micro_benchmark_runs_and_yields_a_threshold(gpu_device):
    """The Fig. 3.6 kernel over all strides and occupancy levels (occupancy from the H100 table as a
    stand-in mapping on devices without an SM model); λ0 is a fraction or ∞."""
    def occ(threads, kernel):
        r = resources_of(kernel)
        return cuda_occupancy(H100, threads, r.regs, r.shared).occupancy

    w = gpu_device.info.warp_size or 1
    cal = calibrate(gpu_device, occ, [w, 2 * w, 4 * w, 32], 1 << 12, tuning_config(gpu_device))
    assert sorted(cal.table) == [1, 2, 4, 8, 16]
    assert all(0 < lam <= 1 for rows in cal.table.values() for _, _, lam in rows)
    # every stride sweeps the same occupancy levels, in increasing order
    levels = [o for o, _, _ in cal.table[1]]
    assert levels == sorted(set(levels)) and all([o for o, _, _ in r] == levels for r in cal.table.values())
    # λ is relative to the fastest coalesced (stride-1) run, which therefore has λ = 1 ...
    t1_us = min(t for _, t, _ in cal.table[1])
    assert max(lam for _, _, lam in cal.table[1]) == pytest.approx(1.0)
    # ... and that run gives the coalesced rate: 8 bytes per work-item over its time
    assert cal.bytes_per_s == pytest.approx(8.0 * (1 << 12) / (t1_us * 1e-6), rel=1e-9)
    assert math.isinf(cal.lambda0) or 0 < cal.lambda0 <= 1
    assert (cal.stride_at == 0) == math.isinf(cal.lambda0)
