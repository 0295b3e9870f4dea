"""Passwords never leave the process: the one place a database URL, a connection string or a command
line is made safe to print or to store.

A history target may be a PostgreSQL URL with its password (``postgresql://user:pw@host/db``). The URL
reaches the terminal (``gpuperf wrote …``, error messages), the results JSON and the history (the
command line a run keeps as ``run.argv``) and an offline bundle's ``OUT.tgz`` (its log). Every one of them
goes through :func:`redact` (a text) or :func:`redact_argv` (a command line)."""

from __future__ import annotations

import re
from typing import Iterable

#: what stands where a password was
MASK = "***"


def redact(text: str) -> str:
    """``text`` with every password of a database URL or connection string in it replaced by ``***``
    (``user:password@…``, ``?password=…``, ``password=…``): all that may be printed or stored of a URL."""
    text = re.sub(r"(://[^:/@\s]*):[^@/\s]*@", rf"\1:{MASK}@", text)
    return re.sub(r"((?:[?&]|\b)password=)[^&\s'\"]*", rf"\1{MASK}", text, flags=re.IGNORECASE)


def redact_argv(argv: Iterable[object]) -> list[str]:
    """A command line as it may be printed or stored: each argument :func:`redact`-ed."""
    return [redact(str(a)) for a in argv]
