"""Non-coalescing factor (Dao §3.5.2): affine access extraction, exact 128-byte segment counts,
the closed-form m/n rule, and the filter keeping the minimum-transaction shapes."""

from __future__ import annotations

import pytest

from pytest_gpuperf.tuning import coalescing as co
from pytest_gpuperf.tuning.kernels import by_name
from pytest_gpuperf.tuning.space import Limits, space_2d


def test_accesses_of_stencil_are_row_major_affine():
    accs, skipped = co.accesses(by_name("stencil2d").source, {"w": 250, "h": 200})
    assert not skipped
    got = {(a.array, a.A, a.B, a.C) for a in accs}
    assert ("in", 1, 250, 0) in got and ("in", 1, 250, -1) in got and ("in", 1, 250, -250) in got
    assert ("out", 1, 250, 0) in got


def test_transpose_write_is_column_major_and_bfs_is_not_affine():
    accs, _ = co.accesses(by_name("transpose_naive").source, {"w": 400, "h": 300})
    assert {(a.array, a.A, a.B) for a in accs} == {("in", 1, 400), ("out", 300, 1)}
    accs, skipped = co.accesses(by_name("bfs_step").source, {"n": 1000, "cur": 0})
    assert any(s.startswith("cols[") or s.startswith("level_out[") for s in skipped)


@pytest.mark.parametrize("shape", [(32, 8), (8, 32), (16, 16), (4, 64), (64, 4), (128, 2)])
def test_rule_equals_exact_count_for_row_access(shape):
    acc = co.Access("a", 1, 4096, 0)  # A=1: each row of the group reads n consecutive floats
    assert co.rule_transactions(acc, shape, 32) == co.transactions(acc, shape, 32)


@pytest.mark.parametrize("shape", [(1, 256), (2, 128), (4, 64), (8, 32), (32, 8)])
def test_rule_equals_exact_count_for_column_access(shape):
    acc = co.Access("a", 4096, 1, 0)  # B=1: each column reads r = WARP/n consecutive floats
    assert co.rule_transactions(acc, shape, 32) == co.transactions(acc, shape, 32)


def test_hand_counted_transactions():
    row = co.Access("a", 1, 4096, 0)
    assert co.transactions(row, (32, 8), 32) == 8  # one 128-byte segment per warp
    assert co.transactions(row, (8, 32), 32) == 32  # 4 rows × 32 bytes per warp → 4 segments
    col = co.Access("a", 4096, 1, 0)
    assert co.transactions(col, (32, 8), 32) == 256  # every work-item its own segment
    assert co.transactions(col, (1, 256), 32) == 8  # each warp reads 32 consecutive floats of one column


@pytest.mark.parametrize("kernel,scalars", [("stencil2d", {"w": 4000, "h": 4000}),
                                            ("transpose_naive", {"w": 4000, "h": 3000}),
                                            ("sgemm_naive", {"M": 1000, "N": 1000, "K": 1000})])
def test_filter_keeps_a_minimum_transaction_shape_per_size(kernel, scalars):
    shapes = space_2d(Limits(32, 1024, (1024, 1024)))
    accs, _ = co.accesses(by_name(kernel).source, scalars)
    kept, _how = co.ncf_filter(shapes, accs, 32)
    assert 0 < len(kept) < len(shapes)
    for total in {x * y for x, y in shapes}:
        group = [s for s in shapes if s[0] * s[1] == total]
        best = min(co.group_transactions(accs, s, 32) for s in group)
        mine = [s for s in kept if s[0] * s[1] == total]
        assert mine and min(co.group_transactions(accs, s, 32) for s in mine) == best


def test_no_shape_dependence_keeps_everything():
    shapes = space_2d(Limits(32, 256, (256, 256)))
    kept, how = co.ncf_filter(shapes, [co.Access("a", 0, 0, 5)], 32)
    assert kept == shapes and "all shapes kept" in how
