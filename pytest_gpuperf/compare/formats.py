"""The comparison as terminal text, Markdown, JSON (``pytest-gpuperf-compare/1``), CSV and one HTML page.

Every format leads with the news: the verdict (PASS/FAIL with the one count of failing rows — gated
``worse`` rows and impossible values, :attr:`.engine.Report.failing` — that the exit status, the
annotations and the tally all state), then the regressions themselves, then the rest of what changed by
area (better, worse but not gated, incomparable), and last the environment: the fields that differ, the
unchanged ones folded away. Before the environment, each test's duration on both sides (A, B, Δ; the
costliest first): the suite's own cost, shown and never judged (JSON ``durations``, CSV rows of area
``durations``). Each row shows B/A and the change in percent beside it. A ``worse`` row that
is not gated (a figure gated only if stable, a throttled or shared measurement) is counted as such and
never drawn as a failure.

Text and Markdown list the rows that say something and count the ``same`` and ``informational`` rows and
the metrics only one side recorded (``all=True`` lists them too); JSON and CSV carry every row; the HTML
page folds the quiet rows away and draws, for every significant row, both sides' samples as a strip
plot (uPlot, inlined: :mod:`pytest_gpuperf.report.assets`), so the page works from a file, offline.
"""

from __future__ import annotations

import csv
import html
import io
import math
from typing import Any, Callable

import numpy as np

from ..verdictwords import Compare
from .. import COMPARE_SCHEMA, __version__
from ..baselines.noise import MIN_REPEATS
from .engine import VERDICTS, Duration, Report, Row

FORMATS = ("text", "markdown", "json", "html", "csv")
HEADER = ("metric", "A", "B", "unit", "B/A", "Δ %", "interval", "p", "verdict", "why")
#: verdicts text and Markdown count instead of listing (``--all`` lists them), HTML folds away
QUIET = (Compare.SAME, Compare.INFORMATIONAL)
#: samples per side a strip plot draws at most (more are summarised by evenly spaced quantiles)
PLOT_SAMPLES = 300
#: the tests' durations (the suite's own cost, never judged): the columns, and how many of the costliest
#: tests text and Markdown list (``all=True``: every one; HTML folds them away; JSON and CSV carry them all)
DURATION_HEADER = ("test", "A s", "B s", "Δ s", "Δ %")
DURATIONS_LISTED = 15


def _g(x: float | None, digits: int = 4) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    return f"{x:.{digits}g}"


def _ratio(r: Row) -> str:
    return "-" if r.ratio is None else f"{r.ratio:.4g}"


def _delta(r: Row) -> str:
    """B against A in percent; ``-`` where A is 0 (no relative change from 0)."""
    return "-" if r.delta_rel is None or not math.isfinite(r.delta_rel) else f"{r.delta_rel:+.1%}"


def _ci(r: Row) -> str:
    return "-" if r.ci is None else f"[{r.ci[0]:.4g}, {r.ci[1]:.4g}]"


def _p(r: Row) -> str:
    return "-" if r.p_value is None else f"{r.p_value:.2g}"


def _verdict(r: Row) -> str:
    return r.verdict + ("" if r.gated or r.verdict == Compare.INFORMATIONAL else " (not gated)")


def _why(r: Row) -> str:
    return "; ".join(x for x in (r.reason, r.note) if x)


def _unit(r: Row) -> str:
    return r.compared_unit or r.unit


def _cells(r: Row) -> tuple[str, ...]:
    return (r.name, _g(r.a, 6), _g(r.b, 6), _unit(r), _ratio(r), _delta(r), _ci(r), _p(r), _verdict(r), _why(r))


def _side_line(label: str, side: Any) -> str:
    runs = f"{side.runs} run{'s' if side.runs != 1 else ''}"
    marks = []
    if side.planted:  # a gate check's proof, not a measurement of the code: its verdicts are the plant's
        marks.append(f"PLANTED ({', '.join('--gpuperf-plant ' + p for p in side.planted)}): a deliberately worsened "
                     "run of a gate check")
    if side.interrupted:
        marks.append(f"{side.interrupted} of its runs interrupted before every test ran")
    return f"{label} = {side.describe()}, {runs}: {', '.join(side.paths)}" + "".join(f" — {m}" for m in marks)


def _kind(report: Report) -> str:
    return ("one card (A/B of driver, toolkit or code)" if report.same_card else
            "two cards: only figures normalised by the card itself are compared (--raw: all)")


def tally(report: Report) -> str:
    """Rows per verdict, worse split into the rows that fail and those that are not gated."""
    c = report.counts()
    parts = []
    for v in VERDICTS:
        n = c[v] - (c["worse_ungated"] if v == Compare.WORSE else 0)
        if n:
            parts.append(f"{n} {v}")
        if v == Compare.WORSE and c["worse_ungated"]:
            parts.append(f"{c['worse_ungated']} worse but not gated")
    return ", ".join(parts)


