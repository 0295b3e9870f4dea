"""PTX parser: the entry's instructions with labels, predicates, operands, defined and used registers,
and the instruction class that selects latency and hardware resource (Alavani §3.1, §4.2).

Only what the static model needs is parsed: directives (``.reg``, ``.shared``, ``.pragma``…) are
skipped, comments are stripped, and every instruction keeps its source line for error messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_REG = re.compile(r"%[A-Za-z_][\w]*(?:\.[xyz])?")
_SPECIAL = re.compile(r"^%(tid|ntid|ctaid|nctaid|laneid|warpid|smid|clock|clock64|globaltimer)")
_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\(")
_PARAM = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.\w+\s+(?:\.ptr\s+(?:\.(?!align\b)\w+\s+)*)?(?:\.align\s+\d+\s+)?([\w$]+)")
_DECL = re.compile(r"\.(shared|const)\s+\.align\s+(\d+)\s+\.(\w+)\s+([\w$]+)\[(\d+)\](?:\s*=\s*\{([^}]*)\})?")


class PtxParseError(ValueError):
    """The text is not PTX this parser understands; the message names the line."""


@dataclass
class Instruction:
    """One PTX instruction. ``opcode`` is the full dotted name (``ld.global.nc.f32``)."""

    opcode: str
    operands: list[str]
    pred: str | None = None
    line: int = 0
    defs: list[str] = field(default_factory=list)
    uses: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return self.opcode.split(".")[0]

    @property
    def parts(self) -> list[str]:
        return self.opcode.split(".")

    @property
    def is_branch(self) -> bool:
        return self.base == "bra"

    @property
    def target(self) -> str | None:
        return self.operands[-1] if self.is_branch and self.operands else None

    @property
    def klass(self) -> str:
        return classify(self)


@dataclass
class Kernel:
    """A parsed ``.entry``: its ``items`` are labels (``str``) and instructions in program order; ``params``
    its parameters' names in the order a launch passes them."""

    name: str
    items: list[str | Instruction]
    shared_bytes: int = 0
    params: list[str] = field(default_factory=list)

    @property
    def instructions(self) -> list[Instruction]:
        return [i for i in self.items if isinstance(i, Instruction)]


@dataclass(frozen=True)
class Declaration:
    """A ``.shared`` or ``.const`` array of the module: its space, alignment, element type (``b8``, ``f32``…),
    name, element count and, for an initialised constant, its initialiser's values."""

    space: str
    align: int
    elem: str
    name: str
    count: int
    init: tuple[int, ...] = ()


def declarations(text: str) -> list[Declaration]:
    """Every aligned ``.shared`` and ``.const`` array of a PTX module, in the order they are declared."""
    return [Declaration(m.group(1), int(m.group(2)), m.group(3), m.group(4), int(m.group(5)),
                        tuple(int(v) for v in m.group(6).split(",")) if m.group(6) else ())
            for m in _DECL.finditer(text)]


def _split_operands(text: str) -> list[str]:
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _regs(text: str) -> list[str]:
    return [r for r in _REG.findall(text) if not _SPECIAL.match(r)]


_NO_DEST = {"st", "bra", "ret", "exit", "bar", "barrier", "membar", "fence", "red", "prefetch", "trap", "call"}


def _def_use(ins: Instruction) -> None:
    ops = ins.operands
    uses = _regs(ins.pred or "")
    if ins.base in _NO_DEST or not ops:
        ins.defs, ins.uses = [], uses + [r for o in ops for r in _regs(o)]
        return
    ins.defs = _regs(ops[0].replace("|", ","))
    ins.uses = uses + [r for o in ops[1:] for r in _regs(o)]


