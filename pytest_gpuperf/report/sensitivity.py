"""What a run's verdicts would have caught: its metrics counted by detection power
(:mod:`pytest_gpuperf.baselines.detection`), for the summary line and the results document."""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping

from ..baselines.detection import CLASSES, LOOSE, LOOSE_LABEL, UNRATED

#: the order classes are listed in: tightest first, then loose, then those without a relative figure
ORDER = tuple(label for _, label in CLASSES) + (LOOSE_LABEL, *UNRATED)


def detect_of(metric: Any) -> Mapping[str, Any] | None:
    """A metric's ``baseline["detect"]`` (a results metric as object or as JSON), or None."""
    base = metric.get("baseline") if isinstance(metric, Mapping) else getattr(metric, "baseline", None)
    detect = (base or {}).get("detect") if isinstance(base, Mapping) else None
    return detect if isinstance(detect, Mapping) else None


def tally(metrics: Iterable[Any]) -> dict[str, int]:
    """Metrics per detection class, in :data:`ORDER`; metrics judged without a baseline entry are left out."""
    counts = Counter(str(d.get("class")) for d in map(detect_of, metrics) if d is not None)
    return {label: counts[label] for label in ORDER if counts[label]}


def family(name: str) -> str:
    return ".".join(name.split(".")[:2])


def loosest_families(metrics: Iterable[Any], limit: int = 5) -> list[tuple[str, int]]:
    """The families with the most ``loose`` metrics, most first."""
    counts: Counter[str] = Counter()
    for m in metrics:
        d = detect_of(m)
        if d is not None and d.get("class") == LOOSE_LABEL:
            counts[family(m["name"] if isinstance(m, Mapping) else m.name)] += 1
    return counts.most_common(limit)


def line(spec: str, metrics: list[Any]) -> str | None:
    """``DETECTION POWER cuda:0: … 729 ≤2 %, …, 812 loose; loose (…), by family: tuning.mean ×42, …``, or None when
    nothing was gated."""
    counts = tally(metrics)
    if not counts:
        return None
    text = ", ".join(f"{n} {label}" for label, n in counts.items())
    loose = loosest_families(metrics)
    more = (f"; loose (would miss changes under {100 * LOOSE:.0f} %, verdict 'loose'), by family: "
            + ", ".join(f"{f} ×{n}" for f, n in loose)) if loose else ""
    return f"DETECTION POWER {spec}: smallest change each gate catches: {text}{more}"
