"""Where a kernel's global loads and stores fall, lane by lane, from its PTX run on host copies of its buffers
(no GPU): the 32-byte sectors each block touches, against the bytes its threads ask for.

Why: the PTX model charges every thread the bytes its loads and stores name, as if each warp's accesses were
contiguous and never reused. A transpose's strided store moves a whole sector per lane, and a stencil's
neighbouring loads hit sectors its warp already holds. Reading the addresses the PTX computes, with the
launch's own arguments and data, tells both apart without a counter.

How: every thread of a sampled block runs the entry's instructions as a scalar program (integer and address
arithmetic exact, floating point in NumPy's types), the block's threads in turn between barriers, so shared
memory holds what the block wrote; a global load reads the host buffer, so a data-dependent gather follows
the data. Each global access is noted with its address and width. A block's *request* sectors count, per
instruction execution of each warp, the sectors its lanes touch (coalescing); its *unique* sectors count
every sector the block loads or stores once (what the SM's L1 and the L2 let through when neighbours share).
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from . import ptx as ptxmod

#: bytes of one sector: the unit in which L1 and L2 move global memory
SECTOR = 32
WARP = 32
#: where the first buffer sits and how far apart buffers are: no address of one falls in another
BASE, STRIDE = 1 << 40, 1 << 36
#: where constant memory's symbols sit (their initialisers in the module; a table the host fills reads 0)
CONST_BASE = 1 << 60
#: instructions one thread may execute before the trace calls the kernel endless
MAX_STEPS = 2_000_000
_ELEM = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "b32": 4, "u32": 4, "s32": 4, "f32": 4,
         "b64": 8, "u64": 8, "s64": 8, "f64": 8}


class TraceError(ValueError):
    """The trace cannot follow the kernel (an instruction it does not know, an address outside every buffer)."""


@dataclass
class HostBuffer:
    """A buffer's bytes on the host at its place in the trace's address space."""

    base: int
    data: np.ndarray  # uint8

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes)


class HostMemory:
    """What a launch's inputs allocate (``to_device``, ``empty``), as host buffers at distinct addresses: the
    dwarf kernels' ``inputs`` and the ports' problems build their arguments through it."""

    def __init__(self) -> None:
        self.buffers: list[HostBuffer] = []

    def to_device(self, array: np.ndarray) -> HostBuffer:
        data = np.ascontiguousarray(array).view(np.uint8).reshape(-1).copy()
        buf = HostBuffer(BASE + STRIDE * len(self.buffers), data)
        self.buffers.append(buf)
        return buf

    def empty(self, nbytes: int) -> HostBuffer:
        return self.to_device(np.zeros(int(nbytes), np.uint8))

    def at(self, address: int, size: int) -> tuple[HostBuffer, int]:
        k = (address - BASE) // STRIDE
        if 0 <= k < len(self.buffers):
            buf = self.buffers[k]
            off = address - buf.base
            if 0 <= off and off + size <= buf.nbytes:
                return buf, off
        raise TraceError(f"address {address:#x} ({size} bytes) lies in no buffer of the launch")


@dataclass
class BlockTrace:
    """One block's global accesses: sectors per warp instruction (summed), unique sectors loaded and stored,
    and the bytes its threads asked for."""

    request_sectors: int = 0
    unique_sectors: int = 0
    requested_bytes: int = 0
    accesses: int = 0


_TYPES = {"u8": ("B", 1), "s8": ("b", 1), "u16": ("H", 2), "s16": ("h", 2), "b16": ("H", 2), "u32": ("I", 4),
          "s32": ("i", 4), "b32": ("I", 4), "u64": ("Q", 8), "s64": ("q", 8), "b64": ("Q", 8), "f32": ("f", 4),
          "f64": ("d", 8), "pred": ("?", 1)}


def _type(parts: Sequence[str]) -> str:
    for p in reversed(parts):
        if p in _TYPES:
            return p
    raise TraceError(f"no operand type in {'.'.join(parts)}")


def _wrap(value: int, t: str) -> int:
    bits = 8 * _TYPES[t][1]
    value &= (1 << bits) - 1
    if t[0] == "s" and value >> (bits - 1):
        value -= 1 << bits
    return value


def _as_float(value: Any, t: str) -> float:
    return float(np.float32(value)) if t == "f32" else float(value)


def _imm(text: str, t: str) -> Any:
    if re.fullmatch(r"0[fF][0-9a-fA-F]{8}", text):
        return struct.unpack(">f", bytes.fromhex(text[2:]))[0]
    if re.fullmatch(r"0[dD][0-9a-fA-F]{16}", text):
        return struct.unpack(">d", bytes.fromhex(text[2:]))[0]
    if t in ("f32", "f64"):
        return float(text)
    return int(text, 0)


@dataclass
class _Thread:
    tid: tuple[int, int, int]
    regs: dict[str, Any] = field(default_factory=dict)
    pc: int = 0
    done: bool = False
    counts: dict[int, int] = field(default_factory=dict)  # executions of each global access so far


class Tracer:
    """Runs one entry of a PTX module over host buffers, block by block (:meth:`block`)."""

    def __init__(self, text: str, name: str, memory: HostMemory, params: Sequence[Any],
                 grid: tuple[int, int, int], block: tuple[int, int, int]) -> None:
        self.kernel = ptxmod.parse(text, name)
        self.memory, self.grid, self.block_dim = memory, grid, block
        self.items = self.kernel.items
        self.labels = {it: k for k, it in enumerate(self.items) if isinstance(it, str)}
        names = self.kernel.params
        if len(names) != len(params):
            raise TraceError(f"{name}: {len(names)} parameters in the PTX, {len(params)} arguments given")
        self.params = {n: (p.base if isinstance(p, HostBuffer) else p) for n, p in zip(names, params)}
        self.shared_at: dict[str, int] = {}
        const_at: dict[str, int] = {}
        sizes = {"shared": 0, "const": 0}
        init: list[tuple[int, bytes]] = []
        for d in ptxmod.declarations(text):
            at = -(-sizes[d.space] // d.align) * d.align
            (self.shared_at if d.space == "shared" else const_at)[d.name] = at
            sizes[d.space] = at + d.count * _ELEM.get(d.elem, 1)
            if d.space == "const" and d.init:
                init.append((at, bytes(v & 0xFF for v in d.init)))
        self.shared_size = sizes["shared"]
        self.const = np.zeros(max(sizes["const"], 1), np.uint8)
        for at, data in init:
            self.const[at:at + len(data)] = np.frombuffer(data, np.uint8)
        self.const_at = {sym: CONST_BASE + at for sym, at in const_at.items()}

    # ---- operands ----------------------------------------------------------------------------------------
    def _special(self, th: _Thread, reg: str, block_id: tuple[int, int, int]) -> int:
        kind, _, axis = reg[1:].partition(".")
        k = "xyz".index(axis) if axis else 0
        return {"tid": th.tid, "ntid": self.block_dim, "ctaid": block_id, "nctaid": self.grid}[kind][k]

    def _value(self, th: _Thread, op: str, t: str, block_id: tuple[int, int, int]) -> Any:
        if op.startswith("%"):
            if re.match(r"%(tid|ntid|ctaid|nctaid)\.", op):
                return self._special(th, op, block_id)
            if op not in th.regs:
                raise TraceError(f"{op} read before it is written")
            return th.regs[op]
        if op.startswith("!%"):
            return not self._value(th, op[1:], t, block_id)
        if op in self.params:
            return self.params[op]
        if op in self.shared_at:
            return self.shared_at[op]
        if op in self.const_at:
            return self.const_at[op]
        return _imm(op, t)

    def _read(self, th: _Thread, op: str, t: str, block_id: tuple[int, int, int]) -> Any:
        """An operand as the instruction's type reads it: registers hold bits, so an integer is re-read signed
        or unsigned at the instruction's width."""
        v = self._value(th, op, t, block_id)
        if t in ("f32", "f64", "pred") or isinstance(v, bool):
            return v
        return _wrap(int(v), t)

    def _address(self, th: _Thread, op: str, block_id: tuple[int, int, int]) -> tuple[str, int]:
        """``[reg+off]``, ``[param]``, ``[shared+off]``: the symbol kind and the address (or offset)."""
        inner = op.strip()[1:-1].replace(" ", "")
        m = re.fullmatch(r"([%\w$.]+)(?:\+(-?\d+))?", inner)
        if not m:
            raise TraceError(f"cannot read the address {op}")
        base, off = m.group(1), int(m.group(2) or 0)
        if base in self.params:
            return "param", self.params[base]
        if base in self.shared_at:
            return "shared", self.shared_at[base] + off
        if base in self.const_at:
            return "const", self.const_at[base] + off
        return "reg", int(self._value(th, base, "u64", block_id)) + off

    # ---- one block -----------------------------------------------------------------------------------------
    def block(self, block_id: tuple[int, int, int]) -> BlockTrace:
        bx, by, bz = self.block_dim
        threads = [_Thread((x, y, z)) for z in range(bz) for y in range(by) for x in range(bx)]
        shared = np.zeros(max(self.shared_size, 1), np.uint8)
        log: list[tuple[int, int, int, int, int, bool]] = []  # (warp, instr, count, address, size, store)
        steps = 0
        while not all(t.done for t in threads):
            for k, th in enumerate(threads):  # each runs to its next barrier (or its end)
                while not th.done:
                    steps += 1
                    if steps > MAX_STEPS * len(threads):
                        raise TraceError(f"{self.kernel.name}: over {MAX_STEPS} instructions a thread")
                    if self._step(th, k // WARP, block_id, shared, log):
                        break  # at a barrier
        return _tally(log)

    def _step(self, th: _Thread, warp: int, block_id: tuple[int, int, int], shared: np.ndarray,
              log: list[tuple[int, int, int, int, int, bool]]) -> bool:
        """One instruction of ``th``; True when it stopped at a barrier."""
        if th.pc >= len(self.items):
            th.done = True
            return False
        it = self.items[th.pc]
        th.pc += 1
        if isinstance(it, str):
            return False
        if it.pred is not None:
            p = it.pred[1:]
            want = not p.startswith("!")
            if bool(th.regs.get(p.lstrip("!"), False)) != want:
                return False
        b, parts, ops = it.base, it.parts, it.operands
        if b in ("ret", "exit"):
            th.done = True
            return False
        if b == "bra":
            th.pc = self.labels[ops[-1]]
            return False
        if b in ("bar", "barrier"):
            return True
        if b in ("membar", "fence"):
            return False
        if b in ("ld", "st"):
            self._memory(th, it, warp, block_id, shared, log)
            return False
        t = _type(parts)
        val = lambda k: self._read(th, ops[k], t, block_id)  # noqa: E731
        th.regs[ops[0]] = self._alu(b, parts, t, ops, val, th, block_id)
        return False

    def _alu(self, b: str, parts: Sequence[str], t: str, ops: Sequence[str], val: Any, th: _Thread,
             block_id: tuple[int, int, int]) -> Any:
        flt = t in ("f32", "f64")
        if b == "mov":
            v = val(1)
            return bool(v) if t == "pred" else (_as_float(v, t) if flt else _wrap(int(v), t))
        if b == "cvta":
            return int(val(1))
        if b == "cvt":
            dst, src = [p for p in parts if p in _TYPES][:2]
            v = self._read(th, ops[1], src, block_id)
            if dst in ("f32", "f64"):
                return _as_float(v, dst)
            if src in ("f32", "f64"):
                return _wrap(int(math.trunc(v)) if math.isfinite(v) else 0, dst)
            return _wrap(int(v), dst)
        if b == "setp":
            cmp = parts[1]
            x, y = val(1), val(2)
            r = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y,
                 "lo": x < y, "ls": x <= y, "hi": x > y, "hs": x >= y}[cmp]
            return bool(r)
        if b == "selp":
            return val(1) if th.regs.get(ops[3].lstrip("!"), False) != ops[3].startswith("!") else val(2)
        if t == "pred":
            x = bool(val(1))
            if b == "not":
                return not x
            y = bool(val(2))
            return {"and": x and y, "or": x or y, "xor": x != y}[b]
        if flt:
            x = val(1)
            f = (np.float32 if t == "f32" else np.float64)
            if b in ("add", "sub", "mul", "div", "min", "max"):
                y = val(2)
                with np.errstate(all="ignore"):
                    r = {"add": f(x) + f(y), "sub": f(x) - f(y), "mul": f(x) * f(y),
                         "div": f(x) / f(y) if y != 0 else f(math.inf), "min": min(x, y), "max": max(x, y)}[b]
                return float(f(r))
            if b in ("fma", "mad"):
                with np.errstate(all="ignore"):
                    return float(f(f(x) * f(val(2)) + f(val(3))))
            with np.errstate(all="ignore"):
                r = {"neg": -x, "abs": abs(x), "sqrt": math.sqrt(x) if x >= 0 else math.nan,
                     "rcp": 1.0 / x if x != 0 else math.inf, "rsqrt": 1.0 / math.sqrt(x) if x > 0 else math.inf,
                     "ex2": 2.0 ** min(x, 1000.0), "lg2": math.log2(x) if x > 0 else -math.inf,
                     "sin": math.sin(x), "cos": math.cos(x)}.get(b)
            if r is None:
                raise TraceError(f"the trace does not know {'.'.join(parts)}")
            return float(f(r))
        x = int(val(1))
        if b in ("not", "neg"):
            return _wrap(~x if b == "not" else -x, t)
        y = int(val(2))
        if b == "mul" or b == "mad":
            src = t
            if "wide" in parts:
                t = {"s32": "s64", "u32": "u64", "s16": "s32", "u16": "u32"}[src]
            prod = _wrap(x, src) * _wrap(y, src)
            if "hi" in parts:
                prod >>= 8 * _TYPES[src][1]
            return _wrap(prod + (int(val(3)) if b == "mad" else 0), t)
        ops2 = {"add": lambda: x + y, "sub": lambda: x - y, "and": lambda: x & y, "or": lambda: x | y,
                "xor": lambda: x ^ y, "shl": lambda: x << y, "min": lambda: min(x, y), "max": lambda: max(x, y),
                "shr": lambda: (x >> y) if t[0] == "s" else (_wrap(x, t.replace("s", "u")) >> y),
                "div": lambda: _tdiv(x, y), "rem": lambda: x - y * _tdiv(x, y) if y else 0}
        if b == "bfi":
            pos, ln = int(val(3)), int(val(4))
            mask = ((1 << ln) - 1) << pos
            return _wrap((y & ~mask) | ((x << pos) & mask), t)
        if b not in ops2:
            raise TraceError(f"the trace does not know {'.'.join(parts)}")
        return _wrap(ops2[b](), t)

    def _memory(self, th: _Thread, it: ptxmod.Instruction, warp: int, block_id: tuple[int, int, int],
                shared: np.ndarray, log: list[tuple[int, int, int, int, int, bool]]) -> None:
        parts, ops = it.parts, it.operands
        store = it.base == "st"
        space = next((p for p in parts[1:] if p in ("global", "shared", "param", "const", "local")), "generic")
        t = _type(parts)
        vec = next((int(p[1:]) for p in parts if p in ("v2", "v4")), 1)
        width = _TYPES[t][1]
        regs = [r.strip() for r in (ops[1] if store else ops[0]).strip("{}").split(",")]
        kind, addr = self._address(th, ops[0] if store else ops[1], block_id)
        if space == "param":
            th.regs[regs[0]] = addr if kind == "param" else 0
            return
        fmt = "<" + _TYPES[t][0]
        if space == "const":
            for k, r in enumerate(regs):
                off = addr - CONST_BASE + k * width
                raw = self.const[off:off + width].tobytes() if 0 <= off <= len(self.const) - width else bytes(width)
                th.regs[r] = _unpack(struct.unpack(fmt, raw)[0], t)
            return
        if space == "shared":
            for k, r in enumerate(regs):
                off = addr + k * width
                if store:
                    v = self._value(th, r, t, block_id)
                    shared[off:off + width] = np.frombuffer(struct.pack(fmt, _pack(v, t)), np.uint8)
                else:
                    th.regs[r] = _unpack(struct.unpack(fmt, shared[off:off + width].tobytes())[0], t)
            return
        if space not in ("global", "generic"):
            raise TraceError(f"the trace does not know {'.'.join(parts)}")
        idx = th.pc - 1
        n = th.counts.get(idx, 0)
        th.counts[idx] = n + 1
        log.append((warp, idx, n, addr, width * vec, store))
        buf, off = self.memory.at(addr, width * vec)
        for k, r in enumerate(regs):
            o = off + k * width
            if store:
                v = self._value(th, r, t, block_id)
                buf.data[o:o + width] = np.frombuffer(struct.pack(fmt, _pack(v, t)), np.uint8)
            else:
                th.regs[r] = _unpack(struct.unpack(fmt, buf.data[o:o + width].tobytes())[0], t)