def parse(text: str, name: str | None = None) -> Kernel:
    """Parse the entry ``name`` (or the only/first ``.entry``) of a PTX module."""
    entries = [(m.group(1), m.start()) for m in _ENTRY.finditer(text)]
    if not entries:
        raise PtxParseError("no .entry in the PTX text (is this the PTX of a __global__ kernel?)")
    if name is None:
        ename, start = entries[0]
    else:
        match = [e for e in entries if e[0] == name]
        if not match:
            raise PtxParseError(f"no .entry {name!r}; the module has {', '.join(e[0] for e in entries)}")
        ename, start = match[0]
    close = text.index(")", start)
    params = _PARAM.findall(text[start:close])
    brace = text.index("{", close)
    depth, end = 0, None
    for pos in range(brace, len(text)):
        depth += text[pos] == "{"
        depth -= text[pos] == "}"
        if depth == 0:
            end = pos
            break
    if end is None:
        raise PtxParseError(f"unbalanced braces in .entry {ename}")
    first_line = text.count("\n", 0, brace) + 1
    body = text[brace + 1:end]
    items: list[str | Instruction] = []
    shared = 0
    for k, raw in enumerate(body.split("\n")):
        line = raw.split("//")[0].strip()
        lineno = first_line + k
        while line:
            m = re.match(r"^([$\w]+):\s*", line)
            if m:
                items.append(m.group(1))
                line = line[m.end():]
                continue
            if line.startswith(".") or line.startswith("{") or line.startswith("}"):
                sm = re.match(r"\.shared\s.*?\[(\d+)\]", line)
                if sm:
                    shared += int(sm.group(1))
                break
            stmt, _, rest = line.partition(";")
            if not _:
                raise PtxParseError(f"line {lineno}: instruction without ';': {raw.strip()!r}")
            stmt = stmt.strip()
            pred = None
            if stmt.startswith("@"):
                pred, _, stmt = stmt.partition(" ")
                stmt = stmt.strip()
            opcode, _, ops = stmt.partition(" ")
            if not re.match(r"^[a-z][\w.]*$", opcode):
                raise PtxParseError(f"line {lineno}: cannot read opcode in {raw.strip()!r}")
            ins = Instruction(opcode, _split_operands(ops.strip()), pred, lineno)
            _def_use(ins)
            items.append(ins)
            line = rest.strip()
    return Kernel(ename, items, shared, params)


# ---- instruction classes ------------------------------------------------------------------------
_FLOAT = {"f32", "f16", "bf16", "f16x2"}
_SFU = {"sin", "cos", "ex2", "lg2", "rcp", "rsqrt", "tanh"}


def classify(ins: Instruction) -> str:
    """Latency/resource class of an instruction, the rows of Alavani Table 3.2 plus memory classes."""
    b, parts = ins.base, ins.parts
    if b in ("ld", "st", "atom", "red", "ldu"):
        space = next((p for p in parts[1:] if p in ("global", "shared", "local", "param", "const")), "generic")
        if b in ("atom", "red"):
            return f"atom.{space}"
        if space == "param" or space == "const":
            return "ld.param"
        return f"{'ld' if b in ('ld', 'ldu') else 'st'}.{space}"
    if b in ("bra", "ret", "exit", "call"):
        return "bra"
    if b in ("bar", "barrier", "membar", "fence"):
        return "bar"
    f64 = "f64" in parts
    flt = bool(_FLOAT & set(parts)) or f64
    if b in _SFU:
        return "sfu"
    if b == "sqrt":
        return "sfu" if "approx" in parts else ("sqrt64" if f64 else "sqrt")
    if b == "div":
        if "approx" in parts or "full" in parts:
            return "sfu"
        return "div64" if f64 else ("divf" if flt else "divs")
    if b in ("rem",):
        return "divs"
    prefix = "d" if f64 else ""
    if b in ("fma",) or (b == "mad" and flt):
        return prefix + "fma"
    if b == "mad":
        return "mads"
    if b in ("add", "sub", "neg", "abs", "min", "max"):
        return prefix + ("addf" if flt else "adds")
    if b == "mul":
        return prefix + ("mulf" if flt else "mul")
    if b in ("and", "or", "xor", "not", "shl", "shr", "cnot", "popc", "clz", "bfe", "bfi", "brev", "prmt", "lop3"):
        return "and"
    if b in ("setp", "set", "selp", "slct"):
        return "setp"
    if b in ("cvt", "cvta"):
        return "cvt"
    if b in ("mov", "shfl"):
        return "mov"
    return "other"
