"""Dao's counter model (studies/sampled/dao_ml.py, dao_counters.py, dao_counters_worker.py) — everything but the GPU
run: the feature vector, the target and t_ML on small runs computed by hand, the leave-one-kernel-out folds
(by hand with a mean regressor, and the ε-SVR on real counters of a saved H100 ncu profile), the counter
table, the plan and the reading of ncu's results in launch order on that real profile."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.dummy import DummyRegressor

from dao_ml_support import cuda_study
from pytest_gpuperf.baselines import catalog
from pytest_gpuperf.studies.sampled import dao_counters as dc, dao_counters_worker as dw, dao_ml, sampled_apps, svr
from pytest_gpuperf.counters import ncu
from pytest_gpuperf.corpora.app_kernels import APP_KERNELS
from pytest_gpuperf.util.jsonio import read_text

ROOT = Path(__file__).resolve().parents[1]
#: a real ncu 2025.3 profile of the kernel-class dataset on an H100 (195 launches of 13 kernels)
REAL_CSV = ROOT / "results/nvidia-h100-80gb-hbm3/gatecheck-30e9367/ncu-kernel-classes-cuda0.csv.gz"


def _inst(kernel: str = "a", t1: float = 1.0, t2: float = 1.5, t_full: float = 16.0, n: int = 60) -> svr.Instance:
    """P_sat 2 on 2 SMs' worth of groups: P1 = 4, P2 = 6 groups of 128 work-items."""
    return svr.Instance(kernel, 2, 32.0, 0.0, 128, 4, 6, n, t1, t2, t_full)


C1 = {dc.ISSUED: 400.0, dc.L1_MISS: 59.0, dc.L2_MISS: 29.0}
C2 = {dc.ISSUED: 600.0, dc.EXECUTED: 540.0, dc.BRANCHES: 60.0, dc.DIVERGENT: 6.0, dc.L1_HIT: 30.0, dc.L1_MISS: 90.0,
      dc.L2_HIT: 45.0, dc.L2_MISS: 45.0, dc.BANK_CONFLICTS: 12.0, dc.SHARED_LD: 24.0, dc.SHARED_ST: 6.0,
      dc.GLOBAL_LD: 120.0, dc.GLOBAL_SECTORS: 480.0, dc.CTAS_MAX: 3.0, dc.CTAS_AVG: 2.0}


def test_the_feature_vector_target_and_t_ml_of_one_run_by_hand():
    run = dao_ml.Run(_inst(), C1, C2)
    # t_linear = 1 + (1.5 - 1)/(6 - 4) × (60 - 4) = 15; I_N = 600 × 60 / 6 = 6000
    assert run.t_linear == pytest.approx(15.0) and run.instructions == pytest.approx(6000.0)
    assert run.ips_linear == pytest.approx(400.0) and run.ips_saturated == pytest.approx(375.0)
    assert run.target == pytest.approx(math.log(375 / 400))
    want = [2, 32, math.log(768), math.log(10), 0.0, 0.0, math.log(100), 0.9, 0.1, 0.1, 0.15, 0.2, 0.075, 0.02,
            0.05, 0.2, 4.0, 1.5, math.log(601 / 401) - math.log(1.5), math.log(91 / 60) - math.log(1.5),
            math.log(46 / 30) - math.log(1.5)]
    assert len(dao_ml.FEATURES) == len(want)
    assert run.features() == pytest.approx(want)
    # t_ML of the true target is the measured time, of ŷ = 0 the linear model's
    assert run.time_from(run.target) == pytest.approx(16.0) and run.time_from(0.0) == pytest.approx(15.0)


def test_t_ml_is_dao_s_formula_and_refuses_non_positive_inputs():
    assert dao_ml.t_ml(1000.0, 100, 10, 5e5) == pytest.approx(0.02)  # 1000 × 100 / (10 × 5e5)
    for args in ((0.0, 100, 10, 5e5), (1000.0, 100, 10, 0.0), (1000.0, 0, 10, 5e5)):
        with pytest.raises(ValueError, match="t_ML needs positive"):
            dao_ml.t_ml(*args)


