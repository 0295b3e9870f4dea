"""The precision tuner's device-free parts: typed templates, the data-flow graph, the lowering order with
step size and cut points, the best-programs pool and the cost (issue 17)."""

from __future__ import annotations

import math

import numpy as np
import networkx as nx
import pytest

from pytest_gpuperf.precision import graph
from pytest_gpuperf.precision.cost import EPS32, Threshold, cost, errors
from pytest_gpuperf.precision.programs import PROGRAMS
from pytest_gpuperf.precision.lowering import Pool, Candidate, Validation, lower
from pytest_gpuperf.precision.template import TypedTemplate, lint

SMALL = r"""
__kernel void k(__global const double* x, __global double* y, double c) {
  int i = get_global_id(0);
  T_acc acc = (T_acc)0;
  for (int j = 0; j < 4; ++j) {
    T_p p = (T_p)x[i + j] * (T_p)c;
    acc += (T_acc)p;
  }
  T_q q = exp((T_q)acc) / (T_q)2.5;
  y[i] = q;
}
"""


# ---------------------------------------------------------------------------------------- templates
def test_template_parses_operations_inputs_and_kinds():
    t = TypedTemplate.parse(SMALL)
    assert list(t.ops) == ["acc", "p", "q"]
    assert t.kernels == ["k"]
    assert t.ops["p"].inputs == [] and t.ops["p"].kinds == {"mul"}
    assert t.ops["acc"].inputs == ["acc", "p"]  # the recurrence reads itself
    assert t.ops["q"].inputs == ["acc"] and t.ops["q"].kinds == {"exp", "div"}
    assert lint(t) == []


def test_render_fixes_every_type_and_refuses_unknown_names():
    t = TypedTemplate.parse(SMALL)
    src = t.render(t.lowered_mix({"p"}))
    assert "#define T_p float" in src and "#define T_acc double" in src and "#define T_q double" in src
    with pytest.raises(KeyError):
        t.render({"nope": "float"})
    with pytest.raises(ValueError):
        t.render({"p": "half"})


def test_lint_catches_an_operand_that_would_keep_the_operation_in_double():
    bad = SMALL.replace("(T_p)x[i + j] * (T_p)c", "(T_p)x[i + j] * c").replace("/ (T_q)2.5", "/ 2.5")
    problems = lint(TypedTemplate.parse(bad))
    assert any("'c'" in p and p.startswith("p:") for p in problems)
    assert any("2.5" in p and p.startswith("q:") for p in problems)


def test_template_macro_must_name_its_variable():
    with pytest.raises(ValueError, match="T_a"):
        TypedTemplate.parse("__kernel void k() { T_a b = (T_a)1; }")


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_every_tuner_kernel_keeps_the_conventions(name):
    t = TypedTemplate.parse(PROGRAMS[name].template)
    assert lint(t) == []
    assert len(t.ops) >= 3
    g = graph.of_template(t)
    assert set(g.levels) == set(t.ops) and min(g.levels.values()) == 1
    dg = nx.DiGraph(list(g.edges))
    cycle_of = {op: i for i, scc in enumerate(nx.strongly_connected_components(dg)) for op in scc}
    for b, a in g.edges:  # a consumer is below its producer, level with it only inside one recurrence
        if cycle_of[a] == cycle_of[b]:
            assert g.levels[a] == g.levels[b], (b, a)
        else:
            assert g.levels[a] > g.levels[b], (b, a)


def test_six_kernels_cover_the_issue():
    assert {"gaussian", "lu", "lavamd", "stencil", "nbody", "reduction"} <= set(PROGRAMS)


# -------------------------------------------------------------------------------------------- graph
def test_levels_go_top_down_from_the_loads():
    g = graph.build({"a": [], "b": ["a"], "c": ["a", "b"], "d": []})
    assert g.levels == {"a": 1, "b": 2, "c": 3, "d": 1}
    assert g.blocks == (("a", "b", "c"), ("d",))
    assert g.depth == 3


def test_a_recurrence_is_one_level():
    # x reads itself; y and z feed each other around a loop: both cycles are single levels
    g = graph.build({"p": [], "x": ["x", "p"], "y": ["z", "x"], "z": ["y"], "out": ["z"]})
    assert g.levels["x"] == 2
    assert g.levels["y"] == g.levels["z"] == 3
    assert g.levels["out"] == 4


def test_blocks_never_span_kernels():
    with pytest.raises(ValueError, match="span kernels"):
        graph.build({"a": [], "b": ["a"]}, {"a": "k1", "b": "k2"})


# ------------------------------------------------------------------------------------------- search
def chain(n: int) -> graph.Dataflow:
    return graph.build({f"o{i}": ([f"o{i - 1}"] if i else []) for i in range(n)})


def synthetic(per_op: dict[str, float], threshold: float, time_per_double: float = 1.0, time_per_float: float = 0.5):
    """Errors add per lowered operation; time falls per lowered operation; counts the calls."""
    calls = []

    def validate(lowered):
        calls.append(frozenset(lowered))
        e = sum(per_op[n] for n in lowered)
        return Validation(e <= threshold, e, e)

    def timer(lowered):
        return sum(time_per_float if n in lowered else time_per_double for n in per_op)

    return validate, timer, calls


