"""What one of the tuner's kernels is: a :class:`Program` (name, typed template, error threshold) that
makes a :class:`Setup` for a device type — its host arrays, the buffers it writes, its launch and the
output the error is measured on. Apart from the kernels' registry so that the kernels can import it.
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
