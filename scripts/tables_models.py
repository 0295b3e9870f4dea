#!/usr/bin/env python3
"""Print the markdown tables of docs/models.md from results JSON files (never typed by hand).

    python scripts/tables_models.py [results/nvidia-h100-80gb-hbm3] [STEM ...]

Reads ``<STEM>-cuda.json`` and ``<STEM>-opencl.json`` in that folder (STEM defaults to ``models``; either
backend may be missing; with several stems, later files add to and override earlier ones metric by
metric, e.g. ``models models-gl models-counters`` for this session's re-runs of single tests) and
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


def load(folder: Path, backend: str, stem: str = "models") -> tuple[dict[str, dict], str]:
    path = folder / f"{stem}-{backend}.json"
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


def recombined_table(m: dict[str, dict], clock_hz: float = 1.98e9) -> list[str]:
    """Diagnostic (not a recorded metric): the recorded Eq. 4.8 terms per kernel, the scheduled delay per
    wave, and the error with and without the launch-overhead term, to show which term carries the error."""
    rows = [(n.split(".")[2], r["info"]) for n, r in sorted(m.items())
            if re.fullmatch(r"model\.ptx\.[A-Za-z0-9_]+\.error", n) and n != "model.ptx.mean_error"]
    if not rows:
        return []
    out = ["", "Diagnostic, recombined from the recorded terms above (d_kernel at 1980 MHz):", "",
           "| kernel | waves | d_kernel cycles / wave | d_kernel µs / measured | error, Eq. 4.8 | "
           "error without l_overhead |", "|" + " --- |" * 6]
    e_all, e_nol = [], []
    for k, i in rows:
        dk, meas = i["d_kernel_cycles"] / clock_hz, i["measured_s"]
        pen = i["gm_penalty_s"] + i["sm_penalty_s"] + i.get("cm_penalty_s", 0.0)
        e1, e2 = abs(i["predicted_s"] - meas) / meas, abs(dk + pen - meas) / meas
        e_all.append(e1)
        e_nol.append(e2)
        out.append(f"| {k} | {i['waves']} | {i['d_kernel_cycles'] / i['waves']:.0f} | {dk / meas:.2f} | "
                   f"{pct(e1)} | {pct(e2)} |")
    out.append(f"| **mean** | | | | {pct(sum(e_all) / len(e_all))} | {pct(sum(e_nol) / len(e_nol))} |")
    return out


def latency_sensitivity(m: dict[str, dict], folder: Path) -> list[str]:
    """Diagnostic: the PTX model's mean error re-predicted from the saved PTX (``tests/data/models``), the
    recorded calibration and measured times, with ``L(gm)`` set to the probes' DRAM, L2 and L1 latencies."""
    from pytest_gpuperf.models import cfg as cfgmod, ptx as ptxmod, scheduler  # noqa: PLC0415
    from pytest_gpuperf.models.latency import LatencyTable  # noqa: PLC0415
    info = m.get("model.ptx.mean_error", {}).get("info", {})
    cal_i, cyc = info.get("calibration"), info.get("latency_cycles")
    probes = folder / "probes-cuda.json"
    ptx_dir = Path(__file__).resolve().parents[1] / "tests" / "data" / "models"
    if not (cal_i and cyc and probes.exists()):
        return []
    lat = {x["name"]: x["value"] for x in json.loads(probes.read_text())["metrics"]}
    cal = scheduler.Calibration(tuple(cal_i["launch_s"]), tuple(cal_i["global_tp"]), tuple(cal_i["shared_tp"]))
    rows = [(n.split(".")[2], r["info"]) for n, r in sorted(m.items())
            if re.fullmatch(r"model\.ptx\.[A-Za-z0-9_]+\.error", n) and n != "model.ptx.mean_error"]
    out = ["", "Diagnostic: mean error re-predicted from the saved PTX with L(gm) set to each probe latency "
           "(recorded calibration and measured times):", "", "| L(gm) from | cycles | mean error |", "| --- | --- | --- |"]
    for name in ("memory.dram.latency.cycles", "memory.l2.latency.cycles", "memory.l1.latency.cycles"):
        if name not in lat:
            continue
        table = LatencyTable(cyc, {}, float(lat[name]), name)
        errs = []
        for k, i in rows:
            graph = cfgmod.build(ptxmod.parse((ptx_dir / f"{k}.ptx").read_text(), k))
            p = scheduler.predict(graph, table, cal, grid=i["grid"], block=i["block"], regs=i["regs_per_thread"],
                                  shared=i["shared_bytes_per_block"], trips=i["trips"], n_sm=132, clock_hz=1.98e9,
                                  l2_bytes=50 << 20)
            errs.append(abs(p.seconds - i["measured_s"]) / i["measured_s"])
        out.append(f"| `{name}` | {lat[name]:.1f} | {pct(sum(errs) / len(errs))} |")
    return out


