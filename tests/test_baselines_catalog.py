"""The catalog of metric families: every row is reachable (no earlier, wider pattern shadows it), says
why its band is what it is, and names a direction the gate knows; ``gpuperf_record`` takes a family's
tolerance and refuses a metric whose unit or direction contradict its row."""

from __future__ import annotations

import pytest

from pytest_gpuperf import baselines as bl
from pytest_gpuperf.baselines import catalog
from pytest_gpuperf.baselines.catalog import Family


def _example(pattern: str) -> str:
    """A metric name the pattern matches: each wildcard stands for one made-up word."""
    return pattern.replace("*", "zz").replace("?", "z")


@pytest.mark.parametrize("fam", catalog.FAMILIES, ids=lambda f: f.pattern)
def test_each_family_is_reachable_explained_and_gateable(fam: Family) -> None:
    assert catalog.family(_example(fam.pattern)) is fam, "an earlier, wider pattern shadows this row: move it up"
    assert fam.why.strip(), "say what the band stands for"
    assert fam.better in bl.DIRECTIONS and fam.unit
    for tol in (fam.gpu, fam.cpu):
        assert tol is None or (set(tol) <= {"abs", "rel", "k"} and all(v >= 0 for v in tol.values()))


def test_a_cpu_band_falls_back_to_the_gpu_band_unless_it_differs_on_purpose() -> None:
    both = Family("a.*", "s", "lower", gpu={"rel": 0.1})
    assert both.tolerance(True) == both.tolerance(False) == {"rel": 0.1}
    gpu_only = Family("a.*", "s", "lower", gpu={"rel": 0.1}, cpu_differs=True)
    assert gpu_only.tolerance(True) is None and gpu_only.tolerance(False) == {"rel": 0.1}
    assert catalog.tolerance("no.such.family.anywhere", True) is None


def test_record_takes_the_family_band_and_refuses_a_contradicting_unit(pytester: pytest.Pytester) -> None:
    fam = next(f for f in catalog.FAMILIES if f.pattern == "memory.*.size.bytes")
    name = _example(fam.pattern)
    pytester.makepyfile(f"""
        def test_right(gpuperf_record):
            m = gpuperf_record({name!r}, 4096.0, "bytes", better="exact")
            assert m.tolerance == {fam.tolerance(True)!r}

        def test_wrong_unit(gpuperf_record):
            gpuperf_record({name!r}, 4096.0, "KiB", better="exact")
    """)
    res = pytester.runpytest("--gpuperf-device=0", "-p", "no:cacheprovider")
    res.assert_outcomes(passed=1, failed=1)
    res.stdout.fnmatch_lines(["*recorded as 'KiB'*baselines/catalog.py says 'bytes'*"])
