"""The held-out kernels of the PTX model's Hopper variant (:data:`.heldout.HELD_OUT`), ported: one kernel
function each from Rodinia (:mod:`.heldout_rodinia`), SHOC and the CUDA samples (:mod:`.heldout_samples`),
in the held-out list's order (what a port holds: :mod:`.heldout_port`).

The ports keep the original's arithmetic, memory spaces (``__constant__`` tables stay constant memory),
2-D blocks and grids (launched as 2-D NDRanges) and compile-time block sizes (a define per launch, as
Rodinia's ``RD_WG_SIZE``); what each changes is in its ``differs``. Two changes are common: a loop whose
count is a launch parameter is kept rolled (``#pragma unroll 1``, as the dwarf kernels do), so one source
loop is one PTX loop and its trip count is the thesis' user input; inputs are generated with a fixed seed
instead of read from the benchmarks' data files.
"""

from __future__ import annotations

from . import heldout_rodinia, heldout_samples
from .heldout import HELD_OUT
from .heldout_port import Port

_PORTED = {p.kernel: p for p in heldout_rodinia.PORTS + heldout_samples.PORTS}
PORTS: tuple[Port, ...] = tuple(_PORTED[h.kernel] for h in HELD_OUT)


def by_name(kernel: str) -> Port:
    """The port of held-out kernel ``kernel`` (KeyError naming the ports otherwise)."""
    for p in PORTS:
        if p.kernel == kernel:
            return p
    raise KeyError(f"no port of {kernel!r}; ported: {', '.join(p.kernel for p in PORTS)}")
