"""``gpuperf run [PYTEST ARGS]``: the shipped suites under pytest, from any directory.

The same as ``python -m pytest --pyargs pytest_gpuperf.suites [PYTEST ARGS]``: the rootdir (and so the
default ``./baselines``, the commit a run records, pytest's ini file) is the directory it runs in, the
user's repository. A ``suites/<file>[::test]`` argument names a shipped suite file, and a path of the
user's own (a test file, a folder, a node id ``file::test`` that exists) names their tests: with either,
only the named tests run; with neither, the shipped suites."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from .paths import SUITES_ARGS, suite_arg


#: pytest options whose value is the next argument (``-k EXPR``, ``--ignore PATH``): that value names no test
VALUE_OPTIONS = frozenset({"-k", "-m", "-p", "-o", "-c", "-W", "-n", "--rootdir", "--ignore", "--ignore-glob",
                           "--deselect", "--confcutdir", "--basetemp", "--override-ini", "--config-file",
                           "--junit-xml", "--junitxml", "--log-file", "--maxfail", "--durations", "--tb",
                           "--import-mode", "--capture", "--gpuperf-plant", "--gpuperf-device"})


def named_tests(args: Sequence[str], cwd: Path) -> list[str]:
    """The arguments of ``args`` that name tests: ``suites``/``suites/…`` (the shipped suites) and
    positional arguments naming a file, folder or node id that exists under ``cwd`` — not options, nor
    the value of an option that takes one (:data:`VALUE_OPTIONS`)."""
    out: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a.startswith("-"):
            skip = a in VALUE_OPTIONS
            continue
        if a == "suites" or a.startswith("suites/") or (cwd / a.split("::", 1)[0]).exists():
            out.append(a)
    return out


def shadowing(cwd: Path) -> str | None:
    """Why pytest run in ``cwd`` would meet two copies of this package, or None: ``cwd`` holds a
    ``pytest_gpuperf`` package (a checkout of this project) other than the one installed, and pytest, whose
    rootdir is ``cwd``, would import the suites from one and their package from the other (every suite file
    an "import file mismatch")."""
    local = cwd / "pytest_gpuperf" / "__init__.py"
    installed = Path(__file__).resolve().parent
    if not local.is_file() or local.parent.resolve() == installed:
        return None
    return (f"{cwd} holds a copy of pytest_gpuperf ({local.parent}) other than the installed one ({installed}), "
            f"and pytest run here would import both; run from another folder, or install this copy "
            f"(pip install -e {cwd})")


def command(args: Sequence[str], cwd: Path | None = None) -> list[str]:
    """The pytest command line ``gpuperf run ARGS`` executes: the tests ``args`` name
    (:func:`named_tests`), or the shipped suites when they name none."""
    here = cwd or Path.cwd()
    mapped = [suite_arg(a, here) for a in args]
    named = bool(named_tests(args, here))
    # the rootdir is the user's directory even when suite files are named: pytest would take their
    # common ancestor, inside the installed package (baselines, commit and corpus would be looked up there)
    root = [] if any(a == "--rootdir" or a.startswith("--rootdir=") for a in args) else [f"--rootdir={here}"]
    return [sys.executable, "-m", "pytest", *root, *([] if named else SUITES_ARGS), *mapped]


def main(args: Sequence[str]) -> int:
    """Become pytest on the shipped suites (exec: signals such as Ctrl-C reach pytest itself, which ends
    the run as interrupted and still writes its results); its exit status is the command's."""
    why = shadowing(Path.cwd())
    if why:
        print(f"gpuperf run: {why}", file=sys.stderr)
        return 2
    cmd = command(args)
    if hasattr(os, "execv"):
        os.execv(cmd[0], cmd)
    return subprocess.call(cmd)  # pragma: no cover - platforms without exec


def register(sub: argparse._SubParsersAction) -> None:
    """``gpuperf run`` in ``gpuperf --help`` (the arguments themselves go to pytest untouched:
    :func:`pytest_gpuperf.cli.main` hands them over before argparse sees them)."""
    sub.add_parser("run", help="run the shipped suites under pytest: gpuperf run --gpuperf-device=0 [PYTEST ARGS]",
                   add_help=False)
