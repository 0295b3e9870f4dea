"""Robust statistics and the measurement loop (no wall-clock asserts: only structure and invariants)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.timing.measure import MeasureConfig, measure, measure_kernel
from pytest_gpuperf.timing.stats import Stats


def test_stats_are_robust_to_one_outlier():
    s = Stats.of([1.0, 1.0, 1.1, 0.9, 1.0, 50.0])
    assert s.median == 1.0 and s.mad == pytest.approx(0.05) and s.max == 50.0 and s.n == 6
    assert s.rel_spread == pytest.approx(1.4826 * 0.05)


def test_reciprocal_turns_time_into_rate():
    s = Stats.of([2.0, 2.0, 4.0])
    r = s.reciprocal(8.0)
    assert r.median == 4.0 and r.min == 2.0 and r.max == 4.0
    assert r.mad == pytest.approx(8.0 * s.mad / 4.0)
    assert s.scaled(1e6).median == 2e6


@pytest.mark.parametrize("kind", ["normal", "ties", "integers", "nan", "inf"])
def test_mad_is_scipy_s_median_abs_deviation_bit_for_bit(kind):
    import math
    import warnings

    from scipy.stats import median_abs_deviation

    from pytest_gpuperf.timing import stats

    rng = np.random.default_rng(len(kind))
    for n in (1, 2, 3, 4, 5, 15, 16, 100, 1001):
        x = {"normal": rng.normal(size=n) * 10.0 ** rng.uniform(-9, 9), "ties": np.round(rng.exponential(size=n), 2),
             "integers": rng.integers(0, 5, size=n).astype(float),
             "nan": np.where(rng.random(n) < 0.2, np.nan, rng.random(n)),
             "inf": np.where(rng.random(n) < 0.2, np.inf, rng.random(n))}[kind]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # inf - inf warns in SciPy too
            want, got = float(median_abs_deviation(x)), stats.mad(list(x))
        assert (math.isnan(want) and math.isnan(got)) or repr(want) == repr(got), (n, want, got)
    with pytest.warns(Warning, match="too small"):  # SciPy's own NaN and warning for no samples
        assert math.isnan(stats.mad([]))


def test_empty_samples_rejected():
    with pytest.raises(ValueError):
        Stats.of([])


def _windows(device, first: int) -> list[dict]:
    """The sampling windows one measurement took since ``device.observations[first]``: one, or more where
    other work held a CPU device's cores (each busy window is taken again: timing.observers)."""
    windows = device.observations[first:]
    assert windows and all(w["busy"] for w in windows[:-1]), windows
    return windows


