"""Prove a CUDA probe measured what it claims, from the SASS of its cubin.

The device hands over the parsed SASS of the cubin that ran (:meth:`Device.sass_functions`; reading and
disassembling machine code is device knowledge: :mod:`pytest_gpuperf.devices.sass`). Here we find loops
(a branch to a lower address closes a loop spanning ``[target, branch]``), and require the probed opcode to occur at least ``unroll × per_step`` times
inside a loop — the unrolled dependent chain survived, was not folded, hoisted or merged, and runs the
intended machine instruction (FFMA, DFMA, HFMA2, MUFU.EX2, ...). A probe that cannot prove this
raises :class:`ProbeVerificationError` rather than report a number.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from ..devices.sass import Instr
from ..errors import ProbeVerificationError

__all__ = ["count_in", "loops", "matches", "per_step", "verify_chain", "verify_latency", "verify_latency_op",
           "verify_throughput"]


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
    but NVRTC 13.0 with CuPy on an H100 kept the IEEE ``sinf`` (FFMA polynomial plus one
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
