"""Alavani's piecewise-linear latency model and the cache-level detection."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.studies.ptx_model.ptx_latency import global_latency_k20 as _thesis_k20  # Table 3.3
from pytest_gpuperf.probes import fit, memory


def test_recovers_the_thesis_model_from_noisy_samples():
    rng = np.random.default_rng(3)
    x = np.unique(np.geomspace(32, 2.2e6, 60).astype(int)).astype(float)
    y = np.array([_thesis_k20(v) for v in x]) + rng.normal(0, 2.0, x.size)
    f = fit.piecewise_linear(x, y, max_segments=4)
    assert len(f.segments) == 4 and f.r2 > 0.99
    for got, true in zip(f.breakpoints, (4096, 24576, 991232)):
        assert true / 1.6 < got < true * 1.6  # breakpoints within one grid step (×1.2 per point)
    assert f.segments[0].slope == pytest.approx(0.02828, rel=0.15)
    assert f.segments[0].intercept == pytest.approx(220, abs=5)
    assert f.predict(1e5) == pytest.approx(_thesis_k20(1e5), rel=0.02)


def test_a_straight_line_is_one_segment():
    x = np.arange(1.0, 31.0)
    y = 3.0 * x + 7.0 + np.random.default_rng(0).normal(0, 0.05, x.size)
    f = fit.piecewise_linear(x, y)
    assert len(f.segments) == 1  # BIC does not pay for segments that only chase noise
    assert f.segments[0].slope == pytest.approx(3.0, rel=1e-2)


def test_two_segments_exact():
    x = np.arange(0.0, 20.0)
    y = np.where(x < 10, 100 + 2 * x, 300 - 5 * x)
    f = fit.piecewise_linear(x, y)
    assert [(s.x_lo, s.x_hi) for s in f.segments] == [(0.0, 9.0), (10.0, 19.0)]
    assert f.sse == pytest.approx(0.0, abs=1e-6)


def test_too_few_points_is_an_error():
    with pytest.raises(ValueError, match="at least 3 points"):
        fit.piecewise_linear([1, 2], [1, 2])


def test_levels_from_a_latency_curve():
    sizes = [1 << k for k in range(10, 30)]
    lat = [33.0] * 8 + [150.0] + [270.0] * 6 + [290.0] * 2 + [650.0] * 3
    lv = memory.levels(sizes, lat)
    assert [x.name for x in lv] == ["l1", "l2", "dram"]
    assert lv[0].size == sizes[7] and lv[0].latency == 33.0
    assert lv[1].latency == pytest.approx(270.0, abs=20) and lv[1].size == sizes[16]
    assert lv[2].latency == 650.0


#: the H100 chase curve of results/nvidia-h100-80gb-hbm3/quick-6bf8fcf-q1 (cycles, 1 KiB … 181 MiB, two
#: footprints per doubling), taken right after the 1 GiB copy: the 16 and 22.6 MiB buffers landed partly on
#: the far L2 partition, the far partition reads 548–565 (DRAM 680/683: a step of 1.22×, under the
#: plateaus' 1.25× jump) and the two footprints past the warm limit (128 and 181 MiB, chased cold) read
#: below DRAM
H100_AFTER_COPY = [41.0] * 15 + [167, 283, 282, 282, 282, 284, 282, 282, 282, 282, 282, 282, 336, 378, 565, 548, 680,
                                 683, 565, 591]


def test_the_l2_ends_where_dram_begins_whatever_the_far_partition_reads():
    sizes = memory.footprints(1024, 4 * 50 * 2**20)
    assert len(sizes) == len(H100_AFTER_COPY)
    lv = {x.name: x for x in memory.levels(sizes, H100_AFTER_COPY, warm_limit=100 * 2**20)}
    assert lv["l2"].size == sizes[30] and round(sizes[30] / 2**20, 1) == 45.3  # not 16 MiB
    assert lv["l2"].latency == 282.0
    # DRAM from the warmed footprints only, not the cold 128/181 MiB transients, and only those clear of the L2
    # (90.5 MiB, 2× its 45.3 MiB; 64 MiB is 1.41× and may be partly L2-resident)
    assert lv["dram"].latency == pytest.approx(683.0) and lv["dram"].size == sizes[32] and lv["dram"].points == 1
    # without the warm limit the cold points count (what the figure used to be)
    assert memory.levels(sizes, H100_AFTER_COPY)[-1].latency < 650


def test_chase_array_is_one_cycle_over_all_lines():
    a = memory.chase_array(64 * 1024, 128)
    j, seen = 0, set()
    for _ in range(512):
        seen.add(j)
        j = int(a[j])
    assert j == 0 and len(seen) == 512 and all(s % 32 == 0 for s in seen)
    assert len({s for s in memory.starts(64 * 1024, 128)}) == memory.ROTATE


def test_anchor_footprints_are_fixed_powers_of_four():
    sizes = memory.footprints(1024, 64 << 20)
    assert [memory.footprint_label(f) for f in memory.anchors(sizes)] == [
        "1KiB", "4KiB", "16KiB", "64KiB", "256KiB", "1MiB", "4MiB", "16MiB", "64MiB"]
    # the anchors do not depend on where the sweep happens to stop between them
    assert memory.anchors(memory.footprints(1024, 90 << 20)) == memory.anchors(sizes)
    # CPU devices leave out the host's shared last-level-cache range (neighbour-dependent latency)
    assert [memory.footprint_label(f) for f in memory.anchors(sizes, is_cpu=True)] == [
        "1KiB", "4KiB", "16KiB", "64KiB", "256KiB", "1MiB", "64MiB"]


def test_dram_is_read_past_the_l2_where_a_planted_slowdown_moves_every_load():
    """The H200 chase of results/nvidia-h200/gatecheck-e003155/plant-chase-7 (a DRAM slowdown of 7.99 % planted
    in every load): its 64 MiB footprint, 1.1× the 60 MB L2, rose 5 %, its 91 MiB one 8 %; the level reads the
    91 MiB one, so it moves by what was planted."""
    sizes = memory.footprints(1024, 4 * 50 * 2**20)
    base = [41.0] * 15 + [200.0] + [288.0] * 13 + [452.0, 520.0, 665.0, 664.0, 532.0, 567.0]
    planted = [v * 1.0799 for v in base]
    planted[31] = 665.0 * 1.05  # the partly L2-resident footprint moves by less
    before = {x.name: x for x in memory.levels(sizes, base, warm_limit=100 * 2**20)}["dram"]
    after = {x.name: x for x in memory.levels(sizes, planted, warm_limit=100 * 2**20)}["dram"]
    assert round(sizes[31] / 2**20) == 64 and after.latency / before.latency == pytest.approx(1.0799)


def test_cpu_devices_name_only_the_first_level():
    sizes = [1 << k for k in range(10, 30)]
    lat = [33.0] * 8 + [150.0] + [270.0] * 6 + [290.0] * 2 + [650.0] * 3
    lv = memory.levels(sizes, lat)
    assert [x.name for x in memory.recorded_levels(lv, is_cpu=True)] == ["l1"]
    assert [x.name for x in memory.recorded_levels(lv, is_cpu=False)] == ["l1", "l2", "dram"]


def _step(size: int, low: float, high: float, width: float = 1.15):
    """A synthetic chase: ``low`` up to ``size`` bytes, ``high`` past ``size × width``, a log-linear ramp between."""
    import math

    def lat(f: int) -> float:
        if f <= size:
            return low
        if f >= size * width:
            return high
        return low + (high - low) * math.log(f / size) / math.log(width)
    return lat


def test_a_cache_edge_is_found_to_one_step_of_the_fine_grid():
    """The sweep's √2 grid reads the 184 KiB L1 as 128 KiB or 181 KiB; the refinement brackets the step on
    the sweep, chases the fine grid between, and lands within one fine step of where the ramp crosses the
    midpoint (a mis-placed bracket or a threshold on the wrong plateau lands a whole √2 step off)."""
    from pytest_gpuperf.baselines import catalog
    from pytest_gpuperf.probes import cache_edges

    KiB = 1024
    l1 = _step(184 * KiB, 40.0, 280.0, width=1.06)
    l2 = _step(47 * 2**20, 280.0, 680.0, width=1.3)
    chase = lambda f: l1(f) if f < 2**20 else l2(f)  # noqa: E731
    sizes = memory.footprints(1024, 200 * 2**20)
    curve = [(f, chase(f)) for f in sizes]
    lv = memory.levels([f for f, _ in curve], [y for _, y in curve])
    assert [x.name for x in lv] == ["l1", "l2", "dram"]
    chased: list[int] = []
    edges = cache_edges.refine(lv, curve, ["l1", "l2", "dram"], lambda f: chased.append(f) or chase(f))
    assert set(edges) == {"l1", "l2"} and len(chased) == 2 * cache_edges.EDGE_POINTS
    step = 2 ** (0.5 / (cache_edges.EDGE_POINTS + 1))
    true_l1 = 184 * KiB * 1.06 ** 0.5  # the ramp crosses the midpoint halfway through it
    assert true_l1 / step <= edges["l1"].size <= true_l1
    # into DRAM the threshold is DRAM's own rule (1/1.12 of DRAM), not the midpoint
    assert edges["l2"].limit == pytest.approx(680.0 / memory.DRAM_NEAR)
    true_l2 = 47 * 2**20 * 1.3 ** ((680.0 / memory.DRAM_NEAR - 280.0) / 400.0)
    assert true_l2 / step <= edges["l2"].size <= true_l2
    assert abs(edges["l1"].size - lv[0].size) > 0.02 * lv[0].size  # the coarse size was a √2 step off
    assert catalog.CACHE_SIZE_BAND["rel"] == pytest.approx(1.1 * (step - 1), abs=1e-4)


def test_the_fine_grid_and_the_crossing_are_pure_functions():
    from pytest_gpuperf.probes import cache_edges

    grid = cache_edges.fine_grid(128 * 1024, 181 * 1024, points=10)
    assert len(grid) == 10 and all(g % 128 == 0 for g in grid) and grid == sorted(grid)
    assert 128 * 1024 < grid[0] and grid[-1] < 181 * 1024
    ratios = [b / a for a, b in zip(grid, grid[1:])]
    assert max(ratios) < 1.04
    assert cache_edges.threshold(40.0, 280.0, into_dram=False) == 160.0
    curve = [(1, 40.0), (2, 50.0), (3, 150.0), (4, 170.0), (5, 280.0)]
    assert cache_edges.bracket(curve, 160.0) == (3, 4) and cache_edges.edge(curve, 160.0) == 3
    # one noisy point on the wrong side of the limit moves the size one step, not to the first spike
    spiky = [(1, 40.0), (2, 170.0), (3, 150.0), (4, 170.0), (5, 280.0)]
    assert cache_edges.bracket(spiky, 160.0) == (1, 2) and cache_edges.edge(spiky, 160.0) == 2
    assert cache_edges.edge([(1, 200.0), (2, 300.0)], 160.0) is None
    assert cache_edges.bracket(curve, 1000.0) is None and cache_edges.bracket(curve, 10.0) is None
    with pytest.raises(ValueError, match="no step"):
        cache_edges.threshold(280.0, 40.0, into_dram=False)


def test_a_gpu_size_record_is_the_fine_edge_and_names_its_grid():
    """The size a GPU records is the refined one, under an identity a baseline of the √2 sweep's sizes lacks
    (so it reads incomparable, never a false verdict); without a refinement the sweep's size stands, named."""
    from pytest_gpuperf.baselines import verdicts
    from pytest_gpuperf.probes import cache_edges, hierarchy

    lv = memory.Level("l1", 41.0, 185344, 8)
    r = cache_edges.Refinement("l1", (185344, 262144), 164.0, [(191232, 60.0)], 254208)
    sweep = hierarchy.ChaseSweep(None, 0, True, False, {128: []}, {}, [lv], {"l1": r})
    rec = sweep.size_record(lv, {"levels": []})
    assert rec["name"] == "memory.l1.size.bytes" and rec["value"] == 254208
    assert "22 footprints per doubling" in rec["identity"]["edge"]
    assert rec["info"]["edge"]["coarse_bracket"] == [185344, 262144]
    old = {"value": 185344.0, "unit": "bytes", "better": "exact", "tolerance": {"rel": 0.45}, "identity": {}}
    assert verdicts.compare(rec["value"], "exact", old, identity=rec["identity"]).verdict == "incomparable"
    coarse = hierarchy.ChaseSweep(None, 0, True, False, {128: []}, {}, [lv]).size_record(lv, {"levels": []})
    assert coarse["value"] == 185344 and coarse["identity"] == {"edge": "2 footprints per doubling"}
