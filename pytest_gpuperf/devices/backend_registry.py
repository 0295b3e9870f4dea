"""The backends this package drives, one :class:`Backend` record each, registered by the backend's module.

Everything outside ``devices/`` that needs a fact about a backend — how to find and open its devices, the
kernel language it compiles, what its tools and timers offer — reads it here (or through ``DeviceInfo``,
``Device`` and ``DeviceInfo.dialect``, which read it here) instead of keeping a table keyed by the
backend's name. A backend module (``cuda.py``, ``opencl.py``) calls :func:`register` when it is imported;
importing one stays cheap because it loads its driver library (CuPy, PyOpenCL) only when it lists or opens
a device, so a missing library reads as that backend's "unavailable" reason, never as an import error.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from types import ModuleType
from dataclasses import dataclass
from typing import Any, Callable, ContextManager

from .dialect import Dialect

#: the modules of this package that register a backend, in the order ``--gpuperf-device=0`` prefers their
#: devices (a CUDA GPU before the same GPU through OpenCL)
MODULES = ("cuda", "opencl")


@dataclass(frozen=True)
class Backend:
    """One backend: how to reach its devices and what is true of every device it drives."""

    #: the ``--gpuperf-device`` prefix, ``DeviceInfo.backend`` and the baseline file's section name
    name: str
    #: how people write its name (tables of the docs)
    label: str
    #: the kernel language its compiler takes
    dialect: Dialect
    #: every device of this backend on the machine (``DeviceInfo``s); raises ``BackendUnavailableError`` with
    #: the reason (library missing, no driver) where there is none to ask
    list_devices: Callable[[], list[Any]]
    #: the ``Device`` at one of :attr:`list_devices`'s indices, with its context and queue/stream (typed
    #: loosely: ``base``, which defines both, reads this module)
    open: Callable[[int], Any]
    #: resolution of its event timer where the driver does not report one (seconds)
    timer_resolution_s: float
    #: whether a compiled kernel is a cubin ``cuobjdump`` can disassemble to SASS
    has_sass: bool = False
    #: whether Nsight Compute can profile its kernels
    has_ncu: bool = False
    #: whether every device it drives is a GPU (so a baseline section of it proves the file a GPU's)
    gpus_only: bool = False
    #: whether the last-level cache size it reports is the real one
    l2_bytes_reliable: bool = False
    #: caps on a work-group's extent per dimension beyond what the device reports (CUDA's maxThreadsDim)
    work_item_caps: tuple[int, ...] = ()
    #: what builds of this backend run inside so their compiler's output stays in the build log instead of
    #: reaching the user as warnings (also builds made by a library, Kernel Tuner's); nothing to do by default
    build_output_kept: Callable[[], ContextManager[None]] = contextlib.nullcontext
    #: what a library's runs on this backend (Kernel Tuner's) run inside so a defect of the driver binding
    #: that library reads does not fail them; nothing to mend by default
    library_calls_mended: Callable[[], ContextManager[None]] = contextlib.nullcontext


_REGISTERED: dict[str, Backend] = {}
#: the module object that registered each backend: a module imported anew may register its backend again
_FROM: dict[str, ModuleType | None] = {}


def register(backend: Backend) -> Backend:
    """Add ``backend`` (called once by its module at import); a second backend of one name is an error, unless
    the module that registered the first was imported anew (pytest's in-process runs restore ``sys.modules``,
    so a backend module may run again while this registry keeps the old record)."""
    caller = sys._getframe(1).f_globals.get("__name__", "")
    known = _REGISTERED.get(backend.name)
    if known is not None and known is not backend and _FROM.get(backend.name) is sys.modules.get(caller):
        raise ValueError(f"backend {backend.name!r} is registered twice")
    _FROM[backend.name] = sys.modules.get(caller)
    if backend.name != backend.dialect.name:
        raise ValueError(f"backend {backend.name!r} names dialect {backend.dialect.name!r}: they must be one name")
    _REGISTERED[backend.name] = backend
    return backend


def backends() -> tuple[Backend, ...]:
    """Every backend, in :data:`MODULES` order (importing their modules registers them)."""
    for module in MODULES:
        importlib.import_module(f"{__package__}.{module}")
    return tuple(_REGISTERED[m] for m in MODULES)


def names() -> tuple[str, ...]:
    """The backends' names, in :data:`MODULES` order."""
    return MODULES


def backend(name: str) -> Backend:
    """The backend called ``name``; ValueError naming the known ones otherwise."""
    if name not in MODULES:
        raise ValueError(f"unknown backend {name!r}: expected one of {', '.join(map(repr, MODULES))}")
    return {b.name: b for b in backends()}[name]
