"""Atomic file replacement: write a temporary file in the target's directory, fsync, rename.

A crash or SIGKILL at any moment leaves either the old file or the new one — never a torn mix —
because ``os.replace`` is atomic on POSIX within one filesystem.
"""

from __future__ import annotations

import glob
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable


#: a temporary file of an unlocked write (results, caches) older than this is a killed writer's leftover
STALE_AFTER_S = 3600.0


def atomic_write_chunks(path: str | os.PathLike[str], chunks: Iterable[bytes]) -> None:
    """Write ``chunks`` to ``path`` atomically; the temp file is removed if writing fails. Leftover
    temporary files of ``path`` older than :data:`STALE_AFTER_S` (killed writes) are removed first."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(target, older_than_s=STALE_AFTER_S)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(target), suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        if target.exists():
            os.chmod(tmp, target.stat().st_mode & 0o777)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:  # make the rename itself durable
        dfd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def temp_prefix(target: Path) -> str:
    """Name prefix of the temporary files :func:`atomic_write_chunks` makes for ``target``."""
    return f".{target.name}."


def remove_stale_temps(path: str | os.PathLike[str], older_than_s: float = 0.0) -> list[Path]:
    """Delete the temporary files that killed writes of ``path`` left behind (a SIGKILL mid-write skips
    the cleanup in :func:`atomic_write_chunks`). With ``older_than_s=0`` call it only while holding the
    lock every writer of ``path`` takes, so no live writer's file is among them; without a lock, only
    files older than any live write are safe to remove. Returns what was removed."""
    target = Path(path)
    removed: list[Path] = []
    if not target.parent.is_dir():
        return removed
    now = time.time()
    for tmp in target.parent.glob(glob.escape(temp_prefix(target)) + "*.tmp"):
        try:
            if older_than_s and now - tmp.stat().st_mtime < older_than_s:
                continue
            tmp.unlink()
            removed.append(tmp)
        except FileNotFoundError:
            pass
    return removed


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    atomic_write_chunks(path, [text.encode("utf-8")])


def atomic_write_json(path: str | os.PathLike[str], data: Any) -> None:
    """JSON with sorted-free, indented, trailing-newline output so diffs of reviewed files stay small."""
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=False, allow_nan=False) + "\n")


def unclaimed(path: str | os.PathLike[str], since_ns: int) -> Path:
    """Where a run that started at ``since_ns`` (``time.time_ns()``) writes the file it was told to write at
    ``path``: ``path`` itself when nothing is there or what is there is older than the run (an earlier
    run's, replaced as before); else — another run wrote it meanwhile, the two ran at the same time — the
    first of ``<stem>-2<suffix>``, ``-3``… that does not exist, so neither run is lost. The caller holds a
    lock on ``path`` (:func:`pytest_gpuperf.util.locks.file_lock`) from this choice until its write is done."""
    target = Path(path)
    try:
        if target.stat().st_mtime_ns < since_ns:
            return target
    except FileNotFoundError:
        if not os.path.lexists(target):
            return target
    n = 2
    while os.path.lexists(other := target.with_name(f"{target.stem}-{n}{target.suffix}")):
        n += 1
    return other
