"""Which store a ``--gpuperf-history`` / ``--db`` value names, and whether it can be written.

Chosen by URL, as pytest-benchmark's ``--benchmark-storage``: ``postgresql://…`` (or ``postgres://``)
is PostgreSQL, ``sqlite:///relative.db`` / ``sqlite:////abs.db`` or a plain path is SQLite, and a path ending in ``.jsonl`` is the
legacy one-line-per-run file. Which backend then serves it, and the early check that it can be
written, is :mod:`.backends`' job: this module knows no backend.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import GpuPerfError
from ..util.redaction import redact


class HistoryTargetError(GpuPerfError):
    """The history target cannot be used; the message names the problem and the fix."""


def disk_full(exc: BaseException, path: str | os.PathLike[str] | None = None) -> bool:
    """Whether ``exc`` says the disk (or the database server's disk) is full: ENOSPC, SQLite's
    ``SQLITE_FULL`` ("database or disk is full"), PostgreSQL's SQLSTATE 53100 (disk_full) — or a SQLite
    I/O error while the filesystem holding ``path`` has no free block left (SQLite reports a write into
    its full WAL or shared-memory file as "disk I/O error")."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        if code == sqlite3.SQLITE_FULL or "disk is full" in str(exc):
            return True
        return code is not None and code & 0xFF == sqlite3.SQLITE_IOERR and path is not None and _no_space(path)
    return getattr(exc, "sqlstate", None) == "53100"


def _no_space(path: str | os.PathLike[str]) -> bool:
    """Whether the filesystem holding ``path`` (or its nearest existing parent) has no free block."""
    where = Path(path)
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        st = os.statvfs(where)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 64 * 1024  # less than one page of the WAL: nothing more fits


def full_error(where: str, exc: BaseException) -> HistoryTargetError:
    """The one message of a full disk: what is full, and that nothing was half-written."""
    return HistoryTargetError(f"history target {where}: the disk is full ({redact(str(exc).strip() or type(exc).__name__)}); "
                              f"nothing of this run was written (its transaction was rolled back) and the history is "
                              f"intact — free space there, or choose another --db / --gpuperf-history")


@dataclass(frozen=True)
class Target:
    kind: str  # "sqlite", "postgresql" or "jsonl"
    location: str  # a filesystem path, or the PostgreSQL URL (with its password: never print it, print the Target)

    def __str__(self) -> str:
        return redact(self.location)


def parse(value: str) -> Target:
    """Classify a history URL or path (no I/O)."""
    text = str(value).strip()
    if not text:
        raise HistoryTargetError("history target is empty; give a path such as results/history.db or a "
                                 "postgresql:// URL")
    scheme = urlsplit(text).scheme.lower() if "://" in text else ""
    if scheme in ("postgresql", "postgres"):
        return Target("postgresql", text)
    if scheme == "sqlite":
        # as SQLAlchemy: sqlite:///relative.db, sqlite:////absolute/path.db
        rest = text.split("://", 1)[1]
        path = rest[1:] if rest.startswith("/") else rest
        if not path:
            raise HistoryTargetError(f"history target {redact(text)!r} names no file; use sqlite:///path/history.db")
        return Target("sqlite", path)
    if scheme in ("file", ""):
        path = text.split("://", 1)[1] if scheme else text
        return Target("jsonl" if path.endswith(".jsonl") else "sqlite", path)
    raise HistoryTargetError(f"history target {redact(text)!r} has unknown scheme {scheme!r}; use a file path "
                             f"(path.db for SQLite, path.jsonl for the legacy format), sqlite:///path or "
                             f"postgresql://user@host/dbname")
