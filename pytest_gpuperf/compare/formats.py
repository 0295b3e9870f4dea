"""The comparison as terminal text, Markdown, JSON (``pytest-gpuperf-compare/1``) and one HTML page.

Every format opens with what changed in the environment (driver, runtime, toolkit, clocks, device),
then the tally of verdicts, then the rows grouped by area, worst first (verdict, then p-value, then size).
Text and Markdown list the rows that say something — ``worse``, ``better``, ``error``, ``incomparable``
measured on both sides — and count the ``same`` and ``informational`` rows and the metrics only one side
recorded (``all=True`` lists them too); JSON and HTML always carry every row (HTML folds the ``same`` and
``informational`` ones away).
The HTML page is self-contained: inline CSS, no scripts, no external assets, so a CI artifact opens
anywhere, offline.
"""

from __future__ import annotations

import html
import math
from typing import Any, Callable

from .. import COMPARE_SCHEMA, __version__
from .engine import VERDICTS, Report, Row

FORMATS = ("text", "markdown", "json", "html")


def _g(x: float | None, digits: int = 4) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    return f"{x:.{digits}g}"


def _ratio(r: Row) -> str:
    return "-" if r.ratio is None else f"{r.ratio:.4g}"


def _ci(r: Row) -> str:
    return "-" if r.ci is None else f"[{r.ci[0]:.4g}, {r.ci[1]:.4g}]"


def _p(r: Row) -> str:
    return "-" if r.p_value is None else f"{r.p_value:.2g}"


def _verdict(r: Row) -> str:
    return r.verdict + ("" if r.gated or r.verdict == "informational" else " (ungated)")


def _why(r: Row) -> str:
    return "; ".join(x for x in (r.reason, r.note) if x)


def _unit(r: Row) -> str:
    return r.compared_unit or r.unit


#: verdicts text and Markdown count instead of listing (``--all`` lists them), HTML folds away
QUIET = ("same", "informational")


def _listed(r: Row, all_rows: bool) -> bool:
    if all_rows:
        return True
    return r.verdict not in QUIET and "only" not in r.extra


def _side_line(label: str, side: Any) -> str:
    runs = f"{side.runs} run{'s' if side.runs != 1 else ''}"
    return f"{label} = {side.describe()}, {runs}: {', '.join(side.paths)}"


def _tally(report: Report) -> str:
    c = report.counts()
    return ", ".join(f"{c[v]} {v}" for v in VERDICTS if c[v])


def status(report: Report) -> str:
    failing = [r for r in report.rows if r.fails]
    if not failing:
        return "PASS: no significant regression beyond the threshold (exit 0)"
    return f"FAIL: {len(failing)} significant regression(s) or impossible value(s) (exit 1)"


def _omitted(rows: list[Row], all_rows: bool) -> str:
    if all_rows:
        return ""
    only_a = sum(r.extra.get("only") == "A" for r in rows)
    only_b = sum(r.extra.get("only") == "B" for r in rows)
    parts = [f"{n} {v}" for v in QUIET if (n := sum(r.verdict == v for r in rows))]
    if only_a:
        parts.append(f"{only_a} only in A")
    if only_b:
        parts.append(f"{only_b} only in B")
    return ("not listed: " + ", ".join(parts) + " (--all lists them)") if parts else ""


#: environment fields the text report prints even when unchanged (what an upgrade gate is about)
ALWAYS = frozenset({"device", "device key", "backend", "driver", "runtime", "toolkit"})

HEADER = ("metric", "A", "B", "unit", "B/A", "interval", "p", "verdict", "why")


def _cells(r: Row) -> tuple[str, ...]:
    return (r.name, _g(r.a, 6), _g(r.b, 6), _unit(r), _ratio(r), _ci(r), _p(r), _verdict(r), _why(r))


# --------------------------------------------------------------------------------------------- text
def text(report: Report, all_rows: bool = False) -> str:
    """Terminal text: environment first, then each area's table."""
    from ..report.terminal import format_table

    out = ["gpuperf compare", "  " + _side_line("A", report.a), "  " + _side_line("B", report.b)]
    kind = "one card (A/B of driver, toolkit or code)" if report.same_card else \
        "two cards: only figures normalised by the card itself are compared (--raw: all)"
    out.append(f"  {kind}")
    out.append("environment (* = differs; unchanged fields beyond the identity ones are left out):")
    for e in report.environment:
        if not e["changed"] and e["field"] not in ALWAYS:
            continue
        mark = "*" if e["changed"] else " "
        out.append(f"  {mark} {e['field']}: {e['a']}" + (f" -> {e['b']}" if e["changed"] else ""))
    out.append(f"verdicts: {_tally(report)}")
    out.append(status(report))
    for area, rows in report.areas():
        listed = [r for r in rows if _listed(r, all_rows)]
        out.append("")
        out.append(f"== {area} ({len(rows)} metrics) ==")
        if listed:
            table = [tuple(c if len(c) <= 160 else c[:157] + "..." for c in _cells(r)) for r in listed]
            out.extend("  " + line.rstrip() for line in format_table(table, HEADER))
        note = _omitted(rows, all_rows)
        if note:
            out.append("  " + note)
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------------- markdown
def _md(cell: str) -> str:
    return cell.replace("|", "\\|").replace("\n", " ")


