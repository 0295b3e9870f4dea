"""Instruction latency and throughput probes — did the machine itself change?

* ``latency.<prec>.<op>[.fast].cycles`` — one dependent chain per operation (Alavani ch. 3.2,
  Surineni ch. 3.2): CUDA times it with ``clock64()`` and proves from the SASS that the chain ran
  the intended instruction; OpenCL times it with profiling events (``.ns``) and converts with the
  reported clock (``.cycles``). ``.fast`` = compiled with ``-use_fast_math`` / ``-cl-fast-relaxed-math``.
* ``throughput.<prec>.<op>.ops_per_clk_sm`` — independent chains (ILP 1..8) at full occupancy, the
  best ILP's rate; ``...ilp<k>.ops_per_clk_sm`` per ILP and ``...saturating_ilp`` (Alavani's ILP study).
"""

from __future__ import annotations

import pytest

from pytest_gpuperf.probes import latency, ops
from pytest_gpuperf.timing import Stats

CASES = [(g, fast) for g in ops.GROUPS for fast in (False, True)]


@pytest.mark.parametrize("group,fast", CASES, ids=[f"{g}-{'fast' if f else 'ieee'}" for g, f in CASES])
def test_latency(gpu_device, gpu_measure, gpuperf_record, group, fast):
    info = gpu_device.info
    missing = set(ops.GROUP_REQUIRES[group]) - info.features
    if missing:
        pytest.skip(f"{group} needs {', '.join(sorted(missing))}, which {info.name} lacks")
    backend = info.backend
    chosen = [o for o in ops.ops_in(group, backend) if o.features() <= info.features]
    if not chosen:
        pytest.skip(f"no {group} operation is expressible on {backend}")
    timing = "clock" if backend == "cuda" else "events"
    built, evidence = latency.build(gpu_device, chosen, fast, timing)
    for ck, kernel in built:
        o = ck.op
        meta = {"u1": ck.u1, "u2": ck.u2, "step": o.source(backend), "timing": timing, "note": o.note}
        if timing == "clock":
            samples = latency.measure_clock(gpu_device, ck, kernel, repeats=7, timeout_s=10.0)
            st = Stats.of(samples)
            assert st.median > 0, f"{o.name}: non-positive latency {st.median} — the chain was not timed"
            gpuperf_record(o.metric("latency", "cycles", fast), st.median, "cycles", stats=st,
                           info={**meta, "sass": evidence[ck.name]})
        else:
            cfg = {"warmup": 1, "min_repeats": 5, "max_repeats": 15, "budget_s": 0.25 if info.is_cpu else 0.5}
            samples, n = latency.measure_events(gpu_device, lambda *a: gpu_measure(*a, **cfg), ck, kernel)
            meta["iterations"] = n
            ns = Stats.of(samples)
            assert ns.median > 0, f"{o.name}: non-positive latency {ns.median} ns — the chain was not timed"
            gpuperf_record(o.metric("latency", "ns", fast), ns.median, "ns", stats=ns, info=meta)
            if info.clock_mhz > 0:
                cyc = ns.scaled(info.clock_mhz / 1e3)
                gpuperf_record(o.metric("latency", "cycles", fast), cyc.median, "cycles", stats=cyc,
                               info={**meta, "clock_mhz": info.clock_mhz, "clock_source": "reported maximum"})
