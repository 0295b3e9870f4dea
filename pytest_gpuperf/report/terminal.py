"""Terminal summary: per device, the upgrade gate first (driver/runtime/toolkit changes against the
baseline's provenance), then one row per metric, regressions first."""

from __future__ import annotations

import re
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


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def cell(value: Any) -> str:
    """A table cell from stored text (a commit, a driver, a file name): control characters shown escaped
    (``\\n``), so no stored text can start a line of its own — a forged ``::error::`` GitHub annotation —
    or move the cursor."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], str(value))


def format_table(table: list[tuple[str, ...]], header: tuple[str, ...]) -> list[str]:
    """Aligned columns of :func:`cell` text; no line starts with ``::`` (a GitHub workflow command)."""
    rows = [tuple(cell(c) for c in r) for r in [header, *table]]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*rows[0]), fmt.format(*("-" * w for w in widths))] + [fmt.format(*r) for r in rows[1:]]
    lines = [line.rstrip() for line in lines]  # a short last cell is not padded out to the column's width
    return [" " + line if line.startswith("::") else line for line in lines]


def counts(metrics: Iterable[Metric]) -> dict[str, int]:
    out: dict[str, int] = {}
    for m in metrics:
        out[m.verdict] = out.get(m.verdict, 0) + 1
    return out
