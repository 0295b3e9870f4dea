"""Prediction error of performance models.

* ``model.sampled.<kernel>.error`` / ``.overhead`` — Dao's sampled linear model (thesis ch. 2) on the
  24-kernel corpus, sampled at his 2nd and 3rd saturation points: |t_linear − t_full| / t_full and
  (t_P1 + t_P2) / t_full; ``model.sampled.mean_*``. ``model.sampled_project.*``: the same at the project's
  own geometry (the 2m-th and 3m-th points), a separate family (``models.sampled_corpus``).
* ``model.svr.<kernel>.error`` — Dao's ML model (SVR over the sampled runs' features) evaluated
  leave-one-kernel-out: the kernel's own runs are never in its training set; ``model.svr.mean_error``
  (``model.svr_project.*`` on the project's geometry).
* ``model.ptx.<kernel>.error``, ``model.ptx.dwarf.<dwarf>.mape`` — Alavani's static PTX model
  (thesis ch. 4) on the thesis' dwarfs re-written for CUDA (CUDA only: PTX comes from NVRTC).
* ``model.ptx.global_latency.{r2,rmse_cycles}``, ``….{single_thread,full_device}.cycles`` — the model's
  ``L(gm)``: Alavani's global-latency microbenchmark over (nB, nT_b) and its piecewise-linear fit
  (§3.3.3, Table 3.3/3.4; segments and points in ``info``), which ``test_ptx_model`` uses per launch.
  It lives here, not in the probes suite, because it is the PTX model's dynamic analysis of the device
  under test (like the launch-overhead and throughput fits of ``calibrate``): measured in the same
  session the model is evaluated in, whatever probe results the checkout holds.

Errors are ``better="lower"``: a model or measurement regression shows as a larger error. A figure over
several kernels (the means, a dwarf's MAPE) carries the kernels it was computed over in its identity
(``models.aggregate.over``): a baseline made over another corpus reads ``incomparable``.
Kernel classification (paper 004) and CFG similarity (Lim ch. IV) are in ``test_kernel_classes.py``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy.optimize import curve_fit

from pytest_gpuperf.models import cfg as cfgmod
from pytest_gpuperf.models import ptx as ptxmod
from pytest_gpuperf.models import aggregate, sampled_corpus, scheduler
from pytest_gpuperf.models.corpus import CORPUS
from pytest_gpuperf.models.dwarfs import DWARFS, THESIS_MAPE
from pytest_gpuperf.models.ptx_latency import GLOBAL_MODEL_METRIC, GlobalLatencyModel, chain_ops, latencies
from pytest_gpuperf.probes import global_latency, memory
from pytest_gpuperf.probes import latency as latency_probe
from pytest_gpuperf.timing.stats import Stats
from pytest_gpuperf.timing.profiles import profile

def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def test_sampled_models(gpu_device, gpu_kernel, sampled_kernel, gpuperf_record, gpuperf_part):
    """Dao's protocol (the 2nd and 3rd saturation points) and the project's geometry, recorded as separate
    families (``models.sampled_corpus``); a suite profile's part measures its kernels only, without the SVR."""
    kernels = {k.name: gpu_kernel.compile(k.source(gpu_device.info.backend), k.name) for k in CORPUS}
    only = None if gpuperf_part is None else gpuperf_part.kernels
    results = sampled_corpus.measure(gpu_device, kernels, sampled_kernel, profile("sampled_model", gpu_device.info.is_cpu),
                                     only=only)
    for res in results:
        for m in sampled_corpus.records(res):
            gpuperf_record(**m)
        assert len(res.main) >= (20 if only is None else len(only))
        assert all(np.isfinite(res.errors)) and (res.part or all(np.isfinite(e[0]) for e in res.svr_errors().values()))


# ---- static PTX model (Alavani ch. 4) --------------------------------------------------------------------

