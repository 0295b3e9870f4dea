"""The power suite's metric families in ``baselines/catalog.py``: every figure it records gets the unit,
direction and tolerance its baselines were made with; power moves with the board (one machine of a card
model to the next), so energies and watts carry that band, the sustained-load watts included, while the
sustained clock and slowdown share keep the bands their readings give."""

from __future__ import annotations

import pytest

from pytest_gpuperf.baselines import catalog

ENERGY = {"rel": 0.2}
WATTS = {"rel": 0.25}
MODEL = {"abs": 0.02, "rel": 0.1}

#: (metric, unit, better, tolerance on GPUs and CPUs alike)
ROWS = [
    *[(f"power.{load}.joules_per_op", "J/op", "lower", ENERGY)
      for load in ("fma_fp32", "fma_fp64", "copy_256MiB", "tuning.sgemm_tiled")],
    *[(f"power.{load}.watts", "W", "lower", WATTS) for load in ("fma_fp32", "fma_fp64", "copy_256MiB", "tuning.reduce")],
    ("power.sustained.fma_fp32.watts", "W", "lower", {"rel": 0.15}),
    ("power.tuning.blur1d.front", "configs", "exact", {"abs": 2}),
    ("power.tuning.blur1d.energy_saving", "ratio", "higher", {"abs": 0.05, "rel": 0.1}),
    *[(f"model.power.{where}.r2", "ratio", "higher", MODEL) for where in ("random_forest", "xgboost.rows")],
    *[(f"model.power.{where}.{m}", "W", "lower", MODEL) for where in ("random_forest", "linear.rows")
      for m in ("rmse_w", "mae_w")],
    ("model.power.random_forest.mape", "%", "lower", MODEL),
]


@pytest.mark.parametrize("name,unit,better,tolerance", ROWS, ids=[r[0] for r in ROWS])
def test_each_power_figure_has_its_family(name, unit, better, tolerance):
    fam = catalog.family(name)
    assert fam is not None, name
    assert (fam.unit, fam.better) == (unit, better), fam.pattern
    assert catalog.tolerance(name, False) == catalog.tolerance(name, True) == tolerance, fam.pattern


@pytest.mark.parametrize("name", ["power.sustained.fma_fp32.sm_clock_mhz", "power.sustained.fma_fp32.slowed_share"])
def test_the_sustained_load_figures_keep_their_own_bands(name):
    assert catalog.family(name) is None
