"""The identity of a figure computed over a set of kernels: the set itself.

A mean over the tuning kernels, a model's mean error over its corpus, a dwarf's MAPE or a classifier's
accuracy over its classes is another figure when the set changes — a ``-k`` selection, a kernel skipped
by a time budget, a corpus that grew. Carrying the set in the metric's ``identity`` makes a baseline made
over another set read ``incomparable`` (and say which names differ) instead of ``regressed`` or
``improved``, while the figure is still recorded for the subset that ran. The suites of several concerns
(tuning, model error, kernel classes) use this one helper so that a full run's identity is spelled the
same way everywhere, and the reviewed baselines' aggregate entries carry exactly that spelling.
"""

from __future__ import annotations

from collections.abc import Iterable

#: the identity key of the kernels a figure was computed over
KERNELS = "kernels"


def over(names: Iterable[str], key: str = KERNELS) -> dict[str, str]:
    """``{key: "a,b,c"}``: the names sorted and de-duplicated, comma-joined.

    Sorted because the order the tests ran in does not change a mean, so it must not change the identity;
    the plain list (not a digest) so that an ``incomparable`` verdict shows which names are missing.
    An empty set or a name holding a comma has no faithful spelling and raises ``ValueError``."""
    found = sorted(set(names))
    if not found:
        raise ValueError(f"an aggregate over no {key} has no identity: record it only when something ran")
    bad = [n for n in found if not n or "," in n]
    if bad:
        raise ValueError(f"{key} names must be non-empty and hold no comma: {bad!r}")
    return {key: ",".join(found)}
