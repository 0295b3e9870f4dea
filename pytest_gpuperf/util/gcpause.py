"""Pausing Python's cyclic garbage collector around a bulk read that builds a large, acyclic heap.

An import of a results folder parses hundreds of documents into hundreds of thousands of small dicts and
records it keeps: every few hundred allocations the collector starts, and its passes over the growing
heap of live records cost a third of the import, while none of it is cyclic garbage (what it frees,
reference counting frees). :func:`paused_gc` switches the collector off for such a loop and restores it
after, as it was: nested pauses and a caller that had switched it off itself are left as they were."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic collector off inside the block (reference counting still frees everything acyclic), back on
    after it only where it was on before."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
