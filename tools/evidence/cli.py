"""``python3 -m tools.evidence check|write|tables`` (from the repository root): the docs' generated tables
against the runs they name. A tool of this repository, not of the package: its generators read the seeds'
studies and corpora, and a user's wheel holds none of it.

``check`` exits 1 when a doc differs from what its named results give (each doc, table and differing
cell is printed), 2 on bad input (a missing results file, an unknown table, a broken marker, no marked
table at all); ``write`` regenerates the blocks in place; ``tables`` lists the table names.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from pytest_gpuperf.errors import GpuPerfError

from . import docsync
from .registry import tables


def build_parser() -> argparse.ArgumentParser:
    """The command's parser: one action (``check``, ``write``, ``tables``) and its arguments."""
    p = argparse.ArgumentParser(prog="python3 -m tools.evidence", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    acts = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, helptext in (("check", "fail where a doc differs from what its results give"),
                           ("write", "regenerate every marked table in place")):
        a = acts.add_parser(name, help=helptext)
        a.add_argument("docs", nargs="*", metavar="DOC", help=f"docs to look at (default: {docsync.DEFAULT_DOCS})")
        a.add_argument("--root", default=".", help="repository root holding docs/ and results/ (default: .)")
    acts.add_parser("tables", help="list the table names a marker may use")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run one action; bad input (:class:`GpuPerfError`) is printed and exits 2."""
    args = build_parser().parse_args(argv)
    try:
        return _act(args)
    except GpuPerfError as exc:
        print(f"python3 -m tools.evidence {args.action}: error: {exc}", file=sys.stderr)
        return 2


def _act(args: argparse.Namespace) -> int:
    if args.action == "tables":
        for name, fn in sorted(tables().items()):
            print(f"{name}: {' '.join((fn.__doc__ or '').split('. ')[0].split())}")
        return 0
    root = Path(args.root).resolve()
    if args.action == "write":
        count, changed = docsync.write(root, args.docs)
        print(f"{count} tables made; changed: {', '.join(changed) or 'none'}")
        return 0
    count, problems = docsync.check(root, args.docs)
    for p in problems:
        print(p, file=sys.stderr)
    print(f"{count} tables checked, {len(problems)} differ from their results"
          + (": run `python3 -m tools.evidence write` and review the change" if problems else ""))
    return 1 if problems else 0
