"""What one accuracy check hands its suite: the metrics to record and the problem, if any, to report.

One type for every check of the accuracy suites, so each suite test reads the same way: record every
entry of ``records`` (``gpuperf_record(**r)``), then report ``problem`` under ``key`` (a known finding of
the implementation turns it into an xfail, :func:`pytest_gpuperf.accuracy.findings.check`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Outcome:
    """The ``gpuperf_record`` arguments of one check, in recording order, and its verdict."""

    records: list[dict[str, Any]] = field(default_factory=list)
    #: the first violation found (a documented bound exceeded, an inf/nan mismatch); None: none
    problem: str | None = None
    #: the findings key of the check (``math.fp32.sin``); empty where the check has no findings entry
    key: str = ""
