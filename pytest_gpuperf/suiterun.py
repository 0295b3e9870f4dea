"""``gpuperf run [PYTEST ARGS]``: the shipped suites under pytest, from any directory.

The same as ``python -m pytest --pyargs pytest_gpuperf.suites [PYTEST ARGS]``: the rootdir (and so the
default ``./baselines``, the commit a run records, pytest's ini file) is the directory it runs in, the
user's repository. A ``suites/<file>[::test]`` argument names a shipped suite file; with one, only the
named files run."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from .paths import SUITES_ARGS, suite_arg


def command(args: Sequence[str], cwd: Path | None = None) -> list[str]:
    """The pytest command line ``gpuperf run ARGS`` executes."""
    here = cwd or Path.cwd()
    mapped = [suite_arg(a, here) for a in args]
    named = any(a == "suites" or a.startswith("suites/") for a in args)
    # the rootdir is the user's directory even when suite files are named: pytest would take their
    # common ancestor, inside the installed package (baselines, commit and corpus would be looked up there)
    root = [] if any(a == "--rootdir" or a.startswith("--rootdir=") for a in args) else [f"--rootdir={here}"]
    return [sys.executable, "-m", "pytest", *root, *([] if named else SUITES_ARGS), *mapped]


def main(args: Sequence[str]) -> int:
    """Become pytest on the shipped suites (exec: signals such as Ctrl-C reach pytest itself, which ends
    the run as interrupted and still writes its results); its exit status is the command's."""
    cmd = command(args)
    if hasattr(os, "execv"):
        os.execv(cmd[0], cmd)
    return subprocess.call(cmd)  # pragma: no cover - platforms without exec


def register(sub: argparse._SubParsersAction) -> None:
    """``gpuperf run`` in ``gpuperf --help`` (the arguments themselves go to pytest untouched:
    :func:`pytest_gpuperf.cli.main` hands them over before argparse sees them)."""
    sub.add_parser("run", help="run the shipped suites under pytest: gpuperf run --gpuperf-device=0 [PYTEST ARGS]",
                   add_help=False)
