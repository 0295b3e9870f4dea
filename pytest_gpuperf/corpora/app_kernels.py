"""The application-kernel corpus of the sampled-kernel model (Dao, thesis ch. 2): 40 kernels ported from
Parboil, SHOC, Rodinia and PolyBench/GPU (``app_parboil``, ``app_shoc``, ``app_rodinia``, ``app_polybench``;
what an entry holds: ``app_kernel``). Dao's own corpus was 70 kernels of 39 OpenCL applications from
Parboil, SNU NPB, SHOC and the AMD and NVIDIA samples (§2.6.1); these are the suites he used or their
maintained successors, each kernel with its origin and what the port changed.

:data:`CORPUS_VERSION` names the corpus in every figure measured over it: a change of any kernel's text,
inputs or size is another corpus, and must bump it (the baselines made over the old one then read
``incomparable``, never ``regressed``).
"""

from __future__ import annotations

from . import app_parboil, app_polybench, app_rodinia, app_shoc
from .app_kernel import AppKernel

CORPUS_VERSION = "apps-4"

APP_KERNELS: tuple[AppKernel, ...] = app_parboil.KERNELS + app_shoc.KERNELS + app_rodinia.KERNELS + app_polybench.KERNELS


def by_name(name: str) -> AppKernel:
    """The corpus kernel called ``name``; KeyError naming the known ones otherwise."""
    for k in APP_KERNELS:
        if k.name == name:
            return k
    raise KeyError(f"no application kernel {name!r}; known: {', '.join(k.name for k in APP_KERNELS)}")
