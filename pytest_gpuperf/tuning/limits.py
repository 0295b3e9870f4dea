"""Why a kernel's work-group space ends where it does: device maximum, the compiled kernel's maximum,
and the register file.

Three numbers bound a work-group on NVIDIA GPUs:

* the device maximum (``CL_DEVICE_MAX_WORK_GROUP_SIZE``, 1024 on the H100);
* the compiled kernel's maximum (``CL_KERNEL_WORK_GROUP_SIZE`` / ``CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK``);
* what the register file allows at the kernel's register count: a group of W work-items needs
  ``ceil(W / 32)`` warps of ``ceil(R·32 / 256)·256`` registers each out of the 64 K registers a block may use.

NVIDIA's OpenCL compiles without knowing the launch size (no ``__launch_bounds__``; OpenCL C has only
``reqd_work_group_size``, which fixes one size), so its register allocation can cut the kernel
maximum below the device's. The remedy CUDA programmers use is ``__launch_bounds__(1024)`` — it
makes the compiler fit the register budget of a 1024-wide block. NVIDIA's OpenCL offers the same
through ``cl_nv_compiler_options``: ``-cl-nv-maxrregcount=64`` (65536 / 1024). :func:`resolve`
records all three numbers (plus the driver's own register count from ``-cl-nv-verbose`` and any
``.maxntid``/``.reqntid``/``.maxnreg`` directive in the PTX), and adopts that option for *every*
configuration of the benchmark — exhaustive search and every strategy then tune one and the same
build — only when it actually raises the kernel maximum.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from math import ceil, prod
from typing import Any

from ..devices.resources import log_registers, resources_of

_DIRECTIVE = re.compile(r"\.(maxntid|reqntid|maxnreg|minnctapersm)\s+([0-9, ]+)")


def register_limit(regs: int, regs_per_block: int = 65536, warp: int = 32, unit: int = 256,
                   device_max: int = 1024) -> int:
    """Largest work-group (a multiple of ``warp``) whose warps' registers fit ``regs_per_block``.
    ``regs`` ≤ 0 means unknown: the device maximum is returned."""
    if regs <= 0:
        return device_max
    per_warp = ceil(regs * warp / unit) * unit
    return min(device_max, (regs_per_block // per_warp) * warp)


def ptx_directives(ptx: str) -> dict[str, str]:
    """Launch-bound directives found in PTX (``.maxntid 256, 1, 1`` would cap the kernel at 256)."""
    return {name: " ".join(val.split()) for name, val in _DIRECTIVE.findall(ptx)}


def explain(device_max: int, kernel_max: int, regs: int, regs_per_block: int, warp: int) -> str:
    """One sentence on which limit binds (recorded in the metric info)."""
    if kernel_max <= 0 or kernel_max >= device_max:
        return f"the device maximum ({device_max}) binds"
    reg_lim = register_limit(regs, regs_per_block, warp, device_max=device_max)
    if regs > 0 and reg_lim <= kernel_max:
        return (f"register-bound: {regs} registers/work-item leave room for {reg_lim} work-items in "
                f"{regs_per_block} registers; the kernel reports {kernel_max}")
    return (f"the compiled kernel reports {kernel_max} < device {device_max}, but {regs or 'unknown'} "
            f"registers would allow {reg_lim}: not explained by registers")


@dataclass
class KernelLimit:
    device_max: int
    kernel_max: int  # the maximum the space uses (after any adopted option)
    info: dict[str, Any] = field(default_factory=dict)
    options: tuple[str, ...] = ()  # build options adopted for every configuration


def _nv_opencl(device: Any) -> bool:
    """Whether the device's compiler takes ``-cl-nv-maxrregcount``/``-cl-nv-verbose``."""
    return bool(device.info.nv_compiler_options)


