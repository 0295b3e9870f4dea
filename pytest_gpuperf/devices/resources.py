"""Resource usage of a compiled kernel — registers per work-item and shared/local bytes per work-group —
as a backend reads it (Lim's step 1). :meth:`Device.kernel_resources` returns it; the occupancy rules
that consume it live in :mod:`.occupancy`; :func:`resources_of` keeps it on the compiled kernel.

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

_USED_REGS = re.compile(r"Used (\d+) registers")


@dataclass(frozen=True)
class Resources:
    regs: int  # per work-item; 0 = unknown (the register limit is then not applied)
    shared: int  # bytes per work-group
    source: str  # where the numbers came from


def log_registers(log: str) -> int | None:
    """Registers per thread from a ``ptxas -v``-style build log (``-cl-nv-verbose``)."""
    found = _USED_REGS.findall(log or "")
    return max(int(r) for r in found) if found else None


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


def resources_of(kernel: Any) -> Resources:
    """Registers and shared/local memory of a compiled kernel (:meth:`Device.kernel_resources`), computed
    once per compiled kernel and kept on it: :meth:`Device.compile` hands every configuration with the
    same source and options the same kernel, so ``ptxas -v`` / the ``-cl-nv-verbose`` build run once per
    build, not once per work-group size."""
    found = getattr(kernel, "_gpuperf_resources", None)
    if found is None:
        found = kernel.device.kernel_resources(kernel)
        kernel._gpuperf_resources = found
    return found
