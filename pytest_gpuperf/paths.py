"""Where the package's shipped files lie once installed: the suites and the reviewed baselines.

One home for these locations, so the plugin, the CLIs and the gate check find the same files in a
checkout, in a wheel installed into a virtual environment, or on an offline host's bundle."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent

#: the benchmark suites (``pytest --pyargs pytest_gpuperf.suites``; test ids ``suites/<file>::<test>``)
SUITES = PACKAGE / "suites"

#: the project's reviewed baselines for the devices it measured itself, shipped as package data: they
#: serve a device key for which the user's own baseline directory has no file
REVIEWED_BASELINES = PACKAGE / "baselines" / "reviewed"

#: the pytest argument that selects the shipped suites from any directory
SUITES_ARGS = ("--pyargs", "pytest_gpuperf.suites")


def suite_arg(arg: str, cwd: Path) -> str:
    """A pytest argument naming ``suites/…`` (a file, a node id, or the folder) as the shipped suites'
    path, unless ``cwd`` has a ``suites/`` of its own with that file (a project that keeps its own suites)."""
    if arg != "suites" and not arg.startswith("suites/"):
        return arg
    own = cwd / arg.split("::", 1)[0]
    if own.exists():
        return arg
    return str(SUITES) + arg[len("suites"):]
