"""``gpuperf docs check|write|tables``: the docs' generated tables against the runs they name.

``check`` exits 1 when a doc differs from what its named results give (each doc, table and differing
cell is printed), 2 on bad input (a missing results file, an unknown table, a broken marker, no marked
table at all); ``write`` regenerates the blocks in place; ``tables`` lists the table names.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from . import docsync
from .registry import tables


def register(sub: Any) -> None:
    """Add ``docs`` to the ``gpuperf`` command (:mod:`pytest_gpuperf.cli`)."""
    p = sub.add_parser("docs", help="regenerate or check the docs' tables from the results they name",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    acts = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, helptext in (("check", "fail where a doc differs from what its results give"),
                           ("write", "regenerate every marked table in place")):
        a = acts.add_parser(name, help=helptext)
        a.add_argument("docs", nargs="*", metavar="DOC", help=f"docs to look at (default: {docsync.DEFAULT_DOCS})")
        a.add_argument("--root", default=".", help="repository root holding docs/ and results/ (default: .)")
    acts.add_parser("tables", help="list the table names a marker may use")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
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
          + (": run `gpuperf docs write` and review the change" if problems else ""))
    return 1 if problems else 0
