#!/usr/bin/env python3
"""Re-run Alavani's static PTX model on a saved GPU run, without the GPU, for every scheduling variant.

A results JSON of the model suite holds everything the PTX model was given in that session — each
dwarf's launch (grid, block, registers, shared memory, loop trips) and measured time, the in-session
instruction latencies, the fitted global-latency model, the launch and throughput calibration, and (from
the latency suite of the same run) the throughput probes. Only the PTX itself is not saved; it is
compiled here again with NVRTC for the run's architecture, as the CUDA backend does (``-arch=compute_XY
-std=c++17``). The thesis variant must reproduce the run's own predictions (``check`` column): that is
what makes a new variant's figures on the same data comparable.

NVRTC without a GPU: ``pip install --target /tmp/nvrtc-site nvidia-cuda-nvrtc==13.0.*`` (the toolkit of
the saved runs), then ``PYTHONPATH=/tmp/nvrtc-site python scripts/ptx_offline.py RESULTS.json ...``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from pytest_gpuperf.devices import recompile
from pytest_gpuperf.studies.ptx_model import cfg as cfgmod, ptx as ptxmod, scheduler
from pytest_gpuperf.studies.ptx_model.dwarfs import DWARFS, THESIS_MAPE
from pytest_gpuperf.studies.ptx_model.ptx_latency import GlobalLatencyModel, LatencyTable


def replay(path: Path) -> dict[str, object]:
    doc = json.loads(path.read_text())
    ms = {m["name"]: m for m in doc["metrics"]}
    if "model.ptx.mean_error" not in ms:
        raise SystemExit(f"{path}: no model.ptx.mean_error (run suites/test_model_error.py on a CUDA device)")
    dev = doc["device"]
    mi = ms["model.ptx.mean_error"]["info"]
    gfit = GlobalLatencyModel.from_info(ms.get("model.ptx.global_latency.r2", {}).get("info", {}), "saved run")
    table = LatencyTable(mi["latency_cycles"], mi["latency_by_class"], mi["global_latency"][0],
                         mi["global_latency"][1], gfit)
    c = mi["calibration"]
    cal = scheduler.Calibration(tuple(c["launch_s"]), tuple(c["global_tp"]), tuple(c["shared_tp"]))
    cc = dev["compute_capability"]
    rates, rate_sources = scheduler.issue_rates({n: m["value"] for n, m in ms.items()}, cc)
    rows = []
    for d in DWARFS:
        m = ms.get(f"model.ptx.{d.name}.error")
        if m is None:
            continue
        i = m["info"]
        graph = cfgmod.build(ptxmod.parse(recompile.ptx_text(d.source, cc.replace(".", "")),
                                          d.name))
        row = {"kernel": d.name, "dwarf": d.dwarf, "measured_s": i["measured_s"], "saved_predicted_s": i["predicted_s"]}
        for variant in scheduler.VARIANTS:
            p = scheduler.predict(graph, table, cal, grid=i["grid"], block=i["block"], regs=i["regs_per_thread"],
                                  shared=i["shared_bytes_per_block"], trips=i["trips"], n_sm=dev["compute_units"],
                                  clock_hz=dev["clock_mhz"] * 1e6, cc=cc, l2_bytes=int(dev.get("l2_bytes") or 0),
                                  variant=variant, rates=rates)
            row[variant] = {"predicted_s": p.seconds, "error": abs(p.seconds - i["measured_s"]) / i["measured_s"]}
        rows.append(row)
    dwarfs: dict[str, dict[str, object]] = {}
    for r in rows:
        d = dwarfs.setdefault(r["dwarf"], {v: [] for v in scheduler.VARIANTS})
        for v in scheduler.VARIANTS:
            d[v].append(r[v]["error"])  # type: ignore[union-attr]
    per_dwarf = {name: {**{v: float(np.mean(e[v])) for v in scheduler.VARIANTS},  # type: ignore[arg-type]
                        "thesis_median": float(np.median(THESIS_MAPE[name])) / 100.0} for name, e in dwarfs.items()}
    return {"results": str(path), "device": dev.get("name"), "commit": doc.get("environment", {}).get("commit"),
            "per_dwarf": per_dwarf,
            "at_or_below_thesis_median": {v: sum(d[v] <= d["thesis_median"] for d in per_dwarf.values())
                                          for v in scheduler.VARIANTS},
            "rates": rates, "rate_sources": rate_sources, "kernels": rows,
            "mean_error": {v: float(np.mean([r[v]["error"] for r in rows])) for v in scheduler.VARIANTS},
            "reproduces_saved": all(abs(r["thesis"]["predicted_s"] / r["saved_predicted_s"] - 1) < 1e-3 for r in rows)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+", type=Path)
    ap.add_argument("--json", type=Path, help="also write every row to this file")
    args = ap.parse_args(argv)
    out = [replay(p) for p in args.results]
    for r in out:
        print(f"{r['results']} ({r['device']}, {r['commit']}): thesis variant reproduces the run's predictions: "
              f"{r['reproduces_saved']}")
        vs = scheduler.VARIANTS
        print(f"  {'kernel':24} {'dwarf':32} {'measured µs':>11} " + " ".join(f"{v:>8}" for v in vs))
        for k in r["kernels"]:
            print(f"  {k['kernel']:24} {k['dwarf']:32} {k['measured_s'] * 1e6:11.2f} "
                  + " ".join(f"{k[v]['error']:8.3f}" for v in vs))
        print(f"  {'mean error':24} {'':32} {'':>11} " + " ".join(f"{r['mean_error'][v]:8.3f}" for v in vs))
        print(f"  {'per dwarf (mean error)':57} " + " ".join(f"{v:>8}" for v in vs) + "  Table 4.9 median")
        for name, d in r["per_dwarf"].items():
            print(f"  {name:57} " + " ".join(f"{d[v]:8.3f}" for v in vs) + f"  {d['thesis_median']:.3f}")
        print("  at or below the thesis median: " + ", ".join(
            f"{v} {r['at_or_below_thesis_median'][v]} of {len(r['per_dwarf'])}" for v in vs))
    if args.json:
        args.json.write_text(json.dumps({"tool": "scripts/ptx_offline.py", "runs": out}, indent=1) + "\n")
    return 0 if all(r["reproduces_saved"] for r in out) else 1


if __name__ == "__main__":
    sys.exit(main())
