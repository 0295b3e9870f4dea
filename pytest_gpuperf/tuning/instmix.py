"""Lim's instruction-mix / pipeline-utilization rule (dissertation ch. III, "Instruction Mix Metrics",
"Pipeline Utilization", Table 3, Eq. 3.6, Fig. 9 "RB").

Static, no runs: the compiled kernel's instructions (PTX, which NVIDIA's OpenCL returns as the
program binary and CUDA keeps) are counted per category — O_fl (floating-point/integer arithmetic),
O_mem (loads/stores/atomics/texture), O_ctrl (branches, predicates, barriers) and O_reg (moves) —
and weighted by the reciprocal of each category's per-SM throughput (Table 3; CPI, the c_f, c_m,
c_b, c_r of Eq. 3.6). The category that needs the most issue cycles is the pipeline the kernel
oversubscribes; its share of all cycles is the intensity.

The rule the chapter states, applied on top of the occupancy calculator's T* set:
* compute-intensive kernels "perform well with larger block sizes" → keep the larger half of T*;
* memory-intensive kernels: large blocks hold many registers and leave fewer blocks per SM → keep
  the smaller half of T* (more, smaller blocks to hide memory latency);
* kernels dominated by control / synchronisation barriers: "smaller block sizes are preferred,
  because many active blocks can run simultaneously" → keep the smaller half;
* balanced (no category above ``dominance`` of the cycles) → T* unchanged.
Halving T* is how Fig. 9 goes from 87.5 % (static) to 93.8 % (static + rule-based) pruning on ATAX.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Per-SM instructions per cycle by category (Lim Table 3). Columns SM20/SM35/SM52/SM60; newer
# architectures use the SM60 column (the table stops at Pascal; recorded in the result).
THROUGHPUT: dict[str, dict[str, int]] = {
    "sm20": {"fl32": 32, "fl64": 16, "minmax": 32, "shift": 16, "conv64": 16, "conv32": 16, "sfu": 4,
             "int": 32, "mem": 16, "ctrl": 16, "mov": 32},
    "sm35": {"fl32": 192, "fl64": 64, "minmax": 160, "shift": 32, "conv64": 8, "conv32": 128, "sfu": 32,
             "int": 160, "mem": 32, "ctrl": 32, "mov": 32},
    "sm52": {"fl32": 128, "fl64": 4, "minmax": 64, "shift": 64, "conv64": 4, "conv32": 32, "sfu": 32,
             "int": 64, "mem": 64, "ctrl": 64, "mov": 32},
    "sm60": {"fl32": 64, "fl64": 32, "minmax": 32, "shift": 32, "conv64": 16, "conv32": 16, "sfu": 16,
             "int": 32, "mem": 16, "ctrl": 16, "mov": 32},
}
# Table 3's op class of each row: FLOPS / MEM / CTRL / REG.
CLASS = {"fl32": "flops", "fl64": "flops", "minmax": "flops", "shift": "flops", "conv64": "flops",
         "conv32": "flops", "sfu": "flops", "int": "flops", "mem": "mem", "ctrl": "ctrl", "mov": "reg"}

_INSTR = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][a-z0-9_]*)((?:\.[a-z0-9_]+)*)[\s;]", re.MULTILINE)


def table_for(arch: str) -> tuple[str, dict[str, int]]:
    """The Table 3 column for ``sm_XY`` (closest older column; SM60 for Volta and later)."""
    try:
        cc = int(arch.lower().replace("sm_", "").replace("sm", ""))
    except ValueError:
        return "sm60", THROUGHPUT["sm60"]
    col = "sm20" if cc < 30 else "sm35" if cc < 50 else "sm52" if cc < 60 else "sm60"
    return col, THROUGHPUT[col]


def classify(op: str, mods: str) -> str | None:
    """Table 3 row of one PTX instruction (None for directives/declarations)."""
    f64 = ".f64" in mods
    if op in ("ld", "st", "atom", "red", "tex", "tld4", "suld", "sust", "ldu", "prefetch", "cp"):
        return "mem"
    if op in ("bra", "bar", "barrier", "setp", "selp", "ret", "exit", "call", "membar", "fence", "vote", "brx"):
        return "ctrl"
    if op in ("mov", "cvta"):
        return "mov"
    if op in ("sin", "cos", "lg2", "ex2", "rsqrt", "sqrt", "rcp") and not f64:
        return "sfu"
    if op in ("min", "max"):
        return "minmax"
    if op in ("shl", "shr", "shf", "bfe", "bfi", "prmt", "shfl", "sad"):
        return "shift"
    if op == "cvt":
        return "conv64" if (".f64" in mods or ".u64" in mods or ".s64" in mods) else "conv32"
    if op in ("add", "sub", "mul", "mad", "fma", "div", "neg", "abs", "rem", "and", "or", "xor", "not",
              "sqrt", "rcp", "rsqrt", "sin", "cos", "lg2", "ex2", "mul24", "mad24", "popc", "clz"):
        if ".f32" in mods:
            return "fl32"
        if f64:
            return "fl64"
        return "int"
    return None


@dataclass(frozen=True)
class Mix:
    counts: dict[str, int]  # Table 3 row -> static instruction count
    cycles: dict[str, float]  # op class -> issue cycles per SM (count / throughput)
    column: str

    @property
    def total_cycles(self) -> float:
        return sum(self.cycles.values())

    def share(self, cls: str) -> float:
        return self.cycles.get(cls, 0.0) / self.total_cycles if self.total_cycles else 0.0

    def bound(self, dominance: float = 0.5) -> str:
        """'flops' | 'mem' | 'ctrl' | 'reg' when that pipeline takes more than ``dominance`` of the
        cycles, else 'balanced'."""
        if not self.total_cycles:
            return "balanced"
        cls = max(self.cycles, key=lambda c: self.cycles[c])
        return cls if self.share(cls) > dominance else "balanced"


def instruction_mix(ptx: str, arch: str) -> Mix:
    """Count the PTX instructions of a kernel per Table 3 row and weight them by throughput."""
    column, tp = table_for(arch)
    counts: dict[str, int] = {}
    for op, mods in _INSTR.findall(ptx):
        row = classify(op, mods)
        if row is not None:
            counts[row] = counts.get(row, 0) + 1
    cycles: dict[str, float] = {}
    for row, n in counts.items():
        cycles[CLASS[row]] = cycles.get(CLASS[row], 0.0) + n / tp[row]
    return Mix(counts, cycles, column)


def rule_filter(sizes: list[int], bound: str) -> tuple[list[int], str]:
    """Lim's rule over the distinct work-group sizes of T*: larger half for compute-bound kernels,
    smaller half for memory- or control-bound ones, all of them when balanced."""
    distinct = sorted(set(sizes))
    if len(distinct) <= 1 or bound in ("balanced", "reg"):
        return distinct, "balanced: T* kept"
    half = (len(distinct) + 1) // 2
    if bound == "flops":
        return distinct[-half:], "compute-bound: larger half of T*"
    return distinct[:half], f"{'memory' if bound == 'mem' else 'control'}-bound: smaller half of T*"