def test_the_linear_time_is_at_least_the_p2_sample_and_a_missing_issue_count_is_named():
    # a negative slope: 2 + (1 - 2)/2 × 56 = -26 s, floored at t_P2 = 1 s
    assert dao_ml.Run(_inst(t1=2.0, t2=1.0), C1, C2).t_linear == 1.0
    with pytest.raises(ValueError, match=r"a: no issued instructions counted at P2 \(smsp__inst_issued.sum=0"):
        dao_ml.Run(_inst(), C1, {**C2, dc.ISSUED: 0.0}).features()


def test_ratios_and_growth_by_hand():
    assert dao_ml.ratio(6.0, 60.0) == 0.1 and dao_ml.ratio(5.0, 0.0) == 0.0
    assert dao_ml.growth(1.0, 3.0, 2, 3) == pytest.approx(math.log(2))  # log 3 − log 1.5
    assert dao_ml.growth(0.0, 0.0, 2, 3, 1.0) == pytest.approx(-math.log(1.5))
    with pytest.raises(ValueError, match="growth of non-positive"):
        dao_ml.growth(0.0, 1.0, 2, 3)


def _three_kernels() -> list[dao_ml.Run]:
    """One run per kernel, t_linear = 15 s each; targets y = log(15 / t_full) of 0, 0.2 and 0.4."""
    return [dao_ml.Run(_inst(k, t_full=15.0 * math.exp(-y)), C1, C2) for k, y in (("a", 0.0), ("b", 0.2), ("c", 0.4))]


def test_leave_one_kernel_out_by_hand_with_a_mean_regressor():
    folds = dao_ml.leave_one_kernel_out(_three_kernels(), lambda: DummyRegressor(strategy="mean"))
    assert sorted(folds) == ["a", "b", "c"]
    # each fold predicts the mean target of the two other kernels: ŷ_a = 0.3, ŷ_b = 0.2, ŷ_c = 0.1
    for k, y_hat, y in (("a", 0.3, 0.0), ("b", 0.2, 0.2), ("c", 0.1, 0.4)):
        f = folds[k]
        assert f.train_kernels == tuple(sorted({"a", "b", "c"} - {k})) and f.train_runs == 2
        run, t = f.full
        assert t == pytest.approx(15.0 * math.exp(-y_hat))  # t_ML = t_linear · e^(−ŷ)
        assert f.error == pytest.approx(abs(math.exp(-y_hat) - math.exp(-y)) / math.exp(-y))
    assert folds["b"].error == pytest.approx(0.0, abs=1e-12)


def test_a_fold_reports_its_kernel_s_longest_run_and_trains_on_every_run_of_the_others():
    runs = _three_kernels() + [dao_ml.Run(_inst("a", n=30, t_full=7.0), C1, C2),
                               dao_ml.Run(_inst("b", n=30, t_full=7.5), C1, C2)]
    folds = dao_ml.leave_one_kernel_out(runs, lambda: DummyRegressor(strategy="mean"))
    assert folds["a"].full[0].inst.n == 60 and len(folds["a"].predictions) == 2
    assert (folds["a"].train_runs, folds["b"].train_runs, folds["c"].train_runs) == (3, 3, 4)


def test_leave_one_kernel_out_refuses_too_few_kernels_and_non_finite_inputs():
    with pytest.raises(ValueError, match="at least 3 kernels, got 2"):
        dao_ml.leave_one_kernel_out(_three_kernels()[:2])
    bad = _three_kernels()
    bad[1] = dao_ml.Run(_inst("b", t_full=math.inf), C1, C2)
    bad[2] = dao_ml.Run(_inst("c"), C1, {**C2, dc.L1_MISS: math.nan})
    with pytest.raises(ValueError, match="non-finite features or targets for b, c"):
        dao_ml.leave_one_kernel_out(bad)


def test_the_dataset_of_a_record_gives_back_the_same_runs():
    runs = _three_kernels()
    doc = dao_ml.dataset(runs)
    back = dao_ml.runs_from(doc)
    assert [(r.inst, dict(r.c1), dict(r.c2)) for r in back] == [(r.inst, dict(r.c1), dict(r.c2)) for r in runs]
    with pytest.raises(ValueError, match="written by another version"):
        dao_ml.runs_from({**doc, "columns": doc["columns"][:-1]})