def test_measure_respects_repeat_limits_and_rotation(cl_device):
    k = cl_device.compile("__kernel void inc(__global int *x) { x[get_global_id(0)] += 1; }", "inc")
    bufs = [cl_device.to_device(np.zeros(64, np.int32)) for _ in range(3)]
    cfg = MeasureConfig(warmup=2, min_repeats=6, max_repeats=6, target_rel_spread=0.0, budget_s=10)
    first = len(cl_device.observations)
    m = measure_kernel(cl_device, k, (64,), (64,), [[b] for b in bufs], cfg)
    # a target spread of 0 is met only by samples that do not spread at all (a fast kernel on a coarse timer)
    assert m.stats.n == 6 and len(m.samples) == 6 and m.converged == (m.stats.rel_spread <= 0.0)
    assert all(s > 0 for s in m.samples)
    # 2 warm-up launches, then 6 a window, rotated over 3 buffers: one window (a quiet host) is 8 launches,
    # 3, 3 and 2 increments; a busy host's windows are taken again and rotate on (14 launches: 5, 5, 4)
    launches = 2 + 6 * len(_windows(cl_device, first))
    counts = sorted(int(cl_device.to_host(b, np.int32)[0]) for b in bufs)
    assert counts == sorted(launches // 3 + (i < launches % 3) for i in range(3)), (counts, launches)


def test_measure_stops_when_noise_target_met(cl_device):
    k = cl_device.compile("__kernel void nop(__global int *x) { }", "nop")
    buf = cl_device.empty(64)
    cfg = MeasureConfig(warmup=1, min_repeats=5, max_repeats=500, target_rel_spread=10.0, budget_s=10)
    m = measure_kernel(cl_device, k, (1,), (1,), [[buf]], cfg)
    assert m.converged and m.stats.n == 5


def test_before_each_runs_untimed_before_every_run(cl_device):
    """``before_each`` (a cache flush, a pre-run) is enqueued before each warm-up and timed run, and its
    work is not in the samples: a pre-run 50× longer than the timed kernel leaves the samples short."""
    k = cl_device.compile("__kernel void inc(__global int *x) { x[get_global_id(0)] += 1; }", "inc")
    slow = cl_device.compile("""__kernel void spin(__global float *x, int n) {
        float v = x[0]; for (int i = 0; i < n; ++i) v = v * 0.999f + 0.5f; x[0] = v; }""", "spin")
    buf, sbuf = cl_device.to_device(np.zeros(64, np.int32)), cl_device.to_device(np.ones(1, np.float32))
    calls = []

    def pre():
        calls.append(1)
        cl_device.launch(slow, (1,), (1,), [sbuf, np.int32(2_000_000)])

    cfg = MeasureConfig(warmup=2, min_repeats=5, max_repeats=5, target_rel_spread=0.0, budget_s=10)
    first = len(cl_device.observations)
    m = measure(cl_device, lambda: cl_device.launch(k, (64,), (64,), [buf]), cfg, before_each=pre)
    assert len(calls) == 2 + 5 * len(_windows(cl_device, first)) and m.stats.n == 5
    pre_s = cl_device.elapsed(cl_device.timed(lambda: cl_device.launch(slow, (1,), (1,), [sbuf, np.int32(2_000_000)])), 30)
    assert m.stats.max < pre_s / 5, (m.stats.max, pre_s)


def test_between_run_sigma_sees_a_second_mode_in_few_runs():
    """Three H100 runs of the pairwise summation, two in one mode and one in the other: the MAD says
    ~0, the sample σ sees the 2 µs gap; from five runs on, one odd run no longer inflates the estimate."""
    from pytest_gpuperf.timing.stats import MAD_TO_SIGMA, between_run_sigma

    assert between_run_sigma([35.0]) == 0.0
    three = [33.06, 35.23, 33.02]
    assert between_run_sigma(three) == pytest.approx(float(np.std(three, ddof=1)))
    assert between_run_sigma(three) > 1.0 > MAD_TO_SIGMA * float(np.median(np.abs(np.asarray(three) - 33.06)))
    five = [10.0, 10.1, 9.9, 10.0, 30.0]
    assert between_run_sigma(five) == pytest.approx(MAD_TO_SIGMA * 0.1)


def test_a_baseline_covers_a_second_mode_that_two_runs_hold():
    """Nine runs of the H200's graph launch figure on two machines, six at 0.4941 µs and three at 0.5011: the
    MAD sees the first machine alone; the σ a baseline is made with keeps the second (one odd run is still
    left out)."""
    from pytest_gpuperf.timing.stats import between_run_sigma, modes_sigma

    two_machines = [0.494064, 0.494144, 0.494192, 0.494048, 0.494048, 0.494128, 0.501088, 0.501072, 0.501136]
    assert between_run_sigma(two_machines) < 2e-4 < 0.003 < modes_sigma(two_machines)
    one_odd = [10.0, 10.1, 9.9, 10.0, 30.0]
    assert modes_sigma(one_odd) == pytest.approx(float(np.std([10.0, 10.1, 9.9, 10.0], ddof=1)))
    assert modes_sigma([1.0, 2.0]) == 0.0


def test_timing_profiles_are_one_home_with_clear_errors():
    """Every suite's repeat settings come from timing.profiles: a name gives a fresh dict per device type,
    an unknown name lists the known ones, and every profile is a valid MeasureConfig override."""
    from pytest_gpuperf.timing.measure import MeasureConfig
    from pytest_gpuperf.timing.profiles import PROFILES, profile

    for name in PROFILES:
        for cpu in (False, True):
            MeasureConfig(**profile(name, cpu))  # a misspelt key would raise TypeError
    a = profile("memory_probe", False)
    a["budget_s"] = 99.0
    assert profile("memory_probe", False)["budget_s"] == 0.3  # callers cannot change the shared profile
    assert profile("launch_grid", False) == {} and profile("launch_grid", True)["min_repeats"] == 21
    with pytest.raises(KeyError, match="known: .*tuning"):
        profile("no-such-profile", True)