def status(report: Report) -> str:
    """PASS, or FAIL with the number of failing rows — the number every format and annotation states."""
    n = len(report.failing)
    unsure = report.counts()[Compare.UNCERTAIN]
    more = (f"; {unsure} uncertain (within the spread between this card's unchanged runs: give each side "
            f"{MIN_REPEATS} runs to tell)") if unsure else ""
    if not n:
        return f"PASS: no significant regression beyond the threshold (exit 0){more}"
    return f"FAIL: {n} significant regression(s) or impossible value(s) (exit 1){more}"


def _listed(r: Row, all_rows: bool) -> bool:
    return all_rows or (r.verdict not in QUIET and "only" not in r.extra)


def others(report: Report, all_rows: bool = False) -> list[tuple[str, list[Row], list[Row]]]:
    """Per area: (area, its rows, the rows listed after the regressions — every non-failing row that says
    something, or every row with ``all_rows``)."""
    return [(area, rows, [r for r in rows if not r.fails and _listed(r, all_rows)]) for area, rows in report.areas()]


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


def _seconds(x: float | None, sign: bool = False) -> str:
    return "-" if x is None else (f"{x:+.2f}" if sign else f"{x:.2f}")


def _duration_cells(d: Duration) -> tuple[str, ...]:
    return (d.test, _seconds(d.a), _seconds(d.b), _seconds(d.delta, sign=True),
            "-" if d.delta_rel is None else f"{d.delta_rel:+.1%}")


def duration_title(report: Report, head: str = "test durations") -> str:
    """``test durations (N tests): A 12.3 s, B 10.1 s``: what the whole suite cost on each side."""
    ds = report.durations
    total_a = sum(d.a for d in ds if d.a is not None)
    total_b = sum(d.b for d in ds if d.b is not None)
    return f"{head} ({len(ds)} tests): A {total_a:.1f} s, B {total_b:.1f} s"


def _listed_durations(report: Report, all_rows: bool) -> tuple[list[Duration], int]:
    ds = report.durations
    shown = ds if all_rows else ds[:DURATIONS_LISTED]
    return shown, len(ds) - len(shown)