def _tdiv(x: int, y: int) -> int:
    """C's integer division (toward zero); 0 for a zero divisor, as no kernel here divides by one."""
    if y == 0:
        return 0
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def _pack(v: Any, t: str) -> Any:
    if t in ("f32", "f64"):
        return float(v)
    return _wrap(int(v), t.replace("b", "u"))


def _unpack(v: Any, t: str) -> Any:
    return float(v) if t in ("f32", "f64") else int(v)


def _tally(log: Iterable[tuple[int, int, int, int, int, bool]]) -> BlockTrace:
    """Sectors per warp instruction execution (summed), and every sector the block touched once."""
    per: dict[tuple[int, int, int], set[int]] = {}
    unique: set[tuple[int, bool]] = set()
    out = BlockTrace()
    for warp, idx, n, addr, size, store in log:
        sectors = range(addr // SECTOR, (addr + size - 1) // SECTOR + 1)
        per.setdefault((warp, idx, n), set()).update(sectors)
        unique.update((s, store) for s in sectors)
        out.requested_bytes += size
        out.accesses += 1
    out.request_sectors = sum(len(s) for s in per.values())
    out.unique_sectors = len(unique)
    return out


def sample_blocks(grid: tuple[int, int, int], count: int = 2) -> list[tuple[int, int, int]]:
    """Blocks the trace runs: the first, and evenly spread others (the last one's edge included)."""
    total = grid[0] * grid[1] * grid[2]
    picks = sorted({round(k * (total - 1) / max(count - 1, 1)) for k in range(count)})
    return [(p % grid[0], (p // grid[0]) % grid[1], p // (grid[0] * grid[1])) for p in picks]


def launch_sectors(tracer: Tracer, blocks: Sequence[tuple[int, int, int]]) -> Mapping[str, float]:
    """Per block of the launch, averaged over ``blocks``: request sectors, unique sectors, requested bytes."""
    traces = [tracer.block(b) for b in blocks]
    return {"request_sectors": float(np.mean([t.request_sectors for t in traces])),
            "unique_sectors": float(np.mean([t.unique_sectors for t in traces])),
            "requested_bytes": float(np.mean([t.requested_bytes for t in traces])),
            "blocks_traced": float(len(traces))}


def study_tracer(kernel: Any, config: Any, ptx_text: str) -> tuple[Tracer, tuple[int, int, int]]:
    """A tracer of one launch of the PTX study (:mod:`.ptx_sweep`): the kernel's inputs as the study makes them
    (a dwarf kernel's ``inputs``, a port's seeded problem), on the host; and the launch's grid."""
    shape = kernel.shape(config)
    mem = HostMemory()
    if kernel.dwarf_kernel is not None:
        args = list(kernel.dwarf_kernel.inputs(mem, shape))
    else:
        problem = kernel.port.problem(np.random.default_rng(kernel.port.seed), shape)
        bufs: dict[str, HostBuffer] = {}
        args = [bufs.setdefault(a, mem.to_device(problem.buffers[a])) if isinstance(a, str) else a
                for a in problem.args]
    args = [a if isinstance(a, HostBuffer) else float(a) if isinstance(a, (float, np.floating)) else int(a) for a in args]
    if shape.layout is None:
        grid, block = (shape.grid, 1, 1), (shape.block, 1, 1)
    else:
        g, b = shape.layout
        grid, block = (tuple([*g, 1, 1][:3]), tuple([*b, 1, 1][:3]))  # type: ignore[assignment]
    return Tracer(ptx_text, kernel.name, mem, args, grid, block), grid  # type: ignore[arg-type]


def traced_bytes(kernel: Any, config: Any, ptx_text: str, blocks: int = 2) -> dict[str, float]:
    """The launch's global traffic as the trace reads it: the bytes its threads ask for, the bytes of the
    sectors each warp instruction touches, and the bytes of the sectors each block touches once, each scaled
    from ``blocks`` sampled blocks to the whole grid."""
    tracer, grid = study_tracer(kernel, config, ptx_text)
    per = launch_sectors(tracer, sample_blocks(grid, blocks))
    n = grid[0] * grid[1] * grid[2]
    return {"requested_bytes": per["requested_bytes"] * n, "request_sector_bytes": SECTOR * per["request_sectors"] * n,
            "unique_sector_bytes": SECTOR * per["unique_sectors"] * n, "blocks_traced": per["blocks_traced"]}
