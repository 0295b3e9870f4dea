"""``gpuperf compare A.json [A2.json ...] --against B.json [B2.json ...]`` or ``gpuperf compare A.json B.json``.

Judges every metric of run B against run A by its noise model (pytest_gpuperf/baselines/catalog.py, noise.py):
deterministic figures (seeded ulp errors, counts) exactly, within their tolerance; timings with raw
samples by the band and a significance test — one run against one: both runs' samples (bootstrap
interval of the median ratio, Mann–Whitney U); several runs on a side: one value per run, a t-test over
runs, so the spread between unchanged runs counts; figures derived from timings (tuner picks, model
errors, speedups, watts) only with 3 or more values on each side (runs, or the figure's own repeats),
else 'informational'. Verdicts: ``better``, ``worse``, ``same``, ``informational`` (shown, not judged),
``incomparable`` (with the reason) or ``error`` (an impossible value). The environment difference
(driver, runtime, toolkit, clocks, device) is printed first. Across two cards only figures normalised by
the card are compared (cycles, ulp, ratios, fractions of the card's own peak bandwidth); ``--raw``
compares absolute figures too.

Formats: text (default), markdown, json (``pytest-gpuperf-compare/1``), csv (one row per metric) and html
(one self-contained page with a plot of both sides' samples for every significant row). Each leads with
the verdict and the regressions, then the rest by area, then each test's duration on both sides (the
suite's own cost, never judged), then the environment fields that differ.

Exit status: 0 no significant regression beyond the threshold; 1 a significant regression (or an
impossible value); 2 bad input (unreadable file, not a results document, a side mixing devices, no
metric in common).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Iterable

from ..verdictwords import Compare
from ..baselines import lookup, noise
from .load import CompareInputError, load_side
from ..report import github
from . import engine, formats


def _fraction(text: str) -> float:
    value = float(text.rstrip("%")) / (100.0 if text.endswith("%") else 1.0)
    if not 0.0 <= value < 10.0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a relative effect such as 0.05 or 5%")
    return value


def _alpha(text: str) -> float:
    value = float(text)
    if not 0.0 < value < 0.5:
        raise argparse.ArgumentTypeError(f"{text!r}: alpha must lie in (0, 0.5)")
    return value


def register(sub: Any) -> None:
    """Add ``compare`` to the ``gpuperf`` command (:mod:`pytest_gpuperf.cli`)."""
    p = sub.add_parser("compare", help="compare two runs: one card across a driver/toolkit change, or two cards",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", metavar="RESULTS.json",
                   help="A then B (two files), or side A's runs when --against names side B's")
    p.add_argument("--against", nargs="+", metavar="RESULTS.json", default=None,
                   help="side B's runs (then every positional file is a run of side A)")
    p.add_argument("--format", choices=formats.FORMATS, default="text", help="output format (default: text)")
    p.add_argument("--output", "-o", metavar="PATH", default=None, help="write the report here instead of stdout")
    p.add_argument("--threshold", type=_fraction, default=None, metavar="REL",
                   help="smallest relative effect that counts, e.g. 0.05 or 5%% (default: per metric class, "
                        "baselines/classes.py: 3%% on GPUs, or the tolerance a test set itself; given, it is a minimum "
                        "on top of a test's tolerance)")
    p.add_argument("--raw", action="store_true",
                   help="across two cards, compare device-specific absolute figures (µs, GB/s, ...) too")
    p.add_argument("--alpha", type=_alpha, default=None,
                   help="significance level of the U test and 1 − confidence of the interval (default 0.001)")
    p.add_argument("--baseline-dir", default="baselines", metavar="DIR",
                   help="where side B's card has its baseline (default ./baselines, else the reviewed one shipped): "
                        "with fewer than 3 runs a side, a timing whose change lies within the spread that baseline's "
                        "runs show reads 'uncertain', not worse or better")
    p.add_argument("--all", action="store_true", dest="all_rows",
                   help="text/markdown: list the 'same' rows and the metrics only one side has, too")
    p.add_argument("--no-annotations", action="store_true",
                   help="under GitHub Actions, print no ::error/::warning lines and leave the step summary alone "
                        "(for report-only calls beside the one that gates)")
    p.set_defaults(func=cmd_compare)


def sides(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """Which files are side A and which side B."""
    if args.against:
        return list(args.files), list(args.against)
    if len(args.files) != 2:
        raise CompareInputError(f"give two results files (A B), or side A's runs followed by --against and side "
                                f"B's runs; got {len(args.files)} file(s)")
    return [args.files[0]], [args.files[1]]


def _progress(done: int, total: int) -> None:
    """One line on stderr per block of metrics judged (large inputs only: stdout stays the report)."""
    print(f"gpuperf compare: judged {done:,} of {total:,} metrics", file=sys.stderr, flush=True)


def known_spread(baseline_dir: Path, side: Any) -> dict[str, tuple[float, str]] | None:
    """The spread between unchanged runs of side B's card, from its baseline (yours in ``baseline_dir``, else the
    reviewed one shipped: :func:`pytest_gpuperf.baselines.lookup.resolve`), or None where it has none."""
    key, backend = str(side.device.get("key", "")), str(side.device.get("backend", ""))
    if not key or not backend:
        return None
    src = lookup.resolve(baseline_dir, key, backend)
    if src.origin == "none":
        return None
    where = f"your baseline {src.read[0]}" if src.origin == "yours" else f"the reviewed baseline of {key}"
    return engine.run_spread(src.file.metrics(backend), where)


def cmd_compare(args: argparse.Namespace) -> int:
    paths_a, paths_b = sides(args)
    a, b = load_side("A", paths_a), load_side("B", paths_b)
    spread = known_spread(Path(args.baseline_dir), b) if min(a.runs, b.runs) < noise.MIN_REPEATS else None
    try:
        report = engine.compare_sides(a, b, engine.Options(threshold=args.threshold, raw=args.raw, alpha=args.alpha,
                                                           run_spread=spread),
                                      progress=_progress if len(set(a.metrics) | set(b.metrics)) >=
                                      engine.PROGRESS_EVERY else None)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        # a schema-valid file with a shape the engine did not foresee: exit 2 (input), never 1 (a regression)
        raise CompareInputError(f"cannot compare {paths_a} with {paths_b}: {type(exc).__name__}: {exc}") from exc
    if not set(a.metrics) & set(b.metrics):
        # a gate that compared nothing must not pass: wrong files, or a run whose tests all failed early
        raise CompareInputError(f"no metric in common: A has {len(a.metrics)}, B has {len(b.metrics)} "
                                f"({', '.join(paths_a)} vs {', '.join(paths_b)})")
    text = formats.render(report, args.format, all_rows=args.all_rows)
    if args.output:
        out = Path(args.output)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        print(f"gpuperf compare: {formats.status(report)}; wrote {out}")
    else:
        sys.stdout.write(text)
    if github.enabled() and not args.no_annotations:
        for line in github.commands(findings_from_rows(report.rows)):
            print(line)
        github.append_step_summary(formats.markdown(report))
    return report.exit_code


def findings_from_rows(rows: Iterable[engine.Row]) -> list[github.Finding]:
    """``gpuperf compare``: worse/error rows → errors; incomparable rows, metrics B lacks and uncertain rows (a
    change one run a side cannot tell from the card's spread between runs) → warnings."""
    out = []
    for r in rows:
        if r.fails:
            out.append(github.Finding("error", f"gpuperf {r.verdict}: {r.name}", r.line()))
        elif r.verdict == Compare.INCOMPARABLE and r.extra.get("only") != "B":
            out.append(github.Finding("warning", f"gpuperf incomparable: {r.name}", r.line()))
        elif r.verdict == Compare.UNCERTAIN:
            out.append(github.Finding("warning", f"gpuperf uncertain: {r.name}", r.line()))
    return out
