"""Compile many probe kernels with one compiler call, and disassemble them with one ``cuobjdump``.

A group of probes (say the 36 rounded intrinsics) goes into one translation unit: NVRTC / the OpenCL
compiler runs once and ``cuobjdump -sass`` once, instead of once per kernel — this is what keeps the
latency suite inside its budget (each ``cuobjdump`` start costs ~0.35 s). The other entry points are
taken from the already built module/program through the backend's own handle.
"""

from __future__ import annotations

from typing import Sequence

from ..devices.base import Device, Kernel
from ..devices import elf
from . import recompile, sass


def compile_many(device: Device, source: str, names: Sequence[str], options: Sequence[str] = ()) -> dict[str, Kernel]:
    """Build ``source`` once and return a :class:`Kernel` for every name in ``names``
    (:meth:`Device.compile_many`: one compile, one kernel cache)."""
    return device.compile_many(source, names, options)


def sass_functions(kernel: Kernel) -> dict[str, list[sass.Instr]]:
    """Parsed SASS of the cubin ``kernel`` came from (cached on the shared program dict).

    If cuobjdump rejects that cubin, the source is compiled again through the same libnvrtc and the
    fresh cubin is disassembled — accepted only when its kernels' machine code is byte-identical to
    the loaded cubin's (:mod:`.recompile`)."""
    program = kernel.program
    if "sass_parsed" not in program:
        cubin = program["cubin"]  # already complete: CudaDevice.nvrtc restores the byte CuPy's getCUBIN drops
        try:
            text = sass.disassemble(cubin)
            program["sass_origin"] = "cubin that ran"
        except sass.ProbeVerificationError as first:
            opts = kernel.device.nvrtc_options(kernel.options, "cubin")
            fresh, lib = recompile.compile_cubin(kernel.source, opts)
            try:
                text = sass.disassemble(fresh)
            except sass.ProbeVerificationError as second:
                raise sass.ProbeVerificationError(
                    f"{first}; the loaded cubin: {len(cubin)} bytes, {elf.header_problem(cubin) or 'complete ELF'}; "
                    f"a fresh NVRTC cubin ({lib}) failed too: {second}") from second
            parsed = sass.parse(text)
            sizes = recompile.check_identical(cubin, fresh, list(parsed))
            program["sass_origin"] = (f"recompiled with {lib}; code identical to the cubin that ran "
                                      f"({sum(sizes.values())} bytes); cuobjdump on the loaded cubin: {first}")[:600]
        else:
            parsed = sass.parse(text)
        program["sass_text"] = text
        program["sass_parsed"] = parsed
    return program["sass_parsed"]


def function_sass(kernel: Kernel) -> list[sass.Instr]:
    """SASS of one entry point; raises ProbeVerificationError when the cubin lacks it."""
    funcs = sass_functions(kernel)
    if kernel.name not in funcs:
        raise sass.ProbeVerificationError(
            f"{kernel.name} is not in the cubin's SASS (functions: {', '.join(funcs)}); was it declared "
            "extern \"C\"?")
    return funcs[kernel.name]
