#!/usr/bin/env python3
"""Why does one kernel's sampled-model error swing between runs of unchanged code? (issue 11, item 4)

Repeats, for a few corpus kernels (the unstable blend, axpby, stencil3, poly128 and stable controls),
the sampled model's measurement exactly as ``suites/test_model_error.py`` makes it (800-wave run,
steady-state pre-run before every timed run, alternating P1/P2 pairs, the suite's repeat settings) and
the full-run reference, several times, under conditions that separate the candidate causes:

* ``base``      — the suite's procedure with the *old* geometry (2m, 3m waves; m = 5 on a GPU) and the
                  buffers of the first repetition: the per-repetition spread of the error here is the
                  instability; its decomposition is in the record (t_P1, t_P2, their difference, the
                  full run) — which term moves?
* ``wide``      — the same, with the new geometry (2 and 5m − 2 waves: same sampled waves, ~4× less
                  amplification). If the absolute noise of t_P2 − t_P1 stays, the error spread drops ~4×.
* ``realloc``   — ``base`` with fresh a/b/c and scratch buffers before every repetition: if the error
                  spread here is much larger than ``base``'s, the data's placement (a per-run state shared by
                  all kernels, as the saved H100 runs suggest) is the cause.
* ``idle``      — ``base`` after 1 s of idle GPU (the clock may drop towards 345 MHz): NVML's SM clock
                  read right before/after each timed block says whether samples ran while the clock ramped.
* ``warm``      — ``base`` after a 0.3 s clock-raising busy kernel.
* ``copyflush`` — ``base`` with the copy flush (``CacheFlush``) instead of the kernel's own pre-run:
                  whether the cache state left by the pre-run (dirty lines partly evicted by the smaller
                  sample) is what moves t_P1.
* ``large``     — the old geometry at twice the sampled waves (m = 10): whether the difference's noise is
                  absolute (error halves) or proportional.

Per repetition the JSON keeps every timed sample of P1, P2 and the full run, their median/MAD/CV/n, the
difference of medians and the median of paired differences, the prediction, the error (and the error
with the paired difference), and NVML SM/memory clocks, temperature and power before and after each block.

Run (repository root, GPU with CuPy; < 150 s on an H100):
    OUT=/tmp/diag PYTHONPATH=. python3 scripts/diag_model_error.py
Local smoke test on PoCL (tiny sizes, not a measurement):
    OUT=/tmp/diag PYTHONPATH=. python3 scripts/diag_model_error.py --device opencl:0 --quick
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_gpuperf.devices import discover, open_device, resolve  # noqa: E402
from pytest_gpuperf.models.corpus import by_name  # noqa: E402
from pytest_gpuperf.models.sampling import (CacheFlush, SamplePlan, linear_model, multiple_for,  # noqa: E402
                                            saturation_point, steady_state_flush)
from pytest_gpuperf.timing.measure import MeasureConfig, measure, measure_pair  # noqa: E402
from pytest_gpuperf.timing.stats import Stats  # noqa: E402

KERNELS = ("blend", "axpby", "stencil3", "poly128", "copy", "sinloop", "dot16")
CONDITIONS = ("base", "wide", "realloc", "idle", "warm", "copyflush", "large")
SUITE_TIMING = dict(warmup=2, min_repeats=10, max_repeats=40, budget_s=0.15)  # suites/test_model_error.py (GPU)
BUSY_SRC = {
    "cuda": 'extern "C" __global__ void busy(float* o, int reps) { float x = threadIdx.x;\n'
            '  for (int r = 0; r < reps; ++r) x = x * 0.999f + 1.0f; o[blockIdx.x * blockDim.x + threadIdx.x] = x; }\n',
    "opencl": "__kernel void busy(__global float* o, int reps) { float x = get_local_id(0);\n"
              "  for (int r = 0; r < reps; ++r) x = x * 0.999f + 1.0f; o[get_global_id(0)] = x; }\n",
}


class Nvml:
    """SM/memory clock, temperature and power of the device, or nothing where NVML is absent."""

    def __init__(self, backend: str, index: int) -> None:
        self.h: Any = None
        if backend != "cuda":
            return
        try:
            import pynvml
            from cupy.cuda import runtime
            pynvml.nvmlInit()
            pci = runtime.deviceGetPCIBusId(index)
            self.h = pynvml.nvmlDeviceGetHandleByPciBusId(pci.encode() if isinstance(pci, str) else pci)
            self.nv = pynvml
        except Exception as exc:  # noqa: BLE001 — a diagnostic without clocks still says something
            print(f"NVML unavailable: {exc}", file=sys.stderr)
            self.h = None

    def read(self) -> dict[str, float] | None:
        if self.h is None:
            return None
        nv = self.nv
        return {"sm_mhz": nv.nvmlDeviceGetClockInfo(self.h, nv.NVML_CLOCK_SM),
                "mem_mhz": nv.nvmlDeviceGetClockInfo(self.h, nv.NVML_CLOCK_MEM),
                "temp_c": nv.nvmlDeviceGetTemperature(self.h, nv.NVML_TEMPERATURE_GPU),
                "power_w": nv.nvmlDeviceGetPowerUsage(self.h) / 1000.0}


def summary(samples: tuple[float, ...]) -> dict[str, Any]:
    s = Stats.of(samples)
    return {"median_s": s.median, "mad_s": s.mad, "cv": s.rel_spread, "n": s.n, "min_s": s.min, "max_s": s.max,
            "samples_s": list(samples)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="0", help="0, cuda:N or opencl:N (as --gpuperf-device)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--conditions", default=",".join(CONDITIONS))
    ap.add_argument("--quick", action="store_true", help="tiny sizes and repeats: a smoke test, not a measurement")
    ap.add_argument("--budget-s", type=float, default=120.0, help="stop starting repetitions after this much wall time")
    opts = ap.parse_args()
    out = Path(os.environ.get("OUT", "."))
    out.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()

    info = resolve(opts.device, discover())[0]
    dev = open_device(info)
    info = dev.info
    cpu = info.is_cpu
    nvml = Nvml(info.backend, info.index)
    local = 64 if cpu else 256
    waves = 40 if opts.quick else 800
    max_overhead = 0.3 if cpu else 0.035
    timing = dict(warmup=1, min_repeats=3, max_repeats=5, budget_s=0.05) if opts.quick else SUITE_TIMING
    config = MeasureConfig(**{**MeasureConfig().__dict__, **timing})
    names = [k for k in opts.kernels.split(",") if k]
    conds = [c for c in opts.conditions.split(",") if c]
    unknown = set(conds) - set(CONDITIONS)
    if unknown:
        ap.error(f"unknown conditions {sorted(unknown)}; known: {', '.join(CONDITIONS)}")

    kernels = {n: dev.compile(by_name(n).source(info.backend), n) for n in names}
    sats = {n: saturation_point(info, k.attributes, local) for n, k in kernels.items()}
    n_items = waves * max(s.wave for s in sats.values()) * local
    flush_items = max(2 * int(info.l2_bytes or 0), (8 << 20) if cpu else (64 << 20)) // 4 // local * local
    if opts.quick:
        flush_items = min(flush_items, 1 << 20)
    busy = dev.compile(BUSY_SRC[info.backend], "busy")
    busy_out = dev.empty(4 * 132 * 8 * 256 if not cpu else 4 * 64 * 4)
    rng = np.random.default_rng(42)

    sizes = {"a": 4 * n_items, "b": 4 * n_items, "c": 4 * n_items,
             "fa": 4 * flush_items, "fb": 4 * flush_items, "fc": 4 * flush_items}
    bufs = {"a": dev.to_device(rng.random(n_items, dtype=np.float32) + 0.5),
            "b": dev.to_device(rng.random(n_items, dtype=np.float32) + 0.5),
            "c": dev.empty(4 * n_items),
            "fa": dev.to_device(rng.random(flush_items, dtype=np.float32) + 0.5),
            "fb": dev.to_device(rng.random(flush_items, dtype=np.float32) + 0.5),
            "fc": dev.empty(4 * flush_items)}
    fresh: list[dict[str, Any]] = []

    def buffers() -> dict[str, Any]:
        """A new set of the same data in new allocations (device copies; the previous fresh set is kept
        alive while this one is allocated, so an allocator cannot hand back the same blocks)."""
        new = {k: dev.empty(n) for k, n in sizes.items()}
        for k, n in sizes.items():
            dev.copy(new[k], bufs[k], n)
        dev.synchronize()
        fresh[:] = [new]
        return new

    def warm_clock(seconds: float) -> None:
        """Busy FMA chains over all SMs until ``seconds`` passed: raises an idle GPU's clock."""
        groups = (132 * 8) if not cpu else 4
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            dev.launch(busy, (groups * local,), (local,), [busy_out, np.int32(20000 if not cpu else 200)])
            dev.synchronize()

    copy_flush = CacheFlush(dev, (8 << 20) if cpu else (64 << 20))
    results: dict[str, Any] = {"device": info.to_json(), "waves": waves, "local": local, "timing": timing,
                               "conditions": conds, "kernels": {}, "quick": opts.quick,
                               "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    warm_clock(0.5 if not opts.quick else 0.05)
    stopped = None
    for rep in range(opts.reps):
        for name in names:
            kern = kernels[name]
            sat = sats[name]
            n_groups = waves * sat.wave
            m = multiple_for(waves, max_overhead)
            for cond in conds:
                if time.perf_counter() - t_start > opts.budget_s:
                    stopped = f"wall-time budget {opts.budget_s} s reached in repetition {rep}"
                    break
                b = buffers() if cond == "realloc" else bufs
                if cond == "idle":
                    dev.synchronize()
                    time.sleep(1.0 if not opts.quick else 0.05)
                if cond == "warm":
                    warm_clock(0.3 if not opts.quick else 0.02)
                geometry = "wide" if cond == "wide" else "thesis"
                mult = 2 * m if cond == "large" else m
                plan = SamplePlan(sat, n_groups, local, mult, geometry)
                args = [b["a"], b["b"], b["c"], np.int32(n_groups * local)]
                pre: Callable[[], Any] | None
                if cpu:
                    pre = copy_flush
                elif cond == "copyflush":
                    pre = copy_flush
                else:
                    pre = steady_state_flush(dev, kern, local, [b["fa"], b["fb"], b["fc"], np.int32(flush_items)])

                def launch(groups: int) -> Callable[[], Any]:
                    return lambda: dev.launch(kern, (groups * local,), (local,), args)

                clk = {"before_pair": nvml.read()}
                t1, t2 = measure_pair(dev, launch(plan.p1), launch(plan.p2), config, before_each=pre)
                clk["after_pair"] = nvml.read()
                full = measure(dev, launch(plan.n_groups), config, before_each=pre)
                clk["after_full"] = nvml.read()
                d_pairs = [y - x for x, y in zip(t1.samples, t2.samples)]
                dp = float(np.median(d_pairs))
                pred = linear_model(t1.stats.median, t2.stats.median, plan.p1, plan.p2, plan.n_groups)
                pred_paired = t1.stats.median + dp / (plan.p2 - plan.p1) * (plan.n_groups - plan.p1)
                tf = full.stats.median
                rec = {"rep": rep, "p1": plan.p1, "p2": plan.p2, "n": plan.n_groups, "waves": plan.waves,
                       "amplification": plan.amplification, "t1": summary(t1.samples), "t2": summary(t2.samples),
                       "full": summary(full.samples), "diff_s": t2.stats.median - t1.stats.median,
                       "paired_diff_s": dp, "paired_diff_mad_s": float(np.median(np.abs(np.array(d_pairs) - dp))),
                       "predicted_s": pred, "error": abs(pred - tf) / tf, "signed_error": (pred - tf) / tf,
                       "error_paired": abs(pred_paired - tf) / tf, "clocks": clk,
                       "converged": [t1.converged, full.converged]}
                results["kernels"].setdefault(name, {}).setdefault(cond, []).append(rec)
            if stopped:
                break
        if stopped:
            break
    results["stopped"] = stopped
    results["wall_s"] = time.perf_counter() - t_start
    table = render(results)
    results["table"] = table
    (out / "diag_model_error.json").write_text(json.dumps(results, indent=1))
    (out / "diag_model_error.txt").write_text(table + "\n")
    print(table)
    print(f"\nwrote {out / 'diag_model_error.json'} ({results['wall_s']:.0f} s{'; ' + stopped if stopped else ''})")
    return 0


def render(results: dict[str, Any]) -> str:
    """One line per kernel × condition: the error's spread over repetitions and what moved."""
    hdr = (f"{'kernel':10s} {'cond':9s} {'n':>2s} {'err med':>7s} {'err min..max':>15s} {'errP max':>8s} "
           f"{'A':>5s} {'d µs mean±sd':>15s} {'t1 sd ns':>8s} {'t2 sd ns':>8s} {'t1 MAD':>6s} {'t2 MAD':>6s} "
           f"{'full sd%':>8s} {'SM MHz min..max':>15s}")
    lines = [hdr, "-" * len(hdr)]
    for name, conds in results["kernels"].items():
        for cond, recs in conds.items():
            e = np.array([r["error"] for r in recs])
            ep = np.array([r["error_paired"] for r in recs])
            d = np.array([r["diff_s"] for r in recs]) * 1e6
            t1 = np.array([r["t1"]["median_s"] for r in recs]) * 1e9
            t2 = np.array([r["t2"]["median_s"] for r in recs]) * 1e9
            f = np.array([r["full"]["median_s"] for r in recs])
            mad1 = np.median([r["t1"]["mad_s"] for r in recs]) * 1e9
            mad2 = np.median([r["t2"]["mad_s"] for r in recs]) * 1e9
            clocks = [c["sm_mhz"] for r in recs for c in r["clocks"].values() if c]
            clk = f"{min(clocks):.0f}..{max(clocks):.0f}" if clocks else "n/a"
            sd = (lambda x: float(np.std(x, ddof=1)) if len(x) > 1 else float("nan"))
            lines.append(f"{name:10s} {cond:9s} {len(recs):2d} {np.median(e):7.4f} {e.min():7.4f}..{e.max():6.4f} "
                         f"{ep.max():8.4f} {recs[0]['amplification']:5.0f} {d.mean():7.3f}±{sd(d):6.3f} "
                         f"{sd(t1):8.1f} {sd(t2):8.1f} {mad1:6.0f} {mad2:6.0f} {100 * sd(f) / f.mean():8.3f} {clk:>15s}")
    lines.append("")
    lines.append("err: |prediction − full| / full over repetitions; errP: with the median of paired differences; "
                 "A: amplification (N−P1)/(P2−P1); d: t_P2 − t_P1 (medians); t1/t2 sd: between repetitions, "
                 "MAD: within one (ns); full sd%: the reference's spread between repetitions.")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
