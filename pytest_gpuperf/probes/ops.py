"""The operation catalog: one entry per probed instruction (or library call).

Every entry describes one *step* of a dependent chain in CUDA C and, where OpenCL has the operation,
in OpenCL C. A step reads and writes the state variables ``x`` and ``y`` and may read the constants
``c1`` and ``c2``; nothing in it may be known to the compiler (all four come from a buffer), so the
chain can neither be evaluated at compile time nor merged with a neighbouring chain.

Following Alavani (thesis ch. 3.2, "b+=a; a+=b;") two-variable steps are used wherever a
one-variable chain could be collapsed algebraically (integer ``x = x + c`` becomes ``x + 64·c``;
with fast-math a floating-point sum could be re-associated). Unary functions use inputs that stay
at a fixed point (``sqrt(1)``, ``cos`` → Dottie number, ``exp(-x)`` → Ω) so no special-case path
(NaN, infinity, denormal) is ever timed.

``sass`` lists the machine opcodes that prove the step ran: a tuple of alternatives per required
instruction (``(("F2I",), ("I2F",))`` needs both). Each required instruction must occur at least
``per_step`` times per unrolled step inside the timed loop (see :mod:`.sass_proof`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..devices.dialect import per_language

#: Chain groups and the features (``DeviceInfo.features``) they need.
GROUP_REQUIRES: dict[str, tuple[str, ...]] = {
    "fp16": ("fp16",), "fp32": (), "fp64": ("fp64",), "int32": (), "cvt": (), "sfu32": (),
    "sfu64": ("fp64",), "round32": ("cuda",), "round64": ("cuda", "fp64"),
}

#: C type of the state per group; fp16 chains carry ``half2`` built from float inputs.
GROUP_TYPE = {"fp16": "half2", "fp32": "float", "fp64": "double", "int32": "int", "cvt": "float",
              "sfu32": "float", "sfu64": "double", "round32": "float", "round64": "double"}

#: Precision named in metric names per group (special functions and rounded intrinsics by their type).
GROUP_PRECISION = {"fp16": "fp16", "fp32": "fp32", "fp64": "fp64", "int32": "int32", "cvt": "fp32",
                   "sfu32": "fp32", "sfu64": "fp64", "round32": "fp32", "round64": "fp64"}
PRECISION = {"cvt.f32_f16_f32": "fp16"}


@dataclass(frozen=True)
class Op:
    """One probed operation. ``name`` is ``<group>.<op>`` and becomes part of the metric name."""

    name: str
    cuda: str | None
    opencl: str | None
    sass: tuple[tuple[str, ...], ...]
    ops_per_step: int = 1
    heavy: bool = False  # long library routine: shorter unrolled chains keep code size sane
    init: tuple[float, float, float, float] = (1.0, 1.0, 0.5, 0.5)  # x, y, c1, c2
    ctype: str = ""  # overrides the group's type (cvt through double)
    note: str = ""
    requires: tuple[str, ...] = field(default=())
    sass_fast: tuple[tuple[str, ...], ...] | None = None  # opcodes under fast-math, when they differ

    def sass_for(self, fast: bool) -> tuple[tuple[str, ...], ...]:
        """Opcodes that must appear in the loop with (``fast``) or without fast-math."""
        return self.sass_fast if fast and self.sass_fast is not None else self.sass

    @property
    def group(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def short(self) -> str:
        return self.name.split(".", 1)[1]

    @property
    def type(self) -> str:
        return self.ctype or GROUP_TYPE[self.group]

    @property
    def ident(self) -> str:
        """C identifier fragment (``fp32.fadd_rz`` → ``fp32_fadd_rz``)."""
        return self.name.replace(".", "_")

    @property
    def precision(self) -> str:
        """Precision part of the metric name: fp16/fp32/fp64/int32 (the models helper reads these)."""
        return PRECISION.get(self.name, GROUP_PRECISION[self.group])

    def metric(self, kind: str, unit: str, fast: bool = False) -> str:
        """``latency.fp32.fma.cycles``, ``latency.fp32.sin.fast.cycles``, ``throughput.fp64.fma.ops_per_clk_sm``."""
        return f"{kind}.{self.precision}.{self.short}{'.fast' if fast else ''}.{unit}"

    def uses_half(self, backend: str) -> bool:
        """Whether the kernel needs ``cuda_fp16.h`` (half2 state or half conversions in the step)."""
        return self.type == "half2" or "half" in (self.source(backend) or "")

    def features(self) -> set[str]:
        return set(GROUP_REQUIRES[self.group]) | set(self.requires)

    def source(self, backend: str) -> str | None:
        """The step in the language of ``backend`` (``Dialect.name``); None where it has no form."""
        return per_language(cuda=self.cuda, opencl=self.opencl)[backend]


def _two(fn: str) -> str:
    """Two dependent applications of a binary operator per step (Alavani's ``b+=a; a+=b``)."""
    return f"y = {fn.format('x', 'y')}; x = {fn.format('x', 'y')};"


_X0 = (0.0, 0.0, 0.5, 0.5)  # sums of zeros stay zero: no overflow, no denormals
_X1 = (1.0, 1.0, 0.9999, 0.0001)  # x·c1 + c2 stays at 1
#: Division chains: x = c1/x stays at 1. OpenCL adds c2 (= 0) after each division/round trip because
#: LLVM under -cl-fast-relaxed-math (and PoCL even without) cancels c1/(c1/x) and (float)(int) pairs;
#: the OpenCL figure therefore includes one dependent add.
_DIV = (1.0, 1.0, 1.0, 0.0)

OPS: tuple[Op, ...] = (
    # ---- fp16 (CUDA half2) -----------------------------------------------------------------------
    Op("fp16.hfma2", "x = __hfma2(x, c1, c2);", None, (("HFMA2",),), init=(1.0, 1.0, 0.5, 0.5),
       note="half2 FMA: one instruction, two lanes"),
    Op("fp16.hadd2", _two("__hadd2({0}, {1})"), None, (("HADD2", "HFMA2"),), 2, init=_X0),
    Op("fp16.hmul2", _two("__hmul2({0}, {1})"), None, (("HMUL2", "HFMA2"),), 2),
    # ---- fp32 --------------------------------------------------------------------------------------
    Op("fp32.add", _two("{0} + {1}"), _two("{0} + {1}"), (("FADD",),), 2, init=_X0),
    Op("fp32.mul", _two("{0} * {1}"), _two("{0} * {1}"), (("FMUL",),), 2),
    Op("fp32.fma", "x = fmaf(x, c1, c2);", "x = fma(x, c1, c2);", (("FFMA",),), init=_X1),
    Op("fp32.div", "x = c1 / x;", "x = c1 / x + c2;", (("MUFU.RCP",),), heavy=True, init=_DIV),
    Op("fp32.sqrt", "x = sqrtf(x);", "x = sqrt(x);", (("MUFU.RSQ", "MUFU.SQRT"),), heavy=True),
    Op("fp32.rsqrt", "x = rsqrtf(x);", "x = rsqrt(x);", (("MUFU.RSQ",),)),
    Op("fp32.rcp", "x = __frcp_rn(x);", "x = 1.0f / x + c2;", (("MUFU.RCP",),), heavy=True),
    # ---- fp64 --------------------------------------------------------------------------------------
    Op("fp64.add", _two("{0} + {1}"), _two("{0} + {1}"), (("DADD",),), 2, init=_X0),
    Op("fp64.mul", _two("{0} * {1}"), _two("{0} * {1}"), (("DMUL",),), 2),
    Op("fp64.fma", "x = fma(x, c1, c2);", "x = fma(x, c1, c2);", (("DFMA",),), init=_X1),
    Op("fp64.div", "x = c1 / x;", "x = c1 / x + c2;", (("MUFU.RCP64H",),), heavy=True, init=_DIV),
    Op("fp64.sqrt", "x = sqrt(x);", "x = sqrt(x);", (("MUFU.RSQ64H",),), heavy=True),
    Op("fp64.rcp", "x = __drcp_rn(x);", "x = 1.0 / x + c2;", (("MUFU.RCP64H",),), heavy=True),
    # ---- int32 -------------------------------------------------------------------------------------
    Op("int32.add", _two("{0} + {1}"), _two("{0} + {1}"), (("IADD3", "IMAD.IADD"),), 2,
       note="ptxas spreads adds over IADD3 (ALU pipe) and IMAD.IADD (FMA pipe)"),
    Op("int32.mul", _two("{0} * {1}"), _two("{0} * {1}"), (("IMAD",),), 2),
    Op("int32.mad", "y = x * y + c1; x = x * y + c1;", "y = mad24(x, y, c1); x = mad24(x, y, c1);",
       (("IMAD",),), 2, init=(1.0, 1.0, 0.0, 0.0), note="OpenCL uses mad24 (24-bit integer multiply-add)"),
    # ---- conversions (round trips: one step = two conversions) ---------------------------------------
    Op("cvt.f32_s32_f32", "x = (float)(int)x;", "x = (float)((int)x + (int)c2);", (("F2I",), ("I2F", "I2FP")), 1,
       init=(1.5, 1.5, 0.5, 0.0),
       note="round trip float→int→float; latency is per round trip (two conversions; OpenCL: + one int add)"),
    Op("cvt.f32_f16_f32", "x = __half2float(__float2half(x));", None, (("F2FP", "F2F.F16.F32"),
       ("HADD2.F32", "F2F.F32.F16")), 1, requires=("cuda", "fp16"),
       note="round trip float→half→float, per round trip"),
    # ---- special functions, fp32 (library calls and hardware intrinsics) -----------------------------
    Op("sfu32.sin", "x = sinf(x);", "x = sin(x);", (("FFMA",),), heavy=True, sass_fast=(("MUFU.SIN",),),
       note="without fast-math sm_90 evaluates sinf as an FFMA polynomial (no MUFU.SIN)"),
    Op("sfu32.cos", "x = cosf(x);", "x = cos(x);", (("FFMA",),), heavy=True, sass_fast=(("MUFU.COS",),),
       note="without fast-math sm_90 evaluates cosf as an FFMA polynomial (no MUFU.COS)"),
    Op("sfu32.exp", "x = expf(-x);", "x = exp(-x);", (("MUFU.EX2",),), heavy=True),
    Op("sfu32.exp2", "x = exp2f(-x);", "x = exp2(-x);", (("MUFU.EX2",),), heavy=True),
    Op("sfu32.log", "x = logf(x) + 2.0f;", "x = log(x) + 2.0f;", (("FFMA",),), heavy=True,
       sass_fast=(("MUFU.LG2",),),
       note="step is log(x)+2 (fixed point ≈ 3.15); the add may fuse into the routine's last FFMA"),
    Op("sfu32.pow", "x = powf(x, c2);", "x = pow(x, c2);", (("FFMA",),), heavy=True,
       init=(1.0, 1.0, 0.5, 0.9), sass_fast=(("MUFU.LG2",), ("MUFU.EX2",)),
       note="without fast-math sm_90 computes powf with an FFMA log/exp routine (no MUFU)"),
    Op("sfu32.sin_intr", "x = __sinf(x);", "x = native_sin(x);", (("MUFU.SIN",),), heavy=True),
    Op("sfu32.cos_intr", "x = __cosf(x);", "x = native_cos(x);", (("MUFU.COS",),), heavy=True),
    Op("sfu32.exp_intr", "x = __expf(-x);", "x = native_exp(-x);", (("MUFU.EX2",),)),
    Op("sfu32.log_intr", "x = __logf(x) + 2.0f;", "x = native_log(x) + 2.0f;", (("MUFU.LG2",),)),
    Op("sfu32.div_intr", "x = __fdividef(c1, x);", "x = native_divide(c1, x) + c2;", (("MUFU.RCP",),),
       init=_DIV),
    # ---- special functions, fp64 (software routines built from DFMA) ---------------------------------
    Op("sfu64.sin", "x = sin(x);", "x = sin(x);", (("DFMA",),), heavy=True, note="software routine; DFMA-based"),
    Op("sfu64.exp", "x = exp(-x);", "x = exp(-x);", (("DFMA",),), heavy=True, note="software routine; DFMA-based"),
    Op("sfu64.log", "x = log(x) + 2.0;", "x = log(x) + 2.0;", (("DFMA",),), heavy=True,
       note="software routine; DFMA-based"),
)


def _rounded() -> tuple[Op, ...]:
    """The explicitly rounded CUDA intrinsics (``__fadd_rz`` …): rounding is part of the opcode."""
    out = []
    for r in ("rn", "rz", "ru", "rd"):
        # SASS spells round-up/-down as .RP/.RM; the directed-rounding divisions are out-of-line subroutines
        suffix = {"rn": "", "rz": ".RZ", "ru": ".RP", "rd": ".RM"}[r]
        div32 = ("MUFU.RCP",) if r == "rn" else ("CALL.REL",)
        div64 = ("MUFU.RCP64H",) if r == "rn" else ("CALL.REL",)
        out += [
            Op(f"round32.fadd_{r}", _two(f"__fadd_{r}({{0}}, {{1}})"), None, ((f"FADD{suffix}", "FADD.FTZ" + suffix),), 2,
               init=_X0),
            Op(f"round32.fmul_{r}", _two(f"__fmul_{r}({{0}}, {{1}})"), None, ((f"FMUL{suffix}", "FMUL.FTZ" + suffix),), 2),
            Op(f"round32.fmaf_{r}", f"x = __fmaf_{r}(x, c1, c2);", None, ((f"FFMA{suffix}", "FFMA.FTZ" + suffix),),
               init=_X1),
            Op(f"round32.fdiv_{r}", f"x = __fdiv_{r}(c1, x);", None, (div32,), heavy=True,
               init=_DIV),
            Op(f"round32.fsqrt_{r}", f"x = __fsqrt_{r}(x);", None, (("MUFU.RSQ",),), heavy=True),
            Op(f"round64.dadd_{r}", _two(f"__dadd_{r}({{0}}, {{1}})"), None, ((f"DADD{suffix}",),), 2, init=_X0),
            Op(f"round64.dmul_{r}", _two(f"__dmul_{r}({{0}}, {{1}})"), None, ((f"DMUL{suffix}",),), 2),
            Op(f"round64.dfma_{r}", f"x = __fma_{r}(x, c1, c2);", None, ((f"DFMA{suffix}",),), init=_X1),
            Op(f"round64.ddiv_{r}", f"x = __ddiv_{r}(c1, x);", None, (div64,), heavy=True,
               init=_DIV),
        ]
    return tuple(out)


ALL_OPS: tuple[Op, ...] = OPS + _rounded()
GROUPS: tuple[str, ...] = tuple(GROUP_REQUIRES)

#: Operations whose throughput (independent chains, full occupancy) is probed.
THROUGHPUT_OPS: tuple[str, ...] = ("fp32.fma", "fp32.add", "fp32.mul", "fp64.fma", "fp64.add", "fp16.hfma2",
                                   "int32.add", "int32.mad", "sfu32.exp_intr", "fp32.rsqrt")


def op(name: str) -> Op:
    for o in ALL_OPS:
        if o.name == name:
            return o
    raise KeyError(f"unknown probe operation {name!r}; known: {', '.join(o.name for o in ALL_OPS)}")


def ops_in(group: str, backend: str) -> list[Op]:
    """Operations of ``group`` that ``backend`` can express."""
    if group not in GROUP_REQUIRES:
        raise KeyError(f"unknown chain group {group!r}; known: {', '.join(GROUPS)}")
    return [o for o in ALL_OPS if o.group == group and o.source(backend) is not None]
