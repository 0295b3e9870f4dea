"""Each reviewed GPU baseline holds every figure its card's latest saved A/A run records, measured the same way
as the newest saved run of the card that records it (a run of the card's own folder, ``-k``-selected, may
re-measure figures whose method changed since that A/A run).

A metric the baseline lacks reads ``new`` and one it holds measured another way (another identity) reads
``incomparable``: neither is gated, and the run's ``pass`` says nothing about them. The H100 baseline once went
stale that way for its launches, 1–16 MiB copies and cache sizes, and its gate check's launch and copy plants
read ``new`` and ``incomparable`` instead of ``regressed``; this keeps the shipped baselines current with the
suites the saved runs ran.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_gpuperf.baselines import baseline_file
from pytest_gpuperf.paths import REVIEWED_BASELINES
from pytest_gpuperf.util import jsonio
from suite_support import load_script

aa_bands = load_script("aa_bands")
pytestmark = pytest.mark.xdist_group("saved-aa-runs")
ROOT = Path(__file__).resolve().parents[1]


def _newer_identities(key: str, since: str) -> dict[str, dict]:
    """Metric → identity in the newest CUDA run of the card's own folder started after ``since``."""
    newest: dict[str, tuple[str, dict]] = {}
    for path in sorted((ROOT / "results" / key).glob("*-cuda.json.xz")):
        doc = jsonio.read_json(path)
        started = str((doc.get("run") or {}).get("started", ""))
        if started <= since:
            continue
        for m in doc.get("metrics") or ():
            if m["name"] not in newest or started > newest[m["name"]][0]:
                newest[m["name"]] = (started, m.get("identity") or {})
    return {name: ident for name, (_, ident) in newest.items()}


@pytest.mark.parametrize("key", aa_bands.KEYS)
def test_the_latest_a_a_run_of_each_card_reads_nothing_new_or_measured_another_way(key):
    runs = aa_bands.aa_runs(key, "cuda")
    assert runs, f"no saved A/A run of {key}"
    latest = max(runs, key=lambda r: r.started)
    metrics = baseline_file.load(REVIEWED_BASELINES, key).data["backends"]["cuda"]["metrics"]
    lacking = sorted(n for n in latest.metrics if n not in metrics)
    newer = _newer_identities(key, latest.started)
    other = sorted(n for n, m in latest.metrics.items()
                   if n in metrics and newer.get(n, m.get("identity") or {}) != (metrics[n].get("identity") or {}))
    fix = ("gpuperf baseline from-results --dir pytest_gpuperf/baselines/reviewed --identity-changed <the A/A runs "
           "that recorded them>, then scripts/derived_bands.py --write")
    assert not lacking, f"{key}: {latest.label} records {len(lacking)} metric(s) its baseline lacks " \
                        f"({', '.join(lacking[:5])}): {fix}"
    assert not other, f"{key}: {latest.label} measured {len(other)} metric(s) another way than its baseline " \
                      f"({', '.join(other[:5])}): {fix}"


def test_the_fractional_ulp_maxima_are_the_same_figure_and_input_in_every_saved_a_a_run_of_both_cards():
    """docs/accuracy.md sets one run per card in its fractional-maxima table and says each is identical, value and
    input, in every saved A/A run of its card that records it (the counts it names are those the saved runs give),
    and that the two cards agree on every function to the input."""
    seen: dict[str, dict[str, set[tuple[float, str]]]] = {}
    counts = {}
    for key in aa_bands.KEYS:
        runs = [r for r in aa_bands.aa_runs(key, "cuda")
                if any(n.endswith(".max_ulp_fractional") for n in r.metrics)]
        counts[key] = (len(runs), len({r.machine for r in runs}))
        for r in runs:
            for n, m in r.metrics.items():
                if n.startswith("accuracy.fp32.") and n.endswith(".max_ulp_fractional"):
                    where = str((m.get("info") or {}).get("worst_input_hex"))
                    seen.setdefault(n, {}).setdefault(key, set()).add((float(m["value"]), where))
    said = " ".join((ROOT / "docs" / "accuracy.md").read_text().split())
    h100, h200 = counts["nvidia-h100-80gb-hbm3"], counts["nvidia-h200"]
    sentence = f"{h100[0]} runs on {h100[1]} H100 machines, {h200[0]} runs on {h200[1]} H200 machines"
    assert sentence in said, f"docs/accuracy.md should say: {sentence}"  # the counts the saved runs give
    assert min(h100 + h200) >= 17, counts
    assert len(seen) >= 27, sorted(seen)
    for name, by_card in seen.items():
        assert all(len(v) == 1 for v in by_card.values()), (name, by_card)  # one figure and input per card
        assert len(set().union(*by_card.values())) == 1, (name, by_card)  # the same on both cards
