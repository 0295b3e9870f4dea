"""A few items of a long list for one line of a report: the first ``n``, then an ellipsis if more."""

from __future__ import annotations

from typing import Iterable


def few(items: Iterable[str], n: int = 3) -> str:
    """``"a, b, c, …"``: the first ``n`` items, and an ellipsis where there are more."""
    items = list(items)
    return ", ".join(items[:n]) + (", …" if len(items) > n else "")
