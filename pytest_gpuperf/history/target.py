"""Which store a ``--gpuperf-history`` / ``--db`` value names, and whether it can be written.

Chosen by URL, as pytest-benchmark's ``--benchmark-storage``: ``postgresql://…`` (or ``postgres://``)
is PostgreSQL, ``sqlite:///relative.db`` / ``sqlite:////abs.db`` or a plain path is SQLite, and a path ending in ``.jsonl`` is the
legacy one-line-per-run file. The check runs before any test so a typo fails in a second with one line,
not after an hour of benchmarks whose history is then lost.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import GpuPerfError


class HistoryTargetError(GpuPerfError):
    """The history target cannot be used; the message names the problem and the fix."""


@dataclass(frozen=True)
class Target:
    kind: str  # "sqlite", "postgresql" or "jsonl"
    location: str  # a filesystem path, or the PostgreSQL URL

    def __str__(self) -> str:
        return self.location


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
            raise HistoryTargetError(f"history target {text!r} names no file; use sqlite:///path/history.db")
        return Target("sqlite", path)
    if scheme in ("file", ""):
        path = text.split("://", 1)[1] if scheme else text
        return Target("jsonl" if path.endswith(".jsonl") else "sqlite", path)
    raise HistoryTargetError(f"history target {text!r} has unknown scheme {scheme!r}; use a file path "
                             f"(path.db for SQLite, path.jsonl for the legacy format), sqlite:///path or "
                             f"postgresql://user@host/dbname")


def check(value: str) -> Target:
    """Parse and verify that the target can be written (databases: connect and migrate the schema)."""
    target = parse(value)
    if target.kind == "postgresql":
        from .store import open_store  # connecting is the only real check of a URL

        open_store(target).close()
        return target
    path = Path(target.location)
    if path.is_dir():
        raise HistoryTargetError(f"history target {path} is a directory; name a file in it, e.g. "
                                 f"--gpuperf-history={path / 'history.db'}")
    parent = path.parent if str(path.parent) else Path(".")
    existing = parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise HistoryTargetError(f"history target {path}: {existing} is not a directory; choose a path whose "
                                 f"parent is a directory")
    if path.exists() and not os.access(path, os.W_OK):
        raise HistoryTargetError(f"history target {path} is not writable; fix its permissions or choose "
                                 f"another path")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise HistoryTargetError(f"history target {path}: directory {existing} is not writable; choose a "
                                 f"writable location")
    try:
        if target.kind == "jsonl":
            from .jsonl import validate

            path.parent.mkdir(parents=True, exist_ok=True)
            validate(path)
        else:
            from .store import open_store

            open_store(target).close()  # creates the file and its schema now: proves it can be written
    except OSError as exc:
        raise HistoryTargetError(f"history target {path} cannot be written ({exc.strerror or exc}); choose a "
                                 f"writable path") from None
    return target