def environment(report: Report) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(fields that differ between the sides, fields that are the same)."""
    return ([e for e in report.environment if e["changed"]], [e for e in report.environment if not e["changed"]])


# --------------------------------------------------------------------------------------------- text
def text(report: Report, all_rows: bool = False) -> str:
    """Terminal text: the verdict, the regressions, the rest by area, then what differs in the environment."""
    from ..report.terminal import format_table

    def table(rows: list[Row]) -> list[str]:
        cells = [tuple(c if len(c) <= 160 else c[:157] + "..." for c in _cells(r)) for r in rows]
        return ["  " + line.rstrip() for line in format_table(cells, HEADER)]

    out = ["gpuperf compare", "  " + _side_line("A", report.a), "  " + _side_line("B", report.b),
           f"  {_kind(report)}", status(report), f"verdicts: {tally(report)}", ""]
    failing = report.failing
    out.append(f"== regressions: {len(failing)} (they set the exit status) ==")
    out += table(failing) if failing else ["  none"]
    for area, rows, listed in others(report, all_rows):
        note = _omitted(rows, all_rows)
        if not listed and not note:
            continue
        out += ["", f"== {area} ({len(rows)} metrics) =="]
        if listed:
            out += table(listed)
        if note:
            out.append("  " + note)
    if report.durations:
        shown, more = _listed_durations(report, all_rows)
        out += ["", f"== {duration_title(report)}, costliest first; not judged =="]
        out += ["  " + line.rstrip() for line in format_table([_duration_cells(d) for d in shown], DURATION_HEADER)]
        if more:
            out.append(f"  {more} more not listed (--all lists them)")
    changed, same = environment(report)
    out += ["", f"environment: {len(changed)} of {len(report.environment)} field(s) differ"]
    out += [f"  * {e['field']}: {e['a']} -> {e['b']}" for e in changed]
    if all_rows:
        out += [f"    {e['field']}: {e['a']}" for e in same]
    elif same:
        out.append(f"  ({len(same)} unchanged field(s) not listed; --all lists them)")
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------------- markdown
def _md(cell: str) -> str:
    """Text from the results files as Markdown that shows it and does nothing else: no raw HTML (``<``, ``>``,
    ``&`` as entities), no cell break (``|``), no line break."""
    return _md_text(cell).replace("|", "\\|")


def _md_text(text: str) -> str:
    """Text from the results files (device names, paths) in Markdown outside a table (see :func:`_md`)."""
    return html.escape(text, quote=False).replace("\r", " ").replace("\n", " ")


def _md_code(text: str) -> str:
    """A metric name or test id as a code span; as plain escaped text where it holds what a code span
    cannot show safely (a backtick, or what :func:`_md` escapes)."""
    escaped = _md(text)
    return f"`{text}`" if escaped == text and "`" not in text else escaped


def markdown_table(rows: list[Row], header: tuple[str, ...] = HEADER) -> list[str]:
    """A GitHub-flavoured Markdown table of rows (also the step summary's table); failing rows in bold."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    for r in rows:
        raw = list(_cells(r))
        cells = [_md_code(raw[0])] + [_md(c) for c in raw[1:]]
        cells[8] = f"**{cells[8]}**" if r.fails else cells[8]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def markdown(report: Report, all_rows: bool = False) -> str:
    """Markdown: the verdict, the regressions, one table per area for the rest, the environment last (the
    differing fields; the unchanged ones in a folded ``<details>``)."""
    failing = report.failing
    out = ["# gpuperf compare", "", f"- {_md_text(_side_line('A', report.a))}",
           f"- {_md_text(_side_line('B', report.b))}",
           f"- {_kind(report)}", "", f"**{status(report)}** — {tally(report)}", "",
           f"## Regressions ({len(failing)})", ""]
    out += markdown_table(failing) if failing else ["_none: nothing fails the comparison_"]
    for area, rows, listed in others(report, all_rows):
        note = _omitted(rows, all_rows)
        if not listed and not note:
            continue
        out += ["", f"## {area} ({len(rows)} metrics)", ""]
        if listed:
            out += markdown_table(listed)
        if note:
            out += ["", f"_{note}_"]
    if report.durations:
        shown, more = _listed_durations(report, all_rows)
        out += ["", f"## {duration_title(report, 'Test durations')}", "",
                "_costliest first; the suite's own cost, not judged_", "",
                "| " + " | ".join(DURATION_HEADER) + " |", "|" + "|".join(" --- " for _ in DURATION_HEADER) + "|"]
        out += ["| " + " | ".join((_md_code(cells[0]), *(_md(c) for c in cells[1:]))) + " |"
                for cells in map(_duration_cells, shown)]
        if more:
            out += ["", f"_{more} more not listed (--all lists them)_"]
    changed, same = environment(report)
    out += ["", f"## Environment ({len(changed)} of {len(report.environment)} field(s) differ)", ""]
    if changed:
        out += ["| field | A | B |", "| --- | --- | --- |"]
        out += [f"| {_md(e['field'])} | {_md(str(e['a']))} | {_md(str(e['b']))} |" for e in changed]
    if same:
        out += ["", f"<details><summary>{len(same)} unchanged field(s)</summary>", "", "| field | value |",
                "| --- | --- |"]
        out += [f"| {_md(e['field'])} | {_md(str(e['a']))} |" for e in same]
        out += ["", "</details>"]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------- json
def _side_json(side: Any) -> dict[str, Any]:
    return {"paths": side.paths, "runs": side.runs, "device": side.device, "environment": side.environment,
            "planted": side.planted, "interrupted": side.interrupted}


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
        "rows": rows,
        "durations": [{"test": d.test, "a_s": d.a, "b_s": d.b, "delta_s": d.delta} for d in report.durations]})


