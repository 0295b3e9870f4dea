"""Figures computed over several kernels carry the kernels in their identity (``util.aggregate.over``).

* The helper: sorted and de-duplicated (the order tests ran in is not part of a mean), refuses an empty
  set and names it cannot spell, and a subset differs from the full set in ``identity_problem``.
* The reviewed baselines' aggregate entries name kernels the suites have, and the whole set where a full
  run computes the figure over the whole set, so a full run stays comparable with them.
* End to end on PoCL: the tuning suite's means over one kernel, gated against a baseline made over
  two, read ``incomparable`` (never ``regressed`` or ``improved``), while that kernel's own metrics stay
  comparable; ``test_tuning_means`` alone skips and says why. The smallest sets that differ, of the two
  cheapest kernels on PoCL (matvec_row, bfs_step: about 2 s each), keep the three runs near 5 s.
"""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import pytest

from pytest_gpuperf.baselines.verdicts import identity_problem
from pytest_gpuperf.devices import discover
from pytest_gpuperf.util import aggregate
from pytest_gpuperf.corpora import kernel_classes as kc
from pytest_gpuperf.corpora.corpus import CORPUS
from pytest_gpuperf.studies.ptx_model.dwarfs import DWARFS
from pytest_gpuperf.tuning.kernels import BENCHMARKS
from suite_support import baseline_folder

PKG = Path(__file__).resolve().parents[1] / "pytest_gpuperf"
SUITE = PKG / "suites" / "test_workgroup_tuning.py"
REVIEWED = sorted((PKG / "baselines" / "reviewed").glob("*.json"))
HAVE_CL = any(d.backend == "opencl" for d in discover().devices)
TUNING_AGGREGATE = re.compile(r"tuning\.(mean|total)\.")


# ---- the helper ----------------------------------------------------------------------------------------
def test_over_is_sorted_deduplicated_and_order_free():
    assert aggregate.over(["nbody", "bfs_step", "blur1d", "bfs_step"]) == {"kernels": "bfs_step,blur1d,nbody"}
    assert aggregate.over({"b": 1.0, "a": 2.0}) == {"kernels": "a,b"}  # a mapping gives its keys
    assert aggregate.over(("K2", "K1"), "classes") == {"classes": "K1,K2"}
    assert aggregate.over(["x", "y"]) == aggregate.over(["y", "x"])


@pytest.mark.parametrize("names", [[], ["a,b"], [""]], ids=["empty", "comma", "blank"])
def test_over_refuses_what_it_cannot_spell(names):
    with pytest.raises(ValueError):
        aggregate.over(names)


def test_a_subset_is_incomparable_with_the_full_set():
    full = {"sampling": "thesis", **aggregate.over(b.name for b in BENCHMARKS)}
    subset = {"sampling": "thesis", **aggregate.over(["bfs_step", "blur1d"])}
    problem = identity_problem(full, subset)
    assert problem is not None and "kernels" in problem and "bfs_step,blur1d" in problem
    assert identity_problem(full, dict(reversed(list(full.items())))) is None


# ---- the reviewed baselines ----------------------------------------------------------------------------
def _full_sets() -> dict[str, set[str]]:
    """What a full run computes each kind of aggregate over (metric-name prefix → kernels)."""
    return {"tuning.": {b.name for b in BENCHMARKS}, "model.sampled.": {k.name for k in CORPUS},
            "model.svr.": {k.name for k in CORPUS}, "model.ptx.": {d.name for d in DWARFS}}


