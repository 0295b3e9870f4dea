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

from pytest_gpuperf.gatecheck import plants
from pytest_gpuperf.probes import latency, ops, throughput
from pytest_gpuperf.timing.profiles import profile

CASES = [(g, fast) for g in ops.GROUPS for fast in (False, True)]


@pytest.mark.parametrize("group,fast", CASES, ids=[f"{g}-{'fast' if f else 'ieee'}" for g, f in CASES])
def test_latency(gpu_device, gpu_measure, gpuperf_record, gpuperf_plant, group, fast):
    info = gpu_device.info
    missing = set(ops.GROUP_REQUIRES[group]) - info.features
    if missing:
        pytest.skip(f"{group} needs {', '.join(sorted(missing))}, which {info.name} lacks")
    backend = info.backend
    chosen = [o for o in ops.ops_in(group, backend) if o.features() <= info.features]
    if not chosen:
        pytest.skip(f"no {group} operation is expressible on {backend}")
    timing = latency.timing_of(info)
    built, evidence = latency.build(gpu_device, chosen, fast, timing)
    for ck, kernel in built:
        o = ck.op
        meta = {"u1": ck.u1, "u2": ck.u2, "step": o.source(backend), "timing": timing, "note": o.note}
        st, unit, extra = latency.measure(gpu_device, gpu_measure, ck, kernel,
                                          plant=plants.fraction(gpuperf_plant, "compute"))
        meta.update(extra)
        assert st.median > 0, f"{o.name}: non-positive latency {st.median} {unit} — the chain was not timed"
        if unit == "cycles":
            gpuperf_record(o.metric("latency", "cycles", fast), st.median, "cycles", stats=st,
                           info={**meta, "sass": evidence[ck.name]})
            continue
        gpuperf_record(o.metric("latency", "ns", fast), st.median, "ns", stats=st, info=meta)
        if info.clock_mhz > 0:
            cyc = st.scaled(info.clock_mhz / 1e3)
            gpuperf_record(o.metric("latency", "cycles", fast), cyc.median, "cycles", stats=cyc,
                           info={**meta, "clock_mhz": info.clock_mhz, "clock_source": "reported maximum"})


@pytest.fixture(scope="module")
def sm_clock():
    """Per-device cache of the measured SM clock (CUDA) so every throughput test does not re-measure."""
    return {}


@pytest.mark.parametrize("name", ops.THROUGHPUT_OPS)
def test_throughput(gpu_device, gpu_measure, gpuperf_record, sm_clock, name):
    info = gpu_device.info
    o = ops.op(name)
    missing = o.features() - info.features
    if missing or o.source(info.backend) is None:
        pytest.skip(f"{name} needs {', '.join(sorted(missing)) or 'a CUDA-only form'}, unavailable on {info.name}")
    cfg = profile("latency", info.is_cpu)
    if info.clock_counter:  # measure the SM clock with a clock64() spin (boost clocks move under load)
        if info.spec not in sm_clock:
            sm_clock[info.spec] = throughput.measured_clock_mhz(gpu_device, lambda *a: gpu_measure(*a, **cfg))
            gpuperf_record("clock.sm.measured_mhz", sm_clock[info.spec].median, "MHz", better="bound",
                           stats=sm_clock[info.spec], bound=info.clock_mhz * 1.02,
                           info={"method": "clock64() spin timed by CUDA events", "max_mhz": info.clock_mhz})
        clock, source = sm_clock[info.spec].median, "measured (clock64 spin vs events)"
    else:
        if info.clock_mhz <= 0:
            pytest.skip(f"{info.name} reports no clock; ops per clock cannot be derived")
        clock, source = info.clock_mhz, "reported maximum"
    ilps = throughput.ILPS if not info.is_cpu else (1, 2, 4, 8)
    built, evidence = throughput.build(gpu_device, o, ilps)
    target = 5e-3 if info.is_cpu else 2e-3
    points = [throughput.measure(gpu_device, lambda *a: gpu_measure(*a, **cfg), ck, k, clock, target)
              for ck, k in built]
    for p, (ck, _) in zip(points, built):
        assert p.ops_per_clk_cu.median > 0
        # On CPU devices one ILP point switches between two modes run to run: PoCL, fp32 FMA at ILP 1 read
        # 0.27–0.28 in two runs and 0.14–0.15 in the next two (its worker threads sharing or splitting the
        # work-groups). The best ILP's rate gates; a CPU's per-ILP point only where three runs agree.
        meta = {"iterations": p.iterations, "sass": evidence.get(ck.name), "clock_mhz": clock, "clock_source": source}
        if info.is_cpu:
            meta["gate"] = "if-stable"
        gpuperf_record(f"throughput.{o.precision}.{o.short}.ilp{p.ilp}.ops_per_clk_sm", p.ops_per_clk_cu.median,
                       "ops/clk/SM", better="higher", stats=p.ops_per_clk_cu, info=meta)
    best = max(points, key=lambda p: p.ops_per_clk_cu.median)
    gsize, lsize = throughput.geometry(gpu_device)
    gpuperf_record(o.metric("throughput", "ops_per_clk_sm"), best.ops_per_clk_cu.median, "ops/clk/SM",
                   better="higher", stats=best.ops_per_clk_cu,
                   info={"best_ilp": best.ilp, "global": gsize, "local": lsize, "clock_mhz": clock,
                         "clock_source": source, "note": o.note or "thread-level operations (half2: one per pair)"})
    sat = throughput.saturating_ilp(points)
    gpuperf_record(f"throughput.{o.precision}.{o.short}.saturating_ilp", sat, "ilp", better="lower",
                   # one ILP step: 1 on GPUs (ILP 1..8); CPU devices sweep 1, 2, 4, 8, and on a shared host
                   # fp64 add was seen saturating at 4 in one run of four and at 8 in the others
                   tolerance={"abs": 4.0 if info.is_cpu else 1.0}, info={"fraction_of_best": throughput.SATURATION,
                                                   "ilps": [p.ilp for p in points]})
