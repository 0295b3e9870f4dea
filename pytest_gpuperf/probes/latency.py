"""Dependent-chain latency of one operation (Alavani ch. 3.2, Surineni ch. 3.2).

CUDA: one thread, ``clock64()`` around two sections with ``u1`` and ``u2`` unrolled steps per loop
iteration and the same iteration count ``n``; ``(cycles₂ − cycles₁) / (n·(u2−u1)·ops_per_step)`` is
the latency in SM cycles with loop overhead and clock-read cost differenced away. Every kernel's SASS
is checked first (:mod:`.sass_proof`): no proof, no number.

OpenCL: the same kernel launched once with only section 1 (``n1 = n, n2 = 0``) and once with only
section 2; the profiling-event times are differenced the same way → ns per operation, converted to
cycles with the device's reported clock (``DeviceInfo.clock_mhz``).
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np

from ..baselines.classes import PER_SPAN
from ..devices.base import Device, DeviceInfo
from ..timing.stats import Stats
from ..timing.profiles import profile
from . import chain, sass_proof
from .bound_measurer import BoundMeasurer
from .build import compile_many, function_sass
from .ops import GROUP_REQUIRES, Op, ops_in

#: Loop iterations per timed section: enough for ≥ 10⁴ cycles per section on CUDA (clock-timed) and
#: for ~1 ms per launch with events (event resolution and launch jitter are µs).
ITERATIONS = {("clock", False): 256, ("clock", True): 64, ("events", False): 4096, ("events", True): 512}


def _buffers(device: Device, op: Op) -> tuple[Any, Any, Any]:
    dtype = np.float64 if op.type == "double" else np.float32
    data = np.asarray(chain.input_values(op), dtype=dtype)
    return device.to_device(data), device.empty(64 * 8), device.empty(2 * 8)


def build(device: Device, ops: Sequence[Op], fast: bool, timing: str):
    """Compile the group's latency kernels in one program; where the device yields SASS (CUDA), prove
    each chain from the machine code."""
    backend = device.info.backend
    pairs = [chain.latency_kernel(o, backend, timing) for o in ops]
    src = chain.program(backend, [b for b, _ in pairs], any(o.type == "double" for o in ops), timing == "clock",
                        any(o.uses_half(backend) for o in ops))
    opts = chain.fast_math_options(backend) if fast else ()
    kernels = compile_many(device, src, [ck.name for _, ck in pairs], opts)
    evidence: dict[str, dict[str, object]] = {}
    if device.info.has_sass:
        for _, ck in pairs:
            instrs = function_sass(kernels[ck.name])
            evidence[ck.name] = sass_proof.verify_latency_op(instrs, ck.op, fast, ck.u1, ck.u2)
            evidence[ck.name]["origin"] = device.sass_origin(kernels[ck.name])
    return [(ck, kernels[ck.name]) for _, ck in pairs], evidence


def planted_iterations(ck: chain.ChainKernel, n: int, plant: float) -> tuple[int, float]:
    """Section-2 iterations that make the measured latency (1 + ``plant``) × the true one, and the
    slowdown actually planted (iterations are whole numbers).

    The gate check's ``compute`` plant (:mod:`pytest_gpuperf.gatecheck.plants`): section 2 runs ``n2 > n``
    iterations of ``u2`` dependent steps while the figure still divides by ``n``, so the chain executes
    more dependent instructions than it is credited for — a real compute-bound slowdown, same kernel,
    same SASS proof. (c₂ − c₁)/(n·(u2 − u1)) then reads latency × (n2·u2 − n·u1)/(n·(u2 − u1))."""
    if plant <= 0:
        return n, 0.0
    n2 = n + max(1, round(n * plant * (ck.u2 - ck.u1) / ck.u2))
    return n2, (n2 * ck.u2 - n * ck.u1) / (n * (ck.u2 - ck.u1)) - 1.0


def measure_clock(device: Device, ck: chain.ChainKernel, kernel, repeats: int, timeout_s: float,
                  plant: float = 0.0) -> list[float]:
    """Cycles per operation, one sample per launch (CUDA ``clock64``)."""
    buf_in, buf_out, cyc = _buffers(device, ck.op)
    n = ITERATIONS[("clock", ck.op.heavy)]
    n2, _ = planted_iterations(ck, n, plant)
    samples = []
    for r in range(repeats + 1):  # the first launch warms the instruction cache
        h = device.timed(lambda: device.launch(kernel, (1,), (1,), [buf_in, buf_out, cyc, np.int32(n), np.int32(n2)]))
        device.elapsed(h, timeout_s)
        c = device.to_host(cyc, np.int64)
        if r:
            samples.append(float(c[1] - c[0]) / (n * ck.ops_per_iteration_delta))
    return samples


def _calibrate(device: Device, kernel, args: list[Any], n: int, target_s: float, timeout_s: float) -> int:
    """Iterations for which section 2 alone takes about ``target_s`` (launch jitter ≪ the chain)."""
    for _ in range(4):
        h = device.timed(lambda: device.launch(kernel, (1,), (1,), [*args, np.int32(0), np.int32(n)]))
        t = device.elapsed(h, timeout_s)
        if t >= target_s / 2 or n >= 1 << 24:
            break
        n = int(min(1 << 24, n * min(64.0, max(2.0, target_s / max(t, 1e-7)))))
    return n


def measure_events(device: Device, measurer, ck: chain.ChainKernel, kernel, timeout_s: float = 10.0,
                   plant: float = 0.0) -> tuple[list[float], int]:
    """ns per operation from event-timed launches of section 1 alone and section 2 alone.

    Returns the samples and the iteration count (calibrated so a launch lasts ~1 ms on GPUs, ~3 ms on
    CPU devices, whose launch jitter is tens of µs)."""
    buf_in, buf_out, cyc = _buffers(device, ck.op)
    target = 3e-3 if device.info.is_cpu else 1e-3
    n = _calibrate(device, kernel, [buf_in, buf_out, cyc], ITERATIONS[("events", ck.op.heavy)] // 8, target,
                   timeout_s)
    n2, _ = planted_iterations(ck, n, plant)
    a1 = [buf_in, buf_out, cyc, np.int32(n), np.int32(0)]
    a2 = [buf_in, buf_out, cyc, np.int32(0), np.int32(n2)]
    # the two sections alternate (timing.measure_pair), so a drift of the device between them cancels
    m1, m2 = measurer.pair(lambda: device.launch(kernel, (1,), (1,), a1), lambda: device.launch(kernel, (1,), (1,), a2))
    return [(t2 - t1) * 1e9 / (n * ck.ops_per_iteration_delta) for t1, t2 in zip(m1.samples, m2.samples)], n


def timing_of(info: DeviceInfo) -> str:
    """How chains are timed on this device: ``clock`` (a device cycle counter read inside the kernel:
    ``clock64()`` on CUDA) or ``events`` (profiling events around launches, OpenCL)."""
    return "clock" if info.clock_counter else "events"


def measure(device: Device, measurer, ck: chain.ChainKernel, kernel, plant: float = 0.0
            ) -> tuple[Stats, str, dict[str, Any]]:
    """The latency of one built chain as the latency suite and the ``instruction_latency`` fixture both take
    it: ``(stats, unit, info)`` — cycles per operation from ``clock64()`` on CUDA (7 launches after a warm-up
    one), ns per operation from event-timed sections on OpenCL (``info["iterations"]``). ``measurer`` is
    the test's ``gpu_measure``; its watchdog bounds every launch. ``plant``: the gate check's planted
    compute-bound slowdown (:func:`planted_iterations`), recorded in ``info``."""
    timeout_s = measurer.config.timeout_s
    extra: dict[str, Any] = {}
    if timing_of(device.info) == "clock":
        samples = measure_clock(device, ck, kernel, repeats=7, timeout_s=timeout_s, plant=plant)
        if plant > 0:
            extra["planted_slowdown"] = planted_iterations(ck, ITERATIONS[("clock", ck.op.heavy)], plant)[1]
        return Stats.of(samples), "cycles", extra
    cfg = profile("chain_events", device.info.is_cpu)
    bound = BoundMeasurer(measurer, cfg)
    samples, n = measure_events(device, bound, ck, kernel, timeout_s, plant=plant)
    extra["iterations"] = n
    # one figure is a difference of two event spans over n × (ops per iteration) operations: the event
    # timer's tick is divided among them (the band's resolution floor, baselines.classes.resolution_floor)
    extra[PER_SPAN] = n * ck.ops_per_iteration_delta
    if plant > 0:
        extra["planted_slowdown"] = planted_iterations(ck, n, plant)[1]
    return Stats.of(samples), "ns", extra


def group_ops(group: str, info: DeviceInfo) -> tuple[list[Op], str | None]:
    """The operations of ``group`` this device can run, or why none is timed here (the reason to skip):
    the group needs a feature the device lacks, or none of its operations has a form in the backend."""
    missing = set(GROUP_REQUIRES[group]) - info.features
    if missing:
        return [], f"{group} needs {', '.join(sorted(missing))}, which {info.name} lacks"
    chosen = [o for o in ops_in(group, info.backend) if o.features() <= info.features]
    if not chosen:
        return [], f"no {group} operation is expressible on {info.backend}"
    return chosen, None


def records(device: Device, measurer, chosen: Sequence[Op], fast: bool, plant: float = 0.0
            ) -> Iterator[dict[str, Any]]:
    """The latency suite's figures of one group, as ``gpuperf_record`` arguments, one operation after the
    other (each measured when its records are asked for): cycles with the SASS proof on a device with a
    cycle counter; elsewhere ns per operation and, where the device reports a clock, cycles at that clock.
    ``plant``: the gate check's compute-bound plant (:func:`planted_iterations`)."""
    info = device.info
    timing = timing_of(info)
    built, evidence = build(device, chosen, fast, timing)
    for ck, kernel in built:
        o = ck.op
        meta = {"u1": ck.u1, "u2": ck.u2, "step": o.source(info.backend), "timing": timing, "note": o.note}
        st, unit, extra = measure(device, measurer, ck, kernel, plant=plant)
        meta.update(extra)
        if unit == "cycles":
            yield {"name": o.metric("latency", "cycles", fast), "value": st.median, "unit": "cycles",
                   "better": "lower", "stats": st, "info": {**meta, "sass": evidence[ck.name]}}
            continue
        yield {"name": o.metric("latency", "ns", fast), "value": st.median, "unit": "ns", "better": "lower",
               "stats": st, "info": meta}
        if info.clock_mhz > 0:
            cyc = st.scaled(info.clock_mhz / 1e3)
            yield {"name": o.metric("latency", "cycles", fast), "value": cyc.median, "unit": "cycles",
                   "better": "lower", "stats": cyc,
                   "info": {**meta, "clock_mhz": info.clock_mhz, "clock_source": "reported maximum"}}


def chain_cycles(device: Device, measurer, names: Sequence[str]) -> dict[str, float]:
    """Median cycles per operation of the named dependent chains, measured now with ``clock64()``
    (CUDA): ``{"latency.fp32.fma.cycles": 4.0, …}``. Operations the device cannot run are left out.

    The static PTX model takes its instruction latencies from here, so its figures depend on the device
    alone — not on which baseline or results files happen to lie in the checkout (a new card's first run
    would otherwise read thesis fallbacks and its later runs its own baseline: two values of one metric)."""
    from .ops import op as op_named
    info = device.info
    if timing_of(info) != "clock":
        raise ValueError(f"{info.name}: chain latencies in cycles need clock64() timing (CUDA)")
    wanted = [o for o in (op_named(n) for n in names)
              if not (o.features() - info.features) and o.source(info.backend) is not None]
    built, _ = build(device, wanted, False, "clock")
    out: dict[str, float] = {}
    for ck, kernel in built:
        st, unit, _ = measure(device, measurer, ck, kernel)
        out[ck.op.metric("latency", unit)] = float(st.median)
    return out

