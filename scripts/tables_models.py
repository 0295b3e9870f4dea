#!/usr/bin/env python3
"""Print the markdown tables of docs/models.md from results JSON files (never typed by hand).

    python scripts/tables_models.py [results/nvidia-h100-80gb-hbm3]

Reads ``models-cuda.json`` and ``models-opencl.json`` in that folder (either may be missing) and
prints: the sampled/SVR models per kernel, the static PTX model per dwarf beside Alavani's Table 4.9,
the classifiers beside paper 004's findings, and the CFG-similarity reuse.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pytest_gpuperf.models.dwarfs import THESIS_GPUS, THESIS_MAPE  # noqa: E402


def load(folder: Path, backend: str) -> tuple[dict[str, dict], str]:
    path = folder / f"models-{backend}.json"
    if not path.exists():
        return {}, ""
    doc = json.loads(path.read_text())
    commit = str(doc.get("run", {}).get("commit", doc.get("environment", {}).get("commit", "?")))[:10]
    return {m["name"]: m for m in doc["metrics"]}, commit


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def sampled_table(runs: dict[str, dict[str, dict]]) -> list[str]:
    kernels = sorted({n.split(".")[2] for m in runs.values() for n in m
                      if n.startswith("model.sampled.") and n.endswith(".error") and "mean" not in n})
    head = "| kernel | " + " | ".join(f"{b}: linear err | {b}: SVR err | {b}: overhead" for b in runs) + " |"
    out = [head, "|" + " --- |" * (1 + 3 * len(runs))]
    for k in kernels + ["mean"]:
        cells = []
        for m in runs.values():
            if k == "mean":
                names = ("model.sampled.mean_error", "model.svr.mean_error", "model.sampled.mean_overhead")
            else:
                names = (f"model.sampled.{k}.error", f"model.svr.{k}.error", f"model.sampled.{k}.overhead")
            cells += [pct(m[n]["value"]) if n in m else "–" for n in names]
        out.append(f"| {'**mean**' if k == 'mean' else k} | " + " | ".join(cells) + " |")
    return out


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def ptx_tables(m: dict[str, dict]) -> list[str]:
    out = ["| dwarf | kernels | ours: MAPE (H100) | " + " | ".join(f"thesis {g}" for g in THESIS_GPUS) + " |",
           "|" + " --- |" * (3 + len(THESIS_GPUS))]
    for dwarf, thesis in THESIS_MAPE.items():
        rec = m.get(f"model.ptx.dwarf.{slug(dwarf)}.mape")
        n = rec["info"].get("kernels", "") if rec else ""
        out.append(f"| {dwarf} | {n} | {pct(rec['value']) if rec else '–'} | "
                   + " | ".join(f"{t:.2f} %" for t in thesis) + " |")
    if "model.ptx.mean_error" in m:
        out.append(f"| **all** | {m['model.ptx.mean_error']['info'].get('kernels')} | "
                   f"{pct(m['model.ptx.mean_error']['value'])} | " + " | ".join("" for _ in THESIS_GPUS) + " |")
    out += ["", "| kernel | dwarf | predicted µs | measured µs | error | d_kernel cycles | gm penalty µs | "
                "sm penalty µs | launch µs |", "|" + " --- |" * 9]
    for name, rec in sorted(m.items()):
        if re.fullmatch(r"model\.ptx\.[A-Za-z0-9_]+\.error", name) and name != "model.ptx.mean_error":
            i = rec["info"]
            out.append(f"| {name.split('.')[2]} | {i['dwarf']} | {i['predicted_s'] * 1e6:.1f} | "
                       f"{i['measured_s'] * 1e6:.1f} | {pct(rec['value'])} | {i['d_kernel_cycles']:.0f} | "
                       f"{i['gm_penalty_s'] * 1e6:.1f} | {i['sm_penalty_s'] * 1e6:.1f} | {i['launch_s'] * 1e6:.1f} |")
    src = m.get("model.ptx.mean_error", {}).get("info", {}).get("latency_sources")
    if src:
        out += ["", "Latency sources: " + "; ".join(src)]
    return out


def classify_table(runs: dict[str, dict[str, dict]]) -> list[str]:
    out = ["| backend | classifier | held-out accuracy | unseen as the paper argues | votes (stencil9 / stencil9_shared / spmv) |",
           "|" + " --- |" * 5]
    for b, m in runs.items():
        for clf in ("random_forest", "naive_bayes", "mlp"):
            acc = m.get(f"model.classify.{clf}.accuracy")
            un = m.get(f"model.classify.{clf}.unseen_agreement")
            if not acc:
                continue
            votes = un["info"]["votes"] if un else {}
            v = " / ".join(", ".join(f"{c}×{n}" for c, n in sorted(votes.get(k, {}).items(), key=lambda x: -x[1]))
                           for k in ("stencil9", "stencil9_shared", "spmv"))
            out.append(f"| {b} | {clf} | {pct(acc['value'])} ({acc['info'].get('test_runs')} runs) | "
                       f"{pct(un['value']) if un else '–'} | {v} |")
    return out


def similarity_table(m: dict[str, dict]) -> list[str]:
    out = ["| unseen kernel | most similar (CFG) | reused group size | own best | slowdown |", "|" + " --- |" * 5]
    for name, rec in sorted(m.items()):
        if name.startswith("model.similarity."):
            i = rec["info"]
            out.append(f"| {name.split('.')[2]} | {i['match']} | {i['reused_local']} | {i['own_best_local']} | "
                       f"{rec['value']:.2f}× |")
    return out


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "results/nvidia-h100-80gb-hbm3")
    runs, commits = {}, {}
    for b in ("cuda", "opencl"):
        m, c = load(folder, b)
        if m:
            runs[b], commits[b] = m, c
    if not runs:
        raise SystemExit(f"no models-*.json in {folder}: run scripts/gpu_session.sh with GPUPERF_TAG=models first")
    print(f"<!-- generated by scripts/tables_models.py from {folder} (commits: {commits}) -->\n")
    print("### Sampled kernels (Dao ch. 2): linear model, SVR (leave-one-kernel-out), sampling overhead\n")
    print("\n".join(sampled_table(runs)))
    if "cuda" in runs:
        print("\n### Static PTX model (Alavani ch. 4) per dwarf, beside the thesis' Table 4.9\n")
        print("\n".join(ptx_tables(runs["cuda"])))
    print("\n### Kernel classes (paper 004)\n")
    print("\n".join(classify_table(runs)))
    if "cuda" in runs:
        print("\n### CFG similarity (Lim ch. IV): reuse of the most similar kernel's tuned group size\n")
        print("\n".join(similarity_table(runs["cuda"])))


if __name__ == "__main__":
    main()
