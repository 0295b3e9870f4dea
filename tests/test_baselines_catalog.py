"""The catalog of metric families: every row is reachable (no earlier, wider pattern shadows it), says
why its band is what it is, names a direction the gate knows and a noise model, and writes the measured
cause where its GPU band is wider than the class allows; ``gpuperf_record`` takes a family's tolerance and
refuses a metric whose unit or direction contradict its row."""

from __future__ import annotations

import re

import pytest

from pytest_gpuperf import baselines as bl
from pytest_gpuperf.baselines import catalog
from pytest_gpuperf.baselines.catalog import Family


def _example(pattern: str) -> str:
    """A metric name the pattern matches: each wildcard stands for one made-up word, a set for its first member."""
    return re.sub(r"\[!?(.)[^\]]*\]", r"\1", pattern).replace("*", "zz").replace("?", "z")


FAMILY_ROWS = [f for f in catalog.FAMILIES if f.is_family]
CLASS_ROWS = [f for f in catalog.FAMILIES if not f.is_family]


@pytest.mark.parametrize("fam", FAMILY_ROWS, ids=lambda f: f.pattern)
def test_each_family_is_reachable_explained_and_gateable(fam: Family) -> None:
    assert catalog.family(_example(fam.pattern)) is fam, "an earlier, wider pattern shadows this row: move it up"
    assert catalog.row(_example(fam.pattern), fam.unit) is fam
    assert fam.why.strip(), "say what the band stands for"
    assert fam.better in bl.DIRECTIONS and fam.unit
    for tol in (fam.gpu, fam.cpu):
        assert tol is None or (set(tol) <= {"abs", "rel", "k"} and all(v >= 0 for v in tol.values()))
    assert fam.configs is None or (fam.configs > 0 and fam.gpu is None and fam.cpu is None)


@pytest.mark.parametrize("row", catalog.FAMILIES, ids=lambda f: f"{f.pattern} {sorted(f.units or [f.unit or '*'])[0]}")
def test_every_row_names_how_its_metrics_vary(row: Family) -> None:
    assert row.noise is not None and row.noise.model in catalog.MODELS and row.noise.why.strip()


@pytest.mark.parametrize("row", CLASS_ROWS, ids=lambda f: f"{f.pattern} {sorted(f.units or ['*'])[0]}")
def test_each_class_row_is_reachable_and_no_family(row: Family) -> None:
    """A class row answers how its metrics vary (and why their bands are wide) for a unit it accepts; it
    sets no band and no direction."""
    unit = sorted(row.units)[0] if row.units else "made-up-unit"
    name = _example(row.pattern)
    assert catalog.row(name, unit) is row or catalog.family(name) is not None, "an earlier row shadows this class"
    assert (row.unit, row.better, row.gpu, row.cpu, row.identity, row.configs) == (None, None, None, None, (), None)


def test_the_last_row_catches_every_metric() -> None:
    assert catalog.row("no.such.family.anywhere", "made-up-unit").noise == catalog.DERIVED
    assert catalog.row("no.such.family.anywhere", "us").noise == catalog.TIMINGS
    assert catalog.row("no.such.family.anywhere", "configs").noise == catalog.COUNTS


def test_a_family_s_noise_follows_its_unit() -> None:
    """A family's row answers for metrics in its unit; the same name in another unit (a user's own metric)
    is judged by the class of that unit."""
    assert catalog.row("tuning.reduce.space", "configs").noise == catalog.COUNTS
    assert catalog.row("tuning.reduce.space", "ratio").noise == catalog.TUNER
    assert catalog.row("power.tuning.reduce.front", "configs").noise == catalog.COUNTS
    assert catalog.row("model.power.svr.rmse_w", "W").noise == catalog.MODEL
    assert catalog.row("accuracy.search.fp32.sin.max_ulp", "ulp").noise == catalog.SEARCH