# ---- the counters -------------------------------------------------------------------------------------------
def test_the_counter_table_maps_each_of_dao_s_counters_once_with_a_reason():
    assert len(set(dc.METRIC_NAMES)) == len(dc.METRIC_NAMES) == sum(len(c.metrics) for c in dc.COUNTERS)
    assert all(c.why and c.metrics for c in dc.COUNTERS)
    # every counter a feature reads is collected, and the issue count t_ML needs first
    assert dc.ISSUED == dc.METRIC_NAMES[0] and set(dao_ml.NEEDED) == set(dc.METRIC_NAMES)
    assert {r["dao"] for r in dc.table()} >= {"issued instructions", "branches", "divergent branches", "bank conflicts"}
    assert "warp serializes (GTX 280)" in dc.NOT_COUNTED and "execution time" in dc.NOT_COUNTED
    assert dc.counter_set([]) == dc.COUNTER_SET and dc.counter_set(["b", "a"]) == f"{dc.COUNTER_SET} without a,b"


def test_the_plan_profiles_each_kernel_s_p1_then_p2_and_refuses_bad_points():
    launches = dc.plan({"k2": (8, 12, 64), "k1": (4, 6, 128)}, "gpu")
    assert [(la.index, la.kernel, la.point, la.groups, la.local, la.size) for la in launches] == [
        (0, "k1", "p1", 4, 128, "gpu"), (1, "k1", "p2", 6, 128, "gpu"),
        (2, "k2", "p1", 8, 64, "gpu"), (3, "k2", "p2", 12, 64, "gpu")]
    with pytest.raises(ValueError, match=r"k: sampling points must satisfy 0 < P1 < P2, got P1=6, P2=6"):
        dc.plan({"k": (6, 6, 64)}, "gpu")
    assert dc.kernel_filter(["a.b", "c", "a.b"]) == r"regex:^(a\.b|c)$"
    with pytest.raises(ValueError, match="no kernel to profile"):
        dc.kernel_filter([])


def test_the_worker_spec_round_trips_and_names_only_corpus_kernels(tmp_path):
    launches = dc.plan({APP_KERNELS[0].name: (4, 6, APP_KERNELS[0].local_size)}, "gpu")
    dw.write_spec(tmp_path / "s.json", launches, 0, tmp_path / "log.json")
    spec = dw.read_spec(tmp_path / "s.json")
    assert spec["launches"] == launches and spec["device"] == 0
    cmd = ncu.command("/x/ncu", dc.METRIC_NAMES, tmp_path / "s.json", python="/py",
                      kernel_filter=dc.kernel_filter([APP_KERNELS[0].name]), worker="pytest_gpuperf.studies.sampled.dao_counters_worker")
    assert cmd[-4:] == ["/py", "-m", "pytest_gpuperf.studies.sampled.dao_counters_worker", str(tmp_path / "s.json")]
    assert cmd[cmd.index("--kernel-name") + 1] == f"regex:^({APP_KERNELS[0].name})$"
    (tmp_path / "s.json").write_text((tmp_path / "s.json").read_text().replace('"version": 1', '"version": 9'))
    with pytest.raises(ValueError, match="spec version 9, expected 1"):
        dw.read_spec(tmp_path / "s.json")


def _real() -> list[ncu.KernelResult]:
    return ncu.parse_csv(read_text(REAL_CSV))


def _as_samples(results: list[ncu.KernelResult]) -> tuple[list[dw.SampleLaunch], list[ncu.KernelResult]]:
    """The real profile's first two launches of each kernel read as that kernel's P1 and P2 samples."""
    picked: dict[str, list[ncu.KernelResult]] = {}
    for r in results:
        if len(picked.setdefault(r.kernel, [])) < 2:
            picked[r.kernel].append(r)
    chosen = [r for rs in picked.values() for r in rs]
    launches = [dw.SampleLaunch(i, r.kernel, "gpu", dc.POINTS[i % 2], r.grid[0], r.block[0]) for i, r in enumerate(chosen)]
    return launches, chosen


