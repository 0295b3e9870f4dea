"""``gpuperf history …``: backfill, list, show, detect, report — all against ``--db URL``.

``--db`` takes what ``--gpuperf-history`` takes (a ``.db`` path, ``sqlite:///…``, ``postgresql://…`` or a
legacy ``.jsonl``); it defaults to ``$GPUPERF_HISTORY`` or ``results/history.db``. Only ``import``
creates a database; ``list``, ``show``, ``detect`` and ``report`` refuse one that does not exist, so a
mistyped path is an error instead of an empty history.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import sys
from collections import defaultdict
from typing import Any, Callable, Sequence

from ..errors import GpuPerfError
from ..verdictwords import Trend
from ..report.terminal import cell, format_table
from . import detect as det
from .backends import check, read_runs, record_each
from .backfill import load
from .records import TrendMetric, dumps

DEFAULT_DB = "results/history.db"
FORMATS = ("text", "json", "csv")
#: an environment string (driver, runtime, toolkit) longer than this is named once under the text table
LONG = 24

#: runs named one line each when an import finds them recorded already (the rest are counted)
ALREADY_NAMED = 10


DB_HELP = ("history store: path.db, sqlite:///path, postgresql://..., or path.jsonl "
           "(default: $GPUPERF_HISTORY or results/history.db)")


def _db(p: argparse.ArgumentParser) -> None:
    """``--db`` after a subcommand (``gpuperf history list --db x``). Its default is the group's: the
    group's own ``--db`` (``gpuperf history --db x list``) stands unless the subcommand is given one."""
    p.add_argument("--db", default=argparse.SUPPRESS, metavar="URL", help=DB_HELP)


def _device(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", metavar="KEY", help="only this device key")


def _format(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text (a table for people; long driver/runtime/toolkit strings named once below it), "
                        "json (one array of objects, full values) or csv (a header row, full values); "
                        "default: %(default)s")


def _command(hs: Any, name: str, func: Callable[[argparse.Namespace], int], summary: str) -> argparse.ArgumentParser:
    """The subcommand ``name`` of ``gpuperf history``, run by ``func``."""
    p = hs.add_parser(name, help=summary)
    p.set_defaults(func=func)
    return p


def _detect_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--beta", type=float, default=det.DEFAULT_BETA,
                   help="PELT penalty = beta × σ² × ln n, σ the series' robust noise (default: %(default)s)")
    p.add_argument("--k-sigma", type=float, default=det.DEFAULT_K_SIGMA,
                   help="a step must also exceed this many σ of the series' noise between runs, beside the "
                        "metric's gate band (default: %(default)s)")
    p.add_argument("--min-runs", type=_at_least_one, default=det.DEFAULT_MIN_RUNS, metavar="K",
                   help="runs a new level must hold before its step is confirmed; a move at the newest runs "
                        "with fewer is a candidate (default: %(default)s)")


def _at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of runs, 1 or more")
    return value


