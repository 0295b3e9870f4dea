"""The SASS proof on saved ``cuobjdump -sass`` text (NVRTC 13.0, sm_90; see tests/data/probes/README)."""

from __future__ import annotations

import lzma

from pathlib import Path

import pytest

from pytest_gpuperf.devices import sass
from pytest_gpuperf.errors import ProbeVerificationError
from pytest_gpuperf.probes import chain, ops, sass_proof

DATA = Path(__file__).parent / "data" / "probes"


def _func(fn: str) -> tuple[str, list[sass.Instr]]:
    funcs = sass.parse(lzma.open(DATA / f"{fn}.xz", "rt").read())
    assert len(funcs) == 1, funcs.keys()
    return next(iter(funcs.items()))


def test_parse_reads_addresses_opcodes_and_predicates():
    name, instrs = _func("lat_fp32_fma.sass")
    assert name == "lat_fp32_fma"
    assert [i.addr for i in instrs] == sorted(i.addr for i in instrs)
    assert instrs[0].addr == 0
    assert any(i.opcode == "FFMA" for i in instrs)
    assert any(i.pred.startswith("@") and i.opcode == "BRA" for i in instrs)


@pytest.mark.parametrize("fn,opname,fast", [
    ("lat_fp32_fma.sass", "fp32.fma", False),
    ("lat_fp64_fma.sass", "fp64.fma", False),
    ("lat_fp16_hfma2.sass", "fp16.hfma2", False),
    ("lat_int32_mad.sass", "int32.mad", False),
    ("lat_sfu32_exp_intr_fast.sass", "sfu32.exp_intr", True),
])
def test_generated_latency_chains_verify(fn, opname, fast):
    o = ops.op(opname)
    _, ck = chain.latency_kernel(o, "cuda", "clock")
    _, instrs = _func(fn)
    ev = sass_proof.verify_latency(instrs, o.sass_for(fast), ck.u1, ck.u2, sass_proof.per_step(o.heavy, o.ops_per_step), o.name)
    assert len(ev["loops"]) == 2
    # the two timed sections hold exactly the unrolled chains (u1 and u2 steps), nothing was merged
    per = sass_proof.per_step(o.heavy, o.ops_per_step)
    assert sorted(c[0] for c in ev["opcode_counts"]) == [ck.u1 * per, ck.u2 * per]


def test_wrong_instruction_is_an_error():
    o = ops.op("fp32.fma")
    _, instrs = _func("lat_fp32_fma.sass")
    with pytest.raises(ProbeVerificationError, match="DFMA"):
        sass_proof.verify_latency(instrs, (("DFMA",),), 32, 64, 1, "fp32 chain claimed as DFMA")
    assert o.sass == (("FFMA",),)


def test_folded_chain_is_an_error():
    # step x = fmaf(c1, c2, c2) does not depend on x: ptxas hoists it, the loops hold no FFMA chain
    _, instrs = _func("folded.sass")
    with pytest.raises(ProbeVerificationError):
        sass_proof.verify_latency(instrs, (("FFMA",),), 32, 64, 1, "folded")


def test_fully_unrolled_chain_without_loop_is_an_error():
    _, instrs = _func("unrolled.sass")
    assert sum(i.opcode == "FFMA" for i in instrs) >= 2 * 32  # the FFMAs are there, but in no loop
    with pytest.raises(ProbeVerificationError, match="no loop"):
        sass_proof.verify_latency(instrs, (("FFMA",),), 32, 64, 1, "unrolled")


def test_throughput_loop_holds_all_independent_chains():
    _, instrs = _func("tp_fp32_fma_ilp4.sass")
    ev = sass_proof.verify_throughput(instrs, (("FFMA",),), chain.TP_UNROLL, 4, 1, "tp")
    assert ev["opcode_counts"][0][0] >= chain.TP_UNROLL * 4
    with pytest.raises(ProbeVerificationError):
        sass_proof.verify_throughput(instrs, (("FFMA",),), chain.TP_UNROLL, 8, 1, "claims ILP 8")


def test_opcode_match_respects_dot_boundaries():
    assert sass_proof.matches("FFMA.FTZ", "FFMA")
    assert sass_proof.matches("MUFU.EX2", "MUFU.EX2")
    assert not sass_proof.matches("MUFU.EX2", "MUFU.RCP")
    assert not sass_proof.matches("FFMA32I", "FFMA")


def test_loops_are_backward_branches():
    instrs = [sass.Instr(0x10, "", "FFMA", "R1, R1, R2, R3"), sass.Instr(0x20, "@P0", "BRA", "0x10"),
              sass.Instr(0x30, "", "BRA", "0x40"), sass.Instr(0x40, "", "EXIT", "")]
    assert sass_proof.loops(instrs) == [(0x10, 0x20)]


def test_fast_math_falls_back_to_the_ieee_proof_and_says_so():
    """On the H100, sinf under --use_fast_math stayed the IEEE routine: proven by its own opcodes."""
    o = ops.Op("fp32.fma", "x = fmaf(x, c1, c2);", None, (("FFMA",),), sass_fast=(("MUFU.SIN",),))
    _, ck = chain.latency_kernel(ops.op("fp32.fma"), "cuda", "clock")
    _, instrs = _func("lat_fp32_fma.sass")
    ev = sass_proof.verify_latency_op(instrs, o, True, ck.u1, ck.u2)
    assert ev["fast_math_path"] == "ieee routine" and "MUFU.SIN" in ev["fast_math_note"]
    assert "fast_math_path" not in sass_proof.verify_latency_op(instrs, o, False, ck.u1, ck.u2)
    neither = ops.Op("fp32.fma", "x = fmaf(x, c1, c2);", None, (("DFMA",),), sass_fast=(("MUFU.SIN",),))
    with pytest.raises(ProbeVerificationError, match="IEEE routine"):
        sass_proof.verify_latency_op(instrs, neither, True, ck.u1, ck.u2)