@pytest.mark.parametrize("row", catalog.FAMILIES, ids=lambda f: f"{f.pattern} {sorted(f.units or [f.unit or '*'])[0]}")
def test_a_row_whose_gpu_band_is_wide_for_a_measured_figure_writes_its_cause(row: Family) -> None:
    """Where a row itself gives a device-timed GPU figure or a board reading (watts, energy) a band wider
    than classes.WIDE_BAND, the row says why (the measured cause); tests/test_gate_bands.py holds the reviewed baselines' measured bands to it."""
    from pytest_gpuperf.baselines import classes

    timing = row.unit is not None and classes.metric_class(row.unit) in ("time", "rate", "throughput", "cycles")
    measured = timing or row.unit in ("W", "J/op")  # board readings are measured figures too
    if measured and row.gpu is not None and row.gpu.get("rel", 0.0) > classes.WIDE_BAND:
        assert row.cause.strip()


def test_the_summations_causes_say_exactly_which_sums_they_cover() -> None:
    """The wide-band cause of the summations names the short reductions; the DRAM-bound parallel sums of
    2^24 values and the serial sums of 2^16 (milliseconds each) are rows of their own, without it."""
    short = [f"accuracy.sum.{v}.{layout}.n{lg}.time_us" for v in ("float", "double2")
             for layout, lgs in (("pairwise", (12, 16, 20, 24)), ("parallel", (12, 16, 20)), ("serial", (12,)))
             for lg in lgs]
    assert all("20–430 µs" in (catalog.wide_band_cause(n, "us") or "") for n in short), short
    for n in ("accuracy.sum.float.parallel.n24.time_us", "accuracy.sum.double.kahan.parallel.n24.time_us",
              "accuracy.sum.float.serial.n16.time_us", "accuracy.sum.double.kahan.serial.n16.time_us"):
        assert catalog.wide_band_cause(n, "us") is None, n
    assert catalog.tolerance("accuracy.sum.float.parallel.n24.time_us", False) == catalog.DRAM_LATENCY_BAND
    assert catalog.tolerance("accuracy.sum.float.serial.n16.time_us", True) == \
        catalog.tolerance("accuracy.sum.float.serial.n12.time_us", True)
    assert catalog.wide_band_cause("model.power.svr.rmse_w", "W") is None  # watts: not a fit's residual in cycles


def test_a_cpu_band_falls_back_to_the_gpu_band_unless_the_row_sets_one() -> None:
    both = Family("a.*", "s", "lower", gpu={"rel": 0.1})
    assert both.tolerance(True) == both.tolerance(False) == {"rel": 0.1}
    own = Family("a.*", "s", "lower", gpu={"rel": 0.1}, cpu={"rel": 2.0})
    assert own.tolerance(True) == {"rel": 2.0} and own.tolerance(False) == {"rel": 0.1}
    assert catalog.tolerance("no.such.family.anywhere", True) is None


def test_policy_takes_the_family_band_keeps_a_computed_one_and_refuses_a_contradicting_unit() -> None:
    fam = next(f for f in catalog.FAMILIES if f.pattern == "memory.*.size.bytes")
    name = _example(fam.pattern)
    assert catalog.policy(name, "bytes", "exact", None, True) == fam.tolerance(True)
    assert catalog.policy(name, "bytes", "exact", {"abs": 3.0}, True) == {"abs": 3.0}
    assert catalog.policy("a.metric.of.no.family", "s", "lower", None, False) is None
    with pytest.raises(ValueError, match="recorded as 'KiB'.*baselines/catalog.py says 'bytes'"):
        catalog.policy(name, "KiB", "exact", None, True)


def test_a_users_own_metric_of_a_catalog_name_is_left_as_the_user_records_it(pytester: pytest.Pytester) -> None:
    """The catalog is the shipped suites' policy: a user's own test may name a metric as it likes."""
    name = _example(next(f for f in catalog.FAMILIES if f.pattern == "memory.*.size.bytes").pattern)
    pytester.makepyfile(f"""
        def test_mine(gpuperf_record):
            m = gpuperf_record({name!r}, 4.0, "KiB", better="lower")
            assert m.tolerance is None
    """)
    pytester.runpytest("--gpuperf-device=0", "-p", "no:cacheprovider").assert_outcomes(passed=1)
