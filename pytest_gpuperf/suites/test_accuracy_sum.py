"""Summation accuracy × time (thesis ch. 4.1, Figs. 7–8): float, double, Kahan, float2/double2 (CMP)
and pairwise sums of Taufer's zero-sum data set against the exact MPFR sum, serial (1 thread) and
parallel (64 × 32 threads), error vs n and time vs n.

Metrics ``accuracy.sum.<variant>.<layout>.n<log2 n>.abs_err`` (|sum − exact|, exact = 0 by construction,
confirmed by MPFR) and ``....time_us`` (device time of the whole reduction, both launches).
The accuracy ordering the thesis reports is asserted for the compensated and composite sums: Kahan and
float2/double2 are never less accurate than the plain sum of the same precision by more than a few ulps of
the largest partial — checked as err(float2) ≤ err(float) + 1e3·eps (likewise Kahan and double2) for the
serial layout; in the parallel one the partials meet in an order the device chooses, so the two errors
can swap places between runs of unchanged code.
"""

from __future__ import annotations

import pytest

from pytest_gpuperf.accuracy import summation_check
from pytest_gpuperf.gatecheck import plants


@pytest.mark.parametrize("layout", summation_check.LAYOUTS)
@pytest.mark.gpuperf(requires=["fp64"])
def test_summation(gpu_device, gpu_measure, gpuperf_record, gpuperf_plant, accuracy_rng, layout):
    # the gate check's summation plant: every sum the kernel writes is scaled by 1 + F
    run = summation_check.SummationRun(gpu_device, gpu_measure, layout, accuracy_rng,
                                       plants.fraction(gpuperf_plant, "summation"))
    for r in run.records():
        gpuperf_record(**r)
    problem = run.ordering_problem()
    assert problem is None, problem
