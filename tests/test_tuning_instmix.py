"""Lim's instruction-mix / pipeline-utilization rule (instmix.py) on hand-written PTX."""

from __future__ import annotations

import pytest

from pytest_gpuperf.tuning.instmix import classify, instruction_mix, rule_filter, table_for

MEMORY_PTX = """
.visible .entry copy(
{
\tmov.u32 \t%r1, %ctaid.x;
\tld.global.f32 \t%f1, [%rd4];
\tld.global.f32 \t%f2, [%rd5];
\tst.global.f32 \t[%rd6], %f1;
\tst.global.f32 \t[%rd7], %f2;
\tadd.f32 \t%f3, %f1, %f2;
\tret;
}
"""

COMPUTE_PTX = """
.visible .entry nb(
{
\tld.global.f32 \t%f1, [%rd4];
""" + "\tfma.rn.f32 \t%f2, %f1, %f1, %f2;\n" * 40 + "\trsqrt.approx.f32 \t%f3, %f2;\n" * 4 + """\tst.global.f32 \t[%rd6], %f2;
\tret;
}
"""


def test_classify_rows():
    assert classify("ld", ".global.f32") == "mem"
    assert classify("atom", ".global.add.u32") == "mem"
    assert classify("bar", ".sync") == "ctrl"
    assert classify("setp", ".lt.s32") == "ctrl"
    assert classify("fma", ".rn.f32") == "fl32"
    assert classify("fma", ".rn.f64") == "fl64"
    assert classify("add", ".s32") == "int"
    assert classify("rsqrt", ".approx.f32") == "sfu"
    assert classify("cvt", ".u64.u32") == "conv64"
    assert classify("mov", ".u32") == "mov"
    assert classify("reg", ".f32") is None  # declarations are not instructions


def test_table_column():
    assert table_for("sm_52")[0] == "sm52" and table_for("sm_35")[0] == "sm35"
    assert table_for("sm_90")[0] == "sm60"  # Table 3 stops at Pascal


def test_memory_bound_mix():
    mix = instruction_mix(MEMORY_PTX, "sm_60")
    assert mix.counts == {"mov": 1, "mem": 4, "fl32": 1, "ctrl": 1}
    # cycles: mem 4/16 = 0.25, fl 1/64, ctrl 1/16, reg 1/32 → mem share 0.25 / 0.359 ≈ 0.70
    assert mix.share("mem") == pytest.approx(0.25 / (0.25 + 1 / 64 + 1 / 16 + 1 / 32))
    assert mix.bound() == "mem"


def test_compute_bound_mix():
    mix = instruction_mix(COMPUTE_PTX, "sm_60")
    # flops: 40/64 + 4/16 = 0.875 cycles vs mem 2/16 = 0.125, ctrl 1/16
    assert mix.bound() == "flops"


def test_rule_filter_halves_t_star():
    t_star = [64, 128, 256, 512, 1024, 128]
    assert rule_filter(t_star, "flops")[0] == [256, 512, 1024]
    assert rule_filter(t_star, "mem")[0] == [64, 128, 256]
    assert rule_filter(t_star, "ctrl")[0] == [64, 128, 256]
    assert rule_filter(t_star, "balanced")[0] == [64, 128, 256, 512, 1024]
    assert rule_filter([256], "mem")[0] == [256]
