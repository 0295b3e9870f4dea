"""The session clock that time budgets count from (``--gpuperf-accuracy-budget``,
``--gpuperf-tuning-budget``): the start of the pytest session, not the moment a module was imported —
collection, imports and earlier sessions in the same process would otherwise eat the budget."""

from __future__ import annotations

import time

import pytest

_START = pytest.StashKey[float]()


def mark_session_start(config: pytest.Config) -> None:
    """Stamp the session's start once (each area's ``pytest_sessionstart`` calls this; the first wins)."""
    if _START not in config.stash:
        config.stash[_START] = time.monotonic()


def session_elapsed(config: pytest.Config) -> float:
    """Seconds since the session started (0 before :func:`mark_session_start`)."""
    return time.monotonic() - config.stash.get(_START, time.monotonic())
