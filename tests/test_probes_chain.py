"""The chain generator: every catalogued operation yields kernels whose chain really is dependent
(latency) or independent (throughput), the metric names follow the contract the models helper reads,
and a generated kernel run on the local OpenCL device executes exactly the steps it claims."""

from __future__ import annotations

import re

import numpy as np
import pytest

from pytest_gpuperf.probes import chain, ops

METRIC = re.compile(r"^latency\.(fp16|fp32|fp64|int32)\.[a-z0-9_]+(\.fast)?\.cycles$")


def test_metric_names_are_unique_and_follow_the_contract():
    names = [o.metric("latency", "cycles", f) for o in ops.ALL_OPS for f in (False, True)]
    assert len(set(names)) == len(names)
    assert all(METRIC.match(n) for n in names), [n for n in names if not METRIC.match(n)]
    assert ops.op("fp32.fma").metric("latency", "cycles") == "latency.fp32.fma.cycles"
    assert ops.op("fp64.add").metric("latency", "cycles") == "latency.fp64.add.cycles"
    assert ops.op("int32.mad").metric("latency", "cycles") == "latency.int32.mad.cycles"
    assert ops.op("sfu32.sin").metric("latency", "cycles", True) == "latency.fp32.sin.fast.cycles"
    assert ops.op("fp64.fma").metric("throughput", "ops_per_clk_sm") == "throughput.fp64.fma.ops_per_clk_sm"


def test_catalog_covers_the_issue():
    names = {o.name for o in ops.ALL_OPS}
    for need in ["fp16.hfma2", "fp32.add", "fp32.mul", "fp32.fma", "fp32.div", "fp32.sqrt", "fp32.rsqrt",
                 "fp64.add", "fp64.mul", "fp64.fma", "fp64.div", "fp64.sqrt", "int32.add", "int32.mul",
                 "int32.mad", "sfu32.sin", "sfu32.cos", "sfu32.exp", "sfu32.log", "sfu32.sin_intr",
                 "sfu32.exp_intr", "round32.fadd_rz", "round32.fmul_ru", "round32.fdiv_rd", "round64.dadd_rn"]:
        assert need in names
    assert [o.name for o in ops.ops_in("fp32", "opencl")][:3] == ["fp32.add", "fp32.mul", "fp32.fma"]
    with pytest.raises(KeyError, match="unknown probe operation"):
        ops.op("fp32.nope")


@pytest.mark.parametrize("o", ops.ALL_OPS, ids=lambda o: o.name)
def test_every_step_feeds_its_own_result_back(o):
    for backend in ("cuda", "opencl"):
        step = o.source(backend)
        if step is None:
            continue
        # each assignment's right-hand side reads a state variable: the chain is dependent, not foldable
        for stmt in filter(None, (s.strip() for s in step.split(";"))):
            lhs, rhs = stmt.split("=", 1)
            assert lhs.strip() in ("x", "y") and re.search(r"\b[xy]\b", rhs), (o.name, backend, stmt)
        src, ck = chain.latency_kernel(o, backend, "clock" if backend == "cuda" else "events")
        assert src.count(step) == 2 and f"u < {ck.u1}" in src and f"u < {ck.u2}" in src
        assert ("n1" in src and "n2" in src) and ck.u2 > ck.u1


def test_throughput_chains_are_independent():
    o = ops.op("fp32.add")
    src, ck = chain.throughput_kernel(o, "cuda", "events", 3)
    body = src[src.index("for (int u"):].split("}")[0]
    for i in range(3):
        assert f"y{i} = x{i} + y{i}; x{i} = x{i} + y{i};" in body
    assert "x3" not in src and ck.ilp == 3
    with pytest.raises(ValueError, match="ilp"):
        chain.throughput_kernel(o, "cuda", "events", 0)


def test_cuda_only_ops_refuse_opencl():
    with pytest.raises(ValueError, match="no opencl form"):
        chain.latency_kernel(ops.op("round32.fadd_rz"), "opencl", "events")
    with pytest.raises(ValueError, match="timing"):
        chain.latency_kernel(ops.op("fp32.fma"), "cuda", "wallclock")


def test_generated_chain_runs_exactly_the_claimed_steps_on_opencl(cl_device):
    """int32.add is Fibonacci-like (y = x+y; x = x+y), wrapping mod 2³²: the result pins the step count."""
    dev = cl_device
    o = ops.op("int32.add")
    src, ck = chain.latency_kernel(o, "opencl", "events")
    k = dev.compile(chain.program("opencl", [src], False, False), ck.name)
    buf_in = dev.to_device(np.asarray(chain.input_values(o), np.float32))
    out, cyc = dev.empty(64 * 4), dev.empty(16)
    n1, n2 = 3, 2
    dev.elapsed(dev.timed(lambda: dev.launch(k, (1,), (1,), [buf_in, out, cyc, np.int32(n1), np.int32(n2)])), 30)
    got = dev.to_host(out, np.float32, 2)
    x = y = np.int32(int(o.init[0]))
    with np.errstate(over="ignore"):
        for _ in range(n1 * ck.u1 + n2 * ck.u2):
            y = np.int32(x + y)
            x = np.int32(x + y)
    assert got[0] == np.float32(x) and got[1] == np.float32(y)