def json_text(report: Report, all_rows: bool = False) -> str:
    import json

    return json.dumps(to_json(report), indent=1, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------------------------- csv
CSV_COLUMNS = ("metric", "area", "unit", "compared_unit", "better", "a", "b", "ratio", "delta_pct", "ci_low",
               "ci_high", "p_value", "verdict", "gated", "fails", "basis", "noise", "runs_a", "runs_b", "reason")


def csv_text(report: Report, all_rows: bool = False) -> str:
    """One CSV row per metric (every row, failing ones first, then by area as in the other formats):
    numbers unformatted, empty where there is none, for a spreadsheet or a script."""
    def num(x: float | None) -> str:
        return "" if x is None else repr(float(x))

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    failing = report.failing
    ordered = failing + [r for _, rows in report.areas() for r in rows if not r.fails]
    for r in ordered:
        w.writerow((r.name, r.area, r.unit, _unit(r), r.better, num(r.a), num(r.b), num(r.ratio),
                    "" if r.delta_rel is None else repr(100.0 * r.delta_rel),
                    "" if r.ci is None else repr(r.ci[0]), "" if r.ci is None else repr(r.ci[1]), num(r.p_value),
                    r.verdict, str(r.gated).lower(), str(r.fails).lower(), r.basis, r.noise or "", r.runs[0],
                    r.runs[1], _why(r)))
    # then each test's duration, as a row of area "durations" (shown, never judged)
    for d in report.durations:
        ratio = None if d.a is None or d.b is None or not d.a else d.b / d.a
        w.writerow((d.test, "durations", "s", "s", "lower", num(d.a), num(d.b), num(ratio),
                    "" if d.delta_rel is None else repr(100.0 * d.delta_rel), "", "", "", "duration", "false",
                    "false", "none", "", len(report.a.durations.get(d.test, ())), len(report.b.durations.get(d.test, ())),
                    "the test's duration (setup + call + teardown; median over a side's runs): not judged"))
    return buf.getvalue()


# --------------------------------------------------------------------------------------------- html
def _plotted(r: Row) -> bool:
    """Rows drawn with both sides' samples: those whose difference is significant (or that failed)."""
    return bool(r.significant) or r.fails or r.verdict == Compare.BETTER


def _sample_values(side: Any, name: str) -> list[float]:
    """What a side measured of ``name``: its pooled raw samples, else its values per run (or repeats)."""
    m = side.metrics.get(name)
    if m is None:
        return []
    xs = m.samples if m.samples is not None else m.spread_values()[0]
    xs = np.asarray([x for x in xs if isinstance(x, (int, float)) and math.isfinite(x)], dtype=np.float64)
    if xs.size > PLOT_SAMPLES:
        xs = np.quantile(xs, (np.arange(PLOT_SAMPLES) + 0.5) / PLOT_SAMPLES)
    return [float(f"{x:.6g}") for x in xs]


def _row_html(r: Row, plot: int | None) -> dict[str, Any]:
    cls = [r.verdict, "fail" if r.fails else "", "ungated" if r.verdict == Compare.WORSE and not r.gated else ""]
    return {"cells": _cells(r), "cls": " ".join(c for c in cls if c), "plot": plot}


def html_page(report: Report, all_rows: bool = False) -> str:
    """One self-contained HTML page (inline CSS, data and scripts; nothing fetched)."""
    import json

    import markupsafe

    from ..report import assets

    plots: list[dict[str, Any]] = []

    def rows_html(rows: list[Row]) -> list[dict[str, Any]]:
        out = []
        for r in rows:
            index = None
            if _plotted(r):
                a, b = _sample_values(report.a, r.name), _sample_values(report.b, r.name)
                if a and b:
                    index = len(plots)
                    plots.append({"name": r.name, "unit": r.unit, "a": a, "b": b, "fails": r.fails})
            out.append(_row_html(r, index))
        return out

    failing = rows_html(report.failing)
    areas = []
    for area, rows, listed in others(report, False):
        folded = [(v, rows_html([r for r in rows if r.verdict == v and not r.fails])) for v in QUIET]
        only = [r for r in rows if "only" in r.extra and r.verdict not in QUIET]
        areas.append({"name": area, "count": len(rows), "listed": rows_html([r for r in listed if r not in only]),
                      "folded": [(v, rs) for v, rs in folded if rs], "only": rows_html(only)})
    changed, same = environment(report)
    payload = json.dumps(plots, separators=(",", ":"), allow_nan=False)  # strict: JSON.parse takes no NaN
    return assets.environment(__package__).get_template("compare.html.j2").render(
        a=report.a.describe(), b=report.b.describe(), side_a=_side_line("A", report.a),
        side_b=_side_line("B", report.b), kind=_kind(report), status=status(report), tally=tally(report),
        failed=bool(report.failing), header=HEADER, failing=failing, areas=areas, changed=changed, same=same,
        durations_title=duration_title(report, "Test durations") if report.durations else "",
        duration_header=DURATION_HEADER,
        durations=[_duration_cells(d) for d in report.durations],
        version=__version__, schema=COMPARE_SCHEMA,
        uplot_css=markupsafe.Markup(assets.inline(assets.shared(assets.UPLOT_CSS))),
        css=markupsafe.Markup(assets.inline(assets.read(__package__, "compare.css"))),
        uplot_js=markupsafe.Markup(assets.inline(assets.shared(assets.UPLOT_JS))),
        app_js=markupsafe.Markup(assets.inline(assets.read(__package__, "compare.js"))),
        data=markupsafe.Markup(assets.script_json(payload)))


RENDERERS: dict[str, Callable[..., str]] = {"text": text, "markdown": markdown, "json": json_text, "html": html_page,
                                            "csv": csv_text}


def render(report: Report, fmt: str, all_rows: bool = False) -> str:
    """``report`` in format ``fmt`` (one of :data:`FORMATS`)."""
    if fmt not in RENDERERS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return RENDERERS[fmt](report, all_rows=all_rows)