def ptx_tables(m: dict[str, dict], folder: Path | None = None) -> list[str]:
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
                "sm penalty µs | cm penalty µs | launch µs | regs | occupancy (limit) |", "|" + " --- |" * 12]
    for name, rec in sorted(m.items()):
        if re.fullmatch(r"model\.ptx\.[A-Za-z0-9_]+\.error", name) and name != "model.ptx.mean_error":
            i = rec["info"]
            occ = f"{i['occupancy'] * 100:.0f} % ({i['occupancy_limit']})" if "occupancy" in i else "–"
            out.append(f"| {name.split('.')[2]} | {i['dwarf']} | {i['predicted_s'] * 1e6:.1f} | "
                       f"{i['measured_s'] * 1e6:.1f} | {pct(rec['value'])} | {i['d_kernel_cycles']:.0f} | "
                       f"{i['gm_penalty_s'] * 1e6:.1f} | {i['sm_penalty_s'] * 1e6:.1f} | "
                       f"{i.get('cm_penalty_s', 0.0) * 1e6:.2f} | {i['launch_s'] * 1e6:.1f} | "
                       f"{i.get('regs_per_thread', '–')} | {occ} |")
    out += recombined_table(m)
    if folder is not None:
        out += latency_sensitivity(m, folder)
    info = m.get("model.ptx.mean_error", {}).get("info", {})
    cyc, by_class = info.get("latency_cycles"), info.get("latency_by_class")
    if cyc and by_class:
        out += ["", "| instruction class | latency (cycles) | source |", "| --- | --- | --- |"]
        for k in sorted(cyc):
            out.append(f"| {k} | {cyc[k]:g} | {by_class.get(k, '')} |")
        g = info.get("global_latency")
        # with a fitted model, g[0] is the fixed value it replaced: show the L(gm) each launch was charged
        used = [r["info"]["gm_latency_cycles"] for n, r in m.items() if n.startswith("model.ptx.")
                and n.endswith(".error") and "gm_latency_cycles" in r.get("info", {})]
        if g and info.get("global_latency_model") and used:
            out.append(f"| ld/st.global | {min(used):.1f}–{max(used):.1f} (per launch) | {g[1]} |")
        elif g:
            out.append(f"| ld/st.global | {g[0]:.1f} | {g[1]} |" if g[0] is not None else f"| ld/st.global | K20 model | {g[1]} |")
    elif info.get("latency_sources"):
        out += ["", "Latency sources: " + "; ".join(info["latency_sources"])]
    return out


def _off_diagonal(conf: dict[str, dict[str, int]]) -> str:
    """Misclassifications as ``true→predicted×n``."""
    errs = [(t, p, n) for t, row in conf.items() for p, n in row.items() if p != t]
    return ", ".join(f"{t}→{p}×{n}" for t, p, n in sorted(errs, key=lambda e: -e[2])) or "none"


def classify_table(runs: dict[str, dict[str, dict]]) -> list[str]:
    out = ["| backend | features | classifier | held-out accuracy | misclassified (true→predicted) | "
           "unseen as the paper argues | votes (stencil9 / stencil9_shared / spmv) |", "|" + " --- |" * 7]
    for b, m in runs.items():
        for suffix, label in (("", "timing only"), ("_with_code", "timing + source mix")):
            for clf in ("random_forest", "naive_bayes", "mlp"):
                acc = m.get(f"model.classify.{clf}.accuracy{suffix}")
                un = m.get(f"model.classify.{clf}.unseen_agreement{suffix}")
                if not acc:
                    continue
                votes = un["info"]["votes"] if un else {}
                v = " / ".join(", ".join(f"{c}×{n}" for c, n in sorted(votes.get(k, {}).items(), key=lambda x: -x[1]))
                               for k in ("stencil9", "stencil9_shared", "spmv"))
                out.append(f"| {b} | {label} | {clf} | {pct(acc['value'])} ({acc['info'].get('test_runs')} runs) | "
                           f"{_off_diagonal(acc['info'].get('confusion', {}))} | {pct(un['value']) if un else '–'} | {v} |")
    return out


