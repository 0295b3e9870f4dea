"""A table over runs: one row per run (its file stem, commit and date), one column per metric, and the
median and range over the runs — how a figure moves between runs of unchanged code, each value named by
the run it is from.

Options: ``metrics=name,name,…`` (required); ``pct=1`` shows ratios as per cent; ``digits=N`` (default 3
significant digits, or N decimals).
"""

from __future__ import annotations

import statistics

from .registry import Inputs
from .runfile import EvidenceError


def _fmt(v: float | None, pct: bool, digits: str | None) -> str:
    if v is None:
        return "–"
    x = 100 * v if pct else v
    s = f"{x:.{int(digits)}f}" if digits is not None else f"{x:.3g}"
    return s + (" %" if pct else "")


def metric_runs(inp: Inputs) -> list[str]:
    """Chosen metrics of every run named, with the median and range over the runs."""
    names = [n for n in inp.option("metrics").split(",") if n]
    pct, digits = inp.option("pct", "0") == "1", inp.block.options.get("digits")
    runs = inp.runs("runs")
    missing = [n for n in names if all(r.get(n) is None for r in runs)]
    if missing:
        raise EvidenceError(f"{inp.block.where}: no named run records {', '.join(missing)}")
    out = ["| run | commit | date | " + " | ".join(f"`{n}`" for n in names) + " |", "|---" * (3 + len(names)) + "|"]
    for r in runs:
        out.append(f"| `{r.stem}` | {r.commit or '–'} | {r.date or '–'} | "
                   + " | ".join(_fmt(r.value(n), pct, digits) for n in names) + " |")
    if len(runs) > 1:
        cols = [[r.value(n) for r in runs if r.get(n) is not None] for n in names]
        out.append("| **median** | | | " + " | ".join(_fmt(statistics.median(c), pct, digits) for c in cols) + " |")
        out.append("| **range** | | | " + " | ".join(f"{_fmt(min(c), pct, digits)} – {_fmt(max(c), pct, digits)}"
                                                   for c in cols) + " |")
    return out


TABLES = {"metric-runs": metric_runs}