@pytest.mark.parametrize("path", REVIEWED, ids=[p.stem for p in REVIEWED])
def test_reviewed_aggregates_name_the_suites_kernels(path):
    """Every aggregate entry's kernels are kernels of its suite; the model means, the dwarfs and the
    classifiers name their whole set (they are computed in one test, so a baseline only ever saw it);
    the tuning means name a subset where a strategy had no result for some kernels on that device."""
    sets = _full_sets()
    dwarf_kernels: dict[str, set[str]] = collections.defaultdict(set)
    for d in DWARFS:
        dwarf_kernels[re.sub(r"[^a-z0-9]+", "_", d.dwarf.lower()).strip("_")].add(d.name)
    doc = json.loads(path.read_text())
    for backend in doc["backends"].values():
        for name, entry in backend["metrics"].items():
            identity = entry.get("identity") or {}
            if TUNING_AGGREGATE.match(name):
                assert "kernels" in identity, name
            if name.startswith("model.classify."):
                assert identity == {**aggregate.over(kc.CLASSES, "classes"), **aggregate.over(kc.UNSEEN, "unseen")}
            owners = [s for prefix, s in sets.items() if name.startswith(prefix)]
            if "kernels" not in identity or not owners:  # the power suite's corpus counts its own way
                continue
            kernels = set(identity["kernels"].split(","))
            (whole,) = owners
            if ".dwarf." in name:
                whole = dwarf_kernels[name.split(".dwarf.")[1].split(".")[0]]
            assert kernels <= whole, (name, kernels - whole)
            if not name.startswith("tuning."):
                assert kernels == whole, (name, whole - kernels)


# ---- end to end on PoCL ----------------------------------------------------------------------------------
def _tuning_run(pytester, tag: str, select: str, *options: str) -> tuple[pytest.RunResult, dict[str, dict]]:
    """The tuning suite over ``-k select`` on the OpenCL device; (result, metrics by name)."""
    out = pytester.path / f"{tag}.json"
    result = pytester.runpytest("--gpuperf-device=opencl:0", "-p", "no:cacheprovider", "-rs",
                                f"--gpuperf-baseline-dir={baseline_folder(pytester.path, 'bl')}",
                                f"--gpuperf-json={out}", str(SUITE), "-k", select, *options)
    metrics = {m["name"]: m for m in json.loads(out.read_text())["metrics"]} if out.exists() else {}
    return result, metrics


@pytest.mark.skipif(not HAVE_CL, reason="no OpenCL device (install pocl-opencl-icd)")
def test_subset_means_read_incomparable_against_a_larger_set(pytester):
    result, base = _tuning_run(pytester, "base", "matvec_row or bfs_step or means", "--gpuperf-update-baselines")
    result.assert_outcomes(passed=3)
    assert base["tuning.mean.dao.quality"]["identity"] == {"kernels": "bfs_step,matvec_row"}

    result, run = _tuning_run(pytester, "run", "matvec_row or means")
    result.assert_outcomes(passed=2)
    aggregates = {n: m for n, m in run.items() if TUNING_AGGREGATE.match(n)}
    assert aggregates and "tuning.total.dao.device_cost" in aggregates
    for name, m in aggregates.items():
        assert m["identity"]["kernels"] == "matvec_row", m
        assert m["verdict"] == "incomparable", (name, m["verdict"])
        assert "kernels" in m["baseline"]["reason"], m["baseline"]
    assert not [n for n, m in run.items() if m["verdict"] in ("regressed", "improved") and n in aggregates]
    assert not [n for n, m in run.items() if m["verdict"] == "regressed"]
    # the kernels' own figures do not depend on which other kernels ran: still gated
    own = [m for n, m in run.items() if n.startswith("tuning.matvec_row.")]
    assert own and all(m["verdict"] != "incomparable" for m in own)

    # alone, the means have nothing of this session to average: a skip with the reason
    result, _ = _tuning_run(pytester, "alone", "means")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*no kernel was tuned earlier in this session*"])


def test_an_aggregate_absent_from_a_subset_run_is_not_missing():
    """A strategy with no result on any selected kernel records no mean: when the same test recorded
    means over another set, that absence is the selection's; alone, it is a metric that disappeared."""
    from types import SimpleNamespace

    from pytest_gpuperf.session import _subset_aggregate

    test = "suites/test_workgroup_tuning.py::test_tuning_means"
    entry = {"test": test, "identity": {"kernels": "blur1d,matvec_row,transpose_naive"}}
    subset = [SimpleNamespace(test=test, identity={"kernels": "matvec_row"})]
    assert _subset_aggregate(entry, subset)
    assert not _subset_aggregate(entry, [SimpleNamespace(test=test, identity={"kernels": entry["identity"]["kernels"]})])
    assert not _subset_aggregate(entry, [])
    assert not _subset_aggregate({"test": test, "identity": {}}, subset)  # not an aggregate: still missing
