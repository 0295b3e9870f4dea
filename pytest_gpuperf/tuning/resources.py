"""Resource usage of a compiled kernel — registers per work-item and shared/local bytes per work-group —
from the best source each backend offers (Lim's step 1). The occupancy rules that consume these numbers
live in :mod:`pytest_gpuperf.devices.occupancy`.

CUDA reports ``num_regs``/``shared_size_bytes``; NVIDIA OpenCL reports local bytes, and its registers
are read from ``ptxas -v`` on the program's PTX when ptxas is on the PATH, else from the driver's
``-cl-nv-verbose`` build log.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


# ---- resource usage of a compiled kernel -----------------------------------------------------------
_USED_REGS = re.compile(r"Used (\d+) registers")


def log_registers(log: str) -> int | None:
    """Registers per thread from a ``ptxas -v``-style build log (``-cl-nv-verbose``)."""
    found = _USED_REGS.findall(log or "")
    return max(int(r) for r in found) if found else None


def build_log(kernel: Any) -> str:
    """The OpenCL build log of a compiled kernel ('' where there is none)."""
    try:
        import pyopencl as cl
        return str(kernel.program.get_build_info(kernel.device.cl_device, cl.program_build_info.LOG))
    except Exception:  # noqa: BLE001 - the log is evidence, not a requirement
        return ""


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
    return log_registers(proc.stderr + proc.stdout)


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
