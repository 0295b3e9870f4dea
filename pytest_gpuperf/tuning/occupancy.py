"""Occupancy calculator (Lim, ch. III, Eqs. 3.1-3.5; the CUDA Occupancy Calculator's allocation rules).

Active blocks per SM = min over the limits ψ = {warps/blocks, registers, shared memory}:

* warps:     G_W = min(B_mp, floor(W_sm / ceil(T / 32)))
* registers: G_R = floor(R_sm / (ceil(R·32 / unit) · unit · warps per block)), 0 if R > R_max
* shared:    G_S = floor(S_sm / ceil((S + reserved) / granule) · granule), 0 if S > S_block

occupancy = active warps / maximum warps per SM (Eq. 3.2). Resource usage comes from the compiled
kernel: CUDA reports ``num_regs``/``shared_size_bytes``; NVIDIA OpenCL reports local bytes, and its
registers are read from ``ptxas -v`` on the program's PTX when ptxas is on the PATH.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from math import ceil, floor
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class SMLimits:
    """Per-SM hardware limits of one compute capability (CUDA C Programming Guide, Table 'Technical
    Specifications per Compute Capability')."""

    max_warps: int
    max_blocks: int
    regs: int
    max_regs_thread: int
    reg_unit: int  # register allocation unit (per warp)
    shared: int  # shared memory per SM usable by blocks (bytes)
    shared_block: int  # max shared per block (opt-in)
    shared_granule: int
    shared_reserved: int  # per-block system reservation (cc ≥ 8.0)
    warp: int = 32


_TABLE: dict[str, SMLimits] = {
    "5.0": SMLimits(64, 32, 65536, 255, 256, 65536, 49152, 256, 0),
    "5.2": SMLimits(64, 32, 65536, 255, 256, 98304, 49152, 256, 0),  # GTX Titan X (Dao's Maxwell)
    "6.0": SMLimits(64, 32, 65536, 255, 256, 65536, 49152, 256, 0),
    "6.1": SMLimits(64, 32, 65536, 255, 256, 98304, 49152, 256, 0),
    "7.0": SMLimits(64, 32, 65536, 255, 256, 98304, 98304, 256, 0),
    "7.5": SMLimits(32, 16, 65536, 255, 256, 65536, 65536, 256, 0),
    "8.0": SMLimits(64, 32, 65536, 255, 256, 167936, 166912, 128, 1024),
    "8.6": SMLimits(48, 16, 65536, 255, 256, 102400, 101376, 128, 1024),
    "8.9": SMLimits(48, 24, 65536, 255, 256, 102400, 101376, 128, 1024),
    "9.0": SMLimits(64, 32, 65536, 255, 256, 233472, 232448, 128, 1024),  # H100
}


def sm_limits(compute_capability: str, extra: dict[str, Any] | None = None) -> SMLimits | None:
    """Limits for a compute capability; device-reported values (CUDA ``extra``) override the table.
    None for devices without an SM model (CPU devices, non-NVIDIA OpenCL)."""
    base = _TABLE.get(compute_capability)
    if base is None:
        return None
    extra = extra or {}
    if not extra.get("max_threads_per_sm"):
        return base
    return SMLimits(int(extra["max_threads_per_sm"]) // 32, int(extra.get("max_blocks_per_sm") or base.max_blocks),
                    int(extra.get("regs_per_sm") or base.regs), base.max_regs_thread, base.reg_unit,
                    int(extra.get("max_shared_per_sm") or base.shared),
                    int(extra.get("max_shared_per_block_optin") or base.shared_block),
                    base.shared_granule, base.shared_reserved)


@dataclass(frozen=True)
class Occupancy:
    blocks: int  # active work-groups per SM (Eq. 3.1)
    warps: int  # active warps per SM
    occupancy: float  # Eq. 3.2
    limiter: str  # "warps" | "blocks" | "registers" | "shared"


def calculate(lim: SMLimits, threads: int, regs_per_thread: int, shared_per_block: int) -> Occupancy:
    """Theoretical occupancy of a work-group of ``threads`` work-items (Lim Eqs. 3.1-3.5)."""
    if threads <= 0:
        raise ValueError(f"a work-group needs at least one work-item (got {threads})")
    warps_per_block = ceil(threads / lim.warp)
    limits = {"blocks": lim.max_blocks, "warps": lim.max_warps // warps_per_block}
    if regs_per_thread > lim.max_regs_thread:
        limits["registers"] = 0
    elif regs_per_thread > 0:
        per_warp = ceil(regs_per_thread * lim.warp / lim.reg_unit) * lim.reg_unit
        limits["registers"] = lim.regs // (per_warp * warps_per_block)
    if shared_per_block > lim.shared_block:
        limits["shared"] = 0
    elif shared_per_block > 0:
        need = ceil((shared_per_block + lim.shared_reserved) / lim.shared_granule) * lim.shared_granule
        limits["shared"] = lim.shared // need
    limiter = min(limits, key=lambda k: (limits[k], k != "warps"))
    blocks = max(0, int(floor(limits[limiter])))
    warps = blocks * warps_per_block
    return Occupancy(blocks, warps, warps / lim.max_warps, limiter)


# ---- resource usage of a compiled kernel -----------------------------------------------------------
_PTXAS_REGS = re.compile(r"Used (\d+) registers")


def ptxas_registers(ptx: str, arch: str, maxrregcount: int = 0) -> int | None:
    """Registers per thread from ``ptxas -v`` (Lim's step 1, --ptxas-options=-v); None without ptxas.
    ``maxrregcount`` mirrors a ``-cl-nv-maxrregcount`` the kernel was built with."""
    exe = shutil.which("ptxas") or next((str(p) for p in (Path("/usr/local/cuda/bin/ptxas"),) if p.exists()), None)
    if exe is None or not ptx.strip():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        try:
            cmd = [exe, f"-arch={arch}", "-v", str(src), "-o", str(Path(tmp) / "k.cubin")]
            if maxrregcount:
                cmd.insert(1, f"--maxrregcount={int(maxrregcount)}")
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None
    found = _PTXAS_REGS.findall(proc.stderr + proc.stdout)
    return max(int(r) for r in found) if found else None


def kernel_ptx(kernel: Any) -> str:
    """The PTX of a compiled kernel: CUDA keeps it; NVIDIA OpenCL returns it as the program binary."""
    dev = kernel.device
    if dev.info.backend == "cuda":
        try:
            return dev.ptx(kernel)
        except Exception:  # noqa: BLE001 - PTX is optional evidence
            return ""
    try:
        import pyopencl as cl
        binaries = kernel.program.get_info(cl.program_info.BINARIES)
        text = bytes(binaries[0]).decode("ascii", "replace")
    except Exception:  # noqa: BLE001
        return ""
    return text if ".entry" in text else ""


def driver_registers(kernel: Any) -> int | None:
    """Registers per thread as NVIDIA's OpenCL compiler reports them in its build log when built with
    ``-cl-nv-verbose`` (``cl_nv_compiler_options``) — the fallback where ``ptxas -v`` gives no count (the
    H100 run of 4baa7dd got none, so its calculator ran without the register limit; at the 10-32
    registers its driver log reports, that limit does not bind on sm_90)."""
    info = kernel.device.info
    if info.backend != "opencl" or "cl_nv_compiler_options" not in (info.extra.get("extensions") or []):
        return None
    from .limits import build_log, log_registers
    opts = tuple(kernel.options or ())
    try:
        verbose = kernel if "-cl-nv-verbose" in opts else kernel.device.compile(
            kernel.source, kernel.name, opts + ("-cl-nv-verbose",))
    except Exception:  # noqa: BLE001 - resource usage is best effort; 0 = unknown
        return None
    return log_registers(build_log(verbose))


@dataclass(frozen=True)
class Resources:
    regs: int  # per work-item; 0 = unknown (the register limit is then not applied)
    shared: int  # bytes per work-group
    source: str  # where the numbers came from


def resources(kernel: Any) -> Resources:
    """Registers and shared/local memory of a compiled kernel, from the best source the backend offers.

    Computed once per compiled kernel and kept on it: :meth:`Device.compile` hands every configuration
    with the same source and options the same kernel, so ``ptxas -v`` / the ``-cl-nv-verbose`` build
    run once per build, not once per work-group size."""
    found = getattr(kernel, "_gpuperf_resources", None)
    if found is None:
        found = _resources(kernel)
        kernel._gpuperf_resources = found
    return found


def _resources(kernel: Any) -> Resources:
    attrs = kernel.attributes
    info = kernel.device.info
    if info.backend == "cuda":
        return Resources(int(attrs.get("num_regs", 0)), int(attrs.get("shared_size_bytes", 0)), "cuFuncGetAttribute")
    shared = int(attrs.get("local_bytes", 0))
    if info.compute_capability:
        arch = "sm_" + info.compute_capability.replace(".", "")
        bound = next((int(o.split("=", 1)[1]) for o in getattr(kernel, "options", ()) or ()
                      if o.startswith("-cl-nv-maxrregcount=")), 0)
        regs = ptxas_registers(kernel_ptx(kernel), arch, bound)
        if regs is not None:
            return Resources(regs, shared, "ptxas -v on the OpenCL program's PTX")
        regs = driver_registers(kernel)
        if regs is not None:
            return Resources(regs, shared, "NVIDIA OpenCL build log (-cl-nv-verbose)")
    return Resources(0, shared, "CL_KERNEL_LOCAL_MEM_SIZE (registers unknown)")
