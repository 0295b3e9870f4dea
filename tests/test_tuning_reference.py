"""The tuning suite's exhaustive reference, cached across runs (``tuning.reference``), on PoCL.

* The key holds the kernel source, build options, problem, input seed, device key, backend, driver,
  runtime, toolkit, a point's timing settings and the space: another problem or seed is another table.
* The folder: ``$GPUPERF_TUNING_CACHE`` where set, else the user's cache directory (``$XDG_CACHE_HOME``).
* A cold run times the space and stores it; a warm run loads it before any strategy, so exhaustive search and the thesis tuner replay it without
  timing a point and reach the same picks; ``--gpuperf-retune`` ignores it; an entry of another schema
  version is refused with a warning; a table timed while another process held the card is not stored.
* The runs ``gpuperf baseline init`` makes a baseline of time their own tables (``--gpuperf-retune``).
* End to end: ``test_tune`` twice with one cache — the second run says it replayed the table, records the
  same metrics with the same identities, and its search costs (read off the table) are the first run's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_gpuperf.tuning import reference
from pytest_gpuperf.tuning.fixtures import StaleTuningEntry
from pytest_gpuperf.tuning.kernels import by_name
from pytest_gpuperf.tuning.strategies import dao, exhaustive
from pytest_gpuperf.tuning.tuner import context

SIZES = {"m": 200, "n": 64}
SUITE = Path(__file__).resolve().parents[1] / "pytest_gpuperf" / "suites" / "test_workgroup_tuning.py"


def _ctx(dev, sizes=SIZES):
    return context(dev, by_name("matvec_row"), dict(sizes), seed=11)


def test_the_key_holds_what_shapes_a_point(cl_device):
    ctx = _ctx(cl_device)
    fields = reference.key_fields(ctx, 11)
    info = cl_device.info
    assert (fields["device"], fields["backend"], fields["driver"], fields["runtime"], fields["toolkit"]) == \
        (info.key, info.backend, info.driver_version, info.runtime_version, info.toolkit_version)
    assert fields["space"] == [c.label() for c in ctx.space] and fields["timing"]["min_repeats"] >= 1
    assert reference.key(ctx, 11) == reference.key(_ctx(cl_device), 11)
    assert reference.key(ctx, 11) != reference.key(ctx, 12)
    assert reference.key(ctx, 11) != reference.key(_ctx(cl_device, {"m": 201, "n": 64}), 11)


def test_a_stored_table_is_replayed_without_timing_a_point(cl_device, tmp_path):
    cold = _ctx(cl_device)
    ref = reference.begin(cold, 11, root=tmp_path)
    assert not ref.cached
    best, picked = exhaustive(cold).best, dao(cold).best
    ref = reference.finish(ref, cold, best, root=tmp_path)
    assert ref.stored and ref.info()["stored"] and Path(ref.path).is_file()

    warm = _ctx(cl_device)
    timed: list[int] = []
    warm.ev.on_point = timed.append  # called for every point the evaluator times
    ref = reference.begin(warm, 11, root=tmp_path)
    assert ref.cached and ref.measured and ref.info() == {"cached": True, "key": ref.key, "measured": ref.measured,
                                                          "verified": {"stored": 0, "now": 0}, "reviewed": False}
    assert {c: p.time_s for c, p in warm.ev.points.items()} == {c: p.time_s for c, p in cold.ev.points.items()}
    assert exhaustive(warm).best == best and dao(warm).best == picked
    assert timed == []  # every strategy replayed the table
    assert not reference.begin(_ctx(cl_device), 11, retune=True, root=tmp_path).cached
    assert reference.finish(ref, warm, best, root=tmp_path) is ref and not ref.stored  # nothing rewritten


def test_a_pick_checked_against_numpy_under_a_key_is_not_checked_again(cl_device, tmp_path):
    cold = _ctx(cl_device)
    ref = reference.begin(cold, 11, root=tmp_path)
    best, picked = exhaustive(cold).best, dao(cold).best
    picks = sorted({best, picked})
    assert ref.unverified(picks) == picks  # nothing checked before the first run
    reference.record_verified(ref, picks)
    reference.finish(ref, cold, best, root=tmp_path)
    warm = reference.begin(_ctx(cl_device), 11, root=tmp_path)
    assert warm.cached and warm.unverified(picks) == [] and warm.info()["verified"] == {"stored": len(picks), "now": 0}
    # a configuration no run checked yet is checked, and kept in the stored entry for the next run
    other = next(c for c in cold.space if c not in picks)
    assert warm.unverified([other, best]) == [other]
    reference.record_verified(warm, [other], root=tmp_path)
    assert reference.begin(_ctx(cl_device), 11, root=tmp_path).unverified([other, *picks]) == []
    # another key (here: a retune, which ignores the stored table) checks every pick again
    assert reference.begin(_ctx(cl_device), 11, retune=True, root=tmp_path).unverified(picks) == picks


def test_an_entry_of_another_schema_version_is_refused_and_the_space_timed_again(cl_device, tmp_path):
    ctx = _ctx(cl_device)
    ref = reference.begin(ctx, 11, root=tmp_path)
    reference.finish(ref, ctx, exhaustive(ctx).best, root=tmp_path)
    entry = json.loads(Path(ref.path).read_text())
    Path(ref.path).write_text(json.dumps(dict(entry, schema="pytest-gpuperf-tuning/0")))
    with pytest.warns(StaleTuningEntry, match="expected 'pytest-gpuperf-tuning/1'"):
        assert not reference.begin(_ctx(cl_device), 11, root=tmp_path).cached


def test_a_table_timed_on_a_shared_card_is_not_stored(cl_device, tmp_path):
    ctx = _ctx(cl_device)
    ref = reference.begin(ctx, 11, root=tmp_path)
    best = exhaustive(ctx).best
    # the observers' record of a window kept although another process was on the card (timing.measure)
    cl_device.tenant_observations.append({"shared": 1, "contended": 1, "processes": []})
    try:
        ref = reference.finish(ref, ctx, best, root=tmp_path)
    finally:
        cl_device.tenant_observations.clear()
    assert not ref.stored and "another process" in ref.why and not Path(ref.path).exists()


def test_the_cache_folder_is_the_user_cache_dir_unless_named(monkeypatch, tmp_path):
    """One folder for the references and tuned_workgroup's picks: the one a CI job keeps."""
    from pytest_gpuperf.tuning import fixtures

    monkeypatch.delenv("GPUPERF_TUNING_CACHE", raising=False)
    monkeypatch.delenv("GPUPERF_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert fixtures.cache_dir() == tmp_path / "xdg" / "pytest-gpuperf" / "tuning"
    monkeypatch.setenv("GPUPERF_CACHE", str(tmp_path / "all"))
    assert fixtures.cache_dir() == tmp_path / "all" / "tuning"
    monkeypatch.setenv("GPUPERF_TUNING_CACHE", str(tmp_path / "mine"))
    assert fixtures.cache_dir() == tmp_path / "mine"
    assert "cache_root" not in vars(fixtures)  # no second rule beside it


def test_the_runs_of_a_first_baseline_time_their_own_tables(tmp_path):
    from pytest_gpuperf.baselines.first import run_commands

    cmds = run_commands("opencl:0", [1, 2, 3], tmp_path / "r", tmp_path / "bl", ["-k", "tune"])
    assert len(cmds) == 3 and all("--gpuperf-retune" in cmd for cmd in cmds)


def test_a_second_suite_run_replays_the_first_ones_table(pytester, monkeypatch, cl_device):
    monkeypatch.setenv("GPUPERF_TUNING_CACHE", str(pytester.path / "cache"))
    runs = []
    for tag in ("cold", "warm"):
        out = pytester.path / f"{tag}.json"
        result = pytester.runpytest("--gpuperf-device=opencl:0", "-p", "no:cacheprovider", f"--gpuperf-json={out}",
                                    f"{SUITE}::test_tune[opencl:0-matvec_row]")
        result.assert_outcomes(passed=1)
        runs.append({m["name"]: m for m in json.loads(out.read_text())["metrics"]})
    cold, warm = runs
    assert cold["tuning.matvec_row.optimum_us"]["info"]["reference"]["stored"] is True
    assert warm["tuning.matvec_row.optimum_us"]["info"]["reference"]["cached"] is True
    assert list((pytester.path / "cache").glob("exhaustive-*.json"))
    assert set(warm) == set(cold) and all(warm[n]["identity"] == cold[n]["identity"] for n in warm)
    costs = [n for n in cold if n.endswith((".cost", ".device_cost"))]
    assert costs and all(warm[n]["value"] == cold[n]["value"] for n in costs)  # the same table, replayed
