"""The tuner's kernels: each a typed template (:mod:`..template`) plus its inputs, its launches and the
output the error is measured on. One module per kernel; :data:`PROGRAMS` names them.

A :class:`Program` makes a :class:`Setup` for a device type (CPU devices get smaller problems): host
arrays (copied to the device once), the names of the buffers the program writes (reset from the pristine
copy before every run, untimed), a ``launch`` that enqueues the whole program and returns its events,
and ``result`` that turns the read-back buffers into the float64 output compared with the original's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..cost import Threshold

Reader = Callable[[str], np.ndarray]


@dataclass
class Setup:
    arrays: dict[str, np.ndarray]
    mutable: tuple[str, ...]
    launch: Callable[[Any, dict[str, Any], dict[str, Any]], list[Any]]  # (device, kernels, buffers) → events
    result: Callable[[Reader], np.ndarray]
    size: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Program:
    name: str
    summary: str
    template: str
    threshold: Threshold
    setup: Callable[[np.random.Generator, bool], Setup]  # (rng, is_cpu)


def _load() -> dict[str, Program]:
    from . import gaussian, lavamd, lu, nbody, reduction, stencil

    return {m.PROGRAM.name: m.PROGRAM for m in (gaussian, lu, lavamd, stencil, nbody, reduction)}


PROGRAMS: dict[str, Program] = _load()
