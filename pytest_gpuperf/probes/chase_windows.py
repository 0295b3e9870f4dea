"""A CPU device's gated pointer-chase figure: the median over the pairs of several independent windows.

On a CPU device the chase is event-timed (:func:`.memory.chase_events`): launches with only the short
section and only the long one alternate, and each pair's difference is one sample. The host's other
tenants only ever add time, to whichever launch they land in: a neighbour's time slice or its cache
traffic inside a short launch makes that pair's difference negative, and one window of three to five
pairs can then have a negative median — an impossible latency made by the neighbours, not by the code.
Longer sections do not help: a longer launch is preempted more often, by slices as long as the work added.

So a gated footprint pools every pair of :data:`WINDOWS` windows taken one after another (each with a
chain and warm-up of its own; the sweep's window is the first) and takes its median; while that median is
not positive it takes another :data:`WINDOWS` windows, at most :data:`REMEASURE` times, and pools them
too (nothing measured is dropped). A figure still not positive after that is a broken measurement, and it
is returned as it is, for the impossible-value check (:mod:`..baselines.validity`) to refuse.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

#: paired windows pooled per gated footprint on a CPU device (the sweep's own included)
WINDOWS = 5
#: further rounds of :data:`WINDOWS` windows while the pooled median is not positive
REMEASURE = 2
#: why a round is taken again (the figure's ``info["remeasured"]["why"]``)
WHY = "the pooled median of the long-minus-short pairs was not positive (neighbours' time in the short launches)"


@dataclass(frozen=True)
class Pooled:
    """The pairs of every window a footprint was measured over, how many windows, and how many further
    rounds its non-positive median took."""

    samples: list[float]
    windows: int
    rounds: int

    @property
    def median(self) -> float:
        return float(np.median(self.samples))

    def info(self) -> dict[str, Any]:
        """What the figure's ``info`` says of its windows (and of its re-measurement, where it took one)."""
        out: dict[str, Any] = {"windows": self.windows, "pairs": len(self.samples)}
        if self.rounds:
            out["remeasured"] = {"rounds": self.rounds, "why": WHY}
        return out


def pooled(window: Callable[[], Sequence[float]], first: Sequence[float], windows: int = WINDOWS,
           remeasure: int = REMEASURE) -> Pooled:
    """``first`` (the sweep's window) and ``windows − 1`` more from ``window`` (one call: one window of
    long-minus-short pairs, in cycles per load), pooled; while their median is not positive, another
    ``windows`` windows, at most ``remeasure`` rounds."""
    if not first:
        raise ValueError("the sweep's chase window holds no pairs: measure the footprint before pooling it")
    sets = [list(first)] + [list(window()) for _ in range(windows - 1)]
    rounds = 0
    while np.median(np.concatenate(sets)) <= 0 and rounds < remeasure:
        sets += [list(window()) for _ in range(windows)]
        rounds += 1
    return Pooled([float(x) for s in sets for x in s], len(sets), rounds)
