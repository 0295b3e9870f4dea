"""The catalog of metric families: every row is reachable (no earlier, wider pattern shadows it), says
why its band is what it is, and names a direction the gate knows; ``gpuperf_record`` takes a family's
tolerance and refuses a metric whose unit or direction contradict its row."""

from __future__ import annotations

import re

import pytest

from pytest_gpuperf import baselines as bl
from pytest_gpuperf.baselines import catalog
from pytest_gpuperf.baselines.catalog import Family


def _example(pattern: str) -> str:
    """A metric name the pattern matches: each wildcard stands for one made-up word, a set for its first member."""
    return re.sub(r"\[!?(.)[^\]]*\]", r"\1", pattern).replace("*", "zz").replace("?", "z")


@pytest.mark.parametrize("fam", catalog.FAMILIES, ids=lambda f: f.pattern)
def test_each_family_is_reachable_explained_and_gateable(fam: Family) -> None:
    assert catalog.family(_example(fam.pattern)) is fam, "an earlier, wider pattern shadows this row: move it up"
    assert fam.why.strip(), "say what the band stands for"
    assert fam.better in bl.DIRECTIONS and fam.unit
    for tol in (fam.gpu, fam.cpu):
        assert tol is None or (set(tol) <= {"abs", "rel", "k"} and all(v >= 0 for v in tol.values()))


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
