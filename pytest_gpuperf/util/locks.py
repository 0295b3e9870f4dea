"""Where the lock of a shared file lives: ``<its folder>/.gpuperf-locks/<its name>.lock``.

Every writer of a baseline, a results file, a gate-check file, a history file or an offline store holds
a :mod:`filelock` lock around its read-modify-write, so two processes writing one file at once keep
each other's work. The lock file cannot be removed after release (a waiter holding the old file open
would then lock a file no one else sees, and two writers would run at once), so it stays — in a hidden
folder beside the file, whose own ``.gitignore`` ignores everything in it: ``git add baselines/`` (or
``results/``) never commits a lock, in a repository whose ignore rules know nothing of gpuperf, and the
lock is as shared as the file itself (whoever can write the file's folder takes the same lock)."""

from __future__ import annotations

import os
from pathlib import Path

from filelock import FileLock

from .atomic import atomic_write_text

#: the folder beside a locked file that holds its lock
FOLDER = ".gpuperf-locks"
#: what that folder's ``.gitignore`` says: everything here, itself included, is ignored
IGNORE = "# locks of pytest-gpuperf's writers: never committed\n*\n"


def lock_path(path: str | os.PathLike[str]) -> Path:
    """The lock file of ``path`` (its folder's :data:`FOLDER`, created with its ``.gitignore``)."""
    target = Path(path)
    folder = target.parent / FOLDER
    ignore = folder / ".gitignore"
    if not ignore.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        try:
            atomic_write_text(ignore, IGNORE)  # two writers at once write the same text: either rename wins
        except OSError:
            pass  # a full disk: the (empty) lock file can still be made, and the write it guards reports the disk
    return folder / f"{target.name}.lock"


def file_lock(path: str | os.PathLike[str], timeout: float = -1) -> FileLock:
    """The lock every writer of ``path`` holds around its read-modify-write (``timeout`` seconds at most;
    -1 waits as long as it takes)."""
    return FileLock(str(lock_path(path)), timeout=timeout)