def resplit_table(runs: dict[str, dict[str, dict]], splits: int = 20) -> list[str]:
    """Accuracy over ``splits`` stratified 70/30 re-splits of the recorded timing-only dataset (the suite
    records one split; this shows its spread), and with K1+K2 merged (the pair timing cannot separate)."""
    import numpy as np
    from sklearn.model_selection import train_test_split

    from pytest_gpuperf.models import classify

    out = ["| backend | classifier | mean ± sd over re-splits | K1+K2 merged |", "|" + " --- |" * 4]
    for b, m in runs.items():
        rec = m.get("model.classify.random_forest.accuracy")
        ds = rec["info"].get("dataset") if rec else None
        if not ds:
            continue
        x, y = np.array(ds["x"]), np.array(ds["y"])
        merged = np.where(np.isin(y, ["K1", "K2"]), "K1+K2", y)
        for clf in ("random_forest", "naive_bayes", "mlp"):
            accs = {"": [], "m": []}
            for seed in range(splits):
                for key, labels in (("", y), ("m", merged)):
                    xtr, xte, ytr, yte = train_test_split(x, labels, test_size=0.3, random_state=seed, stratify=labels)
                    c = classify.make_classifiers(0)[clf]
                    c.fit(xtr, ytr)
                    accs[key].append(float(np.mean(c.predict(xte) == yte)))
            out.append(f"| {b} | {clf} | {np.mean(accs['']) * 100:.1f} ± {np.std(accs['']) * 100:.1f} % | "
                       f"{np.mean(accs['m']) * 100:.1f} % |")
    return out


def similarity_table(m: dict[str, dict]) -> list[str]:
    out = ["| unseen kernel | most similar (CFG) | reused group size | own best | slowdown |", "|" + " --- |" * 5]
    for name, rec in sorted(m.items()):
        if name.startswith("model.similarity."):
            i = rec["info"]
            out.append(f"| {name.split('.')[2]} | {i['match']} | {i['reused_local']} | {i['own_best_local']} | "
                       f"{rec['value']:.2f}× |")
    return out


def counters_table(m: dict[str, dict]) -> list[str]:
    """Classifiers on Nsight Compute counters (CUDA): held-out accuracy, misclassifications, unseen votes."""
    out = ["| classifier | held-out accuracy | misclassified (true→predicted) | unseen kernels: votes | agreement with the paper |",
           "| --- | --- | --- | --- | --- |"]
    for clf in ("random_forest", "naive_bayes", "mlp"):
        acc = m.get(f"model.classify.counters.{clf}.accuracy")
        un = m.get(f"model.classify.counters.{clf}.unseen_agreement")
        if not acc:
            continue
        votes = (un or {}).get("info", {}).get("votes", {})
        v = "; ".join(f"{k} → " + ", ".join(f"{c}×{n}" for c, n in sorted(row.items(), key=lambda e: -e[1]))
                      for k, row in votes.items())
        out.append(f"| {clf} | {pct(acc['value'])} ({acc['info'].get('test_runs')} runs) | "
                   f"{_off_diagonal(acc['info'].get('confusion', {}))} | {v} | {pct(un['value']) if un else '–'} |")
    return out


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "results/nvidia-h100-80gb-hbm3")
    stems = sys.argv[2:] or ["models"]
    runs, commits = {}, {}
    for b in ("cuda", "opencl"):
        for stem in stems:
            m, c = load(folder, b, stem)
            if m:
                runs.setdefault(b, {}).update(m)
                commits[f"{stem}-{b}"] = c
    if not runs:
        raise SystemExit(f"no models-*.json in {folder}: run scripts/gpu_session.sh with GPUPERF_TAG=models first")
    print(f"<!-- generated by scripts/tables_models.py from {folder} (commits: {commits}) -->\n")
    print("### Sampled kernels (Dao ch. 2): linear model, SVR (leave-one-kernel-out), sampling overhead\n")
    print("\n".join(sampled_table(runs)))
    if "cuda" in runs:
        print("\n### Static PTX model (Alavani ch. 4) per dwarf, beside the thesis' Table 4.9\n")
        print("\n".join(ptx_tables(runs["cuda"], folder)))
    print("\n### Kernel classes (paper 004)\n")
    print("\n".join(classify_table(runs)))
    if "cuda" in runs and any(n.startswith("model.classify.counters.") for n in runs["cuda"]):
        print("\n### Kernel classes from Nsight Compute counters (CUDA)\n")
        print("\n".join(counters_table(runs["cuda"])))
    print("\nRe-splits of the recorded timing-only dataset (20 stratified 70/30 splits):\n")
    print("\n".join(resplit_table(runs)))
    if "cuda" in runs:
        print("\n### CFG similarity (Lim ch. IV): reuse of the most similar kernel's tuned group size\n")
        print("\n".join(similarity_table(runs["cuda"])))


if __name__ == "__main__":
    main()
