"""The standard compute load of the power suite: ``CHAINS`` independent multiply-add chains of ``ITERS``
steps per work-item over ``THREADS`` work-items (compilers contract ``x * y + z`` into one FMA; the chains
keep the FMA pipes full). Its energy per flop and the clock a card sustains under it are gated figures,
so the kernel text and its launch are fixed here, once."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..devices.dialect import portable

ITERS = 4096
CHAINS = 8
THREADS = 1 << 20
LOCAL = 256  # work-items per group of every launch
PRECISIONS = {"fp32": ("float", np.float32), "fp64": ("double", np.float64)}


def source(dialect: Any, scalar: str) -> str:
    """The ``fma_chain(out, y, z)`` kernel in ``dialect``'s language for ``scalar`` ("float" or "double")."""
    xs = ", ".join(f"x{k} = (({scalar})i + {k}) * ({scalar})1e-7" for k in range(CHAINS))
    steps = " ".join(f"x{k} = x{k} * y + z;" for k in range(CHAINS))
    total = " + ".join(f"x{k}" for k in range(CHAINS))
    pre = dialect.fp64_prelude if scalar == "double" else ""
    return pre + portable(
        f"KERNEL void fma_chain(GLOBAL {scalar}* out, {scalar} y, {scalar} z) {{\n  int i = GID;\n"
        f"  {scalar} {xs};\n  {dialect.unroll_once}for (int j = 0; j < {ITERS}; ++j) {{ {steps} }}\n"
        f"  out[i] = {total};\n}}\n", dialect.name)


def flops() -> float:
    """Floating-point operations of one launch (an FMA counts two)."""
    return 2.0 * CHAINS * ITERS * THREADS


def planted_threads(plant: float) -> int:
    """Work-items one launch runs under the gate check's ``power`` plant (:mod:`pytest_gpuperf.gatecheck.plants`):
    (1 + ``plant``) × :data:`THREADS` (whole groups), while its energy stays divided by :func:`flops` — the
    load does more work than it is credited with, so joules per flop rise by ``plant``."""
    extra = round(THREADS * plant / LOCAL) * LOCAL if plant > 0 else 0
    return THREADS + extra


def launcher(device: Any, kernel: Any, precision: str, plant: float = 0.0) -> Any:
    """A function that enqueues one launch of the compiled ``fma_chain`` for ``precision`` ("fp32", "fp64"),
    on an output buffer of its own; ``plant``: :func:`planted_threads`."""
    _, dt = PRECISIONS[precision]
    threads = planted_threads(plant)
    args = [device.empty(threads * np.dtype(dt).itemsize), dt(0.999), dt(0.001)]
    return lambda: device.launch(kernel, (threads,), (LOCAL,), args)
