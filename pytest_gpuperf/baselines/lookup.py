"""Which baseline gates a device: the user's own file, else the reviewed one shipped with the package,
plus, on CPU devices, the deterministic figures of the device's family.

* ``yours`` — ``<baseline dir>/<key>.json`` (``--gpuperf-baseline-dir``, default ``./baselines`` under
  pytest's rootdir): what a team reviewed for its own card.
* ``reviewed`` — the project's baseline for that key, shipped as package data
  (:data:`pytest_gpuperf.paths.REVIEWED_BASELINES`), when the user has none.
* ``family`` — a CPU device's ``<family key>.json`` (user's, else shipped): the deterministic entries
  every CPU model of one OpenCL runtime and compiler shares (:func:`.noise.family_entries`). They gate
  what the device's own file lacks, so ulp errors and counts gate on any x86 host.
* ``none`` — nothing: the run gates only documented bounds, and the summary says so loudly.

``--gpuperf-update-baselines`` always writes the user's own file (:attr:`Source.write_path`).
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..paths import REVIEWED_BASELINES
from . import catalog, noise
from .baseline_file import BaselineFile, load, path_for

@dataclass
class Source:
    """The baseline a device is gated against, and where it came from."""

    file: BaselineFile
    origin: str
    write_path: Path
    read: list[str] = field(default_factory=list)  # the files merged, in order of precedence
    family_key: str = ""
    family_count: int = 0  # entries the family file contributed

    def own_file(self) -> str:
        """The device's own file, for the summary: ``your baseline baselines/x.json``, ``the reviewed baseline …``;
        "" where none was found (no baseline, or only the family's)."""
        own = {"yours": "your baseline", "reviewed": "the reviewed baseline shipped with pytest-gpuperf"}
        return f"{own[self.origin]} {self.read[0]}" if self.origin in own else ""

    def describe(self) -> str:
        """One phrase for the summary: ``your baseline baselines/x.json``, ``the reviewed baseline …``."""
        own = self.own_file()
        parts = [own] if own else []
        if self.family_count:
            parts.append(f"{self.family_count} deterministic entries of family {self.family_key} ({self.read[-1]})")
        return " + ".join(parts) or "no baseline"


def _first(key: str, dirs: list[tuple[str, Path]]) -> tuple[str, BaselineFile] | None:
    for origin, directory in dirs:
        if os.path.lexists(path_for(directory, key)):  # a FIFO or a link to nothing is an error of load, not "no file"
            return origin, load(directory, key)
    return None


def resolve(user_dir: Path, key: str, backend: str, family_key: str = "",
            reviewed_dir: Path = REVIEWED_BASELINES) -> Source:
    """The baseline of device ``key`` on ``backend`` (raises :class:`~pytest_gpuperf.errors.BaselineFileError`
    for a malformed file: never treated as empty)."""
    dirs = [("yours", Path(user_dir))]
    if Path(reviewed_dir).resolve() != Path(user_dir).resolve():
        dirs.append(("reviewed", Path(reviewed_dir)))
    write_path = path_for(user_dir, key)
    own = _first(key, dirs)
    if own is not None:
        origin, file = own
        read = [str(file.path)]
    else:
        origin, file, read = "none", load(user_dir, key), []
    src = Source(file, origin, write_path, read, family_key)
    fam = _first(family_key, dirs) if family_key else None
    if fam is None:
        return src
    entries = noise.family_entries(fam[1].metrics(backend))
    data = copy.deepcopy(file.data)
    metrics = data.setdefault("backends", {}).setdefault(backend, {}).setdefault("metrics", {})
    added = 0
    for name, entry in entries.items():
        if name not in metrics:
            # a family gates hosts it was not made on: a figure whose reference is the host's gets that band
            metrics[name] = {**catalog.across_hosts(name, entry), "source": f"family {family_key}"}
            added += 1
    if not added:
        return src
    section = data["backends"][backend]
    section.setdefault("provenance", fam[1].provenance(backend))
    src.file = BaselineFile(file.path, data)
    src.read.append(str(fam[1].path))
    src.family_count = added
    if src.origin == "none":
        src.origin = "family"
    return src
