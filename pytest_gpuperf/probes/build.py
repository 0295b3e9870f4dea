"""Compile many probe kernels with one compiler call, and disassemble them with one ``cuobjdump``.

A group of probes (say the 36 rounded intrinsics) goes into one translation unit: NVRTC / the OpenCL
compiler runs once and ``cuobjdump -sass`` once, instead of once per kernel — this is what keeps the
latency suite inside its budget (each ``cuobjdump`` start costs ~0.35 s). The other entry points are
taken from the already built module/program through the backend's own handle.
"""

from __future__ import annotations

from typing import Sequence

from ..devices.base import Device, Kernel
from ..devices.sass import Instr
from ..errors import ProbeVerificationError


def compile_many(device: Device, source: str, names: Sequence[str], options: Sequence[str] = ()) -> dict[str, Kernel]:
    """Build ``source`` once and return a :class:`Kernel` for every name in ``names``
    (:meth:`Device.compile_many`: one compile, one kernel cache)."""
    return device.compile_many(source, names, options)


def sass_functions(kernel: Kernel) -> dict[str, list[Instr]]:
    """Parsed SASS of the cubin ``kernel`` came from (:meth:`Device.sass_functions`)."""
    return kernel.device.sass_functions(kernel)


def function_sass(kernel: Kernel) -> list[Instr]:
    """SASS of one entry point; raises ProbeVerificationError when the cubin lacks it."""
    funcs = sass_functions(kernel)
    if kernel.name not in funcs:
        raise ProbeVerificationError(
            f"{kernel.name} is not in the cubin's SASS (functions: {', '.join(funcs)}); was it declared "
            "extern \"C\"?")
    return funcs[kernel.name]