def register(sub: Any) -> None:
    parser = sub.add_parser("history", help="trend tracking: the history database of runs",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default=os.environ.get("GPUPERF_HISTORY", DEFAULT_DB), metavar="URL",
                        help=DB_HELP + "; before or after the subcommand")
    hs = parser.add_subparsers(dest="history_command", required=True, metavar="SUBCOMMAND")

    p = _command(hs, "import", cmd_import, "backfill runs from results JSON files, folders or legacy JSONL histories")
    p.add_argument("paths", nargs="+", metavar="RESULTS.json|HISTORY.jsonl|DIR",
                   help="results files, legacy JSONL histories, or folders searched for them")
    _db(p)

    p = _command(hs, "list", cmd_list, "the runs stored, oldest first")
    _db(p)
    _device(p)
    _format(p)

    p = _command(hs, "show", cmd_show, "one metric over time (names containing METRIC)")
    p.add_argument("metric", help="a metric name, or a part of names: every metric containing it")
    _device(p)
    _db(p)
    _format(p)

    p = _command(hs, "detect", cmd_detect, "change points per metric and device over commits")
    _db(p)
    _device(p)
    p.add_argument("--metric", dest="metric_filter", metavar="SUBSTR", help="only metrics whose name contains SUBSTR")
    _detect_opts(p)
    p.add_argument("--fail-on-step", action="store_true",
                   help="exit 1 if any confirmed step goes toward worse (candidates do not fail)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="json: steps, identity and kernel changes and the runs left out as one strict JSON object")
    p.add_argument("--json", action="store_const", const="json", dest="format", help="the same as --format json")

    p = _command(hs, "report", cmd_report, "write a static HTML dashboard: the regressions found, then a plot per "
                                           "metric (one file, no network needed to view it)")
    p.add_argument("--html", required=True, metavar="DIR", help="folder to write index.html into")
    _device(p)
    p.add_argument("--commit-url", metavar="URL",
                   help="link each commit: URL + its sha (e.g. https://github.com/o/r/commit/; as asv's "
                        "show_commit_url); default: from the current repository's 'origin' remote, '' for none")
    p.add_argument("--max-plots", type=_at_least_one, default=12,
                   help="plots drawn per family and device at first (the rest on 'show all'; default: %(default)s)")
    _db(p)
    _detect_opts(p)


def cmd_import(args: argparse.Namespace) -> int:
    """``gpuperf history import``: :func:`import_files`."""
    return import_files(args.paths, args.db)


def import_files(paths: Sequence[str], db: str) -> int:
    """Import every good file into the history target ``db``; one line on stderr per file of another kind
    (skipped) and per broken file (named with what is wrong, and the exit status is 1)."""
    skipped: list[str] = []
    bad: list[str] = []
    try:
        runs = load(paths, skipped, bad)
    finally:
        for line in skipped:
            print(f"skipped {line}", file=sys.stderr)
        for line in bad:
            print(f"error: {line}", file=sys.stderr)
    target = check(db)
    fresh = record_each(target, runs)
    new = sum(fresh)
    known = [r for r, f in zip(runs, fresh) if not f]
    for r in known[:ALREADY_NAMED]:
        print(f"already recorded: {r.source or 'run'} ({r.device_key}/{r.backend}, {r.date}); nothing added",
              file=sys.stderr)
    if len(known) > ALREADY_NAMED:
        print(f"already recorded: {len(known) - ALREADY_NAMED} more run(s); nothing added", file=sys.stderr)
    print(f"imported {new} new run(s) of {len(runs)} read into {target}"
          + (f"; {len(known)} already recorded (nothing added for them)" if known else "")
          + (f"; skipped {len(skipped)} file(s) of another kind" if skipped else "")
          + (f"; {len(bad)} broken file(s) NOT imported (named on stderr): fix or move them" if bad else ""))
    return 1 if bad else 0


def _read(args: argparse.Namespace) -> list[Any]:
    """The runs of ``--db`` (``--device``); a warning on stderr for each row left out as unreadable."""
    skipped: list[str] = []
    runs = read_runs(args.db, args.device, skipped)
    for line in skipped:
        print(f"warning: {cell(line)}", file=sys.stderr)
    if args.device and not runs:  # a mistyped key must not read as a history with nothing to report
        known = sorted({r.device_key for r in read_runs(args.db, None, [])})
        raise GpuPerfError(f"--device {args.device}: the history holds no run of that device key"
                           + (f"; it holds {', '.join(known)}" if known else "; it holds no run at all"))
    metric = getattr(args, "metric_filter", None)
    if metric and not any(metric in m.name for r in runs for m in r.metrics):
        raise GpuPerfError(f"--metric {metric}: no metric name in the history contains it"
                           + (f" on {args.device}" if args.device else "") + "; gpuperf history list shows its runs")
    return runs


def _emit(fmt: str, header: Sequence[str], records: list[dict[str, Any]]) -> None:
    """``records`` (one dict per row, keys ``header``) as JSON or CSV on stdout."""
    if fmt == "json":
        print(dumps(records, indent=1))
        return
    writer = csv.DictWriter(sys.stdout, fieldnames=list(header), lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)


def _factored(rows: list[list[str]], columns: Sequence[int], label: str) -> list[str]:
    """Replace each long string of ``columns`` in ``rows`` (in place) by a short name, ``[1]``, ``[2]``…, and
    return the legend lines that spell each out once: a PoCL runtime string is 100 characters, and
    repeating it on every row pushes the columns that differ off the screen."""
    names: dict[str, str] = {}
    for row in rows:
        for c in columns:
            if len(row[c]) > LONG:
                row[c] = names.setdefault(row[c], f"[{len(names) + 1}]")
    return [f"{label} {short} = {full}" for full, short in names.items()]


LIST_FIELDS = ("date", "commit", "device", "backend", "device_name", "driver", "runtime", "toolkit", "host",
               "metrics", "left_out", "source", "run_key")


def _left_out(run: Any) -> str:
    """Why detection leaves the run out of the trends (planted, interrupted: :func:`.detect.left_out`), or ''."""
    why = det.left_out(run) or ""
    return why.split(" (", 1)[0]


def cmd_list(args: argparse.Namespace) -> int:
    runs = _read(args)
    if args.format != "text":
        _emit(args.format, LIST_FIELDS, [
            {"date": r.date, "commit": r.commit, "device": r.device_key, "backend": r.backend,
             "device_name": r.device_name, "driver": r.driver, "runtime": r.runtime, "toolkit": r.toolkit,
             "host": r.host, "metrics": len(r.metrics), "left_out": _left_out(r), "source": r.source,
             "run_key": r.run_key} for r in runs])
        return 0
    rows = [[r.date, r.commit[:12] or "(none)", r.device_key, r.backend, r.driver, r.toolkit, str(len(r.metrics)),
             _left_out(r), os.path.basename(r.source)] for r in runs]
    legend = _factored(rows, (4, 5), "driver/toolkit")
    for line in format_table([tuple(r) for r in rows], ("date", "commit", "device", "backend", "driver", "toolkit",
                                                        "metrics", "left out of trends", "source")):
        print(line)
    for line in legend:
        print(cell(line))
    print(f"{len(runs)} run(s)")
    return 0


SHOW_FIELDS = ("metric", "device", "backend", "date", "commit", "value", "unit", "mad", "baseline", "band",
               "verdict", "test", "source_digest", "kernel_changed")


def kernel_marks(found: Sequence[tuple[TrendMetric, Any]]) -> list[bool]:
    """For each (metric, run) of ``found`` (sorted by metric, device, backend, date): whether its kernels differ
    from the last ones its series recorded (``source_digest``; a value without one is unknown, never a change),
    where detection splits the series (``detect.kernel_segments``)."""
    marks = []
    known: dict[tuple[str, str, str], str] = {}
    for m, r in found:
        key = (m.name, r.device_key, r.backend)
        marks.append(m.source_digest is not None and known.get(key, m.source_digest) != m.source_digest)
        if m.source_digest is not None:
            known[key] = m.source_digest
    return marks


def cmd_show(args: argparse.Namespace) -> int:
    runs = _read(args)
    found = sorted(((m, r) for r in runs for m in r.metrics if args.metric in m.name),
                   key=lambda mr: (mr[0].name, mr[1].device_key, mr[1].backend, mr[1].date))
    if not found:
        print(f"no metric name contains {args.metric!r}" + (f" on {args.device}" if args.device else ""),
              file=sys.stderr)
        return 1
    changed = kernel_marks(found)
    if args.format != "text":
        _emit(args.format, SHOW_FIELDS, [
            {"metric": m.name, "device": r.device_key, "backend": r.backend, "date": r.date, "commit": r.commit,
             "value": m.value, "unit": m.unit, "mad": m.mad, "baseline": m.baseline_value, "band": m.band,
             "verdict": m.verdict, "test": m.test, "source_digest": m.source_digest, "kernel_changed": c}
            for (m, r), c in zip(found, changed)])
        return 0
    rows = []
    for (m, r), c in zip(found, changed):
        band = "-" if m.baseline_value is None else f"{m.baseline_value:.5g} ±{m.band or 0:.2g}"
        kernel = "-" if m.source_digest is None else m.source_digest[:8] + (f" ({Trend.KERNEL_CHANGED})" if c else "")
        rows.append((m.name, r.device_key, r.backend, r.date, r.commit[:12],
                     "-" if m.value is None else f"{m.value:.6g}", m.unit,
                     "-" if m.mad is None else f"{m.mad:.3g}", band, m.verdict, kernel))
    for line in format_table(rows, ("metric", "device", "backend", "date", "commit", "value", "unit", "mad",
                                    "baseline", "verdict", "kernel")):
        print(line)
    if any(changed):
        print(f"{sum(changed)} {Trend.KERNEL_CHANGED}: values before and after are other measurements, never a "
              f"step (gpuperf history detect compares each kernel's runs apart)")
    return 0


def _change_lines(changes: Sequence[det.IdentityChange] | Sequence[det.KernelChange], heading: str,
                  tail: str) -> list[str]:
    """Where a series was split (its identity or its kernels changed), one line per device and run: one edit
    moves many metrics at once."""
    by_run: dict[tuple[str, str, str], list[det.SeriesBreak]] = defaultdict(list)
    for c in changes:
        by_run[(c.device_key, c.backend, c.run)].append(c)
    lines = []
    for (key, backend, _), group in sorted(by_run.items(), key=lambda kv: (kv[0][:2], kv[1][0].date)):
        c = group[0]
        more = f" and {len(group) - 1} more" if len(group) > 1 else ""
        lines.append(f"{key}/{backend}: {heading} for {len(group)} metric(s) at commit {c.commit[:12] or '?'} "
                     f"({c.date}; previous run: {c.previous_commit[:12] or '?'}, {c.previous_date}), e.g. {c.name} "
                     f"({c.what()}){more} — {tail}")
    return lines


def _identity_lines(changes: list[det.IdentityChange]) -> list[str]:
    """Identity changes, one line per device and run."""
    return _change_lines(changes, "IDENTITY CHANGED", "compared within each identity, not across")


def _kernel_lines(changes: list[det.KernelChange]) -> list[str]:
    """Kernel changes, one line per device and run."""
    return _change_lines(changes, Trend.KERNEL_CHANGED.upper(),
                         "other measurements: compared within each kernel, not across (no regression, no improvement)")


def cmd_detect(args: argparse.Namespace) -> int:
    runs = _read(args)
    found = det.detect_all(runs, args.device, args.beta, args.k_sigma, args.metric_filter, args.min_runs)
    confirmed, candidates = found.confirmed, found.candidates
    if args.format == "json":
        print(dumps(found.to_json(), indent=1))
    else:
        for s in sorted(found.steps, key=lambda s: (s.status != det.CONFIRMED, s.device_key, s.backend, s.date, s.name)):
            print(cell(s.describe()))
        for line in _identity_lines(found.identity_changes):
            print(cell(line))
        for line in _kernel_lines(found.kernel_changes):
            print(cell(line))
        if found.left_out:
            why = sorted({w for _, w in found.left_out})
            print(f"left out of the trends: {len(found.left_out)} run(s), {'; '.join(why)}")
        worse = sum(s.worse for s in confirmed)
        print(f"{len(confirmed)} step(s) confirmed by {args.min_runs}+ runs ({worse} toward worse), "
              f"{len(candidates)} candidate(s) at the newest runs, {len(found.identity_changes)} identity "
              f"change(s), {len(found.kernel_changes)} kernel change(s), over {len(runs) - len(found.left_out)} "
              f"run(s)")
    if args.fail_on_step and any(s.worse for s in confirmed):
        return 1
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .dashboard import commit_url_from_remote, write

    url = commit_url_from_remote() if args.commit_url is None else args.commit_url
    if url and not re.match(r"https?://[^\s\"'<>]+$", url):  # checked first: detection takes a while
        raise GpuPerfError(f"--commit-url {url!r}: give an http(s) URL the commit's sha is appended to, e.g. "
                           f"https://github.com/OWNER/REPO/commit/ ('' for no links)")
    runs = _read(args)
    found = det.detect_all(runs, args.device, args.beta, args.k_sigma, min_runs=args.min_runs)
    path = write(args.html, runs, found, max_plots=args.max_plots, commit_url=url)
    print(f"wrote {path} ({len(runs)} run(s), {len(found.confirmed)} step(s) confirmed, "
          f"{len(found.candidates)} candidate(s))")
    return 0
