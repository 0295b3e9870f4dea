"""Alavani's global-memory latency model (thesis §3.3.3, Table 3.3/3.4) without a GPU: the segmented fit,
the sweep plan, the model's use in the latency table and the scheduler, and the CUDA text of the
microbenchmark (compiled by nvcc where a toolkit is installed)."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from pytest_gpuperf.devices import sass
from pytest_gpuperf.studies.ptx_model import cfg, ptx, scheduler
from pytest_gpuperf.studies.ptx_model.ptx_latency import (GLOBAL_MODEL_METRIC, GlobalLatencyModel, LatencyTable,
                                           global_latency_k20, latencies, with_global_model)
from pytest_gpuperf.probes import fit, global_latency, sass_proof

#: Table 3.3 (Tesla K20): (interval end, a, b) of L = a·(nT_b·nB) + b.
TABLE_3_3 = tuple((hi, a, b) for _, hi, a, b in global_latency.K20_TABLE_3_3)


def _k20_samples(per_segment: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Noise-free points of Table 3.3, log-spaced inside each interval (away from the interval ends)."""
    xs, lo = [], 1.0
    for hi, _, _ in TABLE_3_3:
        xs += list(np.geomspace(lo * 1.05, hi * 0.95, per_segment))
        lo = hi
    x = np.array(xs)
    return x, np.array([global_latency_k20(v) for v in x])


def test_segmented_fit_reproduces_table_3_3():
    x, y = _k20_samples()
    f = fit.piecewise_linear(x, y, max_segments=4)
    assert len(f.segments) == 4
    for seg, (hi, a, b) in zip(f.segments, TABLE_3_3):
        assert seg.slope == pytest.approx(a, rel=1e-6) and seg.intercept == pytest.approx(b, rel=1e-6)
        assert seg.x_hi < hi  # each interval's points, none of the next
    for got, (hi, _, _) in zip(f.breakpoints, TABLE_3_3):
        assert hi * 0.9 < got < hi  # the breakpoint falls between the last point below and the first above
    st = f.statistics()
    assert st["rss"] == pytest.approx(0.0, abs=1e-6) and st["r2"] == pytest.approx(1.0) and st["n"] == x.size


def test_segmented_fit_recovers_known_breakpoints_under_noise():
    """Three segments (flat, steep, shallow; discontinuous like Table 3.3) with 3-cycle noise on a log grid
    (×1.48 per point): each breakpoint at the last grid point below the true one, slopes close, and Table
    3.4's statistics consistent with each other."""
    rng = np.random.default_rng(11)
    x = np.unique(np.round(np.geomspace(1, 4e6, 40)))
    true = np.where(x < 2000, 300.0, np.where(x < 300_000, 0.01 * x + 330.0, 0.0002 * x + 3000.0))
    y = true + rng.normal(0, 3.0, x.size)
    f = fit.piecewise_linear(x, y, max_segments=4)
    assert len(f.segments) == 3
    assert 2000 / 1.5 < f.breakpoints[0] < 2000 and 300_000 / 1.5 < f.breakpoints[1] < 300_000
    assert f.segments[1].slope == pytest.approx(0.01, rel=0.05)
    assert f.segments[2].slope == pytest.approx(0.0002, rel=0.2)
    st = f.statistics()
    resid = y - np.array([f.predict(v) for v in x])
    assert st["rss"] == pytest.approx(float(np.sum(resid ** 2)))
    assert st["mse"] == pytest.approx(st["rss"] / x.size) and st["rmse"] == pytest.approx(math.sqrt(st["mse"]))
    assert st["rse"] == pytest.approx(math.sqrt(st["rss"] / (x.size - 6)))  # 2 parameters per segment
    assert 1.5 < st["rmse"] < 4.5 and st["r2"] > 0.999


def test_fit_round_trips_through_json():
    x, y = _k20_samples()
    f = fit.piecewise_linear(x, y)
    g = fit.PiecewiseFit.from_json(json.loads(json.dumps(f.to_json())))
    assert g == f


