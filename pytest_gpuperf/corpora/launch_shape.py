"""A kernel's launch without its data (:class:`Shape`): what the PTX model's dwarfs and its held-out corpus
kernels are costed by before a device runs them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping


@dataclass(frozen=True)
class Shape:
    """A launch without its data: blocks and threads per block (in all: the model's ``nB`` and ``nT_b``),
    the loops' trip counts (PTX order), the problem's sizes its inputs are made from, the bytes of its
    buffers, the compile-time defines of a text whose block size is a macro, and the per-dimension layout
    of a 2-D launch (none for the dwarfs). Computed without a device, so that a sweep's configurations can
    be listed, checked against the PTX and costed before a GPU runs them."""

    grid: int
    block: int
    trips: tuple[float, ...]
    size: Mapping[str, int]
    bytes: int
    defines: Mapping[str, int] = field(default_factory=dict)
    #: (blocks, threads per block) per dimension of a 2-D launch; None: one dimension, (grid,), (block,)
    layout: tuple[tuple[int, ...], tuple[int, ...]] | None = None

    @property
    def local_size(self) -> tuple[int, ...]:
        return (self.block,) if self.layout is None else tuple(self.layout[1])

    @property
    def global_size(self) -> tuple[int, ...]:
        """The NDRange in work-items, as ``Device.launch`` takes it."""
        if self.layout is None:
            return (self.grid * self.block,)
        return tuple(g * b for g, b in zip(*self.layout))