def resolve(ev: Any, cfg: Any, probe_launch: bool = False) -> KernelLimit:
    """Measure the limits of ``ev``'s kernel at probe configuration ``cfg``; on NVIDIA OpenCL, adopt
    ``-cl-nv-maxrregcount`` when the kernel maximum is below the device's and the option lifts it."""
    device = ev.device
    dinfo = device.info
    device_max = int(dinfo.max_work_group_size)
    warp = int(dinfo.warp_size or 1)
    regs_per_block = int(dinfo.extra.get("registers_per_block") or 65536)
    probe = ev.kernel(cfg)
    kmax = int(probe.attributes.get("max_threads_per_block", 0) or 0) or device_max
    res = resources_of(probe)
    info: dict[str, Any] = {"device_max": device_max, "kernel_max_default": kmax, "regs": res.regs,
                            "regs_from": res.source, "regs_limit": register_limit(res.regs, regs_per_block, warp,
                                                                                 device_max=device_max),
                            "private_bytes": int(probe.attributes.get("private_bytes", 0) or 0)}
    directives = ptx_directives(probe.device.kernel_ptx(probe)) if dinfo.compute_capability else {}
    if directives:
        info["ptx_directives"] = directives
    options: tuple[str, ...] = ()
    if _nv_opencl(device):
        src, opts = ev.source_options(cfg)
        try:
            with device.unnoted():  # a configuration of the kernel the evaluator noted
                verbose = device.compile(src, ev.bench.kernel, tuple(opts) + ("-cl-nv-verbose",))
            drv = log_registers(verbose.device.build_log(verbose))
            if drv is not None:
                info["regs_driver"] = drv
        except Exception as exc:  # noqa: BLE001
            info["verbose_error"] = f"{type(exc).__name__}: {exc}"[:160]
    info["reason"] = explain(device_max, kmax, int(info.get("regs_driver") or res.regs), regs_per_block, warp)
    if kmax < device_max and _nv_opencl(device):
        opt = f"-cl-nv-maxrregcount={max(16, regs_per_block // device_max)}"
        src, opts = ev.source_options(cfg)
        try:
            with device.unnoted():  # a configuration of the kernel the evaluator noted
                bounded = device.compile(src, ev.bench.kernel, tuple(opts) + (opt,))
            kmax2 = int(bounded.attributes.get("max_threads_per_block", 0) or 0)
            info["kernel_max_with_" + opt.lstrip("-")] = kmax2
            if kmax2 > kmax:
                options, kmax = (opt,), kmax2
                info["adopted"] = (f"{opt} for every configuration (as __launch_bounds__({device_max}) in "
                                   f"CUDA): kernel maximum {info['kernel_max_default']} -> {kmax2}")
        except Exception as exc:  # noqa: BLE001
            info["bounded_error"] = f"{type(exc).__name__}: {exc}"[:160]
    if kmax < device_max and probe_launch:
        kmax = _probe_launch(ev, cfg, kmax, device_max, info)
    return KernelLimit(device_max, kmax, info, options)


def _probe_launch(ev: Any, cfg: Any, kmax: int, device_max: int, info: dict[str, Any]) -> int:
    """Opt-in (``--gpuperf-tuning-probe-limit``): launch the kernel with a group of ``device_max``
    work-items on fresh inputs and check it against NumPy. Only if the runtime accepts the launch *and*
    the output is right is the device maximum used — beyond what the driver reported, which the OpenCL
    contract does not promise; recorded in ``info`` so every result says so."""
    from .evaluate import Config

    dims = len(cfg.local)
    big = Config((device_max,) if dims == 1 else (ev.warp, device_max // ev.warp))
    if ev.bench.max_dim and max(big.local) > ev.bench.max_dim:
        side = ev.bench.max_dim
        big = Config((side, min(side, device_max // side)))
    try:
        ev.verify(big, seed=4242)
    except Exception as exc:  # noqa: BLE001 - a refused or wrong launch keeps the reported limit
        info["launch_probe"] = f"{big.label()} refused or wrong: {type(exc).__name__}: {exc}"[:200]
        return kmax
    total = prod(big.local)
    info["launch_probe"] = (f"{big.label()} launched and matched NumPy although the kernel reports {kmax}: "
                            f"space extended to {total} (--gpuperf-tuning-probe-limit)")
    return total
