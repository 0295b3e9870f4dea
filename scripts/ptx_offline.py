#!/usr/bin/env python3
"""Re-run Alavani's static PTX model on a saved GPU run, without the GPU, for every scheduling variant.

A results JSON of the model suite holds everything the PTX model was given in that session — each
dwarf's launch (grid, block, registers, shared memory, loop trips) and measured time, the in-session
instruction latencies, the fitted global-latency model, the launch and throughput calibration, and (from
the latency suite of the same run) the throughput probes. Only the PTX itself is not saved; it is
compiled here again with NVRTC for the run's architecture, as the CUDA backend does (``-arch=compute_XY
-std=c++17``). The thesis variant must reproduce the run's own predictions (``check`` column): that is
what makes a new variant's figures on the same data comparable.

With ``--study``, the runs are PTX studies (``suites/test_model_ptx_study.py``, Alavani's 108 launches): every
launch is predicted again by every variant (``launch_once`` included, which no study before it recorded) from the
study's own calibration, latencies and issue rates; a study made before it recorded its fitted ``L(gm)`` model
takes that of another run of the same card (``--donor``), and every prediction the run recorded must come out
within 1 %.

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
from pytest_gpuperf.studies.ptx_model import cfg as cfgmod, ptx as ptxmod, ptx_study, ptx_sweep, ptx_trace, scheduler
from pytest_gpuperf.studies.ptx_model.dwarfs import DWARFS, THESIS_MAPE
from pytest_gpuperf.studies.ptx_model.ptx_calibration import calibration_from_info
from pytest_gpuperf.studies.ptx_model.ptx_latency import GLOBAL_MODEL_METRIC, GlobalLatencyModel, LatencyTable
from pytest_gpuperf.util import jsonio


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
    cal = calibration_from_info(mi["calibration"])
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


#: how closely a replay must give each prediction the run recorded (a donor's L(gm) model moves them by ~0.5 %)
REPRODUCED = 0.01


def study_table(info: dict[str, object], donor: Path | None) -> tuple[LatencyTable, str]:
    """The latency table a saved study predicted with, and where its L(gm) model came from: the study's own
    record, or — for a run made before the study recorded it — the fitted model of ``donor``, another run of
    the same card (its ``model.ptx.global_latency.r2``; the fit moves about a cycle between machines)."""
    try:
        return ptx_study.table_from_info(info), "the run's own"
    except ValueError as exc:
        if donor is None:
            raise SystemExit(f"{exc}; name a run of the same card that fitted one with --donor") from None
    dms = {m["name"]: m for m in jsonio.read_json(donor)["metrics"]}
    fit = GlobalLatencyModel.from_info(dms.get(GLOBAL_MODEL_METRIC, {}).get("info", {}), f"donor {donor}")
    if fit is None:
        raise SystemExit(f"{donor}: no {GLOBAL_MODEL_METRIC} with a fit in it")
    return LatencyTable(dict(info["latency_cycles"]), {}, None, f"donor {donor}", fit), f"donor {donor}"  # type: ignore[arg-type]


#: the offline replay's extra variant: ``launch_once`` streaming the sectors the trace finds each block touching
TRACED = "traced"


def replay_study(path: Path, donor: Path | None = None, traces: dict[str, dict[str, float]] | None = None,
                 kernels: set[str] | None = None) -> dict[str, object]:
    """Every launch of a saved PTX study (``suites/test_model_ptx_study.py``) predicted again by every variant,
    beside the run's own predictions and measured times. ``traces`` (kernel@config → :func:`ptx_trace.traced_bytes`,
    filled as launches are first traced): also the :data:`TRACED` variant. ``kernels``: those kernels' launches only."""
    known = {k.name for k in ptx_sweep.STUDY_KERNELS}
    if kernels is not None and kernels - known:
        raise SystemExit(f"--kernels: no study kernel {', '.join(sorted(kernels - known))}; known: {', '.join(sorted(known))}")
    doc = jsonio.read_json(path)
    ms = {m["name"]: m for m in doc["metrics"]}
    head = ms.get(f"{ptx_study.PREFIX}.thesis.mape")
    if head is None:
        raise SystemExit(f"{path}: no {ptx_study.PREFIX}.thesis.mape (run suites/test_model_ptx_study.py)")
    dev, info = doc["device"], head["info"]
    table, fit_from = study_table(info, donor)
    cal = calibration_from_info(info["calibration"])
    cc, rates = dev["compute_capability"], dict(info["rates"])
    graphs: dict[str, cfgmod.Cfg] = {}
    texts: dict[str, str] = {}
    rows = []
    for k in ptx_sweep.STUDY_KERNELS:
        if kernels is not None and k.name not in kernels:
            continue
        saved = {v: {r["config"]: r for r in ms[f"{ptx_study.PREFIX}.{v}.{k.name}.error"]["info"]["launches"]}
                 for v in scheduler.VARIANTS if f"{ptx_study.PREFIX}.{v}.{k.name}.error" in ms}
        if not saved:
            continue  # left out of the run (its reference check failed): the run names it under problems
        for conf in k.configs:
            shape = k.shape(conf)
            src = k.source("cuda", shape)
            if src not in graphs:  # one NVRTC compile per text, for the graph and the trace alike
                texts[src] = recompile.ptx_text(src, cc.replace(".", ""))
                graphs[src] = cfgmod.build(ptxmod.parse(texts[src], k.name))
            first = saved["thesis"][conf.label]
            measured = first["measured_s"]
            launch = dict(grid=shape.grid, block=shape.block, regs=first["regs"], shared=first["shared"],
                          trips=shape.trips, n_sm=dev["compute_units"], clock_hz=dev["clock_mhz"] * 1e6, cc=cc,
                          l2_bytes=int(dev.get("l2_bytes") or 0), rates=rates)
            row = {"kernel": k.name, "dwarf": k.dwarf, "held_out": k.held_out, "config": conf.label,
                   "measured_s": measured}
            for v in scheduler.VARIANTS:
                p = scheduler.predict(graphs[src], table, cal, **launch, variant=v)
                row[v] = {"predicted_s": p.seconds, "error": abs(p.seconds - measured) / measured,
                          **({"saved_predicted_s": saved[v][conf.label]["predicted_s"]} if v in saved else {}),
                          **({"parts": p.parts} if p.parts else {})}
            if traces is not None:
                key = f"{k.name}@{conf.label}"
                if key not in traces:
                    traces[key] = ptx_trace.traced_bytes(k, conf, texts[src])
                row["trace"] = traces[key]
                p = scheduler.predict(graphs[src], table, cal, **launch, variant="launch_once",
                                      memory_bytes=traces[key]["unique_sector_bytes"])
                row[TRACED] = {"predicted_s": p.seconds, "error": abs(p.seconds - measured) / measured, "parts": p.parts}
            rows.append(row)
    variants = (*scheduler.VARIANTS, *([TRACED] if traces is not None else []))
    # every variant the run itself recorded must come out as it did (a variant newer than the run has nothing to match)
    worst = max(abs(r[v]["predicted_s"] / r[v]["saved_predicted_s"] - 1)
                for r in rows for v in scheduler.VARIANTS if "saved_predicted_s" in r[v])
    return {"results": str(path), "device": dev.get("name"), "commit": doc.get("environment", {}).get("commit"),
            "global_latency_fit": fit_from, "fit_recorded": not fit_from.startswith("donor"),
            "worst_reproduction": worst, "launches": rows,
            "mape": {part: {v: float(np.mean([r[v]["error"] for r in rows if keep(r)])) for v in variants}
                     for part, keep in (("all", lambda r: True), ("held_out", lambda r: r["held_out"]),
                                        ("design", lambda r: not r["held_out"])) if any(keep(r) for r in rows)},
            "dwarfs": {d: {v: float(np.mean([r[v]["error"] for r in rows if r["dwarf"] == d])) for v in variants}
                       for d in THESIS_MAPE if any(r["dwarf"] == d for r in rows)}}