CAL_SRC = r'''
extern "C" __global__ void empty_kernel(int x) { }
extern "C" __global__ void gcopy(const float* __restrict__ a, float* __restrict__ b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = a[i]; }
extern "C" __global__ void sshared(float* out, int reps) {
  __shared__ float s[1024]; int l = threadIdx.x; s[l] = (float)l; __syncthreads(); float acc = 0.0f;
#pragma unroll 1
  for (int r = 0; r < reps; ++r) { acc += s[(l + r) & 1023]; s[(l + 7 * r) & 1023] = acc; }
  out[blockIdx.x * blockDim.x + l] = acc; }
'''


def _exp_fit(n: np.ndarray, tp: np.ndarray) -> tuple[float, float, float]:
    """Fit the thesis' exponential-growth throughput model TP = a (b − e^{−c n}) (Table 4.4/4.5)."""
    s = float(np.median(n))  # fit on n / median(n) so the three parameters are of order one
    try:
        (pa, pb, pc), _ = curve_fit(scheduler.exp_growth, n / s, tp / tp.max(), p0=(1.0, 1.0, 1.0),
                                    bounds=([1e-6, 0.5, 1e-9], [1e3, 4.0, 1e6]), maxfev=20000)
    except RuntimeError as exc:
        raise AssertionError(f"throughput model a(b - exp(-c n)) did not fit the points {list(zip(n, tp))}: {exc}")
    return float(pa * tp.max()), float(pb), float(pc / s)


def calibrate(dev, gpu_kernel, gpu_measure) -> tuple[scheduler.Calibration, dict]:
    """Dynamic analysis, once per device: launch overhead regression (§3.4), global and shared memory
    throughput against request counts with the exponential model (§4.4.5)."""
    empty = gpu_kernel.compile(CAL_SRC, "empty_kernel")
    gcopy = gpu_kernel.compile(CAL_SRC, "gcopy")
    sshared = gpu_kernel.compile(CAL_SRC, "sshared")
    cfg_t = profile("ptx_calibration", dev.info.is_cpu)
    threads, times = [], []
    for blocks in (1, 64, 1024, 16384, 65536):
        m = gpu_measure(empty, (blocks * 256,), (256,), [np.int32(0)], **cfg_t)
        threads.append(blocks * 256)
        times.append(m.stats.median)
    slope, icpt = np.polyfit(threads, times, 1)
    n_max = 1 << 26
    src = gpu_kernel.to_device(np.ones(n_max, dtype=np.float32))
    dst = gpu_kernel.empty(4 * n_max)
    reqs, tps = [], []
    for n in (1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26):
        m = gpu_measure(gcopy, (n,), (256,), [src, dst, np.int32(n)], **cfg_t)
        reqs.append(2.0 * n)
        tps.append(8.0 * n / m.stats.median)
    g = _exp_fit(np.array(reqs), np.array(tps))
    out = gpu_kernel.empty(4 * 1024 * 4096)
    sreqs, stps = [], []
    for blocks in (132, 528, 2112, 4096):
        m = gpu_measure(sshared, (blocks * 1024,), (1024,), [out, np.int32(64)], **cfg_t)
        r = blocks * 1024 * 64 * 2.0
        sreqs.append(r)
        stps.append(4.0 * r / m.stats.median)
    s = _exp_fit(np.array(sreqs), np.array(stps))
    info = {"launch_s": [float(icpt), float(slope)], "global_tp": g, "shared_tp": s,
            "global_points": list(zip(reqs, tps)), "shared_points": list(zip(sreqs, stps))}
    return scheduler.Calibration((max(float(icpt), 0.0), max(float(slope), 0.0)), g, s), info


def _global_latency_model(sw: global_latency.Sweep) -> GlobalLatencyModel:
    """The device's §3.3.3 model from the session's sweep (:func:`global_latency.measured`: once per device)."""
    return GlobalLatencyModel(sw.fit, f"fitted on this device in this session ({len(sw.points)} launches, "
                                      f"{len(sw.fit.segments)} segments, R² {sw.fit.r2:.4f})")


