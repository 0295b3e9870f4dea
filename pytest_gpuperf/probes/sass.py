"""Prove a CUDA probe measured what it claims, from the SASS of its cubin.

``cuobjdump -sass`` disassembles the cubin NVRTC produced (the exact code that ran). We parse it into
instructions per function, find loops (a branch to a lower address closes a loop spanning
``[target, branch]``), and require the probed opcode to occur at least ``unroll × per_step`` times
inside a loop — the unrolled dependent chain survived, was not folded, hoisted or merged, and runs the
intended machine instruction (FFMA, DFMA, HFMA2, MUFU.EX2, ...). A probe that cannot prove this
raises :class:`ProbeVerificationError` rather than report a number.
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
from typing import Iterable, Sequence

from ..errors import GpuPerfError


class ProbeVerificationError(GpuPerfError):
    """The compiled code does not contain the instruction chain the probe claims to time."""


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


def loops(instrs: Sequence[Instr]) -> list[tuple[int, int]]:
    """Address ranges ``(start, end)`` closed by backward branches (``BRA`` to a lower address)."""
    out = []
    for ins in instrs:
        if ins.opcode.split(".")[0] in ("BRA", "JMP"):
            hexes = re.findall(r"0x([0-9a-f]+)", ins.operands)
            if hexes:
                target = int(hexes[-1], 16)
                if target < ins.addr:
                    out.append((target, ins.addr))
    return out


def matches(opcode: str, wanted: str) -> bool:
    """``FFMA`` matches ``FFMA`` and ``FFMA.FTZ``; ``MUFU.EX2`` matches only MUFU.EX2 (dot-boundary prefix)."""
    return opcode == wanted or opcode.startswith(wanted + ".")


def count_in(instrs: Sequence[Instr], span: tuple[int, int], alternatives: Iterable[str]) -> int:
    alts = tuple(alternatives)
    return sum(1 for i in instrs if span[0] <= i.addr <= span[1] and any(matches(i.opcode, a) for a in alts))


def verify_chain(instrs: Sequence[Instr], required: Sequence[Sequence[str]], per_loop: Sequence[int],
                 what: str) -> dict[str, object]:
    """Require one distinct loop per entry of ``per_loop`` holding ≥ that many of each required opcode.

    Returns evidence (loop spans and counts) for the metric's ``info``; raises ProbeVerificationError.
    """
    spans = loops(instrs)
    if not spans:
        raise ProbeVerificationError(f"{what}: no loop in the SASS — the chain was folded or fully unrolled. "
                                     "Keep the trip count a kernel argument and '#pragma unroll 1'.")
    counts = {s: [count_in(instrs, s, alts) for alts in required] for s in spans}
    used: list[tuple[int, int]] = []
    for need in sorted(per_loop, reverse=True):
        ok = [s for s in spans if s not in used and all(c >= need for c in counts[s])]
        if not ok:
            seen = {f"{a:#x}-{b:#x}": counts[(a, b)] for a, b in spans}
            names = " and ".join("/".join(alts) for alts in required)
            raise ProbeVerificationError(
                f"{what}: no loop holds {need} × {names}; loops found (counts per required opcode): {seen}. "
                "The compiler changed the chain (folded, merged or used another instruction); fix the step "
                "in pytest_gpuperf/probes/ops.py.")
        # innermost qualifying loop: the one with the smallest span
        used.append(min(ok, key=lambda s: s[1] - s[0]))
    return {"loops": [f"{a:#x}-{b:#x}" for a, b in used],
            "opcode_counts": [counts[s] for s in used], "required": ["/".join(a) for a in required]}


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

def per_step(op_heavy: bool, ops_per_step: int) -> int:
    """How many of each required opcode one unrolled step must contribute inside the loop.

    A simple step is ``ops_per_step`` machine instructions; a library routine (division, sin) is a
    sequence in which the required opcode (MUFU.RCP, FFMA ...) occurs at least once per call.
    """
    return 1 if op_heavy else ops_per_step


def verify_latency(instrs: Sequence[Instr], required: Sequence[Sequence[str]], u1: int, u2: int, per: int,
                   what: str) -> dict[str, object]:
    """Both timed sections must be loops holding their unrolled chains (``u1·per`` and ``u2·per``)."""
    return verify_chain(instrs, required, [u1 * per, u2 * per], what)


def verify_throughput(instrs: Sequence[Instr], required: Sequence[Sequence[str]], unroll: int, ilp: int,
                      per: int, what: str) -> dict[str, object]:
    """The loop must hold all ``ilp`` independent chains, ``unroll`` steps each."""
    return verify_chain(instrs, required, [unroll * ilp * per], what)


def verify_latency_op(instrs: Sequence[Instr], op, fast: bool, u1: int, u2: int) -> dict[str, object]:
    """:func:`verify_latency` for an :class:`~.ops.Op`, with the one fallback the H100 showed.

    Under ``--use_fast_math`` ``sinf``/``cosf``/``logf``/``powf`` are expected to become MUFU intrinsics,
    but NVRTC 13.0 with CuPy on the lent H100 kept the IEEE ``sinf`` (FFMA polynomial plus one
    Payne–Hanek reduction loop per call: 14 loops instead of 2, no MUFU.SIN). That kernel still measures
    a proven chain — the IEEE routine's — so it is accepted when the IEEE opcodes prove it, and the
    evidence says so (``fast_math_path: "ieee routine"``); a chain proven by neither is still an error.
    """
    per = per_step(op.heavy, op.ops_per_step)
    what = f"{op.name}{' (fast-math)' if fast else ''}"
    try:
        ev = verify_latency(instrs, op.sass_for(fast), u1, u2, per, what)
    except ProbeVerificationError as exc:
        if not (fast and op.sass_fast is not None):
            raise
        ev = verify_latency(instrs, op.sass, u1, u2, per, f"{what}, IEEE routine")
        ev["fast_math_path"] = "ieee routine"
        ev["fast_math_note"] = f"the compiler kept the IEEE routine under fast-math ({str(exc)[:160]}…)"
        return ev
    if fast and op.sass_fast is not None:
        ev["fast_math_path"] = "intrinsic"
    return ev
