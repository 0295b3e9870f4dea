"""Terminal summary: per device, the upgrade gate first (driver/runtime/toolkit changes against the
baseline's provenance), then one row per metric, regressions first."""

from __future__ import annotations

from typing import Any, Iterable

from ..baselines.verdicts import VERDICTS
from .results import Metric


def provenance_changes(current: dict[str, str], baseline_prov: dict[str, Any]) -> list[str]:
    """Human lines for each identity field that differs from what the baseline was measured with."""
    lines = []
    for field in ("driver", "runtime", "toolkit"):
        old, new = baseline_prov.get(field), current.get(field)
        if old and new and str(old) != str(new):
            lines.append(f"{field} changed: baseline measured with {old}, this run has {new}")
    return lines


def rows(metrics: Iterable[Metric]) -> list[tuple[str, str, str, str, str]]:
    order = {v: i for i, v in enumerate(VERDICTS)}
    out = []
    for m in sorted(metrics, key=lambda m: (order.get(m.verdict, 99), m.name)):
        base = "-" if not m.baseline else f"{m.baseline['value']:.5g} ±{m.baseline.get('band', 0):.2g}"
        delta = "-" if not m.baseline or m.baseline.get("delta_rel") is None else f"{m.baseline['delta_rel']:+.1%}"
        out.append((m.name, base, f"{m.value:.5g} {m.unit}", delta, m.verdict))
    return out


def format_table(table: list[tuple[str, ...]], header: tuple[str, ...]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *table]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*header), fmt.format(*("-" * w for w in widths))] + [fmt.format(*r) for r in table]


def counts(metrics: Iterable[Metric]) -> dict[str, int]:
    out: dict[str, int] = {}
    for m in metrics:
        out[m.verdict] = out.get(m.verdict, 0) + 1
    return out
