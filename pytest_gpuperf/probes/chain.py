"""Generate dependent-chain (latency) and independent-chain (throughput) kernels from :mod:`.ops`.

Latency (Alavani ch. 3.2, Surineni ch. 3.2): one work-item runs two timed sections, the first with
``u1`` unrolled steps per loop iteration and the second with ``u2``; each section's loop runs a
run-time number of iterations so nothing is constant-folded. The per-operation latency is the
*difference* of the two sections divided by the extra operations, so loop overhead, clock-read cost
and pipeline fill/drain (identical in both sections) cancel.

* ``clock`` timing reads the SM cycle counter (``clock64()`` in CUDA, ``%clock64`` through inline PTX
  in NVIDIA's OpenCL) around each section and writes the two cycle counts.
* ``events`` timing (any OpenCL device) launches the same kernel twice, once with only the first
  section enabled and once with only the second, and differences the profiling-event durations.

Throughput (Alavani's ILP study): every work-item runs ``ilp`` independent copies of the chain; with
the clock, thread 0 of each block stamps the block's start and end cycles.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..devices.dialect import Dialect, dialect
from .ops import Op

#: Unrolled steps per loop iteration in the two latency sections, cheap and heavy operations.
UNROLL = {False: (32, 64), True: (4, 8)}
TP_UNROLL = 8  # steps per loop iteration in throughput kernels (times ilp chains)


@dataclass(frozen=True)
class ChainKernel:
    """One generated kernel: its name, the op, and the geometry needed to turn times into per-op figures."""

    name: str
    op: Op
    u1: int
    u2: int
    ilp: int = 1

    @property
    def ops_per_iteration_delta(self) -> int:
        """Extra operations per loop iteration of section 2 over section 1."""
        return (self.u2 - self.u1) * self.op.ops_per_step


def _rename(step: str, suffix: str) -> str:
    """``x``/``y`` → ``x3``/``y3`` for the 4th independent chain (whole-word replacement)."""
    return re.sub(r"\b([xy])\b", rf"\g<1>{suffix}", step)


def _load(op: Op, var: str, index: str) -> str:
    """Declaration of one state variable/constant read from the input buffer ``in``."""
    if op.type == "half2":
        return f"half2 {var} = __floats2half2_rn(in[{index}], in[{index}]);"
    if op.type == "int":
        return f"int {var} = (int)in[{index}];"
    return f"{op.type} {var} = ({op.type})in[{index}];"


def _in_type(op: Op) -> str:
    return "double" if op.type == "double" else "float"


def _store(op: Op, var: str) -> str:
    if op.type == "half2":
        return f"__low2float({var}) + __high2float({var})"
    return f"({_in_type(op)}){var}"


def input_values(op: Op, count: int = 64) -> list[float]:
    """Buffer contents for ``in``: x, y, c1, c2 at 0..3, then per-chain x/y copies for throughput."""
    x, y, c1, c2 = op.init
    return [x, y, c1, c2] + [x if i % 2 == 0 else y for i in range(count - 4)]


def _signature(d: Dialect, name: str, tin: str) -> str:
    """Entry point of a chain kernel: input values, output (keeps the chain live), cycle counts, n1, n2."""
    g = d.global_ptr
    return f"{d.entry} void {name}({g}const {tin}* in, {g}{tin}* out, {g}{d.int64}* cyc, int n1, int n2)"


def latency_kernel(op: Op, backend: str, timing: str) -> tuple[str, ChainKernel]:
    """Source of the latency kernel for ``op`` (no headers; see :func:`program`)."""
    step = op.source(backend)
    if step is None:
        raise ValueError(f"{op.name} has no {backend} form")
    if timing not in ("clock", "events"):
        raise ValueError(f"timing must be 'clock' or 'events', not {timing!r}")
    u1, u2 = UNROLL[op.heavy]
    name = f"lat_{op.ident}"
    tin = _in_type(op)
    d = dialect(backend)
    clock = timing == "clock"
    stamp = (lambda v: f"  long long {v} = {d.clock};\n") if clock else (lambda v: "")
    unroll1 = d.unroll_once
    unroll = "#pragma unroll\n"
    sig = _signature(d, name, tin)
    body = "\n".join([
        f"{sig} {{",
        "  " + _load(op, "x", "0"), "  " + _load(op, "y", "1"),
        "  " + _load(op, "c1", "2"), "  " + _load(op, "c2", "3"),
        stamp("t0") + f"  {unroll1}  for (int i = 0; i < n1; ++i) {{\n  {unroll}    for (int u = 0; u < {u1}; ++u) {{ {step} }}\n  }}",
        stamp("t1") + f"  {unroll1}  for (int i = 0; i < n2; ++i) {{\n  {unroll}    for (int u = 0; u < {u2}; ++u) {{ {step} }}\n  }}",
        stamp("t2"),
        f"  out[0] = {_store(op, 'x')}; out[1] = {_store(op, 'y')};",
        "  cyc[0] = t1 - t0; cyc[1] = t2 - t1;" if clock else "  cyc[0] = 0;",
        "}",
    ])
    return body, ChainKernel(name, op, u1, u2)


def throughput_kernel(op: Op, backend: str, timing: str, ilp: int) -> tuple[str, ChainKernel]:
    """``ilp`` independent chains per work-item; thread 0 of each block records the block's cycles."""
    step = op.source(backend)
    if step is None:
        raise ValueError(f"{op.name} has no {backend} form")
    if not 1 <= ilp <= 16:
        raise ValueError(f"ilp must be 1..16, not {ilp}")
    name = f"tp_{op.ident}_ilp{ilp}"
    tin = _in_type(op)
    d = dialect(backend)
    clock = timing == "clock"
    read, sync = d.clock, d.barrier
    lines = [f"{_signature(d, name, tin)} {{"]
    lines += ["  " + _load(op, "c1", "2"), "  " + _load(op, "c2", "3")]
    for i in range(ilp):
        lines += ["  " + _load(op, f"x{i}", str(4 + 2 * i)), "  " + _load(op, f"y{i}", str(5 + 2 * i))]
    if clock:
        lines.append(f"  {sync} long long t0 = {read};")
    steps = " ".join(_rename(step, str(i)) for i in range(ilp))
    lines.append((f"  {d.unroll_once}" if d.unroll_once else "") +
                 f"  for (int i = 0; i < n1; ++i) {{\n  #pragma unroll\n    for (int u = 0; u < {TP_UNROLL}; ++u) {{ {steps} }}\n  }}")
    if clock:
        lines.append(f"  {sync} long long t1 = {read};")
        lines.append(f"  if ({d.local_id} == 0) cyc[{d.group_id}] = t1 - t0;")
    acc = " + ".join(f"{_store(op, f'x{i}')} + {_store(op, f'y{i}')}" for i in range(ilp))
    lines.append(f"  {tin} acc = {acc};")
    lines.append(f"  if (acc == ({tin})n2) out[{d.global_id}] = acc;  /* n2 is never reached: keeps the chains live */")
    lines.append("}")
    return "\n".join(lines), ChainKernel(name, op, 0, TP_UNROLL, ilp)


def program(backend: str, bodies: list[str], fp64: bool, clock: bool, fp16: bool = True) -> str:
    """Join kernel bodies into one translation unit with the headers/pragmas they need.

    ``fp16``: the half2 intrinsics' header (where the dialect has one); ``clock`` adds the dialect's
    cycle-counter helper (OpenCL: ``gp_clock()``, inline PTX ``%clock64``, NVIDIA's OpenCL only)."""
    d = dialect(backend)
    head = (d.half_intrinsics if fp16 else "") + (d.fp64_prelude if fp64 else "") + (d.clock_helper if clock else "")
    return head + "\n\n".join(bodies) + "\n"


def fast_math_options(backend: str) -> tuple[str, ...]:
    """The compilers' fast-math switches (approximate SFU intrinsics, FTZ, no IEEE division/sqrt)."""
    return dialect(backend).fast_math
