"""The fleet report as text, JSON and one self-contained HTML page (cards worst first in each)."""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping, Sequence

from .. import FLEET_SCHEMA, __version__

FORMATS = ("text", "json", "html")
#: outlier rows listed per card in the text form (the JSON and HTML forms hold them all)
TEXT_ROWS = 5


def _num(x: Any) -> str:
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def _effect(e: Any) -> str:
    return f"{e:+.1%}" if isinstance(e, float) else str(e)


def tally(report: Mapping[str, Any]) -> str:
    """``2 fail, 1 uncertain, 0 warn, 14 ok``."""
    return ", ".join(f"{n} {v}" for v, n in report["tally"].items())


def outlier_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every flagged card × metric, worst card first, each card's rows by z."""
    return [{"card": c["card"], "metric": o["metric"], "value": _num(o["value"]), "median": _num(o["cohort_median"]),
             "effect": _effect(o["effect"]), "floor": f"{o['floor']:.1%}", "z": f"{o['z']:.1f}", "q": f"{o['q']:.2g}"}
            for c in report["cards"] for o in c["outliers"]]


def text(report: Mapping[str, Any], drain: Sequence[str] = ()) -> str:
    lines = [f"gpuperf fleet report {report['fleet_run']}: {report['verdict'].upper()} ({tally(report)})"]
    if report.get("confirm_run"):
        lines.append(f"confirmation run: {report['confirm_run']}")
    for c in report["cohorts"]:
        judged = f"{c['metrics_tested']} metric(s) tested" if c["judged"] else "not judged fleet-relatively"
        lines.append(f"cohort {c['cohort']}: {len(c['cards'])} card(s), {judged}")
    for c in report["cards"]:
        lines.append(f"{c['verdict'].upper():9} {c['card']} (node {c['node']}, job {c['job']})")
        for kind in ("fail", "uncertain", "warn", "note"):
            lines += [f"    {kind}: {r}" for r in c["reasons"][kind]]
        for o in c["outliers"][:TEXT_ROWS]:
            lines.append(f"    outlier {o['metric']}: {_num(o['value'])} {o['unit']} vs cohort median "
                         f"{_num(o['cohort_median'])} ({_effect(o['effect'])}, floor {o['floor']:.1%}, "
                         f"z {o['z']:.1f}, q {o['q']:.2g})")
        for m in c["deterministic_mismatches"][:TEXT_ROWS]:
            lines.append(f"    differs {m['metric']}: {m['value']!r} vs {m['majority']!r} on {m['agreeing']} of "
                         f"{m['cards']} cards")
    for e in report["empty_jobs"]:
        lines.append(f"FAIL      job {e['job']} (node {e['node']}): {e['reasons']['fail'][0]}")
    for p in report["problems"]:
        lines.append(f"not read: {p['path']}: {p['why']}")
    if drain:
        lines.append("drain (dry run unless --execute):" if not report.get("drained") else "drained:")
        lines += [f"  {d}" for d in drain]
    return "\n".join(lines)


def json_text(report: Mapping[str, Any], drain: Sequence[str] = ()) -> str:
    return json.dumps({**report, "drain": list(drain)}, indent=1, allow_nan=False, default=str)


def html_page(report: Mapping[str, Any], drain: Sequence[str] = ()) -> str:
    """One page, nothing fetched; every value from the results passes Jinja2's autoescape."""
    from ..report import assets

    cards = [{**c, "reasons": [(k, c["reasons"][k]) for k in ("fail", "uncertain", "warn", "note")]}
             for c in report["cards"]]
    mismatches = [{**m, "card": c["card"]} for c in report["cards"] for m in c["deterministic_mismatches"]]
    return assets.environment(__package__).get_template("fleet.html.j2").render(
        run=report["fleet_run"], confirm_run=report.get("confirm_run"), settings=report["settings"],
        verdict=report["verdict"], tally=tally(report), cards=cards, empty_jobs=report["empty_jobs"],
        outliers=outlier_rows(report), mismatches=mismatches, cohorts=report["cohorts"],
        problems=report["problems"], drain=list(drain), version=__version__, schema=FLEET_SCHEMA)


RENDERERS: dict[str, Callable[..., str]] = {"text": text, "json": json_text, "html": html_page}


def render(report: Mapping[str, Any], fmt: str, drain: Sequence[str] = ()) -> str:
    if fmt not in RENDERERS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return RENDERERS[fmt](report, drain)
