"""Entry points that put the pieces together: per-device set-up (SM limits, λ0 calibration) and one
tuning run of one benchmark, used by the suite and by the ``tuned_workgroup`` fixture."""

from __future__ import annotations

from typing import Callable

from ..devices.base import Device
from ..devices.architectures import SMLimits
from ..devices.occupancy import cuda_occupancy, device_limits, has_sm_model
from ..timing.measure import MeasureConfig
from ..timing.profiles import profile
from .concurrency import Calibration, calibrate
from .evaluate import Config, Evaluator
from .kernels import Benchmark
from ..devices.resources import resources_of
from .space import enumerate_space, limits_for
from .strategies import REGISTRY, Context, Outcome, Registered


def tuning_config(device: Device) -> MeasureConfig:
    """Timing per configuration: short, because a tuner times many; quality is re-timed at the end."""
    # 1024-wide spaces hold up to ~220 shapes per kernel: keep each point short (quality is re-timed).
    # The watchdog of each run is the session's (--gpuperf-timeout, held by the device), not a tuner's own.
    return MeasureConfig(**profile("tuning", device.info.is_cpu), timeout_s=device.readback_timeout_s)


def space_cap(device: Device) -> int:
    """CPU devices (CI) tune a reduced space: work-groups of at most 128 work-items."""
    return 128 if device.info.is_cpu else 0


def sm_model(device: Device) -> SMLimits | None:
    """Per-SM limits for NVIDIA devices (CUDA, or OpenCL with cl_nv_device_attribute_query); None for
    devices without an SM (CPU, non-NVIDIA OpenCL), whose strategies fall back to timing alone. An NVIDIA
    GPU whose compute capability the table lacks raises :class:`~pytest_gpuperf.errors.UnsupportedDevice`
    rather than tuning with another GPU's limits."""
    return device_limits(device.info) if has_sm_model(device.info) else None


def calibration(device: Device) -> Calibration | None:
    """λ0 of this device by the thesis' micro-benchmark (once per opened device; None without an SM model)."""
    def measure() -> Calibration | None:
        sm = sm_model(device)
        if sm is None:
            return None
        lim = limits_for(device.info, 1)
        sizes = [s[0] for s in enumerate_space(1, lim)]

        def occ(threads: int, kernel: object) -> float:
            r = resources_of(kernel)  # computed once per compiled kernel
            return cuda_occupancy(sm, threads, r.regs, r.shared).occupancy

        n = 1 << 20
        return calibrate(device, occ, sizes, n, tuning_config(device))

    return device.once("tuning.lambda0", measure)  # a later test notes the kernels it was measured with


def context(device: Device, bench: Benchmark, sizes: dict[str, int] | None = None, seed: int = 0,
            probe_limit: bool = False, objective: str = "time") -> Context:
    """Everything a strategy needs for ``bench`` on ``device``; ``probe_limit`` (``--gpuperf-tuning-probe-limit``)
    lets a verified launch extend the space beyond the kernel maximum the driver reports (limits.py);
    ``objective`` ("time", "energy", "both": :mod:`.pareto`) is what the strategies minimise."""
    ev = Evaluator(device, bench, sizes or bench.sizes(device), tuning_config(device), seed=seed)
    return Context(ev, sm_model(device), calibration(device), cap=space_cap(device), probe_limit=probe_limit,
                   objective=objective)


#: the strategies ``tune`` offers (and ``api.tune``): registered ones that need neither a budget nor a seed
STRATEGIES: dict[str, Registered] = {n: REGISTRY[n] for n in ("dao", "exhaustive", "lim_static", "lim_rules")}


def tune(device: Device, bench: Benchmark, sizes: dict[str, int] | None = None, strategy: str = "dao",
         progress: Callable[[int, int], None] | None = None) -> tuple[Config, Outcome, Context]:
    """Tune ``bench`` on ``device``; ``progress(done, total)`` is called as configurations are timed."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown tuning strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    ctx = context(device, bench, sizes)
    if progress is not None:
        ctx.ev.on_point = lambda done: progress(done, len(ctx.space))
    out = STRATEGIES[strategy].run(ctx, 0, 0)
    return out.best, out, ctx
