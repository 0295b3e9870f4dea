"""The static PTX model's dynamic analysis of the device under test (Alavani, thesis §3.3.3, §3.4, §4.4.5):
launch overhead, global and shared memory throughput, the instruction and shared-memory latencies and the
global-latency model ``L(gm)``, all measured in the session the model is evaluated in.

Why in the session: the model's figures then depend on the card alone, not on which probe results or
baselines lie in the checkout. CUDA only (the kernels are CUDA C; the model reads PTX).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from scipy.optimize import curve_fit

from . import scheduler
from .ptx_latency import GLOBAL_MODEL_METRIC, GlobalLatencyModel, chain_ops
from ...devices.base import Device, DeviceInfo
from ...helpers import KernelHelper, Measurer
from ...probes import global_latency, memory
from ...probes import latency as latency_probe
from ...timing.profiles import profile
from ...timing.stats import Stats

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


#: bytes the calibration copy (``gcopy``: one float loaded and one stored per element) moves per request
COPY_BYTES_PER_REQUEST = 4.0


def exp_fit(n: np.ndarray, tp: np.ndarray) -> tuple[float, float, float]:
    """Fit the thesis' exponential-growth throughput model TP = a (b − e^{−c n}) (Table 4.4/4.5); a failed
    fit raises ``AssertionError`` with the points, so the test fails saying which curve did not fit."""
    s = float(np.median(n))  # fit on n / median(n) so the three parameters are of order one
    try:
        (pa, pb, pc), _ = curve_fit(scheduler.exp_growth, n / s, tp / tp.max(), p0=(1.0, 1.0, 1.0),
                                    bounds=([1e-6, 0.5, 1e-9], [1e3, 4.0, 1e6]), maxfev=20000)
    except RuntimeError as exc:
        raise AssertionError(f"throughput model a(b - exp(-c n)) did not fit the points {list(zip(n, tp))}: {exc}")
    return float(pa * tp.max()), float(pb), float(pc / s)


def calibrate(dev: Device, gpu_kernel: KernelHelper, gpu_measure: Measurer
              ) -> tuple[scheduler.Calibration, dict[str, Any]]:
    """Dynamic analysis, once per device: launch overhead regression (§3.4), global and shared memory
    throughput against request counts with the exponential model (§4.4.5); the fitted points in ``info``."""
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
        reqs.append(2.0 * n)  # a load and a store per element
        tps.append(COPY_BYTES_PER_REQUEST * 2.0 * n / m.stats.median)
    g = exp_fit(np.array(reqs), np.array(tps))
    out = gpu_kernel.empty(4 * 1024 * 4096)
    sreqs, stps = [], []
    for blocks in (132, 528, 2112, 4096):
        m = gpu_measure(sshared, (blocks * 1024,), (1024,), [out, np.int32(64)], **cfg_t)
        r = blocks * 1024 * 64 * 2.0
        sreqs.append(r)
        stps.append(4.0 * r / m.stats.median)
    s = exp_fit(np.array(sreqs), np.array(stps))
    launch = (max(float(icpt), 0.0), max(float(slope), 0.0))
    g_net = net_fit(list(zip(reqs, tps)), launch[0])
    info = {"launch_s": [float(icpt), float(slope)], "global_tp": g, "shared_tp": s, "global_tp_net": g_net,
            "global_points": list(zip(reqs, tps)), "shared_points": list(zip(sreqs, stps))}
    return scheduler.Calibration(launch, g, s, global_tp_net=g_net), info


def net_throughput_points(points: Sequence[Sequence[float]], launch_s: float) -> list[tuple[float, float]]:
    """The calibration copy's ``(requests, bytes/s)`` points with the launch intercept taken out of each time:
    its ``r`` requests move ``COPY_BYTES_PER_REQUEST × r`` bytes in ``bytes / TP`` seconds, of which ``launch_s``
    is the launch's fixed cost. The thesis' TP takes it in, which is right where the launch cost is not charged
    apart (its Eq. 4.10 penalty) and counts it twice where it is (the Hopper model's ``l0 + max(…)``). Points
    whose time is all launch are left out."""
    out = []
    for reqs, tp in points:
        nbytes = COPY_BYTES_PER_REQUEST * float(reqs)
        net = nbytes / float(tp) - launch_s
        if net > 0:
            out.append((float(reqs), nbytes / net))
    return out


def net_fit(points: list[tuple[float, float]], launch_s: float) -> tuple[float, float, float]:
    """The thesis' throughput model fitted to the copies' points with the launch intercept taken out of each
    time (:func:`net_throughput_points`): the "launch_once" variant's memory throughput."""
    net = net_throughput_points(points, launch_s)
    if len(net) < 3:
        raise AssertionError(f"under three calibration copies outlast the launch's {launch_s:.3g} s: {points}")
    n, tp = (np.array(c) for c in zip(*net))
    return exp_fit(n, tp)


def calibration_from_info(info: dict[str, Any]) -> scheduler.Calibration:
    """The calibration a results record's ``info["calibration"]`` holds; the net throughput fitted anew from its
    points where the record predates it (it is a function of them)."""
    launch = (max(float(info["launch_s"][0]), 0.0), max(float(info["launch_s"][1]), 0.0))
    g_net = info.get("global_tp_net") or net_fit([tuple(p) for p in info["global_points"]], launch[0])
    return scheduler.Calibration(launch, tuple(info["global_tp"]), tuple(info["shared_tp"]),
                                 global_tp_net=tuple(g_net))


def global_latency_model(sw: global_latency.Sweep) -> GlobalLatencyModel:
    """The device's §3.3.3 model from the session's sweep (:func:`global_latency.measured`: once per device)."""
    return GlobalLatencyModel(sw.fit, f"fitted on this device in this session ({len(sw.points)} launches, "
                                      f"{len(sw.fit.segments)} segments, R² {sw.fit.r2:.4f})")


def session_latencies(device: Device, measure: Measurer) -> dict[str, float]:
    """The PTX model's instruction and shared-memory latencies, probed on the device now (cycles): the
    model's figures then depend on the card alone, not on which baseline lies in the checkout."""
    cycles = latency_probe.chain_cycles(device, measure, chain_ops())
    kernels, _ = memory.build(device)
    cycles["memory.shared.latency.cycles"] = float(np.median(memory.shared_latency(device, kernels, device.info.clock_mhz,
                                                                                  measure)))
    return cycles


def global_latency_records(sw: global_latency.Sweep, info: DeviceInfo) -> list[dict[str, Any]]:
    """``model.ptx.global_latency.{r2,rmse_cycles}`` (the fit's quality) and the curve's ends
    ``….{single_thread,full_device}.cycles``, with the sweep's points and segments in ``info``."""
    stats = sw.fit.statistics()
    single = Stats.of(sw.single)
    full = sw.last_within(global_latency.full_device(info))
    return [dict(name=GLOBAL_MODEL_METRIC, value=sw.fit.r2, unit="R²", better="higher", info={**sw.info(), **sw.marks}),
            dict(name="model.ptx.global_latency.rmse_cycles", value=stats["rmse"], unit="cycles", better="lower",
                 info={**stats, **sw.marks}),
            dict(name="model.ptx.global_latency.single_thread.cycles", value=single.median, unit="cycles",
                 better="lower", stats=single, identity={"allocations": len(sw.single)},
                 info={**sw.points[0].to_json(), **sw.marks}),
            dict(name="model.ptx.global_latency.full_device.cycles", value=full.cycles, unit="cycles",
                 better="lower", stats=Stats.of(full.per_launch), info={**full.to_json(), **sw.marks})]
