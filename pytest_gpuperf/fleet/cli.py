"""``gpuperf siblings`` (the cards of one host) and ``gpuperf fleet`` (the cards of many hosts).

``gpuperf siblings R0.json R1.json …``: the sibling check on saved results files (one per card).
Exit status: 0 no outlier, 1 an outlier card, 2 bad input (unreadable file, not a results document,
fewer than two cards of one model).

``gpuperf fleet report|compare|baseline``: see :func:`register_fleet` and docs/fleet.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .. import RESULTS_SCHEMA, SIBLINGS_SCHEMA
from ..errors import GpuPerfError
from ..schemas.results_doc import ResultsDocument, ResultsDocumentError
from . import siblings
from .workers import load_documents


def register(sub: Any) -> None:
    """The ``siblings`` command and the ``fleet`` group (``gpuperf``'s one entry for this package)."""
    register_siblings(sub)
    register_fleet(sub)


def register_siblings(sub: Any) -> None:
    p = sub.add_parser("siblings", help="compare cards of one model in one host: the card worse than its siblings",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+", help="results JSON files of one run, one per device (--gpuperf-json)")
    p.add_argument("--threshold", type=float, default=None, metavar="F",
                   help="one relative effect for every metric (0.05 = 5 %%) instead of each metric class's floor")
    p.add_argument("--format", choices=("text", "json"), default="text", help="report format (default: %(default)s)")
    p.add_argument("-o", "--output", default=None, help="write the report here instead of stdout")
    p.set_defaults(func=run)


FLEET_HELP = """The cards of a fleet: one verdict per card, the rollout gate, a fleet baseline.

  gpuperf fleet report ROOT/<run> [--confirm ROOT/<confirm-run>] [--format text|json|html] [-o FILE]
                       [--min-cohort N] [--fdr Q] [--keep-disturbed]
                       [--drain [--execute] [--drain-command TEMPLATE]]
      every card against its model's reviewed baseline and against its cohort (robust z, BH);
      exit 0 every card ok or warn, 1 a card fails, 3 uncertain cards only (flagged against the fleet and
      not yet confirmed: re-run them and pass --confirm), 2 bad input (no results found is an error)
  gpuperf fleet compare OLD_RUN NEW_RUN [--test welch|mannwhitney] [--format text|json] [-o FILE]
      two cohorts (old driver, new driver), the spread between cards as the unit; exit 1 when a metric
      is significantly worse beyond its floor, 2 bad input
  gpuperf fleet baseline ROOT/<run> --dir DIR
      baseline entries for review: the cohort median after leaving out flagged cards

A fleet run is a folder ROOT/<fleet-run-id>/ with one subfolder per job holding its results files
(--gpuperf-json) and optionally job.json; docs/fleet.md.
"""


def register_fleet(sub: Any) -> None:
    """``gpuperf fleet``: the analysis subcommands here, the Slurm side's in the marked block below."""
    parser = sub.add_parser("fleet", help="the cards of a fleet: report (verdict per card), compare (rollout "
                                          "gate), baseline (from a fleet run)", description=FLEET_HELP,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    fs = parser.add_subparsers(dest="fleet_command", required=True, metavar="SUBCOMMAND")
    _register_report(fs)
    _register_compare(fs)
    _register_baseline(fs)
    from .slurm_submit import register_submit  # the Slurm side: `gpuperf fleet submit` / `status` / `wait`

    register_submit(fs)


def _fleet_source(args: argparse.Namespace, root: str | None) -> Any:
    from . import fleetload

    if getattr(args, "files", None):
        pairs = []
        for item in args.files:
            label, sep, path = item.partition("=")
            if not sep or not label or not path:
                raise GpuPerfError(f"--files {item!r}: write LABEL=FILE (a card's label, then its results file)")
            pairs.append((label, path))
        return fleetload.load_labelled(pairs, run_id=root or "files")
    if not root:
        raise GpuPerfError("name the fleet-run folder (ROOT/<fleet-run-id>) or pass --files LABEL=FILE ...")
    return fleetload.load(root)


def _write(text: str, output: str | None) -> None:
    if output:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        Path(output).write_text(text + "\n", encoding="utf-8")
    else:
        sys.stdout.write(text + "\n")


def _register_report(fs: Any) -> None:
    from ..baselines import cohort
    from .fleetreport import DRAIN_COMMAND

    p = fs.add_parser("report", help="one verdict per card (ok, warn, uncertain, fail), worst first",
                      description=FLEET_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", nargs="?", default=None, help="the fleet-run folder ROOT/<fleet-run-id>")
    p.add_argument("--files", nargs="+", metavar="LABEL=FILE", default=None,
                   help="instead of a folder: results files, each with the label of its card (one label for several "
                        "files of one card), e.g. saved runs that record no UUID")
    p.add_argument("--confirm", default=None, metavar="ROOT/<confirm-run-id>",
                   help="the confirmation re-run of flagged cards: a card it flags again fails")
    p.add_argument("--format", choices=("text", "json", "html"), default="text",
                   help="report format (default: %(default)s; html: one self-contained file, best with -o)")
    p.add_argument("-o", "--output", default=None, help="write the report here instead of stdout")
    p.add_argument("--min-cohort", type=int, default=cohort.MIN_COHORT, metavar="N",
                   help=f"cards a cohort needs for a fleet-relative verdict (default {cohort.MIN_COHORT})")
    p.add_argument("--fdr", type=float, default=cohort.FDR, metavar="Q",
                   help=f"false-discovery rate of the outlier flags, Benjamini-Hochberg (default {cohort.FDR})")
    p.add_argument("--keep-disturbed", action="store_true",
                   help="judge figures measured throttled or contended too (a test cluster whose one host runs every "
                        "job at once); by default they are left out of the fleet statistics and named")
    p.add_argument("--drain", action="store_true",
                   help="print the Slurm drain command of each node holding a failed card (dry run)")
    p.add_argument("--execute", action="store_true", help="with --drain: run the drain commands")
    p.add_argument("--drain-command", default=DRAIN_COMMAND, metavar="TEMPLATE",
                   help="the drain command, with {node} and {reason} (each shell-quoted); default: %(default)s")
    p.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    import shlex
    import subprocess

    from . import fleetformat, fleetload, fleetreport

    if args.min_cohort < 2:
        raise GpuPerfError(f"--min-cohort {args.min_cohort}: a cohort needs at least 2 cards to have peers")
    if not 0.0 < args.fdr < 1.0:
        raise GpuPerfError(f"--fdr {args.fdr}: a false-discovery rate lies between 0 and 1")
    if args.execute and not args.drain:
        raise GpuPerfError("--execute runs the drain commands: pass it with --drain")
    try:
        args.drain_command.format(node="n", reason="r")
    except (KeyError, IndexError, ValueError) as exc:
        raise GpuPerfError(f"--drain-command {args.drain_command!r}: use only {{node}} and {{reason}} ({exc})") from None
    fleet = _fleet_source(args, args.run)
    confirm = fleetload.load(args.confirm) if args.confirm else None
    settings = fleetreport.Settings(min_cohort=args.min_cohort, fdr=args.fdr, keep_disturbed=args.keep_disturbed)
    report = fleetreport.analyze(fleet, confirm, settings)
    drain = fleetreport.drain_commands(report, args.drain_command) if args.drain else []
    if args.execute:
        for cmd in drain:
            done = subprocess.run(shlex.split(cmd), check=False, capture_output=True, text=True)
            if done.returncode:
                raise GpuPerfError(f"drain command failed ({done.returncode}): {cmd}: {done.stderr.strip()}")
        report["drained"] = drain
    _write(fleetformat.render(report, args.format, drain), args.output)
    if args.output and args.drain:  # the report went to a file: the commands are what the operator reads here
        for cmd in drain:
            print(("drained: " if args.execute else "") + cmd)
        if not drain:
            print("no node to drain: no card failed")
    return fleetreport.exit_status(report)


def _register_compare(fs: Any) -> None:
    from .rollout import COMPARE_FDR, TESTS

    what = "the rollout gate: fleet run NEW against OLD, the spread between cards as the unit"
    p = fs.add_parser("compare", help=what, formatter_class=argparse.RawDescriptionHelpFormatter,
                      description=f"gpuperf fleet compare OLD NEW: {what}. Each metric both runs hold is tested over "
                                  "one value per card (Welch's t, or Mann-Whitney), Benjamini-Hochberg across metrics; "
                                  "exit 1 where a metric is worse on the new cohort beyond its floor, else 0.")
    p.add_argument("old", help="the fleet-run folder of the old cohort (e.g. the old driver)")
    p.add_argument("new", help="the fleet-run folder of the new cohort")
    p.add_argument("--test", choices=TESTS, default="welch",
                   help="Welch's t over per-card values (default) or Mann-Whitney")
    p.add_argument("--fdr", type=float, default=COMPARE_FDR, metavar="Q",
                   help=f"false-discovery rate across metrics, Benjamini-Hochberg (default {COMPARE_FDR})")
    p.add_argument("--format", choices=("text", "json"), default="text", help="report format (default: %(default)s)")
    p.add_argument("-o", "--output", default=None, help="write the report here instead of stdout")
    p.set_defaults(func=run_compare)


def run_compare(args: argparse.Namespace) -> int:
    from . import fleetload, rollout

    if not 0.0 < args.fdr < 1.0:
        raise GpuPerfError(f"--fdr {args.fdr}: a false-discovery rate lies between 0 and 1")
    report = rollout.compare(fleetload.load(args.old), fleetload.load(args.new), args.test, args.fdr)
    text = json.dumps(report, indent=1, default=str) if args.format == "json" else rollout.compare_text(report)
    _write(text, args.output)
    return 1 if report["worse"] else 0


def _register_baseline(fs: Any) -> None:
    p = fs.add_parser("baseline", help="baseline entries for review from a fleet run (flagged cards left out)",
                      description=FLEET_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", nargs="?", default=None, help="the fleet-run folder ROOT/<fleet-run-id>")
    p.add_argument("--files", nargs="+", metavar="LABEL=FILE", default=None, help="as for gpuperf fleet report")
    p.add_argument("--dir", required=True, help="baseline folder to write into (review it: gpuperf baseline diff)")
    p.add_argument("--k", type=float, default=6.0, help="band = k x the noise (as gpuperf baseline from-results)")
    p.set_defaults(func=run_baseline)


def run_baseline(args: argparse.Namespace) -> int:
    from . import rollout

    for w in rollout.fleet_baseline(_fleet_source(args, args.run), args.dir, args.k):
        extra = f"; left out (flagged): {', '.join(w['excluded'])}" if w["excluded"] else ""
        other = f"; other cohorts not used: {'; '.join(w['other_cohorts'])}" if w["other_cohorts"] else ""
        dropped = (f"; {len(w['dropped'])} metric(s) kept only from the cards that recorded them the way most did "
                   f"(unit, direction, identity)") if w["dropped"] else ""
        print(f"{w['path']}: {w['backend']}: {w['metrics']} metrics from {len(w['cards'])} card(s) of "
              f"{w['cohort']}{extra}{other}{dropped}")
    return 0


def _results_document(path: str, raw: Any) -> ResultsDocument:
    """``raw`` (the JSON of ``path``) as a :class:`ResultsDocument`; a clear error where it is not one."""
    try:
        doc = ResultsDocument.from_json(raw, path)
    except ResultsDocumentError:
        doc = None
    if doc is None or doc.schema != RESULTS_SCHEMA:
        raise GpuPerfError(f"{path} is not a pytest-gpuperf results document (schema {RESULTS_SCHEMA})")
    return doc


def run(args: argparse.Namespace) -> int:
    try:
        raws = load_documents(args.results)
    except (OSError, ValueError) as exc:
        raise GpuPerfError(f"cannot read the results: {exc}") from exc
    # the report a run wrote beside its results (siblings.json) matches a glob of them: read past, and said
    pairs = [(path, raw) for path, raw in zip(args.results, raws)
             if not (isinstance(raw, dict) and raw.get("schema") == SIBLINGS_SCHEMA)]
    for path in sorted(set(args.results) - {p for p, _ in pairs}):
        print(f"gpuperf siblings: {path} is a siblings report, not a run's results: left out", file=sys.stderr)
    docs = [_results_document(path, raw) for path, raw in pairs]
    rep = siblings.check(docs, floor=args.threshold)
    if not rep["groups"]:
        raise GpuPerfError("no two cards of one model (device key and backend) among the files")
    if args.format == "json":
        text = json.dumps(rep, indent=1)
    else:
        text = "\n".join(t for t, _ in siblings.summary_lines(rep, limit=10**6))
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    else:
        sys.stdout.write(text + "\n")
    return 1 if rep["outliers"] else 0
