"""The static power model's pipeline (studies/static_power/power_model.py) without a GPU.

Features are computed from PTX saved from NVRTC (tests/data/models, sm_90) with the thesis' fallback
latencies. No power was measured on this machine, so the cross-validation is checked for its
*mechanics* — grouping, formulas, refusals — on a synthetic target named as such, never for accuracy."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pytest_gpuperf.studies.ptx_model import cfg as cfgmod
from pytest_gpuperf.studies.ptx_model import ptx as ptxmod
from pytest_gpuperf.studies.static_power import power_model
from pytest_gpuperf.studies.ptx_model.ptx_latency import latencies

DATA = Path(__file__).parent / "data" / "models"


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    empty = tmp_path_factory.mktemp("empty")
    return latencies(empty, "none", "cuda", 1980.0, baseline_dir=empty)  # the thesis' V100 column


def _cfg(name):
    return cfgmod.build(ptxmod.parse((DATA / f"{name}.ptx").read_text()))


def test_saxpy_features_by_hand(table):
    g = _cfg("saxpy")  # 2 global loads, 1 global store, no loop
    f = power_model.features(g, table, grid=264, block=256, regs=16, shared=0, trips=[], n_sm=132, cc="9.0",
                       l2_bytes=50 << 20)
    assert f["glob_inst_kernel"] == 3 and f["glob_store_sm"] == 1 * f["waves"]
    assert f["glob_load_sm"] == 2 * f["waves"]
    total = f["comp_inst_kernel"] + f["glob_inst_kernel"] + f["shar_inst_kernel"] + f["misc_inst_kernel"]
    assert total == len(ptxmod.parse((DATA / "saxpy.ptx").read_text()).instructions)
    # Eq. 5.1 with Hopper's 4 schedulers × 1 dispatch unit and 32-wide warps
    assert f["inst_issue_cycles"] == pytest.approx(264 * 256 / (4 * 32) * total / 4)
    assert f["waves"] == 1 and f["occupancy"] == 1.0 and f["block_size"] == 256 and f["reg_thread"] == 16
    assert set(power_model.SELECTED) <= set(f)


def test_loops_multiply_and_waves_repeat(table):
    g = _cfg("matrixMulCUDA")
    assert len(g.loops) == 1
    one = power_model.features(g, table, grid=132, block=256, regs=32, shared=2048, trips=[1], n_sm=132, cc="9.0")
    ten = power_model.features(g, table, grid=132, block=256, regs=32, shared=2048, trips=[10], n_sm=132, cc="9.0")
    assert ten["comp_inst_kernel"] > one["comp_inst_kernel"]
    many = power_model.features(g, table, grid=132 * 64, block=256, regs=32, shared=2048, trips=[1], n_sm=132, cc="9.0")
    assert many["waves"] > 1 and many["comp_inst_sm"] == many["comp_inst_kernel"] * many["waves"]
    with pytest.raises(ValueError, match="trip count"):
        power_model.features(g, table, grid=1, block=32, regs=1, shared=0, trips=[], n_sm=132, cc="9.0")


def test_instruction_kinds():
    assert power_model.kind("ld.global") == "glob" and power_model.kind("st.shared") == "shar"
    assert power_model.kind("bra") == "misc" and power_model.kind("ld.param") == "misc" and power_model.kind("dfma") == "comp"


def test_scores_against_hand_computed_values():
    s = power_model.scores([100.0, 200.0, 300.0], [110.0, 190.0, 330.0])
    # errors 10, -10, 30: SS_res 1100, SS_tot 20000
    assert s["r2"] == pytest.approx(1 - 1100 / 20000)
    assert s["rmse"] == pytest.approx((1100 / 3) ** 0.5)
    assert s["mae"] == pytest.approx(50 / 3)
    assert s["mape"] == pytest.approx((0.1 + 0.05 + 0.1) / 3 * 100)
    with pytest.raises(ValueError):
        power_model.scores([0.0, 1.0], [1.0, 1.0])


def _synthetic(kernels=6, configs=4, seed=0):
    """A SYNTHETIC corpus (watts = a fixed linear function of two features + noise): for the mechanics only."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(kernels):
        base = {n: float(rng.random()) for n in power_model.SELECTED}
        for c in range(configs):
            f = dict(base, block_size=64.0 * (c + 1))
            out.append(power_model.Entry(f"k{k}", f"local={64 * (c + 1)}", f,
                                   100.0 + 50.0 * f["avg_comp_lat"] + 0.1 * f["block_size"] + float(rng.normal()),
                                   0.01, {"synthetic": True}))
    return out


