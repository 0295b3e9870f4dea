"""Derived figures declared informational: only rows whose every entry gated looser than 25 % on both shipped GPU
baselines, and whose spread between machines over the saved A/A runs is too wide for any affordable baseline
to gate them within 25 % (``scripts/derived_spread.py``)."""

from __future__ import annotations

import functools
import re
import statistics

import pytest

from pytest_gpuperf.baselines import baseline_file, catalog
from pytest_gpuperf.baselines.verdicts import compare
from pytest_gpuperf.paths import REVIEWED_BASELINES
from suite_support import load_script



derived_spread = load_script("derived_spread")
#: machines whose A/A runs show a spread between machines (as scripts/derived_bands.py pools from)
MIN_MACHINES = load_script("derived_bands").MIN_MACHINES
# one xdist worker runs this module with test_aa_band_plants.py and test_derived_bands.py (scripts/run_tests.sh:
# --dist loadgroup): the saved A/A runs all three read (scripts/aa_bands.py) are parsed once, not once in each worker
pytestmark = pytest.mark.xdist_group("saved-aa-runs")
DECLARED = [f.pattern for f in catalog.FAMILIES if f.is_family and f.noise is not None
            and f.noise.model == "informational" and f.pattern.startswith(derived_spread.DERIVED)]


@functools.lru_cache(maxsize=1)
def _table():
    return derived_spread.table()


def test_the_rows_declared_informational_are_the_derived_ones_that_cannot_gate():
    assert len(DECLARED) >= 5, DECLARED
    threshold = derived_spread.sigma_to_gate()
    assert 0.03 < threshold < 0.04  # 25 % from ten runs: 7.3 σ
    for pattern in DECLARED:
        cells = _table()[pattern]
        assert set(cells) == set(derived_spread.KEYS), pattern
        for key, cell in cells.items():
            assert cell["entries"] and cell["loose"] == cell["entries"], (pattern, key, cell)
        row = next(f for f in catalog.FAMILIES if f.pattern == pattern)
        assert "scripts/derived_spread.py" in row.noise.why and "σ/|mean|" in row.noise.why
        # the spread between machines needs A/A runs of two: a card whose entries were re-made since (another
        # identity) has runs of fewer, and its declaration stands on the spread its row cites until it has two
        measured = [statistics.median(c["spreads"]) for c in cells.values()
                    if c["spreads"] and len(c["machines"]) >= MIN_MACHINES]
        if not measured:
            assert all(len(c["machines"]) < MIN_MACHINES for c in cells.values()), (pattern, cells)
            assert re.search(r"\d\.\d %", row.noise.why), (pattern, "its row cites no measured spread")
            continue
        widest_median = max(measured)
        assert widest_median > threshold, (pattern, widest_median)


def test_an_informational_derived_figure_reads_ungated_with_its_measured_reason():
    metrics = baseline_file.load(REVIEWED_BASELINES, "nvidia-h200").data["backends"]["cuda"]["metrics"]
    name = "model.sampled.mean_error"
    entry = metrics[name]
    c = compare(float(entry["value"]) * 3, entry["better"], entry, name=name, unit=entry["unit"],
                identity=entry.get("identity"))
    assert c.verdict == "ungated" and c.reason.startswith("informational: ") and "σ/|mean|" in c.reason


def test_derived_rows_left_gated_keep_their_entries_that_gate_within_25_percent():
    """A row with any entry gating within 25 % on a GPU stays gated: its loose entries are left for more runs."""
    for pattern, cells in _table().items():
        if any(c["loose"] < c["entries"] for c in cells.values()):
            assert pattern not in DECLARED, pattern