def test_k20_model_at_the_thesis_example():
    """§4.4.4.2: vectorAdd with 13 blocks × 256 threads on the K20 — "L(ld) is 315 cycles". By hand from
    Table 3.3's first interval: 0.02828 × 3328 + 220 = 94.11 + 220 = 314.11 cycles."""
    assert global_latency_k20(13 * 256) == pytest.approx(314.11, abs=0.01)
    assert abs(global_latency_k20(13 * 256) - 315) < 1.0


def _model(points: dict[int, float]) -> GlobalLatencyModel:
    x = np.array(sorted(points), dtype=float)
    return GlobalLatencyModel(fit.piecewise_linear(x, [points[int(v)] for v in x]), "test fit")


def test_latency_table_prefers_the_fitted_model(tmp_path):
    key = "gpu"
    (tmp_path / "results" / key).mkdir(parents=True)
    (tmp_path / "results" / key / "probes-cuda.json").write_text(
        '{"metrics": [{"name": "memory.dram.latency.cycles", "value": 673.0, "unit": "cycles"}]}')
    fixed = latencies(tmp_path, key, "cuda", 1980.0)
    assert fixed.of("ld.global", 10) == fixed.of("ld.global", 10**6) == 673.0 and fixed.global_model is None
    # a rising two-segment curve: 280 + 0.001·x up to 4096 threads, then 284 + 0.0005·x
    pts = {x: (280 + 0.001 * x if x <= 4096 else 284 + 0.0005 * x) for x in (1, 64, 512, 1024, 2048, 4096,
                                                                           8192, 65536, 270336, 1 << 22)}
    model = _model(pts)
    t = latencies(tmp_path, key, "cuda", 1980.0, global_model=model)
    assert t.of("ld.global", 3328) == pytest.approx(280 + 3.328, abs=1e-6)
    assert t.of("st.global", 270336) == pytest.approx(284 + 135.168, abs=1e-6)  # stores share the model
    assert t.of("ld.global", 1 << 24) == pytest.approx(t.of("ld.global", 1 << 22))  # held past the range
    assert t.of("ld.global", 0) == pytest.approx(280.001)  # and below it
    assert "test fit" in t.global_source and "replaces 673.0 cycles" in t.global_source
    assert t.global_cycles == 673.0  # the fixed value it replaced stays visible
    # no probe value at all: the model still wins over the K20 fallback
    assert latencies(tmp_path, "other", "cuda", 1980.0, global_model=model).of("ld.global", 3328) == \
        pytest.approx(283.328)


def test_latency_table_reads_a_recorded_model(tmp_path):
    """The fit recorded in the device's model-error results (``info["fit"]``) is used when the session
    measured none; a results file without it leaves the fixed value."""
    key = "gpu"
    folder = tmp_path / "results" / key
    folder.mkdir(parents=True)
    model = _model({1: 300.0, 100: 300.0, 1000: 300.0, 10_000: 320.0, 100_000: 340.0, 1_000_000: 360.0})
    metric = {"name": GLOBAL_MODEL_METRIC, "value": model.fit.r2, "unit": "R²", "info": {"fit": model.fit.to_json()}}
    (folder / "models-cuda.json").write_text(json.dumps({"metrics": [metric]}))
    t = latencies(tmp_path, key, "cuda", 1980.0)
    assert t.global_model is not None and t.of("ld.global", 100_000) == pytest.approx(model(100_000))
    assert "models-cuda.json" in t.global_source
    metric["info"] = {"segments": "not a fit"}
    (folder / "models-cuda.json").write_text(json.dumps({"metrics": [metric]}))
    assert latencies(tmp_path, key, "cuda", 1980.0).global_model is None


