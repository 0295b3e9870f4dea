"""``gpuperf siblings R0.json R1.json …``: the sibling check on saved results files (one per card).

Exit status: 0 no outlier, 1 an outlier card, 2 bad input (unreadable file, not a results document,
fewer than two cards of one model)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .. import RESULTS_SCHEMA
from ..errors import GpuPerfError
from . import siblings
from .slurm_submit import register_submit
from .workers import load_documents


def register(sub: Any) -> None:
    """The ``siblings`` command and the ``fleet`` group (``gpuperf``'s one entry for this package)."""
    register_siblings(sub)
    register_fleet(sub)


def register_fleet(sub: Any) -> None:
    """``gpuperf fleet``: the cards of many hosts."""
    parser = sub.add_parser("fleet", help="the cards of a fleet: submit a fleet run on Slurm, follow its jobs")
    fs = parser.add_subparsers(dest="fleet_command", required=True, metavar="SUBCOMMAND")
    # ===== the Slurm side: `gpuperf fleet submit` / `status` (fleet/slurm*.py) registers its subcommands here =====
    register_submit(fs)
    # ===== end of the Slurm side =====


def register_siblings(sub: Any) -> None:
    p = sub.add_parser("siblings", help="compare cards of one model in one host: the card worse than its siblings",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+", help="results JSON files of one run, one per device (--gpuperf-json)")
    p.add_argument("--threshold", type=float, default=None, metavar="F",
                   help="one relative effect for every metric (0.05 = 5 %%) instead of each metric class's floor")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("-o", "--output", default=None, help="write the report here instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        docs = load_documents(args.results)
    except (OSError, ValueError) as exc:
        raise GpuPerfError(f"cannot read the results: {exc}") from exc
    for path, doc in zip(args.results, docs):
        if not isinstance(doc, dict) or doc.get("schema") != RESULTS_SCHEMA:
            raise GpuPerfError(f"{path} is not a pytest-gpuperf results document (schema {RESULTS_SCHEMA})")
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
