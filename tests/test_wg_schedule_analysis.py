"""The work-group scheduling microbenchmark's analysis (``probes/wg_schedule.py``) on traces whose answer is
known, built the way Dao describes the GTX 580 (§2.4): round-robin first groups, a refill as soon as a
group ends, and under contention the lowest id first (a staircase). The trace kernels themselves compile
with NVRTC in ``scripts/cuda_compile_check.py`` (case ``sched``)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.probes import wg_schedule

US = 1000  # ns


def _trace(n_sm: int, p_sat: int, rounds: int, staircase: bool, refill_gap_ns: int = 0) -> np.ndarray:
    """Groups in id order: group g's SM is g mod n_sm (round-robin), the first n_sm·p_sat start at 0; on
    each SM a later group starts when that SM's earliest-ending resident group ends (plus a gap). With a
    staircase the k-th resident group of an SM runs k times as long (the lowest id finishes first)."""
    rows, free = [], {s: [] for s in range(n_sm)}
    for g in range(n_sm * p_sat * rounds):
        s = g % n_sm
        k = (g // n_sm) % p_sat
        if len(free[s]) < p_sat:
            t0 = 0
        else:
            free[s].sort()
            t0 = free[s].pop(0) + refill_gap_ns
        dur = 100 * US * (k + 1 if staircase else 1)
        free[s].append(t0 + dur)
        rows.append([s, t0, t0 + dur // 5, t0 + 2 * dur // 5, t0 + 3 * dur // 5, t0 + 4 * dur // 5, t0 + dur])
    return np.array(rows, dtype=np.uint64)


def test_round_robin_with_immediate_refill_and_no_staircase():
    s = wg_schedule.analyse(_trace(16, 2, 4, staircase=False), 16)
    assert s.first_round_distinct_sms == 1.0 and s.groups_per_sm_first_wave == 2.0
    assert s.refill_fraction == 1.0 and s.staircase_ratio == pytest.approx(1.0)
    assert s.groups == 128 and s.sms == 16


def test_staircase_under_contention_lowest_id_first():
    s = wg_schedule.analyse(_trace(16, 3, 3, staircase=True), 16)
    assert s.groups_per_sm_first_wave == 3.0
    assert s.staircase_ratio == pytest.approx(3.0) and s.id_order == pytest.approx(1.0)


def test_late_refills_and_packed_first_groups_are_seen():
    late = wg_schedule.analyse(_trace(16, 2, 3, staircase=False, refill_gap_ns=50 * US), 16)
    assert late.refill_fraction == 0.0  # every later group waited 50 µs after an end on its SM
    packed = _trace(16, 2, 2, staircase=False)
    packed[:16, 0] = np.arange(16) // 2  # the first 16 groups two per SM on 8 SMs: not round-robin
    assert wg_schedule.analyse(packed, 16).first_round_distinct_sms == 0.5


def test_records_name_each_figure_per_kind():
    s = wg_schedule.analyse(_trace(4, 2, 2, staircase=False), 4)
    names = [r["name"] for r in wg_schedule.records("fp64", s, {})]
    assert names == [f"sched.fp64.{f}" for f in ("first_round_distinct_sms", "groups_per_sm_first_wave",
                                                 "refill_fraction", "staircase_ratio", "id_order")]
