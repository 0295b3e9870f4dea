"""Typed source templates: a double-precision kernel whose every tunable operation and variable has its
type as a template parameter.

Why a source template rather than PTX (the thesis rewrites LLVM IR of the NVPTX flow, §7.2–7.4): PTX
exists only on NVIDIA's CUDA path; the project runs every suite on PoCL (CI) and on NVIDIA's OpenCL too.
A C template compiles through both backends (OpenCL directly, CUDA through the language prelude,
:func:`pytest_gpuperf.devices.dialect.portable_fp64`), so the tuner lowers the *same* program everywhere and a reader can see the mix.

Conventions (checked by :func:`lint`):

* an operation is a declaration ``T_x x = <expr>;`` (or ``T_x x[N];`` / ``__local T_x x[N];`` for a
  variable); the type macro is ``T_`` + the variable's name;
* later updates of it (``x += <expr>;``, ``x = <expr>;``, ``x[i] = <expr>;``) belong to the same
  operation (a loop-carried recurrence);
* every floating-point operand in its right-hand side — another operation, a ``double`` local or
  parameter, a load ``p[i]`` from a ``double`` buffer, a literal with a decimal point — is cast to the
  operation's own type, ``(T_x)operand``, so the operation really executes in ``T_x``;
* memory stays ``double`` (the thesis does not modify loads and stores: it inserts typecasts after loads
  and before stores, §7.4.2.2).

Rendering a mix prepends one ``#define T_x float|double`` per operation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_DECL = re.compile(r"\bT_(\w+)\s+(\w+)\s*(\[[^\]]*\])?\s*(?:=\s*([^;]*))?;")
_KERNEL = re.compile(r"__kernel\s+void\s+(\w+)\s*\(")
_DOUBLE = re.compile(r"\bdouble\s*\*?\s*(\w+)")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_FLOAT_LIT = re.compile(r"(?<![\w.])(\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)(?![\w.])")
_FUNCS = ("exp", "log", "sqrt", "sin", "cos", "pow", "fma", "fabs")
TYPES = ("float", "double")


@dataclass
class Op:
    """One tunable operation (or variable): its name, the kernel it lives in, the operations it reads
    (in program order of first appearance), and the arithmetic it does (``+ - * /`` and functions)."""

    name: str
    kernel: str
    inputs: list[str] = field(default_factory=list)
    kinds: set[str] = field(default_factory=set)
    statements: list[str] = field(default_factory=list)  # right-hand sides, declaration first


@dataclass
class TypedTemplate:
    """A typed kernel template and the operations parsed from it (program order)."""

    source: str
    ops: dict[str, Op]
    kernels: list[str]

    @classmethod
    def parse(cls, source: str) -> "TypedTemplate":
        starts = [(m.start(), m.group(1)) for m in _KERNEL.finditer(source)]
        if not starts:
            raise ValueError("a typed template needs at least one __kernel")

        def kernel_at(pos: int) -> str:
            owner = None
            for start, name in starts:
                if start <= pos:
                    owner = name
            if owner is None:
                raise ValueError(f"operation at offset {pos} lies outside every __kernel")
            return owner

        ops: dict[str, Op] = {}
        for m in _DECL.finditer(source):
            tname, var = m.group(1), m.group(2)
            if tname != var:
                raise ValueError(f"type macro T_{tname} declares {var!r}: the macro must be T_{var}")
            if var in ops:
                raise ValueError(f"operation {var!r} declared twice (names must be unique in the template)")
            ops[var] = Op(var, kernel_at(m.start()))
            if m.group(4):
                ops[var].statements.append(m.group(4).strip())
        names = set(ops)
        for name in names:  # updates: x = ..., x op= ..., x[i] = ...
            upd = re.compile(r"(?<![\w.])" + re.escape(name) + r"\s*(\[[^\]]*\])?\s*([-+*/]?)=(?!=)\s*([^;]*);")
            for m in upd.finditer(source):
                if source[max(0, m.start() - 40):m.start()].rstrip().endswith(f"T_{name}"):
                    continue  # the declaration itself
                rhs = m.group(3).strip()
                ops[name].statements.append(rhs if not m.group(2) else f"{name} {m.group(2)} {rhs}")
        for op in ops.values():
            for rhs in op.statements:
                for ident in _IDENT.findall(_strip_casts(rhs)):
                    if ident in names and ident != op.name and ident not in op.inputs:
                        op.inputs.append(ident)
                    if ident in names and ident == op.name and op.name not in op.inputs:
                        op.inputs.append(op.name)  # a recurrence reads itself
                op.kinds |= _kinds(rhs)
        return cls(source, ops, [n for _, n in starts])

    def render(self, mix: dict[str, str] | None = None, default: str = "double") -> str:
        """The template with every operation's type fixed: ``mix`` maps names to ``float``/``double``;
        operations it leaves out take ``default``."""
        mix = dict(mix or {})
        unknown = set(mix) - set(self.ops)
        if unknown:
            raise KeyError(f"mix names no operation of the template: {sorted(unknown)}")
        lines = []
        for name in self.ops:
            t = mix.get(name, default)
            if t not in TYPES:
                raise ValueError(f"type {t!r} of {name!r} is not one of {TYPES}")
            lines.append(f"#define T_{name} {t}")
        return "\n".join(lines) + "\n" + self.source

    def lowered_mix(self, lowered: set[str] | frozenset[str]) -> dict[str, str]:
        """The mix in which exactly ``lowered`` run in single precision."""
        return {n: ("float" if n in lowered else "double") for n in self.ops}


def _strip_casts(rhs: str) -> str:
    return re.sub(r"\(\s*T_\w+\s*\)", " ", rhs)


def _kinds(rhs: str) -> set[str]:
    body = re.sub(r"\[[^\]]*\]", "", _strip_casts(rhs))  # index arithmetic is integer work
    kinds = {f for f in _FUNCS if re.search(r"\b" + f + r"\s*\(", body)}
    for sym, kind in (("*", "mul"), ("/", "div"), ("+", "add")):
        if sym in body:
            kinds.add(kind)
    if re.search(r"[\w)\]]\s*-", body):
        kinds.add("add")  # binary minus
    return kinds


def lint(template: TypedTemplate) -> list[str]:
    """Operands that are not cast to their operation's type (the operation would then run in double
    whatever its type macro says); empty when the template keeps the conventions."""
    fp = set(template.ops) | set(_DOUBLE.findall(template.source))
    problems = []
    for op in template.ops.values():
        cast = f"(T_{op.name})"
        for rhs in op.statements:
            body = rhs
            if body.startswith(f"{op.name} ") and body[len(op.name) + 1:len(op.name) + 2] in "+-*/":
                body = body[len(op.name) + 3:]  # "x += rhs": x is already T_x
            scrubbed = re.sub(r"\[[^\]]*\]", "[]", body)  # identifiers inside subscripts are indices
            for m in _IDENT.finditer(scrubbed):
                ident = m.group(0)
                if ident not in fp or ident == f"T_{op.name}":
                    continue
                before = scrubbed[:m.start()].replace(" ", "")
                if not before.endswith(cast):
                    problems.append(f"{op.name}: operand {ident!r} in {rhs!r} is not cast to T_{op.name}")
            for m in _FLOAT_LIT.finditer(scrubbed):
                if not scrubbed[:m.start()].replace(" ", "").endswith(cast):
                    problems.append(f"{op.name}: literal {m.group(0)} in {rhs!r} is not cast to T_{op.name}")
    return problems
