"""``tuned_workgroup`` cache: keys change with source, options, device and problem; writes are
atomic; a second call is served from the cache; the Kernel Tuner replay reproduces our space."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

from pytest_gpuperf import TUNING_CACHE_SCHEMA
from pytest_gpuperf.schemas import SchemaError
from pytest_gpuperf.tuning import ktsim
from pytest_gpuperf.tuning.fixtures import StaleTuningEntry, TunedWorkgroup, TuningCache, cache_key
from pytest_gpuperf.tuning.kernels import by_name
from pytest_gpuperf.tuning.tuner import context


def test_key_depends_on_everything(gpu_device):
    b = by_name("matvec_row")
    s = {"m": 64, "n": 32}
    k = cache_key(b, gpu_device, s, "dao")
    assert k == cache_key(b, gpu_device, dict(s), "dao")
    assert k != cache_key(b, gpu_device, {"m": 65, "n": 32}, "dao")
    assert k != cache_key(dataclasses.replace(b, source=b.source + " "), gpu_device, s, "dao")
    assert k != cache_key(dataclasses.replace(b, extra_options=("-cl-fast-relaxed-math",)), gpu_device, s, "dao")
    assert k != cache_key(b, gpu_device, s, "exhaustive")


def _entry(local: list[int]) -> dict:
    return {"local": local, "variant": "", "kernel": "matvec_row", "device": "pocl", "problem": {"m": 64},
            "strategy": "dao", "time_us": 12.5, "evaluations": 3, "space": 4}


def test_atomic_put_leaves_no_temporaries(tmp_path):
    c = TuningCache(tmp_path / "c")
    c.put("abc", _entry([64]))
    c.put("abc", _entry([128]))
    assert c.get("abc") == {"schema": TUNING_CACHE_SCHEMA, **_entry([128])}
    assert os.listdir(tmp_path / "c") == ["abc.json"]
    (tmp_path / "c" / "torn.json").write_text('{"local": [6')
    with pytest.warns(StaleTuningEntry, match="not JSON"):
        assert c.get("torn") is None  # a torn file is a miss that says why, not a crash


def test_entry_of_another_schema_version_is_refused_with_the_reason(tmp_path):
    c = TuningCache(tmp_path)
    c.put("k", _entry([64]))
    stored = json.loads((tmp_path / "k.json").read_text())
    for schema in ("pytest-gpuperf-tuning/0", None):
        old = dict(stored, schema=schema) if schema else {k: v for k, v in stored.items() if k != "schema"}
        (tmp_path / "k.json").write_text(json.dumps(old))
        with pytest.warns(StaleTuningEntry, match="expected 'pytest-gpuperf-tuning/1'" if schema else "names no schema"):
            assert c.get("k") is None
    (tmp_path / "k.json").write_text(json.dumps(dict(stored, local=[0])))  # right version, wrong shape
    with pytest.warns(StaleTuningEntry, match="local/0"):
        assert c.get("k") is None
    with pytest.raises(SchemaError, match="local"):
        c.put("k", _entry([]))  # the writer cannot store what the reader would refuse


def test_second_call_is_cached_and_retune_bypasses(gpu_device, tmp_path):
    cache = TuningCache(tmp_path)
    sizes = {"m": 200, "n": 64}
    tw = TunedWorkgroup(gpu_device, cache, retune=False)
    first = tw("matvec_row", sizes)
    assert not tw.last_from_cache and tw.last_entry["evaluations"] >= 1
    assert tw("matvec_row", sizes) == first and tw.last_from_cache
    stored = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert stored["local"] == list(first) and stored["problem"] == sizes
    again = TunedWorkgroup(gpu_device, cache, retune=True)
    again("matvec_row", sizes)
    assert not again.last_from_cache


def test_kernel_tuner_replay_visits_within_budget(gpu_device):
    ctx = context(gpu_device, by_name("stencil2d"), {"w": 64, "h": 48})
    assert ktsim.restrictions(ctx.ev, ctx.space)  # reproduces the legal 2-D space exactly
    best, visited = ktsim.run_strategy(ctx.ev, ctx.space, "random_sample", 4, seed=1)
    assert 1 <= len(visited) <= 4 and best in visited and set(visited) <= set(ctx.space)


def test_fixture_returns_a_legal_shape_and_caches(gpu_device, request, monkeypatch, tmp_path):
    monkeypatch.setenv("GPUPERF_TUNING_CACHE", str(tmp_path))
    tw = request.getfixturevalue("tuned_workgroup")
    shape = tw("matvec_row", {"m": 100, "n": 32})
    warp = gpu_device.info.warp_size or 1
    assert len(shape) == 1 and shape[0] % warp == 0 and shape[0] <= gpu_device.info.max_work_group_size
    assert len(list(tmp_path.glob("*.json"))) == 1


def test_progress_counts_each_configuration_once(gpu_device):
    from pytest_gpuperf.tuning.tuner import tune

    seen: list[tuple[int, int]] = []
    _best, out, ctx = tune(gpu_device, by_name("matvec_row"), {"m": 64, "n": 32}, "exhaustive",
                           progress=lambda done, total: seen.append((done, total)))
    n = len(ctx.space)
    assert len(out.ledger.visited) == n and seen == [(i + 1, n) for i in range(n)]


def test_a_replay_is_kept_for_its_table_and_replayed_for_another(gpu_device, monkeypatch, tmp_path):
    """Kernel Tuner's replay is a function of the measured table, the strategy and its seed: a second replay of
    the same table reads the configurations the first visited, and a table with one other time replays."""
    monkeypatch.setenv("GPUPERF_CACHE", str(tmp_path))
    ctx = context(gpu_device, by_name("stencil2d"), {"w": 64, "h": 48})
    first = ktsim.run_strategy(ctx.ev, ctx.space, "genetic_algorithm", 8, seed=2)
    kept = list((tmp_path / "memo").glob("kt-replay-*.json"))
    assert len(kept) == 1
    assert ktsim.run_strategy(ctx.ev, ctx.space, "genetic_algorithm", 8, seed=2) == first
    assert list((tmp_path / "memo").glob("kt-replay-*.json")) == kept  # read, not replayed
    ktsim.run_strategy(ctx.ev, ctx.space, "genetic_algorithm", 8, seed=3)
    assert len(list((tmp_path / "memo").glob("kt-replay-*.json"))) == 2  # another seed is another replay
    slowest = max(ctx.space, key=lambda c: ctx.ev.measure(c).time_s)
    point = ctx.ev.points[slowest]
    ctx.ev.points[slowest] = dataclasses.replace(point, time_s=point.time_s * 2)
    best, visited = ktsim.run_strategy(ctx.ev, ctx.space, "genetic_algorithm", 8, seed=2)
    assert len(list((tmp_path / "memo").glob("kt-replay-*.json"))) == 3  # another table is another replay
    assert best in visited and set(visited) <= set(ctx.space)


def test_kernel_tuner_replay_is_quiet_but_ours_are_not(gpu_device, monkeypatch, tmp_path):
    """Kernel Tuner's basinhopping replay raised ~120 third-party warnings per run (SciPy deprecations,
    optimizer overflows, the dummy kernel's argument count); they are filtered where they arise, and a
    warning of our own issued afterwards is still seen."""
    import warnings

    monkeypatch.setenv("GPUPERF_CACHE", str(tmp_path))  # a replay, not one kept by an earlier run
    ctx = context(gpu_device, by_name("stencil2d"), {"w": 64, "h": 48})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ktsim.run_strategy(ctx.ev, ctx.space, "basinhopping", 6, seed=1)
        assert [str(w.message) for w in seen] == []
        warnings.warn("the project's own", UserWarning)
    assert [str(w.message) for w in seen] == ["the project's own"]


def test_population_strategies_ask_for_no_more_configurations_than_the_space_holds(gpu_device, monkeypatch, tmp_path):
    """Kernel Tuner's firefly asks for a population of 20 by default; on a space of fewer configurations
    (the 1-D spaces of a CPU device) it warned "Too many samples requested" and then failed indexing the
    population it had not got. The replay asks for at most the space: no warning, a result."""
    import warnings

    monkeypatch.setenv("GPUPERF_CACHE", str(tmp_path))  # a replay, not one kept by an earlier run
    ctx = context(gpu_device, by_name("matvec_row"), {"m": 64, "n": 32})
    n = len(ctx.space)
    assert ktsim.strategy_options("firefly_algorithm", 6, n) == (
        {"max_fevals": 6, "popsize": n} if n < 20 else {"max_fevals": 6})
    assert ktsim.strategy_options("firefly_algorithm", 6, 8)["popsize"] == 8
    assert ktsim.strategy_options("random_sample", 6, 8) == {"max_fevals": 6}  # no population to size
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        best, visited = ktsim.run_strategy(ctx.ev, ctx.space, "firefly_algorithm", 6, seed=1)
    assert [str(w.message) for w in seen] == [] and best in visited and len(visited) <= 6


def test_only_the_disp_option_kernel_tuner_passes_is_quiet():
    """Newer SciPy no longer takes L-BFGS-B's ``disp``, which Kernel Tuner's basinhopping passes on every
    local minimisation; SciPy's own check of unknown options is quiet about ``disp`` alone inside the
    replay, and only there."""
    import warnings

    from scipy.optimize import OptimizeWarning
    from scipy.optimize._optimize import _check_unknown_options

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with ktsim.quiet_third_party():
            _check_unknown_options({"disp": False})
            _check_unknown_options({"bogus": 1})
        _check_unknown_options({"disp": False})
    assert [(w.category, str(w.message)) for w in seen] == [
        (OptimizeWarning, "Unknown solver options: bogus"), (OptimizeWarning, "Unknown solver options: disp")]


def test_a_cache_folder_that_cannot_be_written_costs_a_retune_not_the_test(gpu_device, tmp_path):
    """A read-only or full cache folder is harmless, as for every other cache (util.memo): the pick is
    returned, warnings say the entry could not be read and was not stored. (A file where the folder should be: refused even to root.)"""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    tw = TunedWorkgroup(gpu_device, TuningCache(blocker / "tuning"), retune=False)
    with pytest.warns(StaleTuningEntry) as caught:  # the entry cannot be read, then not stored
        shape = tw("matvec_row", {"m": 100, "n": 32})
    said = [str(w.message) for w in caught]
    assert any("cannot be read" in s for s in said) and any("not stored" in s for s in said), said
    assert len(shape) == 1 and shape[0] >= 1 and not tw.last_from_cache
    assert "not_stored" in tw.last_entry
