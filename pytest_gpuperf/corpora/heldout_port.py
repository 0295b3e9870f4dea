"""What a ported held-out kernel of the PTX model is (:mod:`.heldout_kernels` lists them): its text, what
the port changed, its launch shape and its problem at a configuration's parameters, and the check of one
launch against the problem's NumPy reference.

Each text is written once with the project's neutral macros (``KERNEL``, ``GLOBAL``, ``LOCAL_MEM``,
``BARRIER``…, :func:`~pytest_gpuperf.devices.dialect.portable`) plus :data:`HEADER`, so the CUDA text the
model reads is what a GPU runs, and the same text runs on PoCL, where the tests check it against the
reference. A port's ``shape(params)`` gives the launch (:class:`~.dwarfs.Shape`) without a device;
``problem(rng, shape)`` the host buffers, the argument list and the reference; ``restore`` names buffers a
launch updates in a way that changes the next launch's work, which a timed run restores before every
launch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from ..devices.dialect import portable, portable_fp64
from .launch_shape import Shape
from .heldout import HELD_OUT, HeldOut

#: What the ports add to the neutral macros: 2-D thread and block indices, ``__constant__`` tables, the
#: 24-bit multiply and a 64-bit integer, spelled per language (the dialect prelude has none of them)
HEADER = r"""
#ifdef __OPENCL_VERSION__
#define TID_X ((int)get_local_id(0))
#define TID_Y ((int)get_local_id(1))
#define BID_X ((int)get_group_id(0))
#define BID_Y ((int)get_group_id(1))
#define BDIM_X ((int)get_local_size(0))
#define BDIM_Y ((int)get_local_size(1))
#define GDIM_X ((int)get_num_groups(0))
#define GDIM_Y ((int)get_num_groups(1))
#define CONSTANT_TABLE __constant
#define CONSTANT_PTR(T) __constant T*
#define UMUL24(a, b) mul24((uint)(a), (uint)(b))
typedef long i64;
#else
#define TID_X ((int)threadIdx.x)
#define TID_Y ((int)threadIdx.y)
#define BID_X ((int)blockIdx.x)
#define BID_Y ((int)blockIdx.y)
#define BDIM_X ((int)blockDim.x)
#define BDIM_Y ((int)blockDim.y)
#define GDIM_X ((int)gridDim.x)
#define GDIM_Y ((int)gridDim.y)
#define CONSTANT_TABLE __constant__
#define CONSTANT_PTR(T) T*
#define UMUL24(a, b) __umul24((a), (b))
typedef long long i64;
#endif
"""


@dataclass(frozen=True)
class HostProblem:
    """One launch's data: the argument list (a ``str`` names a buffer), every buffer's initial contents, the
    reference (expected contents of the checked buffers after one launch, made on demand), the buffers a
    timed run restores before each launch, and how close a device's floats must be."""

    args: tuple[Any, ...]
    buffers: dict[str, np.ndarray]
    reference: Callable[[], dict[str, np.ndarray]]
    restore: tuple[str, ...] = ()
    rtol: float = 1e-5
    atol: float = 0.0

    def __post_init__(self) -> None:
        unknown = [a for a in self.args if isinstance(a, str) and a not in self.buffers]
        unknown += [r for r in self.restore if r not in self.buffers]
        if unknown:
            raise ValueError(f"the problem names buffers it does not have: {unknown}")

    @property
    def bytes(self) -> int:
        return sum(int(b.nbytes) for b in self.buffers.values())


@dataclass(frozen=True)
class Port:
    """One ported held-out kernel: its entry in :data:`HELD_OUT`, its text, what the port changed, its
    shape and problem at a configuration's parameters, and the parameters of its PoCL check."""

    kernel: str
    text: str
    differs: str
    shape: Callable[[Mapping[str, int]], Shape]
    problem: Callable[[np.random.Generator, Shape], HostProblem]
    tiny: Mapping[str, int]
    fp64: bool = False

    @property
    def held_out(self) -> HeldOut:
        return next(h for h in HELD_OUT if h.kernel == self.kernel)

    @property
    def seed(self) -> int:
        """A fixed seed per kernel: every run draws the same inputs."""
        return sum((i + 1) * ord(c) for i, c in enumerate(self.kernel)) % (2 ** 31)

    def source(self, backend: str, shape: Shape) -> str:
        """The text ``backend`` compiles for ``shape``: its defines, :data:`HEADER`, the kernel."""
        defines = "".join(f"#define {k} {v}\n" for k, v in sorted(shape.defines.items()))
        text = defines + HEADER + self.text
        return portable_fp64(text, backend) if self.fp64 else portable(text, backend)

    def build(self, params: Mapping[str, int]) -> tuple[Shape, HostProblem]:
        """The shape and the problem (seeded inputs) at ``params``."""
        shape = self.shape(params)
        return shape, self.problem(np.random.default_rng(self.seed), shape)


def layout(groups: tuple[int, ...], local: tuple[int, ...], trips: tuple[float, ...], size: Mapping[str, int],
            nbytes: int, defines: Mapping[str, int] | None = None) -> Shape:
    """The :class:`~.dwarfs.Shape` of a launch of ``groups`` blocks of ``local`` threads per dimension."""
    return Shape(int(np.prod(groups)), int(np.prod(local)), trips, dict(size), int(nbytes), dict(defines or {}),
                 (groups, local))


def uniform(rng: np.random.Generator, n: int, lo: float, hi: float) -> np.ndarray:
    """``n`` seeded float32 values in [lo, hi)."""
    return (rng.random(int(n), dtype=np.float32) * np.float32(hi - lo) + np.float32(lo)).astype(np.float32)


def _compare(name: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> str:
    want = np.asarray(want).reshape(-1)
    if got.shape != want.shape:
        return f"{name}: {got.size} values read, the reference has {want.size}"
    if got.dtype.kind == "f":
        bad = ~np.isclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)
    else:
        bad = got != want.astype(got.dtype)
    if not bad.any():
        return ""
    i = int(np.flatnonzero(bad)[0])
    return f"{name}: {int(bad.sum())} of {bad.size} values differ, first at {i}: got {got[i]!r}, expected {want[i]!r}"


def run_once(dev: Any, port: Port, shape: Shape, problem: HostProblem, kernel: Any | None = None) -> dict[str, np.ndarray]:
    """One launch of ``port`` on fresh buffers of ``problem``; every buffer read back (its dtype)."""
    kern = kernel if kernel is not None else dev.compile(port.source(dev.info.backend, shape), port.kernel)
    bufs = {n: dev.to_device(np.ascontiguousarray(a)) for n, a in problem.buffers.items()}
    dev.launch(kern, shape.global_size, shape.local_size, [bufs[a] if isinstance(a, str) else a for a in problem.args])
    return {n: dev.to_host(bufs[n], a.dtype, a.size) for n, a in problem.buffers.items()}


def mismatches(dev: Any, port: Port, shape: Shape, problem: HostProblem, kernel: Any | None = None) -> list[str]:
    """Every difference between one launch's results and the reference (empty: it computes the original's
    results), each naming the kernel, the buffer and the first differing value."""
    got = run_once(dev, port, shape, problem, kernel)
    want = problem.reference()
    if not want:
        raise ValueError(f"{port.kernel}: the reference checks no buffer")
    out = []
    for name, expected in want.items():
        if name not in got:
            raise ValueError(f"{port.kernel}: the reference names buffer {name!r}, which the problem does not have")
        issue = _compare(name, got[name], expected, problem.rtol, problem.atol)
        if issue:
            out.append(f"{port.kernel} at {dict(shape.size)}: {issue}")
    return out