def test_global_latency_model(gpu_device, gpuperf_record):
    """Alavani §3.3.3: the pointer chase of Algorithm 2 over (nB, nT_b), one thread to 16 full waves, and
    its least-squares piecewise-linear model; the fit's quality and the curve's ends are gated."""
    info = gpu_device.info
    if not info.clock_counter:
        pytest.skip(f"{info.spec} ({info.name}): {global_latency.NO_CLOCK}")
    sw = global_latency.measured(gpu_device)
    meta = sw.info()
    stats = sw.fit.statistics()
    gpuperf_record(GLOBAL_MODEL_METRIC, sw.fit.r2, "R²", better="higher", tolerance={"abs": 0.1}, info=meta)
    gpuperf_record("model.ptx.global_latency.rmse_cycles", stats["rmse"], "cycles", better="lower",
                   tolerance={"abs": 10.0, "rel": 1.0}, info=dict(stats))
    single = Stats.of(sw.single)
    gpuperf_record("model.ptx.global_latency.single_thread.cycles", single.median, "cycles", better="lower",
                   stats=single, identity={"allocations": len(sw.single)}, info=sw.points[0].to_json())
    full = sw.last_within(global_latency.full_device(info))
    gpuperf_record("model.ptx.global_latency.full_device.cycles", full.cycles, "cycles", better="lower",
                   stats=Stats.of(full.per_launch), info=full.to_json())
    assert len(sw.points) >= 25 and all(p.cycles > 0 for p in sw.points), [p.to_json() for p in sw.points]


def _session_latencies(device, measure) -> dict[str, float]:
    """The PTX model's instruction and shared-memory latencies, probed on the device now (cycles): the
    model's figures then depend on the card alone, not on which baseline lies in the checkout."""
    cycles = latency_probe.chain_cycles(device, measure, chain_ops())
    kernels, _ = memory.build(device)
    cycles["memory.shared.latency.cycles"] = float(np.median(memory.shared_latency(device, kernels, device.info.clock_mhz,
                                                                                  measure)))
    return cycles


#: the Hopper variants recorded beside the thesis' model (``model.ptx.<variant>.*``)
ALT_VARIANTS = {
    "issue": "issue: a unit is busy only while issuing at its measured rate (models.scheduler.schedule_block)",
    "hopper": "hopper: launch fixed cost + max(dispatch, execution, memory stream), execution per wave the "
              "longer of issuing at the measured rates and one warp's dependent chain "
              "(models.scheduler.predict_hopper)"}


def _record_dwarfs(gpuperf_record, prefix: str, per_dwarf: dict[str, dict[str, float]], identity: dict) -> None:
    """``<prefix>.dwarf.<dwarf>.mape``: a variant's mean error per dwarf (kernel name → error), beside the
    thesis' Table 4.9 row; the dwarf's kernels are part of the identity."""
    for dwarf, e in per_dwarf.items():
        gpuperf_record(f"{prefix}.dwarf.{_slug(dwarf)}.mape", float(np.mean(list(e.values()))), "ratio",
                       better="lower", tolerance={"abs": 0.05, "rel": 0.2}, identity={**identity, **aggregate.over(e)},
                       info={"kernels": len(e), "thesis_mape_pct": dict(zip(("K20", "K4200", "M60", "GTX1050"),
                                                                            THESIS_MAPE[dwarf]))})


