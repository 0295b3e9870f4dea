#!/usr/bin/env python3
"""Markdown tables for docs/tuning.md from tuning results JSON files (gpu_session.sh output).

    python scripts/tables_tuning.py results/nvidia-h100-80gb-hbm3/tuning-opencl.json.gz [more.json ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ORDER = ["dao", "lim_static", "lim_rules", "random", "kt_random_sample", "kt_greedy_ils", "kt_mls", "kt_pso",
         "kt_firefly_algorithm", "kt_genetic_algorithm", "kt_simulated_annealing", "kt_diff_evo",
         "kt_dual_annealing", "kt_basinhopping"]


def load(path: str) -> tuple[dict, dict[str, dict]]:
    doc = json.loads(Path(path).read_text())
    metrics = doc["metrics"]
    rows = metrics if isinstance(metrics, list) else [dict(v, name=k) for k, v in metrics.items()]
    return doc["device"], {r["name"]: r for r in rows}


def val(m: dict[str, dict], name: str) -> float | None:
    r = m.get(name)
    return None if r is None else float(r["value"])


def fmt(v: float | None, pct: bool = False) -> str:
    if v is None:
        return "–"
    return f"{100 * v:.1f} %" if pct else f"{v:.3f}"


def main(paths: list[str]) -> None:
    for path in paths:
        dev, m = load(path)
        print(f"### {dev['name']} ({dev['backend']}, {dev.get('platform', '')}) — `{path}`\n")
        lam = m.get("tuning.lambda0")
        if lam:
            info = lam.get("info", {})
            print(f"λ0 = {float(lam['value']):.3f} (first contention at STRIDE {info.get('stride_at')}; "
                  f"coalesced rate {info.get('coalesced_GBps')} GB/s). Thesis Table 3.3: GTX 580 0.52, "
                  f"GTX Titan 0.62, GTX Titan X 0.88.\n")
        print("| strategy | mean quality (time / optimum) | mean cost (evaluations) | mean cost (host tuning time) "
              "| mean cost (kernel time, thesis §3.6.2) |")
        print("| --- | --- | --- | --- | --- |")
        for s in ORDER:
            q = val(m, f"tuning.mean.{s}.quality")
            if q is None:
                continue
            print(f"| {s} | {fmt(q)} | {fmt(val(m, f'tuning.mean.{s}.cost'), True)} | "
                  f"{fmt(val(m, f'tuning.mean.{s}.time_cost'), True)} | "
                  f"{fmt(val(m, f'tuning.mean.{s}.device_cost'), True)} |")
        print("| *Dao thesis, GTX Titan X* | *1.06* | – | – | *≈ 3 % (Fig. 3.11)* |")
        print("| *OpenTuner at equal budget (thesis)* | *≈ 1.15 × Dao's* | | | |\n")
        mq = m.get("tuning.mean.dao.quality", {}).get("info", {})
        if mq.get("missing"):
            print(f"Means over {mq.get('kernels')} kernels; not tuned in this run (time budget): "
                  f"{', '.join(mq['missing'])}.\n")
        kernels = sorted({n.split(".")[1] for n in m if n.startswith("tuning.") and n.endswith(".optimum_us")})
        print("| kernel | space (max group: kernel / default build; regs) | optimum (µs) | optimum shape | dao pick "
              "| dao quality | dao cost: evals / kernel time | pruned: workload / NCF / concurrency "
              "| lim_static q / cost | lim_rules q / cost (bound) | random q | best KT q (strategy) |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for k in kernels:
            opt = m[f"tuning.{k}.optimum_us"]
            dq = m.get(f"tuning.{k}.dao.quality", {})
            pr = dq.get("info", {}).get("pruning", {})
            parts = [fmt(val(m, f"tuning.{k}.dao.pruned.{f}"), True) for f in ("workload", "ncf", "concurrency")]
            kt = [(val(m, f"tuning.{k}.{s}.quality"), s) for s in ORDER if s.startswith("kt_")]
            kt = [(q, s) for q, s in kt if q is not None]
            best_kt = min(kt) if kt else (None, "")
            lim = m.get(f"tuning.{k}.space", {}).get("info", {})
            li = lim.get("limits", {})
            # registers: the driver's count; "?" where the run could not read one (regs_from says
            # "unknown", e.g. NVIDIA's cached build returned no -cl-nv-verbose log) — never the 0 placeholder
            regs = li.get("regs_driver", "?" if "unknown" in str(li.get("regs_from", "")) else li.get("regs", "?"))
            space = (f"{pr.get('space', '–')} ({lim.get('max_total', '?')} / {li.get('kernel_max_default', '?')}; "
                     f"{regs})") if lim else str(pr.get("space", "–"))
            lr = m.get(f"tuning.{k}.lim_rules.quality", {}).get("info", {}).get("pruning", {})
            print(f"| {k} | {space} | {float(opt['value']):.1f} | {opt.get('info', {}).get('config', '')} | "
                  f"{', '.join(dq.get('info', {}).get('picks', []))} | {fmt(val(m, f'tuning.{k}.dao.quality'))} | "
                  f"{fmt(val(m, f'tuning.{k}.dao.cost'), True)} / {fmt(val(m, f'tuning.{k}.dao.device_cost'), True)} | "
                  f"{' / '.join(parts)} | "
                  f"{fmt(val(m, f'tuning.{k}.lim_static.quality'))} / {fmt(val(m, f'tuning.{k}.lim_static.cost'), True)} | "
                  f"{fmt(val(m, f'tuning.{k}.lim_rules.quality'))} / {fmt(val(m, f'tuning.{k}.lim_rules.cost'), True)} "
                  f"({lr.get('bound', '–')}) | {fmt(val(m, f'tuning.{k}.random.quality'))} | {fmt(best_kt[0])} ({best_kt[1][3:]}) |")
        print()


if __name__ == "__main__":
    main(sys.argv[1:] or ["results/nvidia-h100-80gb-hbm3/tuning-opencl.json.gz"])
