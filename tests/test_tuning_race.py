"""The tuner race and the means read back from its records.

* The strategy registry: one signature for every strategy, those that do not search before those that do
  (the thesis tuner's evaluations are the searching strategies' budget), and ``tune`` still offering the
  same four names.
* On PoCL, one cheap kernel's race: every strategy has a quality, every one but the reference a cost, and
  the means computed from the records as the session holds them (``tuning.standings.from_recorded``) are
  the race's own figures — exactly, except the kernel-time sums, read back from the saved points (µs to
  4 decimals).
* Reading back refuses a space whose saved points do not cover it, and finds nothing in an empty session.
"""

from __future__ import annotations

import inspect

import pytest

from pytest_gpuperf.baselines import catalog
from pytest_gpuperf.timing import observers
from pytest_gpuperf.tuning import race, standings
from pytest_gpuperf.tuning.kernels import by_name
from pytest_gpuperf.tuning.strategies import KERNEL_TUNER, REFERENCE, REGISTRY
from pytest_gpuperf.tuning.tuner import STRATEGIES


def test_every_strategy_has_one_signature_and_the_searching_ones_run_last():
    for name, reg in REGISTRY.items():
        assert reg.name == name
        inspect.signature(reg.run).bind(object(), 3, 1)  # (ctx, budget, seed)
    searching = [r.searching for r in REGISTRY.values()]
    assert searching == sorted(searching) and list(REGISTRY)[0] == REFERENCE
    assert {f"kt_{n}" for n in KERNEL_TUNER} <= {n for n, r in REGISTRY.items() if r.third_party}
    assert [n for n, r in REGISTRY.items() if r.searching and not r.third_party] == ["random"]
    assert sorted(STRATEGIES) == ["dao", "exhaustive", "lim_rules", "lim_static"]
    assert all(STRATEGIES[n] is REGISTRY[n] for n in STRATEGIES)


# one xdist worker runs this module (scripts/run_tests.sh: --dist loadgroup): its tests share one timed race
# (``matvec_race``), run once, not in each worker that runs one of them
pytestmark = pytest.mark.xdist_group("tuning-race")


@pytest.fixture(scope="module")
def matvec_race(cl_device, tmp_path_factory):
    """matvec_row's race, its whole space timed here; the table it stores goes to a folder of this test."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GPUPERF_TUNING_CACHE", str(tmp_path_factory.mktemp("tuning-cache")))
        return race.run(cl_device, by_name("matvec_row"), retune=True)


def _session(records: list[dict]) -> tuple[dict[str, float], dict[str, dict]]:
    """The records as the session holds them: values (``gpuperf_recorded``) and infos."""
    return ({r["name"]: float(r["value"]) for r in records}, {r["name"]: dict(r.get("info") or {}) for r in records})


def test_the_race_records_every_strategy(matvec_race):
    names = {r["name"] for r in race.records(matvec_race)}
    for name in matvec_race.runs:
        assert f"tuning.matvec_row.{name}.quality" in names
        assert (f"tuning.matvec_row.{name}.cost" in names) == (name != REFERENCE)
    assert {"tuning.matvec_row.optimum_us", "tuning.matvec_row.space"} <= names
    assert any(n.startswith("tuning.matvec_row.dao.evals.") for n in names)
    evals = [r for r in race.records(matvec_race) if ".evals." in r["name"]]
    # decided on the stored table: unchanged runs count the same evaluations, so the counts gate
    assert evals and not [r["name"] for r in evals if (r.get("info") or {}).get("gate")]
    # one configuration's band, except where the count follows near-ties in the table (the catalog's rows)
    for r in evals:
        ranked = r["name"].endswith(".dao_ranked.evals.final")
        configs = catalog.RANKED_PASS_CONFIGS if ranked else 1
        assert r["tolerance"] == {"abs": configs / r["info"]["space"]}, r["name"]
    assert catalog.RANKED_PASS_CONFIGS > 1
    assert any(r["name"] == "tuning.matvec_row.dao_ranked.evals.final" for r in evals)
    assert set(matvec_race.runs) >= {n for n, r in REGISTRY.items() if not r.third_party}
    assert not matvec_race.third_party_all_failed()


def test_means_read_back_from_the_records_are_the_race_figures(matvec_race):
    values, infos = _session(race.records(matvec_race))
    found = standings.from_recorded(values, infos)
    assert list(found) == ["matvec_row"] and set(found["matvec_row"]) == set(matvec_race.runs)
    for name, got in found["matvec_row"].items():
        want = matvec_race.standing(name)
        assert (got.quality, got.cost, got.time_cost, got.device_cost) == \
            (want.quality, want.cost, want.time_cost, want.device_cost), name
        assert got.device_ex_s == pytest.approx(want.device_ex_s, rel=1e-6)
        assert got.device_s == pytest.approx(want.device_s, rel=1e-6)
    means = {r["name"]: r for r in standings.records(found)}
    assert means["tuning.mean.dao.quality"]["identity"] == {"kernels": "matvec_row"}
    assert means["tuning.mean.dao.quality"]["value"] == matvec_race.standing("dao").quality
    assert "tuning.mean.exhaustive.cost" not in means and "tuning.total.random.device_cost" in means


def test_a_mean_over_kernels_inherits_a_kernels_shared_measurement(matvec_race):
    """A kernel's quality measured beside another process on the card (its ``info["tenants"]``, as the
    session writes it): the means read back in a later test inherit it, and read ``contended``."""
    values, infos = _session(race.records(matvec_race))
    infos["tuning.matvec_row.dao.quality"]["tenants"] = {"contended": 1, "processes": [{"pid": 7, "name": "gemm"}]}
    means = {r["name"]: r for r in standings.records(standings.from_recorded(values, infos))}
    for name in ("tuning.mean.dao.quality", "tuning.mean.dao.cost", "tuning.total.dao.device_cost"):
        assert observers.measured_verdict("regressed", means[name]["info"], is_cpu=False) == "contended", name
    assert observers.measured_verdict("regressed", means["tuning.mean.random.quality"]["info"], is_cpu=False) == "regressed"


def test_a_space_whose_points_do_not_cover_it_is_refused():
    info = {"points": {"32": {"us": 10.0}, "64": {"us": 8.0}, "wl:32x2": {"us": 7.0}}}
    assert standings.exhaustive_seconds(info, 2) == pytest.approx(18e-6)
    with pytest.raises(ValueError, match="2 configurations of its 3.*re-run its test_tune case"):
        standings.exhaustive_seconds(info, 3)


def test_nothing_recorded_gives_no_means():
    assert standings.from_recorded({}, {}) == {}
    assert standings.from_recorded({"tuning.lambda0": 0.5, "memory.copy.bandwidth.1GiB": 1.0}, {}) == {}