def test_step_size_halves_on_failure_and_skips_the_failing_operation():
    g = chain(10)
    per_op = {f"o{i}": 0.0 for i in range(10)}
    per_op["o5"] = 1.0  # lowering o5 breaks the threshold
    validate, timer, calls = synthetic(per_op, 0.5)
    out = lower(g, validate, timer, step=8)
    steps = [(s[2], s[1]) for s in out.trace.steps]
    # levels 1-8 fail (o5 is level 6); 1-4 pass; 5-8 would be the program of the first try again (not
    # re-validated); 5-6 fail; 5 passes; 6 again a known failure (one operation: skipped); then levels
    # 7 ... 10 at step 1, one level per iteration
    assert steps == [(8, False), (4, True), (2, False), (1, True)] + [(1, True)] * 4
    assert out.trace.skipped == ["o5"]
    assert out.furthest.lowered == frozenset(per_op) - {"o5"}
    assert out.best.lowered == out.furthest.lowered  # cheapest: most lowered, error 0
    assert out.trace.iterations == len(calls) == 8
    assert all(c.error <= 0.5 for c in out.pool)


def test_first_candidate_lowers_exactly_the_first_step_of_levels():
    g = chain(12)
    validate, timer, calls = synthetic({f"o{i}": 0.0 for i in range(12)}, 1.0)
    lower(g, validate, timer, step=8)
    assert calls[0] == frozenset(f"o{i}" for i in range(8))
    assert calls[1] == frozenset(f"o{i}" for i in range(12))


def test_identical_candidates_are_not_validated_twice():
    g = graph.build({"a": [], "b": ["a"]})  # two levels: steps 8, 4, 2 all add the same two operations
    validate, timer, calls = synthetic({"a": 0.0, "b": 1.0}, 0.5)
    out = lower(g, validate, timer, step=8)
    assert len(calls) == len(set(calls)) == out.trace.iterations
    assert out.best.lowered == frozenset({"a"})


def test_cut_points_tune_blocks_together_then_fall_back_one_block_at_a_time():
    g = graph.build({"a1": [], "a2": ["a1"], "b1": [], "b2": ["b1"]})
    validate, timer, calls = synthetic({"a1": 0.0, "a2": 0.0, "b1": 0.0, "b2": 0.0}, 0.5)
    out = lower(g, validate, timer, step=8, cut_points=True)
    assert out.trace.iterations == 1 and calls[0] == frozenset({"a1", "a2", "b1", "b2"})
    validate, timer, calls = synthetic({"a1": 0.0, "a2": 0.0, "b1": 0.0, "b2": 1.0}, 0.5)
    out = lower(g, validate, timer, step=8, cut_points=True)
    assert out.trace.fell_back
    assert out.trace.steps[0][3] == "cut-points" and not out.trace.steps[0][1]
    assert out.trace.steps[1] == (("a1", "a2"), True, 8, "block")
    assert out.best.lowered == frozenset({"a1", "a2", "b1"})
    validate, timer, calls = synthetic({"a1": 0.0, "a2": 0.0, "b1": 0.0, "b2": 0.0}, 0.5)
    out = lower(g, validate, timer, step=8, cut_points=False)
    assert out.trace.iterations == 2  # one block per iteration without cut points


def test_the_original_wins_when_lowering_is_not_faster():
    g = chain(3)
    validate, timer, _ = synthetic({f"o{i}": 1e-9 for i in range(3)}, 1.0, time_per_float=1.0)
    out = lower(g, validate, timer)
    assert out.best.lowered == frozenset() and out.best.cost == 1.0
    assert out.furthest.lowered == frozenset(f"o{i}" for i in range(3))


def test_pool_keeps_the_cheapest_and_replaces_the_costliest():
    pool = Pool(2)
    mk = lambda c: Candidate(frozenset({str(c)}), 0.0, 0.0, 1.0, c)  # noqa: E731
    assert pool.offer(mk(1.0)) and pool.offer(mk(0.8))
    assert not pool.offer(mk(1.2))
    assert pool.offer(mk(0.5))
    assert sorted(m.cost for m in pool.members) == [0.5, 0.8]
    assert pool.best().cost == 0.5


def test_impossible_times_and_errors_are_errors():
    g = chain(2)
    with pytest.raises(ValueError):
        lower(g, lambda m: Validation(True, 0.0, 0.0), lambda m: 0.0)
    with pytest.raises(ValueError):
        lower(g, lambda m: Validation(True, -1.0, 0.0), lambda m: 1.0)


# --------------------------------------------------------------------------------------------- cost
def test_cost_of_the_original_is_one():
    assert cost(0.0, 2e-3, 2e-3) == 1.0
    assert cost(1e-7, 1e-3, 2e-3) == pytest.approx(0.5 + 1e-7)
    with pytest.raises(ValueError):
        cost(-1.0, 1.0, 1.0)


def test_errors_in_ulp_and_relative():
    r = np.array([1.0, 2.0, 0.0, -4.0])
    y = r.copy()
    y[1] = np.nextafter(2.0, 3.0)
    e = errors(y, r)
    assert e["ulp"] == 1.0
    assert e["rel"] == pytest.approx(np.spacing(2.0) / 4.0)
    assert errors(r, r) == {"ulp": 0.0, "rel": 0.0, "abs": 0.0}
    y[0] = np.nan
    assert math.isinf(errors(y, r)["rel"])
    with pytest.raises(ValueError):
        Threshold("rel", -1.0)
    assert Threshold("rel", EPS32).value == 2.0 ** -23


def test_one_text_for_both_backends():
    from pytest_gpuperf.devices.dialect import portable_fp64

    t = TypedTemplate.parse(SMALL)
    text = t.render(t.lowered_mix({"p"}))
    cl = portable_fp64(text, "opencl")
    cu = portable_fp64(text, "cuda")
    assert "cl_khr_fp64" in cl and "cl_khr_fp64" not in cu
    assert '#define __kernel extern "C" __global__' in cu and text in cl and text in cu
    with pytest.raises(ValueError):
        portable_fp64(text, "metal")
