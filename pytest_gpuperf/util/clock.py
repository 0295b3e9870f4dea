"""The session clock that time budgets count from (``--gpuperf-accuracy-budget``,
``--gpuperf-tuning-budget``): the start of the pytest session, not the moment a module was imported —
collection, imports and earlier sessions in the same process would otherwise eat the budget. Each such
budget is declared by :func:`add_budget_option`, so every area's budget promises the same."""

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


def add_budget_option(group: pytest.OptionGroup, option: str, skips: str, more: str = "") -> None:
    """Declare ``option``, a time budget in seconds counted on this clock: ``skips`` names what the area
    skips once it is spent (``"tuning suite: skip kernels"``); ``more`` adds to the help (its ini key)."""
    group.addoption(option, type=float, default=None, metavar="S",
                    help=f"{skips} that would start more than S seconds after the session began (skipped with the "
                         "reason), so a time-boxed run (GPU sessions) still ends normally and writes its results"
                         + more)