def print_study(r: dict[str, object]) -> None:
    """A study replay's MAPE per variant: every launch, the design kernels, the held-out ones."""
    vs = list(r["mape"]["all"])  # type: ignore[index]
    print(f"{r['results']} ({r['device']}, {r['commit']}; L(gm) model: {r['global_latency_fit']}): the run's own "
          f"predictions reproduced within {100 * float(r['worst_reproduction']):.2f} %")  # type: ignore[arg-type]
    print(f"  {'MAPE':12} " + " ".join(f"{v:>12}" for v in vs))
    for part, by in r["mape"].items():  # type: ignore[union-attr]
        print(f"  {part:12} " + " ".join(f"{100 * by[v]:11.1f}%" for v in vs))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+", type=Path)
    ap.add_argument("--json", type=Path, help="also write every row to this file")
    ap.add_argument("--study", action="store_true",
                    help="the runs are PTX studies (suites/test_model_ptx_study.py): replay their 108 launches")
    ap.add_argument("--trace", action="store_true",
                    help="with --study: also trace every launch's global accesses on the host (studies.ptx_model."
                         "ptx_trace; minutes) and predict it streaming the sectors its blocks touch (the traced variant)")
    ap.add_argument("--donor", type=Path, action="append", default=[],
                    help="per study run, in order: a run of the same card whose fitted L(gm) model stands in for one "
                         "the study did not record (repeatable)")
    ap.add_argument("--kernels", default=None, metavar="NAME[,NAME]",
                    help="with --study: replay these study kernels' launches only (every launch by default)")
    args = ap.parse_args(argv)
    if args.study:
        donors = args.donor + [None] * (len(args.results) - len(args.donor))
        traces: dict[str, dict[str, float]] | None = {} if args.trace else None  # one card's trace is every card's
        only = None if args.kernels is None else {n.strip() for n in args.kernels.split(",") if n.strip()}
        studies = [replay_study(p, d, traces, only) for p, d in zip(args.results, donors)]
        for r in studies:
            print_study(r)
        if args.json:
            args.json.write_text(json.dumps({"tool": "scripts/ptx_offline.py --study", "runs": studies}, indent=1) + "\n")
        return 0 if all(float(r["worst_reproduction"]) < REPRODUCED for r in studies) else 1  # type: ignore[arg-type]
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
