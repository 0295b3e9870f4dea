"""GitHub Actions: annotations for regressions and a Markdown table in the job's step summary.

When ``GITHUB_ACTIONS=true`` (set by the runner), a regression (and in a pytest run a metric its test no
longer records, which fails the run too) becomes an ``::error`` workflow command and an incomparable
metric (or, in ``gpuperf compare``, one side B lacks) a ``::warning`` — GitHub shows them on the run's page without
anyone opening the log — and the table of findings is appended to the file named by
``$GITHUB_STEP_SUMMARY``. Used by ``gpuperf compare`` (its rows become findings there) and by the pytest plugin (baseline or
``--gpuperf-compare`` gating alike). The escaping follows GitHub's workflow-command rules
(``%``, CR and LF in the message; also ``:`` and ``,`` in properties such as ``title``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping
from ..verdictwords import Gate

if TYPE_CHECKING:
    from .results import Metric

#: annotations of one level printed at most (GitHub shows only the first few per step anyway);
#: a final annotation counts the rest
MAX_PER_LEVEL = 25


@dataclass(frozen=True)
class Finding:
    """One annotation: ``level`` is ``error`` or ``warning``."""

    level: str
    title: str
    message: str


def enabled(env: Mapping[str, str] | None = None) -> bool:
    """Running under GitHub Actions (the runner sets ``GITHUB_ACTIONS=true``)."""
    return (os.environ if env is None else env).get("GITHUB_ACTIONS") == "true"


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(f: Finding) -> str:
    """The workflow command line of one finding: ``::error title=...::message``."""
    return f"::{f.level} title={escape_property(f.title)}::{escape_data(f.message)}"


def commands(findings: Iterable[Finding], limit: int = MAX_PER_LEVEL) -> list[str]:
    """Errors first, at most ``limit`` per level, then one annotation counting what was left out."""
    out: list[str] = []
    findings = list(findings)
    for level in ("error", "warning"):
        these = [f for f in findings if f.level == level]
        out += [command(f) for f in these[:limit]]
        if len(these) > limit:
            out.append(command(Finding(level, f"gpuperf: {len(these) - limit} more", f"{len(these) - limit} more "
                                       f"{level}s of this kind; see the step summary or the report")))
    return out


def append_step_summary(markdown: str, env: Mapping[str, str] | None = None) -> str | None:
    """Append ``markdown`` to ``$GITHUB_STEP_SUMMARY``; returns the path, or None where it is not set."""
    path = (os.environ if env is None else env).get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    with Path(path).open("a", encoding="utf-8") as fh:
        fh.write(markdown if markdown.endswith("\n") else markdown + "\n")
    return path


def findings_from_metrics(metrics: Iterable[Metric], missing: Iterable[str], device: str) -> list[Finding]:
    """The pytest run: regressed and missing metrics → errors (either fails the run); incomparable ones →
    warnings."""
    out = []
    for m in metrics:
        line = str(m.info.get("line", m.name))
        if m.verdict == Gate.REGRESSED:
            out.append(Finding("error", f"gpuperf regression: {m.name} on {device}", line))
        elif m.verdict == Gate.INCOMPARABLE:
            out.append(Finding("warning", f"gpuperf incomparable: {m.name} on {device}", line))
    for name in missing:
        out.append(Finding("error", f"gpuperf missing: {name} on {device}",
                           f"{name} is in the reference but its test no longer records it"))
    return out


#: verdicts the step summary counts instead of listing row by row: no news (``summary.QUIET``) and the rows
#: a run could not judge (measured while the host or card was busy, or while the card throttled)
COUNTED = (Gate.PASS, Gate.NEW, Gate.UNGATED, Gate.LOOSE, Gate.CONTENDED, Gate.THROTTLED)
#: rows listed per device at most; the rest are counted (the results JSON holds every row)
MAX_ROWS = 50


def summary_table(metrics: Iterable[Metric], missing: Iterable[str], device: str, reference: str) -> str:
    """One device's section of the step summary: the tally, then the rows that are news (regressed first,
    then missing, incomparable, improved, known), at most :data:`MAX_ROWS`; the rows of :data:`COUNTED`
    verdicts are one line of counts, not hundreds of rows."""
    metrics = list(metrics)
    missing = list(missing)
    tally: dict[str, int] = {}
    for m in metrics:
        tally[m.verdict] = tally.get(m.verdict, 0) + 1
    order = {Gate.REGRESSED: 0, Gate.INCOMPARABLE: 2, Gate.IMPROVED: 3}
    shown = sorted((m for m in metrics if m.verdict not in COUNTED), key=lambda m: (order.get(m.verdict, 4), m.name))
    out = [f"### gpuperf {device} against {reference}", "",
           f"{len(metrics)} metrics: " + ", ".join(f"{n} {v}" for v, n in sorted(tally.items(), key=lambda x: (
               x[0] != Gate.REGRESSED, x[0]))) + (f", {len(missing)} missing" if missing else ""), ""]
    if shown or missing:
        out += ["| metric | reference | measured | delta | verdict |", "| --- | --- | --- | --- | --- |"]
        rows = [m for m in shown if m.verdict == Gate.REGRESSED]
        rows_missing = missing
        rest = [m for m in shown if m.verdict != Gate.REGRESSED]
        budget = MAX_ROWS
        for m in rows[:budget]:
            out.append(_row(m))
        budget -= min(budget, len(rows))
        for name in rows_missing[:budget]:
            out.append(f"| `{name}` | recorded | - | - | **missing** |")
        budget -= min(budget, len(rows_missing))
        for m in rest[:budget]:
            out.append(_row(m))
        left = len(shown) + len(missing) - MAX_ROWS
        if left > 0:
            out += ["", f"{left} more rows not listed (the results JSON holds every row)."]
    beyond = sorted(m.name for m in metrics if m.verdict in COUNTED and m.info.get("would_regress"))
    if beyond:  # not judged, but changed far beyond what the sharing explains (timing.observers.would_regress)
        out += ["", f"**Would have regressed** ({len(beyond)}, not judged: measured while busy, but changed far beyond "
                    f"what that explains; run again alone): " + ", ".join(f"`{n}`" for n in beyond[:10])
                + (f" and {len(beyond) - 10} more" if len(beyond) > 10 else "")]
    quiet = {v: n for v, n in tally.items() if v in COUNTED}
    if quiet:
        out += ["", "Not listed: " + ", ".join(f"{n} {v}" for v, n in sorted(quiet.items()))
                + " (contended/throttled: measured while the host or card was busy, not gated; "
                  "ungated/new: recorded, not judged)."]
    return "\n".join(out) + "\n"


def _row(m: Metric) -> str:
    base = m.baseline or {}
    ref = "-" if base.get("value") is None else f"{base['value']:.5g}"
    delta = "-" if base.get("delta_rel") is None else f"{base['delta_rel']:+.1%}"
    verdict = f"**{m.verdict}**" if m.verdict == Gate.REGRESSED else m.verdict
    return f"| `{m.name}` | {ref} | {m.value:.5g} {m.unit} | {delta} | {verdict} |"


def step_summary(headline: str, reasons: Iterable[tuple[str, str]], sections: Iterable[str]) -> str:
    """The whole run's step summary: ``headline`` as the first line (why the job failed, or that it
    passed), the reasons (``(kind, text)``, regressions first), then each device's section."""
    out = [f"**{headline}**", ""]
    reasons = list(reasons)
    if reasons:
        out += [f"- **{kind}**: {text}" for kind, text in reasons] + [""]
    out += list(sections)
    return "\n".join(out).rstrip("\n") + "\n"