def test_outer_folds_never_share_a_kernel():
    entries = _synthetic()
    _, _, groups = power_model.matrix(entries)
    folds = power_model.outer_folds(groups, k=5)
    assert len(folds) == 5
    seen = []
    for train, test in folds:
        assert not set(groups[train]) & set(groups[test])
        seen += list(groups[test])
    assert sorted(seen) == sorted(groups)  # every entry is held out once


def test_a_corpus_of_one_kernel_is_refused():
    with pytest.raises(ValueError, match="at least 2"):
        power_model.outer_folds(["a", "a", "a"])


def test_nested_cv_runs_every_family():
    res = power_model.nested_cv(_synthetic(kernels=6, configs=3), k_outer=2, k_inner=2)  # the fewest folds of each
    assert set(res) == {"xgboost", "random_forest", "extra_trees", "svr"}
    for r in res.values():
        assert set(r.scores) == {"r2", "rmse", "mae", "mape"} and np.isfinite(r.scores["mae"])
        assert all(not set(f["test_kernels"]) & set(g["test_kernels"]) for f in r.folds for g in r.folds if f is not g)
    imp = res["random_forest"].importances
    assert set(imp) == set(power_model.SELECTED) and sum(imp.values()) == pytest.approx(1.0)
    assert list(imp) == power_model.top(imp, len(imp))  # most important first
    assert res["svr"].importances == {}


def test_corpus_round_trip_and_schema_refusal(tmp_path):
    entries = _synthetic(kernels=2, configs=1)
    path = tmp_path / "c.json"
    power_model.save_corpus(path, {"key": "test"}, entries, {"note": "synthetic"})
    device, back = power_model.load_corpus(path)
    assert device == {"key": "test"} and back == entries
    doc = json.loads(path.read_text())
    doc["schema"] = "something-else/9"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="schema"):
        power_model.load_corpus(path)


def test_thesis_figures_are_the_tables():
    assert power_model.THESIS_TABLE_5_9["Volta (V100)"][3] == 3.99
    assert power_model.THESIS_TABLE_5_8["Tesla K20"]["xgboost"] == (0.9101, 7.1592, 3.4816)
    assert len(power_model.SELECTED) == 15 and "avg_misc_lat" not in power_model.SELECTED


def _timed_entry(**info):
    f = {n: 0.0 for n in power_model.SELECTED}
    f.update(total_threads=256.0, comp_inst_kernel=10.0, glob_inst_kernel=2.0, shar_inst_kernel=0.0,
             misc_inst_kernel=4.0)
    return power_model.Entry("saxpy", "local=128", f, 200.0, 0.01, dict(info))


def test_timed_features_by_hand():
    """256 threads = 8 warps; 2 s over 1000 launches = 2 ms a launch: comp 10 x 8 / 0.002 = 40,000 warp
    instructions per second, glob 8,000, shar 0, misc 16,000, all 64,000; ln 0.002."""
    e = _timed_entry(span_s=2.0, launches=1000)
    f = power_model.timed_features(e)
    assert set(power_model.TIMED) <= set(f) and f == {**e.features, **{k: f[k] for k in power_model.TIMED[15:]}}
    assert power_model.TIMED[:15] == power_model.SELECTED
    assert f["comp_rate"] == pytest.approx(40_000.0) and f["glob_rate"] == pytest.approx(8_000.0)
    assert f["shar_rate"] == 0.0 and f["misc_rate"] == pytest.approx(16_000.0)
    assert f["inst_rate"] == pytest.approx(64_000.0)
    assert f["log_launch_s"] == pytest.approx(-6.2146080984)
    assert e.features["total_threads"] == 256.0 and "inst_rate" not in e.features  # the entry is left as it was


@pytest.mark.parametrize("info", [{"launches": 1000}, {"span_s": 2.0}, {"span_s": 0.0, "launches": 1000},
                                  {"span_s": 2.0, "launches": 0}, {"span_s": -1.0, "launches": 10},
                                  {"span_s": float("nan"), "launches": 10}, {"span_s": "2", "launches": 10}])
def test_timed_features_refuse_a_missing_or_impossible_time_naming_the_entry(info):
    with pytest.raises(ValueError, match=r"saxpy local=128: info\.(span_s|launches)"):
        power_model.timed_features(_timed_entry(**info))


def test_timed_features_refuse_an_entry_without_the_instruction_counts():
    e = _timed_entry(span_s=2.0, launches=1000)
    del e.features["shar_inst_kernel"]
    with pytest.raises(ValueError, match=r"saxpy local=128: lacks features \['shar_inst_kernel'\]"):
        power_model.timed_features(e)
