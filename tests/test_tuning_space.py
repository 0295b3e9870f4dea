"""Search-space enumeration (Dao §3.5: legal sizes, multiples of WARP_SIZE; padded NDRange)."""

from __future__ import annotations

import pytest

from pytest_gpuperf.devices.base import ndrange
from pytest_gpuperf.tuning.kernels import BENCHMARKS, by_name
from pytest_gpuperf.tuning.space import Limits, enumerate_space, space_1d, space_2d


def test_1d_all_warp_multiples_within_limit():
    got = space_1d(Limits(32, 1024, (1024, 1024)))
    assert got == [(s,) for s in range(32, 1025, 32)]


def test_1d_kernel_limit_and_pow2():
    assert space_1d(Limits(32, 256, (1024, 1024))) == [(s,) for s in range(32, 257, 32)]
    assert space_1d(Limits(32, 1024, (1024, 1024), pow2_only=True)) == [(32,), (64,), (128,), (256,), (512,), (1024,)]


@pytest.mark.parametrize("warp,total,dims", [(32, 1024, (1024, 1024)), (32, 512, (64, 64)), (8, 128, (128, 128))])
def test_2d_matches_brute_force(warp, total, dims):
    """Every (x, y) with x a power of two, x·y a multiple of the warp and within all limits — no more."""
    want = {(x, y) for x in (1 << i for i in range(11)) for y in range(1, dims[1] + 1)
            if x <= dims[0] and x * y <= total and (x * y) % warp == 0}
    got = space_2d(Limits(warp, total, dims))
    assert set(got) == want and len(got) == len(want)


def test_2d_tiled_pow2_limits():
    got = space_2d(Limits(32, 1024, (64, 64), pow2_only=True))
    assert all(x <= 64 and y <= 64 and x & (x - 1) == 0 and y & (y - 1) == 0 and (x * y) % 32 == 0 for x, y in got)
    assert (64, 16) in got and (32, 1) in got and (64, 32) not in got  # 2048 > 1024


def test_limits_reject_empty_space():
    with pytest.raises(ValueError, match="fewer work-items than one warp"):
        Limits(32, 16, (1024, 1024))
    with pytest.raises(ValueError, match="1-D and 2-D"):
        enumerate_space(3, Limits(32, 1024, (1024, 1024, 64)))


def test_padded_ndrange_for_indivisible_problems():
    stencil = by_name("stencil2d")
    s = {"w": 250, "h": 200}
    assert stencil.ndrange(s, (32, 8), None) == (256, 200)
    assert ndrange((250, 201), (32, 8)) == (256, 208)
    reduce = by_name("reduce")
    assert reduce.ndrange({"n": 1000, "groups": 10}, (96,), None) == (960,)  # fixed group count


def test_twelve_kernels_cover_the_thesis_categories():
    names = {b.name for b in BENCHMARKS}
    assert len(BENCHMARKS) >= 12
    assert {"reduce", "matvec_row", "matvec_wg", "stencil2d", "transpose_naive", "transpose_tiled", "sgemm_naive",
            "sgemm_tiled", "histogram", "nbody", "bfs_step", "blur1d"} <= names
