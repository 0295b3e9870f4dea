"""Each reviewed GPU baseline holds every figure its card's latest saved A/A run records, measured the same way.

A metric the baseline lacks reads ``new`` and one it holds measured another way (another identity) reads
``incomparable``: neither is gated, and the run's ``pass`` says nothing about them. The H100 baseline once went
stale that way for its launches, 1–16 MiB copies and cache sizes, and its gate check's launch and copy plants
read ``new`` and ``incomparable`` instead of ``regressed``; this keeps the shipped baselines current with the
suites the saved runs ran.
"""

from __future__ import annotations

import pytest

from pytest_gpuperf.baselines import baseline_file
from pytest_gpuperf.paths import REVIEWED_BASELINES
from suite_support import load_script

aa_bands = load_script("aa_bands")
pytestmark = pytest.mark.xdist_group("saved-aa-runs")


@pytest.mark.parametrize("key", aa_bands.KEYS)
def test_the_latest_a_a_run_of_each_card_reads_nothing_new_or_measured_another_way(key):
    runs = aa_bands.aa_runs(key, "cuda")
    assert runs, f"no saved A/A run of {key}"
    latest = max(runs, key=lambda r: r.started)
    metrics = baseline_file.load(REVIEWED_BASELINES, key).data["backends"]["cuda"]["metrics"]
    lacking = sorted(n for n in latest.metrics if n not in metrics)
    other = sorted(n for n, m in latest.metrics.items()
                   if n in metrics and (m.get("identity") or {}) != (metrics[n].get("identity") or {}))
    fix = ("gpuperf baseline from-results --dir pytest_gpuperf/baselines/reviewed --identity-changed <the A/A runs "
           "that recorded them>, then scripts/derived_bands.py --write")
    assert not lacking, f"{key}: {latest.label} records {len(lacking)} metric(s) its baseline lacks " \
                        f"({', '.join(lacking[:5])}): {fix}"
    assert not other, f"{key}: {latest.label} measured {len(other)} metric(s) another way than its baseline " \
                      f"({', '.join(other[:5])}): {fix}"