@pytest.mark.gpuperf(requires=["cuda"])
def test_ptx_model(gpu_device, gpu_kernel, gpu_measure, gpuperf_record, gpuperf_recorded, gpuperf_baseline_dir,
                   request):
    info = gpu_device.info
    cal, cal_info = calibrate(gpu_device, gpu_kernel, gpu_measure)
    sweep = global_latency.measured(gpu_device)
    table = latencies(request.config.rootpath, info.key, info.backend, info.clock_mhz, global_model=_global_latency_model(sweep),
                      baseline_dir=gpuperf_baseline_dir, measured=_session_latencies(gpu_device, gpu_measure))
    identity = {"latencies": "probed in session"}
    sources = sorted(set(table.sources.values()) | {table.global_source})
    per_dwarf: dict[str, dict[str, float]] = {}
    errs: dict[str, float] = {}
    # the "issue" scheduling variant (Hopper): unit issue rates from this session's throughput
    # probes (the latency suite ran first), the architecture table where a probe did not run
    rates, rate_sources = scheduler.issue_rates(gpuperf_recorded, info.compute_capability)
    # where the rates came from is part of the issue variant's identity (scheduler.rates_origin)
    alt_identity = {**identity, "issue_rates": scheduler.rates_origin(rate_sources)}
    alt_errs: dict[str, dict[str, float]] = {v: {} for v in ALT_VARIANTS}
    alt_dwarf: dict[str, dict[str, dict[str, float]]] = {v: {} for v in ALT_VARIANTS}
    for d in DWARFS:
        kern = gpu_kernel.compile(d.source, d.name)
        text = gpu_device.ptx(kern)
        graph = cfgmod.build(ptxmod.parse(text, d.name))
        launch = d.setup(gpu_device, 1)
        attrs = kern.attributes
        shape = dict(grid=launch.grid, block=launch.block, regs=int(attrs.get("num_regs", 0)),
                     shared=int(attrs.get("shared_size_bytes", 0)), trips=launch.trips, n_sm=info.compute_units,
                     clock_hz=info.clock_mhz * 1e6, cc=info.compute_capability, l2_bytes=int(info.l2_bytes or 0))
        pred = scheduler.predict(graph, table, cal, **shape)
        m = gpu_measure(kern, (launch.grid * launch.block,), (launch.block,), launch.args, budget_s=0.5)
        err = abs(pred.seconds - m.stats.median) / m.stats.median
        errs[d.name] = err
        per_dwarf.setdefault(d.dwarf, {})[d.name] = err
        gpuperf_record(f"model.ptx.{d.name}.error", err, "ratio", better="lower", tolerance={"abs": 0.05, "rel": 0.2},
                       identity=identity, info={**pred.info(), "predicted_s": pred.seconds, "measured_s": m.stats.median,
                             "dwarf": d.dwarf, "trips": launch.trips,
                             "local_bytes_per_thread": int(attrs.get("local_size_bytes", 0)),
                             "latency_sources": sources})
        for variant in ALT_VARIANTS:
            alt = scheduler.predict(graph, table, cal, **shape, variant=variant, rates=rates)
            alt_err = abs(alt.seconds - m.stats.median) / m.stats.median
            alt_errs[variant][d.name] = alt_err
            alt_dwarf[variant].setdefault(d.dwarf, {})[d.name] = alt_err
            gpuperf_record(f"model.ptx.{variant}.{d.name}.error", alt_err, "ratio", better="lower",
                           tolerance={"abs": 0.05, "rel": 0.2}, identity=alt_identity,
                           info={"predicted_s": alt.seconds, "measured_s": m.stats.median, "dwarf": d.dwarf,
                                 "d_kernel_cycles": round(alt.d_kernel_cycles, 1), "thesis_variant_error": err,
                                 **({"parts": alt.parts} if alt.parts else {})})
    for variant in ALT_VARIANTS:
        _record_dwarfs(gpuperf_record, f"model.ptx.{variant}", alt_dwarf[variant], alt_identity)
        gpuperf_record(f"model.ptx.{variant}.mean_error", float(np.mean(list(alt_errs[variant].values()))), "ratio",
                       better="lower", tolerance={"abs": 0.05, "rel": 0.2},
                       identity={**alt_identity, **aggregate.over(alt_errs[variant])},
                       info={"kernels": len(alt_errs[variant]), "rates": rates, "rate_sources": rate_sources,
                             "variant": ALT_VARIANTS[variant]})
    _record_dwarfs(gpuperf_record, "model.ptx", per_dwarf, identity)
    gpuperf_record("model.ptx.mean_error", float(np.mean(list(errs.values()))), "ratio", better="lower",
                   tolerance={"abs": 0.05, "rel": 0.2}, identity={**identity, **aggregate.over(errs)},
                   info={"kernels": len(errs), "calibration": cal_info, "latency_sources": sources,
                         "latency_cycles": {k: round(float(v), 2) for k, v in sorted(table.cycles.items())},
                         "latency_by_class": dict(sorted(table.sources.items())),
                         "global_latency": [table.global_cycles, table.global_source],
                         "global_latency_model": sweep.table(),
                         "thesis": "Alavani Table 4.9 MAPE per dwarf (K20 … GTX 1050)"})
    assert all(np.isfinite(list(errs.values())))
