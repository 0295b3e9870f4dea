"""The digest of the kernel code a figure was measured with: what makes a baseline entry's figure comparable
beyond its options (its ``identity``).

A kernel's digest covers its source text and its build options, nothing else: not the file it was read from,
not a pointer, not the entry point's name (one program built once serves several), not when it was built.
A test's digest (:func:`combined`) is one over the sorted, de-duplicated digests of the kernels it compiled
before it recorded the figure, so the order those kernels were built in, and which tests ran before it,
change nothing. Short hex: a label to compare, not a security claim.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence

#: hex characters kept of a sha256 (64 bits: no two kernels of a suite collide)
LENGTH = 16


def kernel_digest(source: str, options: Sequence[str] = ()) -> str:
    """The digest of one kernel source and the options it is built with (their order kept: a later
    option may override an earlier one)."""
    text = json.dumps([source, [str(o) for o in options]], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:LENGTH]


def combined(digests: Iterable[str]) -> str | None:
    """One digest over a set of kernel digests (sorted, duplicates dropped); None for no kernels (a figure of
    the host alone carries none)."""
    found = sorted(set(digests))
    if not found:
        return None
    return hashlib.sha256(",".join(found).encode("ascii")).hexdigest()[:LENGTH]
