#!/usr/bin/env python3
"""Print the markdown tables of docs/probes.md from probe results JSON files (never typed by hand).

    python3 scripts/tables_probes.py results/nvidia-h100-80gb-hbm3/probes-cuda.json.gz \
        results/nvidia-h100-80gb-hbm3/probes-opencl.json.gz \
        --rerun=results/nvidia-h100-80gb-hbm3/probes-r2-cuda.json.gz

Several files of one backend merge (the first one's metrics win; later ones only fill gaps, e.g. a
group re-measured after a fix). ``--rerun=FILE`` (repeatable): a second run of the same backend; the run-to-run table gives the CV of
every arithmetic latency between the main file and the re-runs (the issue's ≤ 1 % target).

Published and seed figures are literature values (cited in docs/probes.md), not measurements of ours.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

#: Published dependent-issue latencies (cycles) for comparison; keys are our metric names.
#: [A] Abdelkhalik et al. 2022 (A100), [S] Surineni thesis Tables IV/V, [Al] Alavani thesis Tables 3.1/3.2
#: (both seeds, checked against the text); † = Jia et al. figures not re-checked against the paper here.
PUBLISHED = {
    "latency.fp32.add.cycles": ("4 (A100 [A])", "6 (Pascal [S])", "9 (Kepler [S]) / 15 (V100 [Al])"),
    "latency.fp32.mul.cycles": ("4 (A100 [A])", "6 (Pascal [S])", "9 (Kepler [S]) / 15 (V100 [Al])"),
    "latency.fp32.fma.cycles": ("4 (A100 [A]; Volta [J]†)", "6 (Pascal [S])", "9 (Kepler [S])"),
    "latency.fp64.add.cycles": ("", "48 (GTX Pascal [S])", "10 (Kepler [S])"),
    "latency.fp64.fma.cycles": ("8 (Volta [J]†)", "53 (GTX Pascal [S])", "10 (Kepler [S])"),
    "latency.fp16.hfma2.cycles": ("6 (Volta [J]†)", "", ""),
    "latency.fp32.div.cycles": ("", "338 (Pascal [S])", "520 (Kepler [S])"),
    "latency.fp32.div.fast.cycles": ("", "16 (Pascal [S])", "18 (Kepler [S])"),
    "latency.fp32.sqrt.cycles": ("", "80 (Pascal [S])", "101 (Kepler [S])"),
    "latency.fp32.sin.fast.cycles": ("", "15 (Pascal [S])", "18 (Kepler [S])"),
    "latency.fp64.div.cycles": ("", "1114 (GTX Pascal [S])", "688 (Kepler [S])"),
    "latency.fp64.sqrt.cycles": ("", "397 (GTX Pascal [S])", "193 (Kepler [S])"),
    "latency.int32.mad.cycles": ("", "15 (GTX 1050 [Al])", "20 (K20 [Al])"),
    "memory.shared.latency.cycles": ("19 (Volta [J]†)", "39 (V100 [Al])", "47 (K20 [Al])"),
    "memory.l1.latency.cycles": ("28 (Volta [J]†)", "", ""),
    "memory.l2.latency.cycles": ("~193 (Volta [J]†)", "", ""),
}


def load(path: str) -> tuple[str, dict[str, dict]]:
    data = json.loads(Path(path).read_text())
    backend = data["device"].get("backend", Path(path).stem.split("-")[-1])
    return backend, {m["name"]: m for m in data["metrics"]}


def fmt(m: dict | None, digits: int = 2) -> str:
    if m is None:
        return "–"
    st = m.get("stats") or {}
    v = m["value"]
    if st.get("median"):
        cv = 1.4826 * st.get("mad", 0.0) / abs(st["median"]) * 100
        return f"{v:.{digits}f} ±{cv:.1f}%"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def sass_of(m: dict | None) -> str:
    ev = (m or {}).get("info", {}).get("sass")
    if not ev:
        return ""
    counts = "/".join(str(c[0]) for c in ev["opcode_counts"])
    return f"{','.join(ev['required'])} ×{counts}"


def fast_note(m: dict | None) -> str:
    """Which path fast-math took where the SASS proof fell back to the IEEE routine."""
    ev = (m or {}).get("info", {}).get("sass") or {}
    return " (IEEE routine kept)" if ev.get("fast_math_path") == "ieee routine" else ""


def latency_table(runs: dict[str, dict[str, dict]]) -> list[str]:
    cuda, ocl = runs.get("cuda", {}), runs.get("opencl", {})
    names = sorted({n[:-len(".cycles")].replace(".fast", "") for r in runs.values() for n in r
                    if n.startswith("latency.") and n.endswith(".cycles")})
    out = ["| operation | CUDA cycles (clock64) | CUDA fast-math | SASS proof (loop counts) | NVIDIA OpenCL cycles | "
           "OpenCL fast | published (Volta/Ampere) | seeds: Pascal | seeds: Kepler / V100 |",
           "|---|---|---|---|---|---|---|---|---|"]
    for base in names:
        plain, fast = f"{base}.cycles", f"{base}.fast.cycles"
        pub = PUBLISHED.get(plain, ("", "", ""))
        out.append(f"| `{base[len('latency.'):]}` | {fmt(cuda.get(plain))} | {fmt(cuda.get(fast))}{fast_note(cuda.get(fast))} | "
                   f"{sass_of(cuda.get(plain))} | {fmt(ocl.get(plain))} | {fmt(ocl.get(fast))} | "
                   f"{pub[0]} | {pub[1]} | {pub[2]} |")
    return out


def throughput_table(runs: dict[str, dict[str, dict]]) -> list[str]:
    cuda, ocl = runs.get("cuda", {}), runs.get("opencl", {})
    ops = sorted({n.split(".")[1] + "." + n.split(".")[2] for r in runs.values() for n in r
                  if n.startswith("throughput.") and n.endswith(".ops_per_clk_sm") and ".ilp" not in n})
    out = ["| operation | CUDA ops/clk/SM (best ILP) | ILP 1 → 8 (CUDA) | saturating ILP | NVIDIA OpenCL ops/clk/SM |",
           "|---|---|---|---|---|"]
    for op in ops:
        best = cuda.get(f"throughput.{op}.ops_per_clk_sm")
        curve = " / ".join(f"{cuda[k]['value']:.0f}" for k in (f"throughput.{op}.ilp{i}.ops_per_clk_sm" for i in range(1, 9))
                           if k in cuda)
        sat = cuda.get(f"throughput.{op}.saturating_ilp")
        out.append(f"| `{op}` | {fmt(best, 1)} | {curve} | {sat['value'] if sat else '–'} | "
                   f"{fmt(ocl.get(f'throughput.{op}.ops_per_clk_sm'), 1)} |")
    return out


def memory_table(runs: dict[str, dict[str, dict]]) -> list[str]:
    out = ["| metric | CUDA | NVIDIA OpenCL | published |", "|---|---|---|---|"]
    names = ["memory.l1.latency.cycles", "memory.l1.size.bytes", "memory.l2.latency.cycles", "memory.l2.size.bytes",
             "memory.dram.latency.cycles", "memory.shared.latency.cycles", "memory.global.latency.unloaded.cycles",
             "memory.global.latency.loaded.cycles", "memory.global.latency_model.r2", "launch.overhead.intercept_us",
             "launch.overhead.slope_ns_per_kthread", "clock.sm.measured_mhz"]
    names += sorted({n for r in runs.values() for n in r if n.startswith("memory.chase.")},
                    key=lambda n: _bytes(n.split(".")[2]))
    for n in names:
        pub = PUBLISHED.get(n, ("",))[0]
        out.append(f"| `{n}` | {fmt(runs.get('cuda', {}).get(n), 3 if 'r2' in n else 1)} | "
                   f"{fmt(runs.get('opencl', {}).get(n), 3 if 'r2' in n else 1)} | {pub} |")
    return out


def _bytes(label: str) -> int:
    """``16MiB`` → bytes (the footprint part of ``memory.chase.<label>.latency.cycles``)."""
    return int(label[:-3]) << (20 if label.endswith("MiB") else 10)


def rerun_table(runs: dict[str, dict[str, dict]], reruns: list[tuple[str, dict[str, dict]]]) -> list[str]:
    """CV (sample σ / mean over the runs) of each arithmetic latency, summarised per backend."""
    import statistics
    out = ["| backend | runs | arithmetic latencies | CV median | CV max | ≤ 1 % | above 1 % |", "|---|---|---|---|---|---|---|"]
    for backend, main in runs.items():
        others = [r for b, r in reruns if b == backend]
        if not others:
            continue
        cvs = {}
        for n, m in main.items():
            if not (n.startswith("latency.") and n.endswith(".cycles")):
                continue
            vals = [m["value"]] + [o[n]["value"] for o in others if n in o]
            if len(vals) > 1 and statistics.mean(vals) > 0:
                cvs[n] = statistics.stdev(vals) / statistics.mean(vals) * 100
        if not cvs:
            continue
        above = ", ".join(f"`{n[8:-7]}` {c:.1f}%" for n, c in sorted(cvs.items(), key=lambda x: -x[1]) if c > 1.0)
        out.append(f"| {backend} | {1 + len(others)} | {len(cvs)} | {statistics.median(cvs.values()):.3f}% | "
                   f"{max(cvs.values()):.2f}% | {sum(c <= 1.0 for c in cvs.values())} | {above or '–'} |")
    return out


def fit_table(runs: dict[str, dict[str, dict]]) -> list[str]:
    out = []
    for backend, r in runs.items():
        m = r.get("memory.global.latency.unloaded.cycles")
        if not m:
            continue
        fit = m["info"]["piecewise_fit"]
        out += [f"**{backend}** (R² {fit['r2']:.4f}; threads {m['info']['threads'][0]}…{m['info']['threads'][-1]})", "",
                "| threads nT_b·nB | L = a·(nT_b·nB) + b: a | b (cycles) |", "|---|---|---|"]
        out += [f"| {s['x_lo']:.0f} – {s['x_hi']:.0f} | {s['slope']:.5f} | {s['intercept']:.1f} |" for s in fit["segments"]]
        out.append("")
    return out


def curve_table(runs: dict[str, dict[str, dict]]) -> list[str]:
    m = runs.get("cuda", {}).get("memory.l1.latency.cycles")
    if not m:
        return []
    c128 = dict(m["info"]["curve_stride128"])
    c1k = dict(m["info"].get("curve_stride1024", []))
    out = ["| footprint | stride 128 B (cycles) | stride 1 KiB (cycles) |", "|---|---|---|"]
    for f in sorted(c128):
        other = f"{c1k[f]:.0f}" if f in c1k else "–"
        out.append(f"| {f / 1024:.0f} KiB | {c128[f]:.0f} | {other} |")
    return out


def main(args: list[str]) -> None:
    paths = [a for a in args if not a.startswith("--rerun=")]
    reruns = [load(a[len("--rerun="):]) for a in args if a.startswith("--rerun=")]
    runs: dict[str, dict[str, dict]] = {}
    for p in paths:  # a later file of the same backend fills in only the metrics the earlier ones lack
        backend, metrics = load(p)
        runs.setdefault(backend, {})
        for n, m in metrics.items():
            runs[backend].setdefault(n, m)
    count = {b: sum(1 for n in r if n.startswith(("latency.", "throughput."))) for b, r in runs.items()}
    print(f"Latency/throughput metrics per backend: {count}\n")
    for title, table in (("Arithmetic latency", latency_table(runs)), ("Throughput", throughput_table(runs)),
                         ("Memory hierarchy", memory_table(runs)), ("Loaded latency: piecewise fit", fit_table(runs)),
                         ("Pointer-chase curve (CUDA)", curve_table(runs)),
                         ("Run-to-run (arithmetic latencies)", rerun_table(runs, reruns))):
        print(f"### {title}\n")
        print("\n".join(table))
        print()


if __name__ == "__main__":
    main(sys.argv[1:] or ["results/nvidia-h100-80gb-hbm3/probes-cuda.json.gz",
                          "results/nvidia-h100-80gb-hbm3/probes-opencl.json.gz",
                          "--rerun=results/nvidia-h100-80gb-hbm3/probes-r2-cuda.json.gz"])