def test_scheduler_charges_the_launch_s_latency_in_alg6_and_eq_4_12():
    """The per-launch L(gm) flows where the thesis uses it: each global access in the schedule (Alg. 6)
    and each expected L2 miss (Eq. 4.12) — two launch sizes, two latencies."""
    text = (Path(__file__).parent / "data" / "models" / "vectorAdd.ptx").read_text()
    g = cfg.build(ptx.parse(text))
    base = LatencyTable({k: 4.0 for k in ("addf", "adds", "mul", "mads", "setp", "mov", "cvt", "and")}, {},
                        600.0, "fixed")
    model = _model({1: 250.0, 1000: 250.0, 10_000: 250.0, 100_000: 450.0, 1_000_000: 650.0, 10_000_000: 850.0})
    table = with_global_model(base, model)
    cal = scheduler.Calibration((3e-6, 0.0), (2.4e12, 1.0, 5e-7), (1.3e13, 1.5, 2e-8))
    kw = dict(regs=16, shared=0, trips=[], n_sm=132, clock_hz=1.98e9, l2_bytes=50 << 20)
    small = scheduler.predict(g, table, cal, grid=13, block=256, **kw)
    big = scheduler.predict(g, table, cal, grid=16384, block=256, **kw)
    assert small.gm_latency_cycles == pytest.approx(model(13 * 256))
    assert big.gm_latency_cycles == pytest.approx(model(16384 * 256)) and big.info()["gm_latency_cycles"] > 600
    ngm, gbytes = big.counts[0], big.counts[1]
    cm = scheduler.cache_miss_cycles(16384 * 256, ngm, gbytes, big.waves, 50 << 20, big.gm_latency_cycles)
    assert big.cm_penalty_s == pytest.approx(cm / 1.98e9)
    # the schedule itself: with the fixed 600 cycles instead, d_kernel differs by the loads' latency difference
    fixed = scheduler.predict(g, base, cal, grid=13, block=256, **kw)
    assert fixed.d_kernel_cycles > small.d_kernel_cycles  # 600 vs 250 cycles per global access


def test_sweep_plan_covers_one_thread_to_the_full_device_and_beyond():
    full = 132 * 2048
    launches = global_latency.plan(full)
    totals = [l.total for l in launches]
    assert totals[0] == 1 and full in totals and totals[-1] == 16 * full
    assert 25 <= len(launches) <= 45 and totals == sorted(totals)
    assert all(1 <= l.threads <= 1024 for l in launches)
    assert len({l.threads for l in launches if l.total >= 1024}) >= 4  # several block shapes
    inside = [t for t in totals if t <= full]
    gaps = np.diff(np.log2(inside))
    assert gaps.max() <= 1.01  # at least one launch per octave: log-spaced up to the full wave
    assert [l.total // full for l in launches if l.total > full] == list(global_latency.WAVES_BEYOND)


def test_a_device_without_a_clock_is_refused_with_the_reason(gpu_device):
    """On the local OpenCL device (PoCL in CI) the sweep refuses to run and says why (the suite skips with
    the same text) rather than report event-timed launch times as per-thread latencies."""
    if gpu_device.info.clock_counter:
        pytest.skip(f"{gpu_device.info.spec} has a device clock: the sweep runs there (suites/test_model_error.py)")
    with pytest.raises(ValueError, match="OpenCL C has none"):
        global_latency.sweep(gpu_device)


NVCC = shutil.which("nvcc")


@pytest.mark.skipif(NVCC is None, reason="no nvcc on this machine: the CUDA text cannot be compiled here")
def test_chase_kernel_compiles_to_l1_bypassing_dependent_loads(tmp_path):
    """The microbenchmark's CUDA text with nvcc (NVRTC's front end and ptxas): every chase load is
    ``ld.global.cg`` in the PTX; where a cuobjdump is installed, the SASS check the probe runs on the GPU
    (three loops of four ``LDG.E.STRONG.GPU``) passes on the same cubin."""
    src = tmp_path / "chase.cu"
    src.write_text(global_latency.SOURCE)
    for target in ("ptx", "cubin"):
        proc = subprocess.run([NVCC, f"-{target}", "-arch=sm_90", "-o", str(tmp_path / f"chase.{target}"), str(src)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
    text = (tmp_path / "chase.ptx").read_text()
    assert len(re.findall(r"ld\.global\.cg\.u32", text)) == 3 * global_latency.UNROLL
    assert "ld.global.u32" not in text and "ld.global.nc" not in text
    if not sass.cuobjdump_candidates():
        pytest.skip("no cuobjdump here: the SASS check runs on the GPU")
    funcs = sass.parse(sass.disassemble((tmp_path / "chase.cubin").read_bytes()))
    ev = sass_proof.verify_chain(funcs[global_latency.NAME], [(global_latency.CG_OPCODE,)], [global_latency.UNROLL] * 3,
                           "global latency chase")
    assert len(ev["loops"]) == 3
