"""The catalog's band for the short-chain latency probes covers exactly the operations the probes run in
4/8-step chains, and it is as narrow as the shift it stands for: a quarter cycle, on these probes alone."""

from __future__ import annotations

from pytest_gpuperf.baselines import baseline_file, catalog
from pytest_gpuperf.baselines.lookup import REVIEWED_BASELINES
from pytest_gpuperf.baselines.verdicts import band
from pytest_gpuperf.probes.chain import UNROLL
from pytest_gpuperf.probes.ops import ALL_OPS


def _names(heavy: bool) -> set[str]:
    return {o.metric("latency", "cycles", fast) for o in ALL_OPS if o.heavy is heavy for fast in (False, True)}


def test_the_band_covers_the_short_chains_and_nothing_else():
    assert UNROLL[True] == (4, 8), "the band's cause is the 4/8-step chains: re-measure it if their length changes"
    banded = {n for n in _names(True) | _names(False)
              if (catalog.family(n) is not None and catalog.family(n).gpu == catalog.SHORT_CHAIN_BAND)}
    assert banded == _names(True)


def test_the_band_is_gpu_only_and_a_quarter_cycle():
    f = catalog.family("latency.fp32.sqrt.fast.cycles")
    assert f.tolerance(False) == {"abs": 0.25} and f.tolerance(True) is None
    # a 16-cycle op keeps its 1 % floor where that is wider: the band is the wider of the two
    assert band(16.0, {"rel": 0.01, **f.tolerance(False)}) == 0.25
    assert band(200.0, {"rel": 0.01, **f.tolerance(False)}) == 2.0


def test_the_shipped_gpu_baselines_carry_it():
    for key in ("nvidia-h100-80gb-hbm3", "nvidia-h200"):
        entries = baseline_file.load(REVIEWED_BASELINES, key).metrics("cuda")
        for name in _names(True) & set(entries):
            assert entries[name]["tolerance"].get("abs") == 0.25, (key, name)
