"""Tables of docs/probes.md: arithmetic latency, throughput, memory hierarchy, the loaded-latency fit, the
pointer-chase curve and the run-to-run spread, from probe runs by backend (roles ``cuda``, ``opencl``;
several files of one backend merge, the first one's metrics winning).

Published and seed figures are literature values, each with the GPU it was measured on and its source
key (cited in docs/probes.md); they are not measurements of ours.
"""

from __future__ import annotations

import statistics
from typing import Any, Mapping

from pytest_gpuperf.devices.backend_registry import names
from .registry import Inputs
from .runfile import merged

#: Published dependent-issue latencies (cycles), keyed by our metric names: [A] Abdelkhalik et al. 2022
#: (A100, dependent add.f32 chains); [S] Surineni thesis Tables IV/V (dependent chains, CUDA);
#: [Al] Alavani thesis Tables 3.1/3.2 (PTX-level dependent chains). Columns: Ampere, Pascal, Kepler / V100.
PUBLISHED: dict[str, tuple[str, str, str]] = {
    "latency.fp32.add.cycles": ("4 (A100 [A])", "6 (Pascal [S])", "9 (Kepler [S]) / 15 (V100 [Al])"),
    "latency.fp32.mul.cycles": ("4 (A100 [A])", "6 (Pascal [S])", "9 (Kepler [S]) / 15 (V100 [Al])"),
    "latency.fp32.fma.cycles": ("4 (A100 [A])", "6 (Pascal [S])", "9 (Kepler [S])"),
    "latency.fp64.add.cycles": ("", "48 (GTX Pascal [S])", "10 (Kepler [S])"),
    "latency.fp64.fma.cycles": ("", "53 (GTX Pascal [S])", "10 (Kepler [S])"),
    "latency.fp32.div.cycles": ("", "338 (Pascal [S])", "520 (Kepler [S])"),
    "latency.fp32.div.fast.cycles": ("", "16 (Pascal [S])", "18 (Kepler [S])"),
    "latency.fp32.sqrt.cycles": ("", "80 (Pascal [S])", "101 (Kepler [S])"),
    "latency.fp32.sin.fast.cycles": ("", "15 (Pascal [S])", "18 (Kepler [S])"),
    "latency.fp64.div.cycles": ("", "1114 (GTX Pascal [S])", "688 (Kepler [S])"),
    "latency.fp64.sqrt.cycles": ("", "397 (GTX Pascal [S])", "193 (Kepler [S])"),
    "latency.int32.mad.cycles": ("", "15 (GTX 1050 [Al])", "20 (K20 [Al])"),
    "memory.shared.latency.cycles": ("", "39 (V100 [Al])", "47 (K20 [Al])"),
}

Metrics = Mapping[str, Mapping[str, Any]]


def _by_backend(inp: Inputs) -> dict[str, Metrics]:
    return {b: merged(inp.maybe(b)) for b in names() if inp.maybe(b)}


def fmt(m: Mapping[str, Any] | None, digits: int = 2) -> str:
    """A figure with the robust CV of its samples within the run (``±``), where it has samples."""
    if m is None:
        return "–"
    st = m.get("stats") or {}
    v = m["value"]
    if st.get("median"):
        cv = 1.4826 * st.get("mad", 0.0) / abs(st["median"]) * 100
        return f"{v:.{digits}f} ±{cv:.1f}%"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def sass_of(m: Mapping[str, Any] | None) -> str:
    ev = ((m or {}).get("info") or {}).get("sass")
    if not ev:
        return ""
    counts = "/".join(str(c[0]) for c in ev["opcode_counts"])
    return f"{','.join(ev['required'])} ×{counts}"


def fast_note(m: Mapping[str, Any] | None) -> str:
    """Which path fast-math took where the SASS proof fell back to the IEEE routine."""
    ev = ((m or {}).get("info") or {}).get("sass") or {}
    return " (IEEE routine kept)" if ev.get("fast_math_path") == "ieee routine" else ""


def latency(inp: Inputs) -> list[str]:
    """Arithmetic latency per operation, CUDA and NVIDIA OpenCL, beside published and seed figures."""
    runs = _by_backend(inp)
    cuda, ocl = runs.get("cuda", {}), runs.get("opencl", {})
    names = sorted({n[:-len(".cycles")].replace(".fast", "") for r in runs.values() for n in r
                    if n.startswith("latency.") and n.endswith(".cycles")})
    out = ["| operation | CUDA cycles (clock64) | CUDA fast-math | SASS proof (loop counts) | NVIDIA OpenCL cycles | "
           "OpenCL fast | published: Ampere | seeds: Pascal | seeds: Kepler / V100 |",
           "|---|---|---|---|---|---|---|---|---|"]
    for base in names:
        plain, fast = f"{base}.cycles", f"{base}.fast.cycles"
        pub = PUBLISHED.get(plain, ("", "", ""))
        out.append(f"| `{base[len('latency.'):]}` | {fmt(cuda.get(plain))} | {fmt(cuda.get(fast))}{fast_note(cuda.get(fast))} | "
                   f"{sass_of(cuda.get(plain))} | {fmt(ocl.get(plain))} | {fmt(ocl.get(fast))} | "
                   f"{pub[0]} | {pub[1]} | {pub[2]} |")
    return out


