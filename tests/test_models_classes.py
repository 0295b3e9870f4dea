"""Kernel-class generators, portable features, classifiers and CFG similarity — pure logic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pytest_gpuperf.corpora import kernel_classes as kc
from pytest_gpuperf.studies.classification import classify, similarity
from pytest_gpuperf.studies.ptx_model import cfg, ptx

DATA = Path(__file__).parent / "data" / "models"


@pytest.mark.parametrize("backend", ["cuda", "opencl"])
def test_every_class_renders_for_both_backends(backend):
    for name in kc.CLASSES + kc.UNSEEN:
        src = kc.source(name, backend)
        assert f"void {name}(" in src
    assert set(kc.STRATEGY) == set(kc.CLASSES)
    assert all(set(v) <= set(kc.CLASSES) for v in kc.UNSEEN_EXPECTED.values())


def test_run_grid_covers_every_class_size_and_group():
    runs = kc.runs(kc.CLASSES, kc.CPU_GRID)
    assert {r[0] for r in runs} == set(kc.CLASSES)
    assert len(runs) == sum(len(kc.CPU_GRID.sizes(k)) * len(kc.CPU_GRID.locals) for k in kc.CLASSES)
    for grid in (kc.CPU_GRID, kc.GPU_GRID):  # features need a next size for every sampled size
        assert all(len(grid.sizes(k)) >= 2 for k in kc.CLASSES + kc.UNSEEN)


class HostArrays:
    """A stand-in for buffer creation only (no timing, no kernels): keeps the host arrays."""

    def to_device(self, a):
        return np.asarray(a)

    def empty(self, nbytes):
        return np.empty(nbytes, dtype=np.uint8)


def test_generator_launch_shapes():
    rng = np.random.default_rng(0)
    dev = HostArrays()
    i = kc.generate("K6", 1 << 12, 128, dev, rng)
    assert i.global_size == 1024 and i.buffer_bytes == 12 * 4096
    i = kc.generate("K8", 70, 64, dev, rng)
    assert i.size == 64 and i.local == 256 and i.global_size == 64 * 64
    i = kc.generate("spmv", 256, 64, dev, rng)
    rows, cols = i.args[0], i.args[1]
    assert rows[-1] == cols.size and (np.diff(rows) == round(0.95 * 64)).all()
    assert cols.max() < 256
    with pytest.raises(KeyError):
        kc.generate("K11", 10, 64, dev, rng)


def test_features_and_classifiers_on_separable_data():
    r = classify.RunTimes("K1", t=2e-3, t_next=4e-3, bytes_=1e6, bytes_next=2e6, t_small_group=2e-3, t_copy=1e-3,
                          t_fma=4e-3, items=1000, copy_elems=1000)
    f = classify.features(r)
    assert f[0] == pytest.approx(np.log(0.5)) and f[2] == pytest.approx(1.0) and f[3] == pytest.approx(0.0)
    rng = np.random.default_rng(1)
    r2 = classify.RunTimes("K1", t=2e-3, t_next=4e-3, bytes_=1e6, bytes_next=2e6, t_small_group=2e-3, t_copy=1e-3,
                           t_fma=4e-3, items=1000, copy_elems=1000, t_by_local={64: 4e-3, 128: 2e-3, 256: 1e-3},
                           t_first=1e-3, t_last=8e-3, bytes_first=1e6, bytes_last=4e6)
    f2 = classify.features(r2)
    assert len(f2) == len(classify.FEATURES)
    assert f2[5] == pytest.approx(-1.0)  # time halves per doubling of the group size
    assert f2[6] == pytest.approx(np.log(2.0)) and f2[7] == pytest.approx(1.5)
    x = np.concatenate([rng.normal(c, 0.05, (20, 5)) for c in range(4)])
    y = [f"K{c + 1}" for c in range(4) for _ in range(20)]
    ev = classify.evaluate(x, y, {"stencil9": rng.normal(2, 0.05, (5, 5))})
    assert ev.split["test_runs"] == 24
    assert all(a == 1.0 for a in ev.accuracy.values())
    assert all(v["stencil9"] == {"K3": 5} for v in ev.unseen.values())
    assert all(sum(sum(r.values()) for r in c.values()) == 24 for c in ev.confusion.values())


def test_code_features_separate_the_roofline_twins():
    """K1/K2 and K4/K5 time alike on a GPU; their static instruction mix does not."""
    f = {k: classify.code_features(kc.SOURCES[k]) for k in kc.CLASSES}
    assert len(f["K1"]) == len(classify.CODE_FEATURES)
    assert f["K1"][3] < f["K2"][3]  # multiplies
    assert f["K4"][1] == 1 and f["K5"][1] == 2 and f["K6"][1] == 4  # widest vector load
    assert f["K3"][2] == 2 and f["K1"][2] == 0  # transcendental calls
    assert f["K10"][5] == 1 and f["K9"][5] == 0 and f["K8"][6] == 2 and f["K7"][7] == 1
    assert len({tuple(v) for v in f.values()}) == len(kc.CLASSES)


def test_transition_matrices_and_similarity():
    mats = {n: similarity.transition_matrix(cfg.build(ptx.parse((DATA / f"{n}.ptx").read_text())))
            for n in ("vectorAdd", "saxpy", "mergeSortSharedKernel", "matrixMulCUDA")}
    for m in mats.values():
        assert np.allclose(m.sum(axis=1), 1.0)
    assert similarity.distance(mats["saxpy"], mats["saxpy"]) == 0.0
    # vectorAdd and saxpy share their CFG shape; the nested-loop sort does not
    match, d = similarity.most_similar(mats["vectorAdd"], {k: v for k, v in mats.items() if k != "vectorAdd"})
    assert match == "saxpy" and d == pytest.approx(0.0)
    for measure in ("euclidean", "manhattan", "cosine", "jaccard"):
        assert similarity.distance(mats["saxpy"], mats["mergeSortSharedKernel"], measure) > 0
    assert similarity.scale(mats["saxpy"], 9).shape == (9, 9)
    with pytest.raises(ValueError):
        similarity.distance(mats["saxpy"], mats["saxpy"], "hamming")