def test_a_real_ncu_profile_is_read_by_kernel_and_point_in_launch_order():
    results = _real()
    metrics = sorted(results[0].values)
    launches, chosen = _as_samples(results)
    got = dc.by_point(launches, chosen, metrics)
    assert sorted(got) == sorted({r.kernel for r in results}) and all(set(v) == {"p1", "p2"} for v in got.values())
    assert got["K1"]["p2"] == {m: chosen[1].values[m] for m in metrics}
    # the kernel-class profile holds another metric list: reading Dao's counters from it names what it lacks
    with pytest.raises(ncu.NcuError, match=r"K1 at p1 \(ncu ID 0\): no value for smsp__inst_issued.sum"):
        dc.by_point(launches, chosen, dc.METRIC_NAMES)
    with pytest.raises(ncu.NcuError, match="profiled kernel ID 0 is K1, planned launch K2@p1 is K2"):
        dc.by_point([launches[2], *launches[1:]], chosen, metrics)
    with pytest.raises(ncu.NcuError, match=f"{len(chosen) - 1} profiled kernels for {len(chosen)} planned launches"):
        dc.by_point(launches, chosen[:-1], metrics)


# ---- the records --------------------------------------------------------------------------------------------
def test_the_family_s_record_carries_the_study_s_identity_the_counter_set_and_its_dataset():
    res, sample = cuda_study()
    (rec,) = dao_ml.records(res, sample)
    assert rec["name"] == "model.dao_ml_apps.mean_error" and rec["unit"] == "ratio" and rec["better"] == "lower"
    assert catalog.missing_identity(rec["name"], rec["identity"]) == []
    assert catalog.family(rec["name"]).pattern == "model.dao_ml_apps.mean_error"
    ident = rec["identity"]
    assert {k: ident[k] for k in sampled_apps.identity()} == sampled_apps.identity()
    assert ident["kernels"] == ",".join(sorted(res.runs.main)) and ident["counters"] == dc.COUNTER_SET
    info = rec["info"]
    assert info["kernels"] == 3 and info["instances"] == 9 and set(info["per_kernel"]) == set(res.runs.main)
    assert rec["value"] == pytest.approx(np.mean([v["error"] for v in info["per_kernel"].values()]), abs=1e-6)
    assert "ε-SVR" in info["regressor"] and info["collection"]["counter_table"] == dc.table()
    # the record's dataset fits again to the same figure without the device
    again = dao_ml.leave_one_kernel_out(dao_ml.runs_from(json.loads(json.dumps(info["dataset"]))))
    assert float(np.mean([f.error for f in again.values()])) == pytest.approx(rec["value"])
    json.dumps(rec, allow_nan=False)


def test_the_family_needs_three_kernels_and_every_kernel_s_counters():
    res, sample = cuda_study(2)
    with pytest.raises(ValueError, match="trains leave-one-kernel-out on 3 or more kernels; the study measured 2"):
        dao_ml.records(res, sample)
    res, sample = cuda_study()
    name = sorted(sample.values)[0]
    del sample.values[name]["p1"]
    with pytest.raises(ValueError, match=f"no counters at both sampling points for {name}"):
        dao_ml.records(res, sample)


def test_a_saved_run_s_dataset_refits_to_the_error_it_recorded():
    """The premise of scripts/dao_ml_offline.py (and docs/models.md's table from it): a saved run's counter-model
    dataset, fitted again leave-one-kernel-out, gives back the mean error the run recorded, to within rounding (the
    BLAS kernels a fit runs differ by CPU: on an AVX2 host the last bits differ from the run's)."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("dao_ml_offline", root / "scripts" / "dao_ml_offline.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    runs, recorded = script.dataset(root / "results" / script.RUNS[0])
    folds = dao_ml.leave_one_kernel_out(runs)
    assert len(folds) == 40 and len(runs) == 120
    assert float(np.mean([f.error for f in folds.values()])) == pytest.approx(recorded, rel=1e-12, abs=0)
    assert script.linear(runs) < recorded  # the linear model it corrects does better on these kernels
