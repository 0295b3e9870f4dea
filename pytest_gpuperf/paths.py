"""Where the package's shipped files lie once installed (the suites and the reviewed baselines), and the
one check a name passes before it becomes part of a path.

One home for these locations, so the plugin, the CLIs and the gate check find the same files in a
checkout, in a wheel installed into a virtual environment, or on an offline host's bundle.

A device key names a folder (``results/<key>/``, what ``gpuperf offline collect`` fills) and a file
(``baselines/<key>.json``, ``--gpuperf-json``'s ``{key}``); it comes from a driver's device name or from a
document brought back from another host. :func:`safe_name` is the one gate every such name goes
through before it is joined to a path: ``../../x``, ``/abs``, ``..``, ``a/b`` or an empty key would
otherwise read or write outside the folder meant."""

from __future__ import annotations

import re
from pathlib import Path

from . import NCU_REFERENCE_SCHEMA, TUNING_CACHE_SCHEMA
from .errors import GpuPerfError

PACKAGE = Path(__file__).resolve().parent

#: the benchmark suites (``pytest --pyargs pytest_gpuperf.suites``; test ids ``suites/<file>::<test>``)
SUITES = PACKAGE / "suites"

#: the project's reviewed baselines for the devices it measured itself, shipped as package data: they
#: serve a device key for which the user's own baseline directory has no file
REVIEWED_BASELINES = PACKAGE / "baselines" / "reviewed"

#: reviewed reference entries — exhaustive tuning tables, tuned picks and Nsight Compute profiles the
#: project measured on the cards it runs on — shipped as package data, one folder per store: a store reads
#: them where the user's own cache has no entry under a key, so a fresh machine of a card, driver and
#: toolkit the project measured replays them as a warm one replays its own (``GPUPERF_REFERENCES`` names
#: another folder, or ``off``)
REVIEWED_REFERENCES = PACKAGE / "references"

#: the folder, under the cache directory, of the tuning suite's tables and ``tuned_workgroup``'s picks
TUNING_FOLDER = "tuning"
#: the folder, under the cache directory, of the kernel-class suite's Nsight Compute profiles
NCU_FOLDER = "ncu-reference"
#: the stores whose entries may become reviewed references: their folder and the schema of an entry
REFERENCE_STORES = {TUNING_FOLDER: TUNING_CACHE_SCHEMA, NCU_FOLDER: NCU_REFERENCE_SCHEMA}

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


#: what a device key may be: the results schema's ``device.key`` pattern (``nvidia-h100-80gb-hbm3``)
KEY_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]*")


class UnsafeNameError(GpuPerfError):
    """A name that would become a path is not one plain file or folder name."""


def safe_name(name: object, what: str = "device key") -> str:
    """``name`` unchanged when it may become one file or folder name (:data:`KEY_PATTERN`: lower-case
    letters, digits and ``-``, at most 200 characters); else :class:`UnsafeNameError` naming it. Called
    wherever a key becomes a path, before anything is read or written there."""
    text = name if isinstance(name, str) else ""
    if not KEY_PATTERN.fullmatch(text) or len(text) > 200:
        raise UnsafeNameError(f"{what} {name!r} cannot name a file or folder (only lower-case letters, digits and "
                              f"'-', starting with a letter or digit); nothing was written for it — the document "
                              f"that gave it is not a run of this plugin, or was edited")
    return text
