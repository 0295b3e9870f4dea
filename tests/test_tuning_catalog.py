"""The tuning suite's metric families in ``baselines/catalog.py``: every figure it records gets the unit,
direction and tolerance (on a GPU and on a CPU device) its baselines were made with. Each row below is a
metric the suite records; its family must be exactly that, so a pattern that catches the wrong figure (a
mean by a per-kernel pattern, a searching strategy by an own one) fails here."""

from __future__ import annotations

import pytest

from pytest_gpuperf.baselines import catalog

OWN_Q = ({"rel": 0.08, "abs": 0.02}, {"rel": 3.0, "abs": 0.5})
SEARCH_Q = ({"rel": 0.25, "abs": 0.05}, {"rel": 5.0, "abs": 0.5})
OWN_C = ({"rel": 0.25, "abs": 0.05}, {"rel": 1.0, "abs": 0.2})
SEARCH_C = ({"rel": 0.6, "abs": 0.15}, {"rel": 1.5, "abs": 0.5})
MEAN_SEARCH_Q = ({"rel": 0.1, "abs": 0.03}, {"rel": 1.0, "abs": 0.3})
MEAN_C = ({"rel": 0.3, "abs": 0.05},) * 2
TIME_C = ({"rel": 0.6, "abs": 0.1}, {"rel": 2.0, "abs": 0.3})
TOTAL = ({"rel": 0.3, "abs": 0.05}, {"rel": 1.0, "abs": 0.2})

#: (metric, unit, better, (GPU tolerance, CPU tolerance))
ROWS = [
    ("tuning.lambda0", "ratio", "exact", ({"abs": 0.25},) * 2),
    ("tuning.sgemm_tiled.optimum_us", "us", "lower", (None, {"rel": 3.0})),
    ("tuning.bfs_step.space", "configs", "exact", ({"abs": 0},) * 2),
    ("tuning.blur1d.dao.evals.final", "fraction", "lower", (None, None)),  # 1/space, passed by tuning.race
    ("tuning.blur1d.dao_ranked.evals.concurrency", "fraction", "lower", (None, None)),
    # the ranked pass's stop follows near-ties in a table a new machine measures afresh
    ("tuning.blur1d.dao_ranked.evals.final", "fraction", "lower", (None, None)),
    ("tuning.reduce.dao.pruned.workload", "fraction", "higher", ({"abs": 0.05},) * 2),
    ("tuning.reduce.lim_static.pruned.static", "fraction", "higher", ({"abs": 0.05},) * 2),
    ("tuning.reduce.lim_rules.pruned.rules", "fraction", "higher", ({"abs": 0.05},) * 2),
    *[(f"tuning.matvec_wg.{s}.quality", "ratio", "lower", OWN_Q)
      for s in ("exhaustive", "dao", "dao_ranked", "lim_static", "lim_rules")],
    *[(f"tuning.matvec_wg.{s}.quality", "ratio", "lower", SEARCH_Q) for s in ("random", "kt_pso", "kt_mls")],
    *[(f"tuning.nbody.{s}.{c}", "ratio", "lower", OWN_C)
      for s in ("dao", "dao_ranked", "lim_static", "lim_rules") for c in ("cost", "device_cost")
      if (s, c) != ("dao_ranked", "cost")],
    ("tuning.nbody.dao_ranked.cost", "ratio", "lower", ({"rel": 0.25, "abs": 0.1}, {"rel": 1.0, "abs": 0.2})),
    *[(f"tuning.nbody.{s}.{c}", "ratio", "lower", SEARCH_C)
      for s in ("random", "kt_greedy_ils", "kt_basinhopping") for c in ("cost", "device_cost")],
    *[(f"tuning.mean.{s}.quality", "ratio", "lower", OWN_Q)
      for s in ("exhaustive", "dao", "dao_ranked", "lim_static", "lim_rules")],
    *[(f"tuning.mean.{s}.quality", "ratio", "lower", MEAN_SEARCH_Q) for s in ("random", "kt_pso")],
    *[(f"tuning.mean.{s}.cost", "ratio", "lower", MEAN_C) for s in ("dao", "random", "kt_pso")],
    *[(f"tuning.mean.{s}.device_cost", "ratio", "lower", MEAN_C) for s in ("dao", "random", "kt_pso")],
    *[(f"tuning.mean.{s}.time_cost", "ratio", "lower", TIME_C) for s in ("dao", "random", "kt_pso")],
    *[(f"tuning.total.{s}.device_cost", "ratio", "lower", TOTAL) for s in ("dao", "lim_rules", "kt_pso")],
]


@pytest.mark.parametrize("name,unit,better,tolerances", ROWS, ids=[r[0] for r in ROWS])
def test_each_tuning_figure_has_its_family(name, unit, better, tolerances):
    fam = catalog.family(name)
    assert fam is not None, name
    assert (fam.unit, fam.better) == (unit, better), fam.pattern
    assert (catalog.tolerance(name, False), catalog.tolerance(name, True)) == tolerances, fam.pattern
