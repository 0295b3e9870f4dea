"""The PTX-model suite's figures built without a GPU (the suite itself runs on CUDA only): the records of
an evaluation (``studies.ptx_model.ptx_errors.records``) from real predictions of a committed PTX, the global-latency
records and the throughput fit of the calibration (``studies.ptx_model.ptx_calibration``), and their catalog bands."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pytest_gpuperf.baselines import catalog
from pytest_gpuperf.devices.base import DeviceInfo
from pytest_gpuperf.studies.ptx_model import cfg, ptx, ptx_calibration, ptx_errors, scheduler
from pytest_gpuperf.studies.ptx_model.ptx_latency import LatencyTable
from pytest_gpuperf.probes import global_latency
from pytest_gpuperf.probes.global_latency import Launch, Point

PTX = Path(__file__).parent / "data" / "models" / "vectorAdd.ptx"
CLASSES = ("addf", "mulf", "fma", "adds", "mul", "mads", "and", "setp", "mov", "cvt", "ld.shared", "st.shared",
           "sfu", "sqrt", "divf", "divs")


def _sweep() -> global_latency.Sweep:
    """A two-segment latency curve: flat to 1024 threads, then rising."""
    points = [Point(Launch(1, t), [500.0 + max(0, t - 1024) * 0.01 + 0.1 * (i % 2)] * 3, (490.0, 510.0))
              for i, t in enumerate([1, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536] * 2)]
    return global_latency.Sweep(points, global_latency.fit_points(points), single=[500.0, 501.0, 499.0, 500.0, 502.0])


def _evaluation() -> ptx_errors.PtxEvaluation:
    graph = cfg.build(ptx.parse(PTX.read_text(), "vectorAdd"))
    table = LatencyTable({k: 4.0 for k in CLASSES}, {"addf": "probed in this session: x"}, 600.0, "fixed probe")
    cal = scheduler.Calibration((3e-6, 0.0), (3e12, 1.0, 1e-6), (3e13, 1.0, 1e-6), global_tp_net=(3.5e12, 1.0, 1e-6))
    shape = dict(grid=4096, block=256, regs=32, shared=0, trips=[], n_sm=132, clock_hz=1.98e9, l2_bytes=50 << 20)
    pred = scheduler.predict(graph, table, cal, **shape)
    rates, sources = scheduler.issue_rates({}, "9.0")
    alt = {v: scheduler.predict(graph, table, cal, **shape, variant=v, rates=rates) for v in ptx_errors.ALT_VARIANTS}
    runs = [ptx_errors.KernelRun("vectorAdd", "Dense Linear Algebra", pred, alt, pred.seconds * 1.5, [], 0),
            ptx_errors.KernelRun("saxpy", "Dense Linear Algebra", pred, alt, pred.seconds * 0.5, [], 0),
            ptx_errors.KernelRun("sobolGPU_kernel", "Monte Carlo", pred, alt, pred.seconds * 2.0, [], 8)]
    return ptx_errors.PtxEvaluation(runs, table, _sweep(), {"launch_s": [3e-6, 0.0]}, rates, sources)


def test_records_hold_every_kernel_dwarf_and_mean_of_each_variant():
    ev = _evaluation()
    recs = {r["name"]: r for r in ptx_errors.records(ev)}
    prefixes = ["model.ptx"] + [f"model.ptx.{v}" for v in ptx_errors.ALT_VARIANTS]
    assert set(recs) == {f"{p}.{k}" for p in prefixes for k in ("vectorAdd.error", "saxpy.error", "sobolGPU_kernel.error",
                                                                 "dwarf.dense_linear_algebra.mape",
                                                                 "dwarf.monte_carlo.mape", "mean_error")}
    assert recs["model.ptx.saxpy.error"]["value"] == pytest.approx(1.0)  # predicted twice the measured time
    assert recs["model.ptx.dwarf.dense_linear_algebra.mape"]["value"] == pytest.approx((1 / 3 + 1.0) / 2)
    assert recs["model.ptx.mean_error"]["value"] == pytest.approx((1 / 3 + 1.0 + 0.5) / 3)
    assert recs["model.ptx.mean_error"]["identity"] == {"latencies": "probed in session",
                                                        "kernels": "saxpy,sobolGPU_kernel,vectorAdd"}
    assert recs["model.ptx.issue.vectorAdd.error"]["identity"]["issue_rates"] == scheduler.rates_origin(ev.rate_sources)
    assert recs["model.ptx.dwarf.monte_carlo.mape"]["identity"]["kernels"] == "sobolGPU_kernel"
    assert recs["model.ptx.sobolGPU_kernel.error"]["info"]["local_bytes_per_thread"] == 8
    assert recs["model.ptx.hopper.saxpy.error"]["info"]["thesis_variant_error"] == pytest.approx(1.0)
    assert recs["model.ptx.mean_error"]["info"]["global_latency_model"] == ev.sweep.table()
    for r in recs.values():  # every band is the catalog's "models" row, unchanged
        assert "tolerance" not in r and (r["unit"], r["better"]) == ("ratio", "lower")
        assert catalog.tolerance(r["name"], False) == {"abs": 0.05, "rel": 0.2}


def test_global_latency_records_and_their_bands():
    sw = _sweep()
    info = DeviceInfo(backend="cuda", index=0, name="x", vendor="NVIDIA", key="x", compute_units=2)
    recs = {r["name"]: r for r in ptx_calibration.global_latency_records(sw, info)}
    assert list(recs) == ["model.ptx.global_latency.r2", "model.ptx.global_latency.rmse_cycles",
                          "model.ptx.global_latency.single_thread.cycles", "model.ptx.global_latency.full_device.cycles"]
    assert recs["model.ptx.global_latency.single_thread.cycles"]["identity"] == {"allocations": 5}
    assert recs["model.ptx.global_latency.full_device.cycles"]["value"] == \
        sw.last_within(global_latency.full_device(info)).cycles
    assert catalog.tolerance("model.ptx.global_latency.r2", True) == {"abs": 0.1}
    assert catalog.tolerance("model.ptx.global_latency.rmse_cycles", False) == {"abs": 10.0, "rel": 1.0}
    assert catalog.family("model.ptx.global_latency.single_thread.cycles") is None  # its band is the spread


def test_exp_fit_recovers_the_throughput_curve():
    n = np.array([1e4, 1e5, 1e6, 1e7, 1e8])
    a, b, c = ptx_calibration.exp_fit(n, 2e12 * (1.0 - np.exp(-3e-7 * n)))
    assert a * b == pytest.approx(2e12, rel=0.02) and c == pytest.approx(3e-7, rel=0.1)
