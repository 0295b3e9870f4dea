"""Composite-precision (CMP float2) multiplication, division and exponential against MPFR, beside plain
binary32 on the same inputs (Surineni thesis §2.3, ch. 4; the forms are in ``accuracy/composite_ops.py``).

``accuracy.cmp.<float2|float>.<mul|div|exp>.max_rel_err`` — the largest relative error over a seeded set of
float2 inputs (identity ``{"inputs": "seeded", "n", "seed", "domain"}``): deterministic, so any change of
the device's arithmetic or library is news.
"""

from __future__ import annotations

import pytest

from pytest_gpuperf.accuracy import composite_ops


@pytest.mark.parametrize("op", composite_ops.OPS)
def test_composite_operation(gpu_device, gpuperf_record, accuracy_rng, accuracy_seed, op):
    result = composite_ops.check(gpu_device, op, accuracy_rng, accuracy_seed)
    # a float2 result carries about twice binary32's significand: a relative error near 2^-24 or worse
    # in every input would mean the error component was lost
    assert result.float2 < 1e-5, result
    for r in result.records():
        gpuperf_record(**r)
