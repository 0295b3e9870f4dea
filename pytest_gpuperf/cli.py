"""``gpuperf``: the project's command line, one subcommand group per concern.

Each group lives in its concern's package and exposes ``register(subparsers)``, which adds its parser
and sets ``func`` on it; add a group (``compare``, …) by appending its module to :data:`GROUPS`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from .errors import GpuPerfError

#: (command, module with ``register(subparsers)``)
GROUPS: list[tuple[str, str]] = [
    ("run", "pytest_gpuperf.suiterun"),
    ("history", "pytest_gpuperf.history.cli"),
    ("compare", "pytest_gpuperf.compare.cli"),
    ("siblings", "pytest_gpuperf.fleet.cli"),
    ("offline", "pytest_gpuperf.offline.cli"),
    ("docs", "pytest_gpuperf.evidence.cli"),
    ("baseline", "pytest_gpuperf.baselines.cli"),
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpuperf", description="pytest-gpuperf tools outside a pytest run")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for _, module in GROUPS:
        importlib.import_module(module).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["run"]:  # every later argument is pytest's, options included
        from .suiterun import main as run

        return run(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except GpuPerfError as exc:
        print(f"gpuperf {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
