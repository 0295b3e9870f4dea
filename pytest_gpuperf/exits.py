"""Exit statuses of a run that could not be a gate, one per reason, beside pytest's own 0–5.

A CI script can tell "the code regressed" (pytest's 1) from "this run judged nothing it was asked to"
without parsing the log; the summary's last lines name the reason in words too."""

from __future__ import annotations

#: ``--gpuperf-require-baseline`` and a device had no baseline of its own, nor a reviewed one
NO_BASELINE = 6

REASONS = {NO_BASELINE: "NO BASELINE"}
