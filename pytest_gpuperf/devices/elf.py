"""Just enough ELF64 reading to check a cubin and pull a function's machine code out of it.

Used by the CUDA backend to undo CuPy's one-byte cut of NVRTC's cubin (``cuobjdump`` then says "does
not contain device code", while the driver, which loads program segments, still runs it), and by the
probes when ``cuobjdump`` still rejects the cubin the backend kept: we then check the cubin's integrity and, with a second NVRTC
compile, prove that the code we disassemble is byte-identical to the code that ran.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    name: str
    offset: int
    size: int


def header_problem(blob: bytes) -> str | None:
    """None when ``blob`` is a complete ELF64 file; otherwise what is wrong with it."""
    if len(blob) < 64 or blob[:4] != b"\x7fELF":
        return f"not an ELF file ({len(blob)} bytes, starts {blob[:8]!r})"
    if blob[4] != 2:
        return "not ELF64"
    shoff, = struct.unpack_from("<Q", blob, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", blob, 0x3A)
    end = shoff + shentsize * shnum
    if shnum == 0 or end > len(blob):
        return (f"section-header table ends at byte {end} but the file has {len(blob)} bytes "
                f"(shoff {shoff}, {shnum} × {shentsize}) — the cubin was truncated")
    phoff, = struct.unpack_from("<Q", blob, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", blob, 0x36)
    pend = phoff + phentsize * phnum
    if pend > len(blob):
        return (f"program-header table ends at byte {pend} but the file has {len(blob)} bytes — the cubin was "
                f"truncated by {pend - len(blob)} bytes (cuobjdump then reports 'does not contain device code')")
    return None


def expected_size(blob: bytes) -> int:
    """Size the ELF header promises: the end of its section- or program-header table, whichever is last."""
    phoff, shoff = struct.unpack_from("<QQ", blob, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", blob, 0x36)
    return max(phoff + phentsize * phnum, shoff + shentsize * shnum)


def repaired(blob: bytes, max_missing: int = 8) -> bytes | None:
    """``blob`` restored when only trailing zero padding is missing, else None.

    CuPy's ``nvrtc.getCUBIN`` returns ``cubin[:size-1]`` ("strip the trailing NULL", copied from its PTX
    getter), dropping the cubin's last byte. A cubin ends with its program-header table, whose last
    field is ``p_align`` (a small power of two), so the dropped byte is that field's high byte: 0.
    Re-appending zeros restores the file exactly; nothing the GPU executes is touched."""
    if len(blob) < 64 or blob[:4] != b"\x7fELF":
        return None
    missing = expected_size(blob) - len(blob)
    if not 0 < missing <= max_missing:
        return None
    fixed = blob + bytes(missing)
    p_align = struct.unpack_from("<Q", fixed, len(fixed) - 8)[0]
    return fixed if p_align and p_align & (p_align - 1) == 0 and p_align <= 1 << 16 else None


def sections(blob: bytes) -> list[Section]:
    """Sections of a complete ELF64 file (raises ValueError otherwise)."""
    problem = header_problem(blob)
    if problem:
        raise ValueError(problem)
    shoff, = struct.unpack_from("<Q", blob, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", blob, 0x3A)
    raw = []
    for i in range(shnum):
        base = shoff + i * shentsize
        name_off, _type = struct.unpack_from("<II", blob, base)
        offset, size = struct.unpack_from("<QQ", blob, base + 0x18)
        raw.append((name_off, offset, size))
    str_off, str_size = raw[shstrndx][1], raw[shstrndx][2]
    names = blob[str_off:str_off + str_size]
    out = []
    for name_off, offset, size in raw:
        end = names.find(b"\0", name_off)
        out.append(Section(names[name_off:end].decode("latin-1"), offset, size))
    return out


def function_code(blob: bytes, name: str) -> bytes:
    """Machine code of kernel ``name`` (its ``.text.<name>`` section)."""
    for s in sections(blob):
        if s.name == f".text.{name}":
            return blob[s.offset:s.offset + s.size]
    raise KeyError(f"no .text.{name} section in the cubin")
