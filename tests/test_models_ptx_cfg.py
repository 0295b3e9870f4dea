"""PTX parser and CFG of the static model, on PTX saved from NVRTC 13 (sm_90) in tests/data/models."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_gpuperf.studies.ptx_model import cfg, ptx

DATA = Path(__file__).parent / "data" / "models"


def load(name: str) -> ptx.Kernel:
    return ptx.parse((DATA / f"{name}.ptx").read_text())


def test_saxpy_instructions_and_classes():
    k = load("saxpy")
    assert k.name == "saxpy"
    ops = [i.opcode for i in k.instructions]
    assert ops[:4] == ["ld.param.u32", "ld.param.f32", "ld.param.u64", "ld.param.u64"]
    bra = next(i for i in k.instructions if i.is_branch)
    assert bra.pred == "@%p1" and bra.target == "$L__BB0_2" and "%p1" in bra.uses
    mad = next(i for i in k.instructions if i.base == "mad")
    assert mad.defs == ["%r1"] and mad.uses == ["%r3", "%r4", "%r5"] and mad.klass == "mads"
    classes = [i.klass for i in k.instructions]
    assert classes.count("ld.global") == 2 and classes.count("st.global") == 1 and "fma" in classes


def test_special_registers_are_not_data_dependences():
    k = load("vectorAdd")
    mov = next(i for i in k.instructions if i.opcode == "mov.u32")
    assert mov.uses == []


@pytest.mark.parametrize("name, blocks_loops", [("saxpy", (3, 0)), ("vectorAdd", (3, 0)), ("matrixMulCUDA", (7, 1)),
                                                ("mergeSortSharedKernel", (9, 2)), ("bfs_kernel1", (8, 1))])
def test_cfg_blocks_and_natural_loops(name, blocks_loops):
    g = cfg.build(load(name))
    assert (len(g.blocks), len(g.loops)) == blocks_loops
    # every back edge targets a loop header that dominates it; the DAG without them is acyclic
    import networkx as nx
    assert nx.is_directed_acyclic_graph(g.dag())
    for u, v in g.back_edges:
        assert any(v == min(lp) and u in lp for lp in g.loops)


def test_nested_loop_multipliers_compose():
    g = cfg.build(load("mergeSortSharedKernel"))
    mult = g.multipliers([8, 4.5])
    outer, inner = g.loops
    assert inner < outer  # inner loop body is inside the outer loop
    assert max(mult) == pytest.approx(36.0)
    assert min(mult) == 1.0
    with pytest.raises(ValueError, match="2 loop"):
        g.multipliers([8])


def test_shared_bytes_and_dependence_graph():
    k = load("matrixMulCUDA")
    assert k.shared_bytes == 2048
    g = cfg.build(k)
    body = g.blocks[min(g.loops[0])]
    dg = body.dependence_graph()
    ins = body.instructions
    # barrier orders the shared stores before it and loads after it
    bars = [n for n in dg.nodes if ins[n].klass == "bar"]
    assert bars
    st = [n for n in dg.nodes if ins[n].klass == "st.shared" and n < bars[0]]
    import networkx as nx
    assert st and all(nx.has_path(dg, s, bars[0]) for s in st)
    after = [n for n in dg.nodes if ins[n].klass == "ld.shared" and n > bars[0]]
    assert after and all(nx.has_path(dg, bars[0], n) for n in after)
    # RAW: every use of a register defined earlier in the block has an edge from its definition
    for v in dg.nodes:
        for r in ins[v].uses:
            defs = [u for u in range(v) if r in ins[u].defs]
            if defs:
                assert dg.has_edge(defs[-1], v)


def test_parse_errors_name_the_problem():
    with pytest.raises(ptx.PtxParseError, match="no .entry"):
        ptx.parse(".version 9.0\n.target sm_90\n")
    with pytest.raises(ptx.PtxParseError, match="no .entry 'nope'"):
        ptx.parse((DATA / "saxpy.ptx").read_text(), "nope")
    with pytest.raises(ptx.PtxParseError, match="without ';'"):
        ptx.parse(".visible .entry k()\n{\n  add.s32 %r1, %r2, %r3\n}\n")


def test_session_latencies_win_over_files(tmp_path):
    """Latencies probed in the session take precedence over any baseline or results file, so the PTX
    model's figures do not depend on which files lie in the checkout (a new card's first runs would
    otherwise read the thesis' fallback and its later runs its own baseline)."""
    from pytest_gpuperf.studies.ptx_model.ptx_latency import PROBE_NAMES, chain_ops, latencies
    from pytest_gpuperf.probes.ops import op

    names = chain_ops()
    chain_metrics = {op(n).metric("latency", "cycles") for n in names}
    # every chain metric the table reads is one chain_ops measures
    wanted = {r.metric for refs in PROBE_NAMES.values() for r in refs if r.metric.startswith("latency.")}
    assert wanted <= chain_metrics
    measured = {m: 7.0 for m in chain_metrics} | {"memory.shared.latency.cycles": 29.0}
    t = latencies(tmp_path, "no-such-device", "cuda", 1980.0, baseline_dir=tmp_path, measured=measured)
    assert t.cycles["fma"] == 7.0 and t.sources["fma"].startswith("probed in this session")
    assert t.cycles["ld.shared"] == 29.0
    assert t.cycles["cvt"] == 3.5  # half of the (float)(int)x round trip
    bare = latencies(tmp_path, "no-such-device", "cuda", 1980.0, baseline_dir=tmp_path)
    assert bare.cycles["fma"] == 232 and "Alavani" in bare.sources["fma"]


def test_chain_cycles_needs_clock_timing(gpu_device):
    """The PTX model's latencies are cycles from clock64(); an event-timed device is refused by name."""
    from pytest_gpuperf.probes.latency import chain_cycles

    if gpu_device.info.backend == "cuda":
        pytest.skip("CUDA devices time chains with clock64()")
    with pytest.raises(ValueError, match="clock64"):
        chain_cycles(gpu_device, None, ["fp32.fma"])


def test_entry_parameters_and_module_arrays_are_parsed_in_order():
    """The parser gives an entry's parameter names in launch order, whatever qualifiers NVRTC writes before a
    name (a pointer's state space and alignment, a by-value struct's alignment), and every aligned ``.shared``
    and ``.const`` array with a constant's initialiser — what the lane-by-lane trace lays out in memory."""
    text = """
.const .align 4 .b8 coeff[8] = {1, 2, 3, 4, 255, 0, 0, 128};
.visible .entry k(
    .param .u64 .ptr .global .align 1 k_param_0,
    .param .align 16 .b8 k_param_1[16],
    .param .f32 k_param_2
)
{
    .shared .align 4 .b8 tile[1024];
    .reg .b32 %r<2>;
    mov.u32 %r1, %tid.x;
    ret;
}
"""
    k = ptx.parse(text, "k")
    assert k.params == ["k_param_0", "k_param_1", "k_param_2"] and k.shared_bytes == 1024
    decl = ptx.declarations(text)
    assert [(d.space, d.align, d.elem, d.name, d.count) for d in decl] == [("const", 4, "b8", "coeff", 8),
                                                                         ("shared", 4, "b8", "tile", 1024)]
    assert decl[0].init == (1, 2, 3, 4, 255, 0, 0, 128) and decl[1].init == ()
    assert load("vectorAdd").params == [f"vectorAdd_param_{i}" for i in range(4)]  # A, B, C, numElements
