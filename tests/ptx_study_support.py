"""A fixed device model for the PTX study's record and table tests: a committed PTX, one latency per
instruction class, a calibration and a flat global-latency sweep, so a test can predict every launch of
the sweep with no GPU. Test data only: no figure here is a measurement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_gpuperf.studies.ptx_model import cfg, ptx, ptx_errors, scheduler
from pytest_gpuperf.studies.ptx_model.ptx_latency import LatencyTable
from pytest_gpuperf.probes import global_latency
from pytest_gpuperf.probes.global_latency import Launch, Point

ROOT = Path(__file__).resolve().parents[1]
CLASSES = ("addf", "mulf", "fma", "adds", "mul", "mads", "and", "setp", "mov", "cvt", "ld.shared", "st.shared",
           "sfu", "sqrt", "divf", "divs")


def fixed_model() -> tuple[Any, LatencyTable, scheduler.Calibration, Any, ptx_errors.DeviceModel]:
    """The committed vectorAdd PTX's graph, its latency table, calibration, issue rates and the device model
    built on them."""
    graph = cfg.build(ptx.parse((ROOT / "tests" / "data" / "models" / "vectorAdd.ptx").read_text(), "vectorAdd"))
    table = LatencyTable({k: 4.0 for k in CLASSES}, {"addf": "probed in this session: x"}, 600.0, "fixed probe")
    cal = scheduler.Calibration((3e-6, 0.0), (3e12, 1.0, 1e-6), (3e13, 1.0, 1e-6), global_tp_net=(3.5e12, 1.0, 1e-6))
    rates, sources = scheduler.issue_rates({}, "9.0")
    points = [Point(Launch(1, t), [500.0 + t * 0.01] * 3, (490.0, 510.0)) for t in [1, 64, 1024, 8192, 65536] * 2]
    sweep = global_latency.Sweep(points, global_latency.fit_points(points), single=[500.0] * 4)
    return graph, table, cal, rates, ptx_errors.DeviceModel(cal, {"launch_s": [3e-6, 0.0]}, sweep, table, rates, sources)
