"""Machine code (SASS) of a CUDA cubin: ``cuobjdump -sass`` disassembles the cubin NVRTC produced (the
exact code that ran) and :func:`parse` turns the text into instructions per function.

Device knowledge: :meth:`pytest_gpuperf.devices.cuda.CudaDevice.sass_functions` uses it for a compiled
kernel; the probes' proofs built on it live in :mod:`pytest_gpuperf.probes.sass_proof`.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from ..errors import ProbeVerificationError


@dataclass(frozen=True)
class Instr:
    addr: int
    pred: str
    opcode: str  # full mnemonic with modifiers, e.g. "FFMA.FTZ" or "MUFU.EX2"
    operands: str


_LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")
_FUNC = re.compile(r"Function\s*:\s*(\S+)")


def parse(text: str) -> dict[str, list[Instr]]:
    """``cuobjdump -sass`` text → instructions per function name."""
    funcs: dict[str, list[Instr]] = {}
    current: list[Instr] | None = None
    for line in text.splitlines():
        m = _FUNC.search(line)
        if m:
            current = funcs.setdefault(m.group(1), [])
            continue
        m = _LINE.search(line)
        if m and current is not None:
            current.append(Instr(int(m.group(1), 16), (m.group(2) or "").strip(), m.group(3), m.group(4).strip()))
    return funcs


def cuobjdump_candidates() -> list[str]:
    """Every ``cuobjdump`` we can find, most specific first: ``$GPUPERF_CUOBJDUMP``, PATH, the CUDA
    toolkits under /usr/local, and the ``nvidia-cuda-cuobjdump`` wheel (``nvidia/cu13/bin``)."""
    found: list[str] = []
    env = os.environ.get("GPUPERF_CUOBJDUMP")
    if env:
        found.append(env)
    which = shutil.which("cuobjdump")
    if which:
        found.append(which)
    found.append(os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "cuobjdump"))
    found += sorted(glob.glob("/usr/local/cuda*/bin/cuobjdump"), reverse=True)
    for base in sys.path:
        for sub in ("cu13", "cu12", "cuda_cuobjdump"):
            found.append(os.path.join(base, "nvidia", sub, "bin", "cuobjdump"))
    out: list[str] = []
    for c in found:
        if c and os.path.isfile(c) and os.access(c, os.X_OK) and os.path.realpath(c) not in map(os.path.realpath, out):
            out.append(c)
    return out


_WORKING: list[str] = []  # the cuobjdump that last read a cubin (tried first next time)


def _run_cuobjdump(tool: str, path: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(tool) + os.pathsep + env.get("PATH", "")  # its own nvdisasm first
    return subprocess.run([tool, "-sass", path], capture_output=True, text=True, timeout=timeout_s, env=env)


def disassemble(cubin: bytes, timeout_s: float = 60.0) -> str:
    """SASS text of a cubin via ``cuobjdump -sass``.

    A toolkit older than the NVRTC that built the cubin answers "does not contain device code", so
    every cuobjdump found is tried (the one that worked is remembered)."""
    tools = _WORKING + [t for t in cuobjdump_candidates() if t not in _WORKING]
    if not tools:
        raise ProbeVerificationError("cuobjdump not found, so no CUDA probe can prove its instructions. Install "
                                     "the CUDA toolkit, `pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm`, "
                                     "or point $GPUPERF_CUOBJDUMP at one.")
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as fh:
        fh.write(cubin)
        path = fh.name
    errors = []
    try:
        for tool in tools:
            proc = _run_cuobjdump(tool, path, timeout_s)
            if proc.returncode == 0 and "Function" in proc.stdout:
                if tool not in _WORKING:
                    _WORKING[:] = [tool]
                return proc.stdout
            errors.append(f"{tool} (rc {proc.returncode}): {proc.stderr.strip()[:200]}")
    finally:
        os.unlink(path)
    raise ProbeVerificationError("no cuobjdump could disassemble the cubin (a toolkit older than NVRTC reads it as "
                                 "'no device code'; install a matching `nvidia-cuda-cuobjdump` wheel or set "
                                 "$GPUPERF_CUOBJDUMP): " + "; ".join(errors))
