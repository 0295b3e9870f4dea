"""Hypothesis draws that depend on their seed alone.

Hypothesis (6.13x and later) mixes numeric constants it finds in the source of every *local* module
already imported — any file outside site-packages and the standard library — into what it generates.
For a fuzz figure that makes the drawn batches, and so the recorded maximum, depend on which suites and
tests ran before in the same process (a ``-k`` selection), on an editable install against a wheel, and on
unrelated edits anywhere in the user's repository. While :func:`seed_only` is active the generator sees
no local constants: a seed gives the same batches wherever and after whatever it runs. Hypothesis's own
fixed list of interesting floats (±0, subnormals, limits) is kept.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

try:  # the local-constants hook of the versions that have one; older versions draw from the seed alone
    from hypothesis.internal.conjecture import providers as _providers
except ImportError:  # pragma: no cover
    _providers = None  # type: ignore[assignment]


@contextmanager
def seed_only() -> Iterator[None]:
    """Generate without the constants of the local modules imported so far (restored on exit)."""
    hook = getattr(_providers, "_get_local_constants", None)
    empty = getattr(_providers, "Constants", None)
    if hook is None or empty is None:
        yield
        return
    cache = getattr(getattr(_providers, "CONSTANTS_CACHE", None), "cache", None)  # constants per draw kind

    def forget() -> None:
        if cache is not None:
            cache.clear()

    _providers._get_local_constants = lambda *a, **k: empty()  # type: ignore[union-attr]
    forget()
    try:
        yield
    finally:
        _providers._get_local_constants = hook  # type: ignore[union-attr]
        forget()
