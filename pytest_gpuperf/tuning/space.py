"""The search space: every legal work-group size (1-D) or shape (2-D) of a kernel on a device.

Dao (§3.5) limits the space to sizes that compile and are multiples of WARP_SIZE. For 2-D shapes
(x columns × y rows, row-major warps) the non-coalescing-factor rule assumes WARP_SIZE is a multiple
of n = x for x < WARP_SIZE, so x runs over powers of two; y then takes every value that keeps x·y a
multiple of the warp width. The problem need not be divisible by the shape: the NDRange is padded
(:func:`pytest_gpuperf.devices.ndrange`) and the kernels bounds-check.
"""

from __future__ import annotations

from dataclasses import dataclass

Local = tuple[int, ...]


@dataclass(frozen=True)
class Limits:
    """What bounds the space: device and kernel limits, plus a cap used to shrink spaces on CPU devices."""

    warp: int
    max_total: int  # min(device max work-group size, kernel max, cap)
    max_dims: tuple[int, ...]  # per-dimension limit (device max work-item sizes, kernel tile limit)
    pow2_only: bool = False

    def __post_init__(self) -> None:
        if self.warp <= 0 or self.max_total < self.warp:
            raise ValueError(f"work-group limits leave nothing to tune: warp={self.warp}, "
                             f"max_total={self.max_total}; the kernel or device allows fewer work-items "
                             "than one warp")


def _pow2_upto(n: int) -> list[int]:
    out, p = [], 1
    while p <= n:
        out.append(p)
        p <<= 1
    return out


def space_1d(lim: Limits) -> list[Local]:
    """Multiples of the warp width up to the limit (powers of two only when ``pow2_only``)."""
    top = min(lim.max_total, lim.max_dims[0])
    sizes = [s for s in range(lim.warp, top + 1, lim.warp)]
    if lim.pow2_only:
        sizes = [s for s in sizes if s & (s - 1) == 0]
    return [(s,) for s in sizes]


def space_2d(lim: Limits) -> list[Local]:
    """Shapes (x, y): x a power of two, x·y a multiple of the warp width and within every limit."""
    shapes: list[Local] = []
    for x in _pow2_upto(min(lim.max_dims[0], lim.max_total)):
        step = max(1, lim.warp // x) if x < lim.warp else 1
        ys = _pow2_upto(lim.max_dims[1]) if lim.pow2_only else range(step, lim.max_dims[1] + 1, step)
        for y in ys:
            total = x * y
            if total % lim.warp == 0 and total <= lim.max_total:
                shapes.append((x, y))
    return shapes


def enumerate_space(dims: int, lim: Limits) -> list[Local]:
    if dims == 1:
        return space_1d(lim)
    if dims == 2:
        return space_2d(lim)
    raise ValueError(f"only 1-D and 2-D kernels are tuned (got {dims} dimensions)")


def limits_for(device_info, dims: int, kernel_max: int = 0, max_dim: int = 0, pow2_only: bool = False,
               cap: int = 0) -> Limits:
    """Limits from a :class:`DeviceInfo` plus kernel constraints; ``cap`` shrinks the space (CPU CI)."""
    total = int(device_info.max_work_group_size)
    for extra in (kernel_max, cap):
        if extra:
            total = min(total, int(extra))
    dims_lim = [int(d) for d in device_info.work_item_limits[:max(dims, 2)]]
    if max_dim:
        dims_lim = [min(d, max_dim) for d in dims_lim]
    return Limits(int(device_info.warp_size or 1), total, tuple(dims_lim), pow2_only)
