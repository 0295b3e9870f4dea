"""The kernel-class suite's library parts that need no device: the feature rows built from a table of
measured times (``studies.classification.class_dataset.run_times``), the classifier figures and their catalog bands
(``studies.classification.class_records``), where ncu's raw CSV goes, and the CFG-reuse figure (``studies.classification.similarity_reuse``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pytest_gpuperf.baselines import catalog
from pytest_gpuperf.corpora import kernel_classes as kc
from pytest_gpuperf.devices.base import DeviceInfo
from pytest_gpuperf.studies.classification import class_records, classify, similarity_reuse
from pytest_gpuperf.studies.classification.class_dataset import ClassDataset, run_times

SIZES = (100, 200, 400)
LOCALS = (64, 128)


def _times(name: str, reps: int) -> dict[tuple[int, int, int], tuple[float, kc.Instance]]:
    """Time grows with size, falls with group size and differs per repetition, so every lookup is traceable."""
    return {(rep, size, local): (size * (1.0 + rep) / local, kc.Instance(name, size, local, size, [], 12 * size))
            for rep in range(reps) for size in SIZES for local in LOCALS}


def test_run_times_pairs_each_run_with_its_neighbours_and_references():
    copies: list[int] = []
    rows = run_times("K1", _times("K1", 2), SIZES, LOCALS, 2,
                     lambda nbytes: (copies.append(nbytes) or 1e-3, nbytes // 8), lambda items: 2e-3)
    assert len(rows) == 2 * (len(SIZES) - 1) * len(LOCALS)  # the largest size only serves as a neighbour
    r = rows[-1]  # rep 1, size 200, local 128
    assert (r.t, r.t_next, r.t_small_group) == (200 * 2 / 128, 400 * 2 / 128, 200 * 2 / 64)
    assert (r.bytes_, r.bytes_next, r.bytes_first, r.bytes_last) == (2400, 4800, 1200, 4800)
    assert (r.t_first, r.t_last) == (100 * 2 / 128, 400 * 2 / 128)
    assert dict(r.t_by_local) == {64: 200 * 2 / 64, 128: 200 * 2 / 128}
    assert (r.t_copy, r.copy_elems, r.t_fma, r.items) == (1e-3, 300, 2e-3, 200)
    assert copies == [b for _ in range(2) for s in SIZES[:-1] for b in [12 * s] * len(LOCALS)]


def test_k8s_times_over_group_sizes_count_as_one_median():
    rows = run_times("K8", _times("K8", 1), SIZES, LOCALS, 1, lambda n: (1e-3, n), lambda n: 1e-3)
    assert all(set(r.t_by_local) == {256} for r in rows)
    assert dict(rows[0].t_by_local) == {256: float(np.median([100 / 64, 100 / 128]))}


def _dataset() -> ClassDataset:
    """Two runs per class, well separated in every feature, and one run per unseen kernel."""
    width = len(classify.FEATURES) + len(classify.CODE_FEATURES)
    rng = np.random.default_rng(0)
    x = np.array([np.full(width, float(i)) + rng.normal(0, 0.01, width) for i in range(len(kc.CLASSES)) for _ in range(4)])
    y = [c for c in kc.CLASSES for _ in range(4)]
    unseen = {k: np.full((1, width), 8.0) for k in kc.UNSEEN}  # closest to K9
    return ClassDataset(x, y, unseen, kc.CPU_GRID, 3)


def test_timing_records_name_each_figure_and_leave_its_band_to_the_catalog():
    ds = _dataset()
    evs = class_records.evaluations(ds)
    recs = {r["name"]: r for r in class_records.timing_records(ds, evs)}
    clfs = ("random_forest", "naive_bayes", "mlp")
    assert set(recs) == {f"model.classify.{c}.{f}{s}" for c in clfs for f in ("accuracy", "unseen_agreement")
                         for s in ("", "_with_code")}
    assert all("tolerance" not in r and (r["unit"], r["better"]) == ("ratio", "higher") for r in recs.values())
    assert all(r["identity"] == {"classes": ",".join(sorted(kc.CLASSES)), "unseen": ",".join(sorted(kc.UNSEEN))}
               for r in recs.values())
    rf = recs["model.classify.random_forest.accuracy"]["info"]
    assert len(rf["dataset"]["x"][0]) == len(classify.FEATURES) and rf["features"] == list(classify.FEATURES)
    assert (rf["runs_per_class"], rf["locals"], rf["reps"]) == (4, list(kc.CPU_GRID.locals), 3)
    assert "dataset" not in recs["model.classify.random_forest.accuracy_with_code"]["info"]
    assert "note" in recs["model.classify.mlp.accuracy_with_code"]["info"]
    votes = recs["model.classify.random_forest.unseen_agreement"]["info"]["votes"]
    assert set(votes) == set(kc.UNSEEN) and recs["model.classify.random_forest.unseen_agreement"]["value"] == \
        classify.unseen_agreement(votes, kc.UNSEEN_EXPECTED)


@pytest.mark.parametrize("name, cpu, band", [
    ("model.classify.random_forest.accuracy", False, {"abs": 0.10, "rel": 0.0}),
    ("model.classify.mlp.accuracy_with_code", True, {"abs": 0.25, "rel": 0.0}),
    ("model.classify.naive_bayes.unseen_agreement", False, {"abs": 0.34, "rel": 0.0}),
    ("model.classify.naive_bayes.unseen_agreement_with_code", True, {"abs": 0.6, "rel": 0.0}),
    ("model.classify.counters.mlp.accuracy", False, {"abs": 0.10, "rel": 0.0}),
    ("model.classify.counters.mlp.unseen_agreement", False, {"abs": 0.34, "rel": 0.0}),
    ("model.similarity.spmv.slowdown", False, {"abs": 0.1, "rel": 0.0}),
])
def test_catalog_keeps_the_bands_the_baselines_were_made_with(name, cpu, band):
    assert catalog.tolerance(name, cpu) == band


def test_raw_csv_lies_beside_the_results_json_else_in_the_fallback(tmp_path: Path):
    info = DeviceInfo(backend="cuda", index=1, name="x", vendor="NVIDIA", key="card")
    beside = class_records.raw_csv_path(str(tmp_path / "r" / "{key}" / "{backend}{index}.json"), info, tmp_path / "t")
    assert beside == tmp_path / "r" / "card" / "ncu-kernel-classes-cuda1.csv" and beside.parent.is_dir()
    assert class_records.raw_csv_path(None, info, tmp_path / "t") == tmp_path / "t" / "ncu-kernel-classes-cuda1.csv"


def test_reuse_slowdown_is_the_reused_size_over_the_own_best():
    reuse = similarity_reuse.Reuse("spmv", "K3", 0.5, 256, 128, {128: 1.0, 256: 1.25}, {"K3": 0.5, "K1": 0.9})
    (rec,) = similarity_reuse.records([reuse])
    assert rec["name"] == "model.similarity.spmv.slowdown" and rec["value"] == 1.25 and "tolerance" not in rec
    assert rec["info"]["times_s"] == {"128": 1.0, "256": 1.25} and rec["info"]["match"] == "K3"
    assert [similarity_reuse.size_of(k) for k in ("K7", "K10", "spmv", "K1")] == [512, 4096, 1 << 17, 1 << 24]