def markdown_table(rows: list[Row], header: tuple[str, ...] = HEADER) -> list[str]:
    """A GitHub-flavoured Markdown table of rows (also the step summary's table)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    for r in rows:
        cells = list(_cells(r))
        cells[0] = f"`{cells[0]}`"
        cells[7] = f"**{cells[7]}**" if r.verdict in ("worse", "error") else cells[7]
        lines.append("| " + " | ".join(_md(c) for c in cells) + " |")
    return lines


def markdown(report: Report, all_rows: bool = False) -> str:
    """Markdown: a heading, the environment table, then one table per area."""
    out = ["# gpuperf compare", "", f"- {_side_line('A', report.a)}", f"- {_side_line('B', report.b)}",
           f"- **{status(report)}** — {_tally(report)}", "", "## Environment", "",
           "| field | A | B | |", "| --- | --- | --- | --- |"]
    for e in report.environment:
        out.append(f"| {_md(e['field'])} | {_md(str(e['a']))} | {_md(str(e['b']))} | "
                   f"{'**differs**' if e['changed'] else ''} |")
    for area, rows in report.areas():
        listed = [r for r in rows if _listed(r, all_rows)]
        out += ["", f"## {area} ({len(rows)} metrics)", ""]
        if listed:
            out += markdown_table(listed)
        note = _omitted(rows, all_rows)
        if note:
            out += ["", f"_{note}_"]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------- json
def _side_json(side: Any) -> dict[str, Any]:
    return {"paths": side.paths, "runs": side.runs, "device": side.device, "environment": side.environment}


def to_json(report: Report) -> dict[str, Any]:
    """The ``pytest-gpuperf-compare/1`` document (``schemas/compare-1.json``): every row, sorted."""
    from ..report.results import jsonable
    from ..timing.difference import ALPHA

    o = report.options
    rows = [r.to_json() for _, rs in report.areas() for r in rs]
    return jsonable({
        "schema": COMPARE_SCHEMA, "version": __version__,
        "a": _side_json(report.a), "b": _side_json(report.b), "same_card": report.same_card,
        "options": {"threshold": o.threshold, "raw": o.raw, "alpha": ALPHA if o.alpha is None else o.alpha,
                    "threshold_source": "--threshold" if o.threshold is not None else
                    "per metric class (pytest_gpuperf/baselines/classes.py), or the tolerance the test set itself"},
        "environment_difference": report.environment, "counts": report.counts(), "exit_code": report.exit_code,
        "rows": rows})


def json_text(report: Report, all_rows: bool = False) -> str:
    import json

    return json.dumps(to_json(report), indent=1, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------------------------- html
CSS = """
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1.5em;color:#1b1f24}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;margin:.4em 0}th,td{border:1px solid #d0d7de;padding:.2em .5em;text-align:left;
vertical-align:top}th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.worse td.v,tr.error td.v{background:#ffebe9;color:#a40e26;font-weight:600}
tr.better td.v{background:#dafbe1;color:#116329}tr.incomparable td.v{background:#fff8c5;color:#7d4e00}
tr.changed td{background:#fff8c5}.pass{color:#116329;font-weight:600}.fail{color:#a40e26;font-weight:600}
code{font-size:.92em}details{margin:.3em 0}
"""


def _h(x: Any) -> str:
    return html.escape(str(x))


def _html_rows(rows: list[Row]) -> list[str]:
    out = ["<table><tr>" + "".join(f"<th>{_h(c)}</th>" for c in HEADER) + "</tr>"]
    for r in rows:
        c = _cells(r)
        out.append(f'<tr class="{_h(r.verdict)}"><td><code>{_h(c[0])}</code></td>'
                   + "".join(f'<td class="num">{_h(x)}</td>' for x in c[1:3]) + f"<td>{_h(c[3])}</td>"
                   + "".join(f'<td class="num">{_h(x)}</td>' for x in c[4:7])
                   + f'<td class="v">{_h(c[7])}</td><td>{_h(c[8])}</td></tr>')
    out.append("</table>")
    return out


def html_page(report: Report, all_rows: bool = False) -> str:
    """One self-contained HTML page (inline CSS, no scripts or external assets)."""
    status_cls = "fail" if report.exit_code else "pass"
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>gpuperf compare: {_h(report.a.describe())} vs {_h(report.b.describe())}</title>",
           f"<style>{CSS}</style></head><body>", "<h1>gpuperf compare</h1>", "<ul>",
           f"<li>{_h(_side_line('A', report.a))}</li>", f"<li>{_h(_side_line('B', report.b))}</li>",
           f'<li class="{status_cls}">{_h(status(report))}</li>', f"<li>{_h(_tally(report))}</li>", "</ul>",
           "<h2>Environment</h2>", "<table><tr><th>field</th><th>A</th><th>B</th></tr>"]
    for e in report.environment:
        cls = ' class="changed"' if e["changed"] else ""
        out.append(f"<tr{cls}><td>{_h(e['field'])}</td><td>{_h(e['a'])}</td><td>{_h(e['b'])}</td></tr>")
    out.append("</table>")
    for area, rows in report.areas():
        shown = [r for r in rows if r.verdict not in QUIET]
        out.append(f'<h2 id="{_h(area)}">{_h(area)} ({len(rows)} metrics)</h2>')
        if shown:
            out += _html_rows(shown)
        for verdict in QUIET:
            folded = [r for r in rows if r.verdict == verdict]
            if folded:
                out.append(f"<details><summary>{len(folded)} {verdict}</summary>")
                out += _html_rows(folded)
                out.append("</details>")
    out.append(f"<p><small>pytest-gpuperf {_h(__version__)}, schema {_h(COMPARE_SCHEMA)}</small></p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


RENDERERS: dict[str, Callable[..., str]] = {"text": text, "markdown": markdown, "json": json_text, "html": html_page}


def render(report: Report, fmt: str, all_rows: bool = False) -> str:
    """``report`` in format ``fmt`` (one of :data:`FORMATS`)."""
    if fmt not in RENDERERS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return RENDERERS[fmt](report, all_rows=all_rows)
