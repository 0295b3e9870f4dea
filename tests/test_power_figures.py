"""The power suite's procedures in ``pytest_gpuperf/power/``, on their own:

* the standard FMA load's kernel computes its chains (run on PoCL over a few work-items, fp32 and fp64,
  against NumPy), and its launcher enqueues one launch;
* a steady-state energy becomes ``power.<load>.{joules_per_op,watts}`` with the span's readings kept;
* the power model's cross-validation results become one figure per score and family, named per protocol;
* a (time, energy) Pareto search on PoCL (its sensor a simulated stepping counter, as in
  ``test_pareto_search``) becomes the front's size and the energy saving, with the search's scope as identity.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from pytest_gpuperf.devices.nvml import Reading
from pytest_gpuperf.power import energy_figures, fma_load, front_figures
from pytest_gpuperf.studies.static_power import model_scores
from pytest_gpuperf.timing.energy import energy_of


@pytest.mark.parametrize("precision", ["fp32", "fp64"])
def test_the_fma_load_computes_its_chains(cl_device, precision):
    if precision == "fp64" and not cl_device.info.fp64:
        pytest.skip("no fp64 on this OpenCL device")
    scalar, dt = fma_load.PRECISIONS[precision]
    k = cl_device.compile(fma_load.source(cl_device.info.dialect, scalar), "fma_chain")
    n = fma_load.LOCAL  # one group: a CPU runs the GPU-sized load far too slowly
    out = cl_device.empty(n * np.dtype(dt).itemsize)
    cl_device.launch(k, (n,), (fma_load.LOCAL,), [out, dt(0.999), dt(0.001)])
    got = cl_device.to_host(out, dt, n)
    x = (np.arange(n, dtype=np.float64)[:, None] + np.arange(fma_load.CHAINS)) * 1e-7
    for _ in range(fma_load.ITERS):
        x = x * 0.999 + 0.001
    np.testing.assert_allclose(got, x.sum(axis=1), rtol=1e-4 if precision == "fp32" else 1e-9)
    assert fma_load.flops() == 2.0 * fma_load.CHAINS * fma_load.ITERS * fma_load.THREADS


def test_an_energy_becomes_joules_per_op_and_watts():
    rs = [Reading(0.1 * k, 1000.0 * k, 10.0, 1980.0, 2619.0, 60.0, 0) for k in range(0, 25)]
    e = energy_of(rs, launches=100, ops_per_launch=1e6)
    per_op, watts = energy_figures.records("copy_256MiB", e, "byte read + written", {"bytes_per_launch": 7})
    assert (per_op["name"], per_op["unit"], per_op["better"]) == ("power.copy_256MiB.joules_per_op", "J/op", "lower")
    assert (watts["name"], watts["unit"], watts["value"]) == ("power.copy_256MiB.watts", "W", e.watts)
    assert per_op["value"] == e.joules_per_op and per_op["info"]["ops_per_launch"] == pytest.approx(1e6)
    assert per_op["info"]["nvml_samples"] == e.samples() and per_op["info"]["power"] == e.info()
    assert list(watts["info"]) == ["power", "per", "bytes_per_launch"]


def test_model_scores_are_one_figure_per_score_and_protocol(monkeypatch, tmp_path):
    from pytest_gpuperf.studies.static_power import power_model as pmodel

    result = SimpleNamespace(estimator="rf", importances={"a": 1.0}, folds=5,
                             scores={"r2": 0.9, "rmse": 3.0, "mae": 2.0, "mape": 4.0})
    monkeypatch.setattr(pmodel, "load_corpus", lambda path: (None, [SimpleNamespace(kernel="k1")] * 3))
    monkeypatch.setattr(pmodel, "nested_cv", lambda entries, protocol: {"random_forest": result})
    root = tmp_path
    path = model_scores.corpus_path(SimpleNamespace(key="card", backend="cuda"), root)
    assert path == root / "results" / "card" / "power-corpus-cuda.json"
    path.parent.mkdir(parents=True)
    path.write_text("{}")
    recs = {r["name"]: r for r in model_scores.records(path, root, cache=tmp_path / "cache")}
    assert sorted(recs) == sorted(f"model.power.random_forest{p}.{s}" for p in ("", ".rows")
                                  for s in ("r2", "rmse_w", "mae_w", "mape"))
    r2 = recs["model.power.random_forest.r2"]
    assert (r2["value"], r2["unit"], r2["better"]) == (0.9, "ratio", "higher")
    assert r2["identity"] == {"corpus_entries": 3, "kernels": 1}
    assert r2["info"]["corpus"] == str(Path("results/card/power-corpus-cuda.json"))
    assert recs["model.power.random_forest.rows.rmse_w"]["info"]["protocol"] == "rows"
    assert r2["info"]["computed"]["cached"] is False


def test_model_scores_are_computed_once_per_corpus(monkeypatch, tmp_path):
    """The scores depend on the corpus, the code and its libraries only: a second run with the same corpus
    reads them back (nothing is fitted), a changed corpus is fitted again."""
    from pytest_gpuperf.studies.static_power import power_model as pmodel

    fits = []
    result = SimpleNamespace(estimator="rf", importances={"a": 1.0}, folds=5,
                             scores={"r2": 0.9, "rmse": 3.0, "mae": 2.0, "mape": 4.0})
    monkeypatch.setattr(pmodel, "load_corpus", lambda path: (None, [SimpleNamespace(kernel="k1")] * 3))
    monkeypatch.setattr(pmodel, "nested_cv", lambda entries, protocol: fits.append(protocol) or {"rf": result})
    path, cache = tmp_path / "corpus.json", tmp_path / "cache"
    path.write_text('{"entries": 1}')
    first = model_scores.records(path, tmp_path, cache=cache)
    n = len(fits)
    second = model_scores.records(path, tmp_path, cache=cache)
    assert len(fits) == n and n > 0
    assert [r["info"]["computed"]["cached"] for r in second] == [True] * len(second)
    strip = [{**r, "info": {k: v for k, v in r["info"].items() if k != "computed"}} for r in first]
    assert strip == [{**r, "info": {k: v for k, v in r["info"].items() if k != "computed"}} for r in second]
    path.write_text('{"entries": 2}')
    model_scores.records(path, tmp_path, cache=cache)
    assert len(fits) == 2 * n


def test_a_pareto_search_becomes_the_front_and_the_saving(cl_device):
    from test_power_corpus import SimCounter

    from pytest_gpuperf.tuning.kernels import by_name
    from pytest_gpuperf.tuning.pareto import pareto_search
    from pytest_gpuperf.tuning.tuner import context

    ctx = context(cl_device, by_name("blur1d"), seed=11, objective="time")
    ctx.ev.energy_warmup_s, ctx.ev.energy_k_steps = 0.01, 3
    found, idle = pareto_search(ctx, SimCounter(period=0.002), budget_s=60.0)
    front, saving = front_figures.records("blur1d", ctx, found, idle)
    assert front["name"] == "power.tuning.blur1d.front" and front["value"] == len(found.front())
    assert saving["name"] == "power.tuning.blur1d.energy_saving" and saving["value"] >= 1.0
    scope = "exact" if found.exact else f"the {found.covered} fastest of {len(found.order)}"
    assert front["identity"] == saving["identity"] == {"front_scope": scope}
    assert set(front["info"]["points"]) == {c.label() for c in found.energies}
    assert front["info"]["gate"] == "if-stable" and front["info"]["search"]["p_floor"] == idle.info()