def throughput(inp: Inputs) -> list[str]:
    """Ops per clock per SM at the best ILP, the ILP curve and the saturating ILP."""
    runs = _by_backend(inp)
    cuda, ocl = runs.get("cuda", {}), runs.get("opencl", {})
    ops = sorted({n.split(".")[1] + "." + n.split(".")[2] for r in runs.values() for n in r
                  if n.startswith("throughput.") and n.endswith(".ops_per_clk_sm") and ".ilp" not in n})
    out = ["| operation | CUDA ops/clk/SM (best ILP) | ILP 1 → 8 (CUDA) | saturating ILP | NVIDIA OpenCL ops/clk/SM |",
           "|---|---|---|---|---|"]
    for op in ops:
        curve = " / ".join(f"{cuda[k]['value']:.0f}" for k in (f"throughput.{op}.ilp{i}.ops_per_clk_sm" for i in range(1, 9))
                           if k in cuda)
        sat = cuda.get(f"throughput.{op}.saturating_ilp")
        out.append(f"| `{op}` | {fmt(cuda.get(f'throughput.{op}.ops_per_clk_sm'), 1)} | {curve} | "
                   f"{sat['value'] if sat else '–'} | {fmt(ocl.get(f'throughput.{op}.ops_per_clk_sm'), 1)} |")
    return out


def _bytes(label: str) -> int:
    """``16MiB`` → bytes (the footprint part of ``memory.chase.<label>.latency.cycles``)."""
    return int(label[:-3]) << (20 if label.endswith("MiB") else 10)


def memory(inp: Inputs) -> list[str]:
    """Cache levels, shared memory, loaded latency, launch overhead and the chase at fixed footprints."""
    runs = _by_backend(inp)
    out = ["| metric | CUDA | NVIDIA OpenCL | seeds |", "|---|---|---|---|"]
    names = ["memory.l1.latency.cycles", "memory.l1.size.bytes", "memory.l2.latency.cycles", "memory.l2.size.bytes",
             "memory.dram.latency.cycles", "memory.shared.latency.cycles", "memory.global.latency.unloaded.cycles",
             "memory.global.latency.loaded.cycles", "memory.global.latency_model.r2", "launch.overhead.intercept_us",
             "launch.overhead.slope_ns_per_kthread", "clock.sm.measured_mhz"]
    names += sorted({n for r in runs.values() for n in r if n.startswith("memory.chase.")},
                    key=lambda n: _bytes(n.split(".")[2]))
    for n in names:
        seeds = " / ".join(x for x in PUBLISHED.get(n, ("", "", ""))[1:] if x)
        d = 3 if "r2" in n else 1
        out.append(f"| `{n}` | {fmt(runs.get('cuda', {}).get(n), d)} | {fmt(runs.get('opencl', {}).get(n), d)} | {seeds} |")
    return out


def loaded_fit(inp: Inputs) -> list[str]:
    """The piecewise-linear fit of the loaded global latency (Alavani Table 3.3's form), per backend."""
    out: list[str] = []
    for backend, r in _by_backend(inp).items():
        m = r.get("memory.global.latency.unloaded.cycles")
        if not m:
            continue
        fit = m["info"]["piecewise_fit"]
        out += [f"**{backend}** (R² {fit['r2']:.4f}; threads {m['info']['threads'][0]}…{m['info']['threads'][-1]})", "",
                "| threads nT_b·nB | L = a·(nT_b·nB) + b: a | b (cycles) |", "|---|---|---|"]
        out += [f"| {s['x_lo']:.0f} – {s['x_hi']:.0f} | {s['slope']:.5f} | {s['intercept']:.1f} |" for s in fit["segments"]]
        out.append("")
    return out


def chase_curve(inp: Inputs) -> list[str]:
    """The CUDA pointer-chase latency over footprints, strides 128 B and 1 KiB."""
    m = merged(inp.runs("cuda")).get("memory.l1.latency.cycles")
    if not m:
        return []
    c128 = dict(m["info"]["curve_stride128"])
    c1k = dict(m["info"].get("curve_stride1024", []))
    out = ["| footprint | stride 128 B (cycles) | stride 1 KiB (cycles) |", "|---|---|---|"]
    for f in sorted(c128):
        other = f"{c1k[f]:.0f}" if f in c1k else "–"
        out.append(f"| {f / 1024:.0f} KiB | {c128[f]:.0f} | {other} |")
    return out


def rerun(inp: Inputs) -> list[str]:
    """CV (sample σ / mean over the runs) of every arithmetic latency, per backend (role ``runs``)."""
    by: dict[str, list] = {}
    for run in inp.runs("runs"):
        by.setdefault(run.backend, []).append(run)
    out = ["| backend | runs | arithmetic latencies | CV median | CV max | ≤ 1 % | above 1 % |", "|---|---|---|---|---|---|---|"]
    for backend, runs in by.items():
        if len(runs) < 2:
            continue
        cvs = {}
        for n in runs[0].metrics:
            if not (n.startswith("latency.") and n.endswith(".cycles")):
                continue
            vals = [r.value(n) for r in runs if r.get(n) is not None]
            if len(vals) > 1 and statistics.mean(vals) > 0:
                cvs[n] = statistics.stdev(vals) / statistics.mean(vals) * 100
        if not cvs:
            continue
        above = ", ".join(f"`{n[8:-7]}` {c:.1f}%" for n, c in sorted(cvs.items(), key=lambda x: -x[1]) if c > 1.0)
        out.append(f"| {backend} | {len(runs)} | {len(cvs)} | {statistics.median(cvs.values()):.3f}% | "
                   f"{max(cvs.values()):.2f}% | {sum(c <= 1.0 for c in cvs.values())} | {above or '–'} |")
    return out


TABLES = {"probes-latency": latency, "probes-throughput": throughput, "probes-memory": memory,
          "probes-loaded-fit": loaded_fit, "probes-chase-curve": chase_curve, "probes-rerun": rerun}
