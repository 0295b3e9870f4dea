"""Costly test set-ups made once per test run, not once per pytest-xdist worker: a session fixture runs in
every worker that runs a test needing it, so the wheel built from this checkout or the committed history's
dashboard would be built by each worker. :func:`built_once` lets the first worker build into a folder all
the workers of the run share (the parent of their temporary folders) while the others wait on a lock, then
read what it built."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

import pytest
from filelock import FileLock


def shared_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every worker of this run shares (its own base temp folder without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(root: Path, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``root/name`` (``root``: :func:`shared_root`), filled by ``build(folder)`` by the first worker
    that asks; a build that raised leaves no folder behind, so the next one that asks builds it again (and
    fails the same way, in its own test)."""
    folder, done = root / name, root / f"{name}.built"
    with FileLock(str(root / f"{name}.lock")):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            try:
                build(folder)
            except BaseException:
                shutil.rmtree(folder, ignore_errors=True)
                raise
            done.touch()
    return folder
