"""The probe suites' procedures that the PoCL run cannot reach or only reaches on one branch: which copy
sizes a device measures and over how many buffer pairs, the launch sweep's grids and intercept, the cache
size the memory sweeps reach past, and the bands the catalog gives these figures on GPUs and CPUs."""

from __future__ import annotations

import pytest

from pytest_gpuperf.baselines import catalog
from pytest_gpuperf.devices.base import DeviceInfo
from pytest_gpuperf.probes import copy_bandwidth, hierarchy, launch_overhead
from pytest_gpuperf.timing.measure import Measurement
from pytest_gpuperf.timing.stats import Stats

MiB, GiB = 1 << 20, 1 << 30


def _info(backend: str = "cuda", *, is_cpu: bool = False, l2: int = 50 * MiB, memory: int = 80 * GiB) -> DeviceInfo:
    return DeviceInfo(backend=backend, index=0, name="card", vendor="v", key="k", l2_bytes=l2, memory_bytes=memory,
                      is_cpu=is_cpu, compute_units=2 if is_cpu else 132)


def test_copies_rotate_over_twice_the_cache_trusting_no_gpu_report_below_64_mib():
    h100 = _info()
    assert [copy_bandwidth.buffer_pairs(h100, s) for s in copy_bandwidth.SIZES.values()] == [32, 4, 1, 1]
    assert copy_bandwidth.buffer_pairs(_info("opencl", l2=4 * MiB), 16 * MiB) == 4  # as if the L2 were 64 MiB
    assert copy_bandwidth.buffer_pairs(_info("opencl", is_cpu=True, l2=32 * MiB), 16 * MiB) == 2  # a CPU's own


def test_a_copy_is_skipped_where_gpu_sized_on_a_cpu_or_over_a_quarter_of_memory():
    assert all(copy_bandwidth.why_not(_info(), label) is None for label in copy_bandwidth.SIZES)
    cpu = _info("opencl", is_cpu=True, l2=1 * MiB, memory=8 * GiB)
    assert "GPU-sized" in copy_bandwidth.why_not(cpu, "1GiB")
    assert copy_bandwidth.why_not(cpu, "256MiB") is None
    small = copy_bandwidth.why_not(_info(memory=2 * GiB), "1GiB")
    assert "1GiB × 1 buffer pairs would use over a quarter" in small


def test_a_copy_figure_counts_bytes_read_and_written_over_the_median_time():
    m = Measurement((1e-3, 2e-3, 3e-3), Stats.of([1e-3, 2e-3, 3e-3]), True)
    plain = copy_bandwidth.CopyBandwidth("1MiB", MiB, 32, m, True).record()
    assert plain["name"] == "memory.copy.bandwidth.1MiB" and plain["unit"] == "GB/s" and plain["better"] == "higher"
    assert plain["value"] == pytest.approx(2 * MiB / 1e9 / 2e-3)  # read + written, over the median time
    assert plain["info"] == {"buffer_pairs": 32, "converged": True}


def test_the_launch_sweep_reaches_thousands_of_groups_per_core_on_a_cpu():
    assert launch_overhead.grid_blocks(132, False) == [1, 132, 528, 2112, 8448, 33792]
    assert launch_overhead.grid_blocks(2, True) == [1, 2, 32, 512, 2048, 8192]


def test_the_launch_intercept_ignores_a_slow_largest_grid():
    xs = [64, 128, 2048, 32768, 131072, 524288]
    ys = [2.0 + 1e-3 * x for x in xs]
    ys[-1] += 500.0  # the largest grid caught with a core lost
    assert launch_overhead.launch_intercept(xs, ys, 1e-3) == pytest.approx(2.0)


def test_the_memory_sweeps_reach_past_a_trusted_l2_or_64_mib_and_clamp_a_cpus():
    assert hierarchy.cache_bytes(_info()) == 50 * MiB
    assert hierarchy.cache_bytes(_info("opencl", l2=4 * MiB)) == 64 * MiB
    assert hierarchy.cache_bytes(_info("opencl", is_cpu=True, l2=1 * MiB)) == 2 * MiB
    assert hierarchy.cache_bytes(_info("opencl", is_cpu=True, l2=64 * MiB)) == 16 * MiB


@pytest.mark.parametrize("name,unit,better,gpu,cpu", [
    ("throughput.fp64.add.saturating_ilp", "ilp", "lower", {"abs": 0.5}, {"abs": 4.0}),
    ("memory.l2.size.bytes", "bytes", "exact", {"rel": 0.0352}, {"rel": 0.0352}),
    ("memory.global.latency_model.r2", "R²", "higher", {"abs": 0.1}, {"abs": 0.4}),
    ("launch.empty.device_us", "us", "lower", None, {"abs": 25.0, "rel": 2.0}),
    ("launch.grid.132x256.device_us", "us", "lower", None, {"abs": 25.0, "rel": 2.0}),
    ("launch.overhead.intercept_us", "us", "lower", None, {"abs": 25.0, "rel": 2.0}),
    ("launch.overhead.slope_ns_per_kthread", "ns/kthread", "lower", None, {"rel": 1.25}),
])
def test_the_catalog_keeps_the_probe_bands_on_both_device_classes(name, unit, better, gpu, cpu):
    fam = catalog.family(name)
    assert fam is not None and (fam.unit, fam.better) == (unit, better)
    assert catalog.tolerance(name, is_cpu=False) == gpu and catalog.tolerance(name, is_cpu=True) == cpu


@pytest.mark.parametrize("name", ["launch.empty.host_us", "memory.l1.latency.cycles", "memory.copy.bandwidth.1GiB",
                                  "throughput.fp32.fma.ops_per_clk_sm", "clock.sm.measured_mhz"])
def test_measured_spread_figures_have_no_catalog_band(name):
    assert catalog.family(name) is None



@pytest.mark.parametrize("device", ["nvidia-h200", "nvidia-h100-80gb-hbm3"])
def test_the_shipped_gpu_baselines_catch_one_step_of_the_saturating_ilp(device):
    """Every saved GPU run reads the same saturating ILP, so its band is half a step: one step either way
    is a verdict, the same value passes."""
    from pytest_gpuperf.baselines import baseline_file, verdicts
    from pytest_gpuperf.paths import REVIEWED_BASELINES

    # as the gate reads the file (its lean form writes runs that all read one value once)
    metrics = baseline_file.load_file(REVIEWED_BASELINES / f"{device}.json").data["backends"]["cuda"]["metrics"]
    ilp = {n: e for n, e in metrics.items() if n.endswith(".saturating_ilp")}
    assert len(ilp) == 10
    for name, entry in ilp.items():
        v = float(entry["value"])
        assert entry["tolerance"] == {"abs": 0.5}, name
        # in band (an ILP of 1 or 2 reads 'loose': detection rates half a step of it as a 50 % or 25 % band)
        assert verdicts.compare(v, "lower", entry, name=name, unit="ilp").verdict in ("pass", "loose")
        assert verdicts.compare(v + 1, "lower", entry, name=name, unit="ilp").verdict == "regressed", name
        if v > 1:
            assert verdicts.compare(v - 1, "lower", entry, name=name, unit="ilp").verdict == "improved", name
