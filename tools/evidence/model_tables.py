"""Tables of docs/models.md: the sampled-kernel model (Dao ch. 2) beside Dao's figures, the static PTX
model (Alavani ch. 4) per dwarf beside Table 4.9 in each variant, its per-kernel terms and diagnostics,
the kernel classifiers (paper 004), and the CFG-similarity reuse (Lim ch. IV).

Roles: ``cuda`` / ``opencl`` (one backend's files, merged with later files overriding earlier ones metric
by metric, e.g. a session's re-runs of single tests), ``runs`` (tables over several runs: cells read
``first / second / …``), ``probes`` (the latency-sensitivity diagnostic's probe run).
"""

from __future__ import annotations

import re
import statistics
from typing import Any, Mapping

from pytest_gpuperf.devices.backend_registry import names
from pytest_gpuperf.studies.ptx_model.dwarfs import THESIS_GPUS, THESIS_MAPE
from pytest_gpuperf.studies.ptx_model.ptx_errors import slug
from pytest_gpuperf.studies.sampled.sampled_apps import DAO_SAMPLED, OUR_ML
from .registry import Inputs
from .runfile import EvidenceError, Run, merged

Metrics = Mapping[str, Mapping[str, Any]]
KERNEL_ERROR = re.compile(r"model\.ptx\.[A-Za-z0-9_]+\.error")


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def _backends(inp: Inputs) -> dict[str, Metrics]:
    return {b: merged(inp.maybe(b), prefer="last") for b in names() if inp.maybe(b)}


def _cells(vals: list[str]) -> str:
    return vals[0] if len(set(vals)) == 1 else " / ".join(vals)


# ---- sampled kernels (Dao ch. 2) ----------------------------------------------------------------------------
DAO_KERNELS, DAO_APPLICATIONS = 70, 39
DAO_POINTS = "2nd/3rd saturation points"
DAO_PROTOCOL = f"{DAO_KERNELS} application kernels (≥ 0.1 s, hundreds of work-groups), {DAO_POINTS}"
#: Dao's ML model (§2.5.2), as his rows name it (ours: ``sampled_apps.OUR_ML``)
DAO_ML = "ε-SVR on static features, hardware counters and the linear model"


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def sample_geometry(run: Run, prefix: str) -> str:
    """Where a run's samples sat, from a kernel's recorded plan (``sampling.describe``)."""
    plan = next((m.get("info") or {} for n, m in sorted(run.metrics.items())
                 if n.startswith(f"{prefix}.") and n.endswith(".error") and "mean" not in n), {})
    units, sat, p1, p2, n = (plan.get(k) for k in ("units", "p_sat", "p1_groups", "p2_groups", "n_groups"))
    if not (units and sat and p1 and p2 and n):
        return "sampling points not recorded"
    wave = units * sat
    return (f"{_ordinal(p1 // wave)} and {_ordinal(p2 // wave)} saturation points of a run of {n // wave} waves "
            f"({plan.get('geometry', 'thesis')} geometry)")


def sampled_vs_dao(inp: Inputs) -> list[str]:
    """Dao's figures per GPU, then each of our runs: the linear and SVR mean errors and the overhead,
    with the protocol of each row (option ``prefix``: the metric family, default ``model.sampled``)."""
    prefix = inp.option("prefix", "model.sampled")
    svr = prefix.replace("sampled", "svr")
    out = ["| GPU | kernels and protocol | linear model, mean error | ML model, mean error (leave-one-kernel-out) | "
           "sampling overhead |", "| --- | --- | --- | --- | --- |"]
    for gpu, lin, ml, ovh in DAO_SAMPLED:
        out.append(f"| {gpu} | Dao thesis: {DAO_PROTOCOL} | {lin:.2f} % | {ml:.2f} % ({DAO_ML}) | {ovh} |")
    for run in inp.runs("runs"):
        kernels = (run.get(f"{prefix}.mean_error") or {}).get("info", {}).get("kernels", "?")
        name = str(run.device.get("name", "?")).replace("NVIDIA ", "")
        linear, ml, overhead = (pct(run.value(n)) for n in (f"{prefix}.mean_error", f"{svr}.mean_error",
                                                             f"{prefix}.mean_overhead"))
        out.append(f"| {name}, {run.backend} (`{run.stem}`) | ours: {kernels} self-written kernels, {sample_geometry(run, prefix)} | "
                   f"{linear} | {ml} ({OUR_ML}) | {overhead} |")
    return out


def _svr_kernel(metrics: Mapping[str, Any], kernel: str) -> str:
    """One kernel's SVR error where the run keeps it in the SVR mean's ``info["per_kernel"]``."""
    per = ((metrics.get("model.svr.mean_error") or {}).get("info") or {}).get("per_kernel") or {}
    return pct(per[kernel]["error"]) if kernel in per else "–"


def sampled(inp: Inputs) -> list[str]:
    """Per kernel and backend: linear-model error, SVR error (leave-one-kernel-out), sampling overhead."""
    runs = _backends(inp)
    kernels = sorted({n.split(".")[2] for m in runs.values() for n in m
                      if n.startswith("model.sampled.") and n.endswith(".error") and "mean" not in n})
    out = ["| kernel | " + " | ".join(f"{b}: linear err | {b}: SVR err | {b}: overhead" for b in runs) + " |",
           "|" + " --- |" * (1 + 3 * len(runs))]
    for k in kernels + ["mean"]:
        cells = []
        for m in runs.values():
            names = (("model.sampled.mean_error", "model.svr.mean_error", "model.sampled.mean_overhead") if k == "mean" else
                     (f"model.sampled.{k}.error", f"model.svr.{k}.error", f"model.sampled.{k}.overhead"))
            cells += [pct(m[n]["value"]) if n in m else _svr_kernel(m, k) if ".svr." in n else "–" for n in names]
        out.append(f"| {'**mean**' if k == 'mean' else k} | " + " | ".join(cells) + " |")
    return out


# ---- static PTX model (Alavani ch. 4) -----------------------------------------------------------------------
VARIANTS = {"thesis": "model.ptx", "issue": "model.ptx.issue", "hopper": "model.ptx.hopper"}
#: what Table 4.9's figures are (thesis §4.4.8–4.4.10)
TABLE_4_9 = "MAPE per dwarf over 108 launch configurations (several kernels per dwarf, each swept over launches) on four GPUs"


def ptx_dwarfs(inp: Inputs) -> list[str]:
    """Per dwarf: Table 4.9's four GPUs, then each variant's MAPE over the runs (option ``variants``);
    bold where every run is at or below the thesis' median."""
    runs = inp.runs("runs")
    variants = inp.option("variants", "thesis").split(",")
    bad = [v for v in variants if v not in VARIANTS]
    if bad:
        raise EvidenceError(f"{inp.block.where}: unknown variant {', '.join(bad)}; known: {', '.join(VARIANTS)}")
    out = [f"Table 4.9: Alavani's static PTX model, {TABLE_4_9}. Ours: the same model family in each variant, one launch per "
           "dwarf kernel (12 kernels; 6 of the 8 dwarfs a single kernel), on the run's card.", "",
           "| dwarf | " + " | ".join(f"Table 4.9 {g}" for g in THESIS_GPUS) + " | median | "
           + " | ".join(f"ours, {v} variant" for v in variants) + " |", "|" + " --- |" * (2 + len(THESIS_GPUS) + len(variants))]
    counts = {v: [0] * len(runs) for v in variants}
    for dwarf, thesis in THESIS_MAPE.items():
        med = statistics.median(thesis) / 100
        cells = []
        for v in variants:
            vals = [r.value(f"{VARIANTS[v]}.dwarf.{slug(dwarf)}.mape") for r in runs]
            for i, x in enumerate(vals):
                counts[v][i] += x is not None and x <= med
            text = " / ".join(pct(x) for x in vals)
            cells.append(f"**{text}**" if all(x is not None and x <= med for x in vals) else text)
        out.append(f"| {dwarf} | " + " | ".join(f"{t:.2f} %" for t in thesis) + f" | {100 * med:.1f} % | " + " | ".join(cells) + " |")
    out.append("| mean error (all kernels) | " + " | " * (len(THESIS_GPUS) + 1) + " | ".join(
        " / ".join(pct(r.value(f"{VARIANTS[v]}.mean_error")) for r in runs) for v in variants) + " |")
    out.append("| dwarfs at or below the median | " + " | " * (len(THESIS_GPUS) + 1) + " | ".join(
        " / ".join(f"{c} of {len(THESIS_MAPE)}" for c in counts[v]) for v in variants) + " |")
    return out


def _kernel_rows(m: Metrics) -> list[tuple[str, Mapping[str, Any], float]]:
    return [(n.split(".")[2], r["info"], r["value"]) for n, r in sorted(m.items())
            if KERNEL_ERROR.fullmatch(n) and n != "model.ptx.mean_error"]


def ptx_kernels(inp: Inputs) -> list[str]:
    """The thesis variant's terms per kernel (Eq. 4.8): prediction, measurement, d_kernel, penalties."""
    m = merged(inp.runs("cuda"), prefer="last")
    out = ["| kernel | dwarf | predicted µs | measured µs | error | d_kernel cycles | gm penalty µs | "
           "sm penalty µs | cm penalty µs | launch µs | regs | occupancy (limit) |", "|" + " --- |" * 12]
    for k, i, err in _kernel_rows(m):
        occ = f"{i['occupancy'] * 100:.0f} % ({i['occupancy_limit']})" if "occupancy" in i else "–"
        out.append(f"| {k} | {i['dwarf']} | {i['predicted_s'] * 1e6:.1f} | {i['measured_s'] * 1e6:.1f} | {pct(err)} | "
                   f"{i['d_kernel_cycles']:.0f} | {i['gm_penalty_s'] * 1e6:.1f} | {i['sm_penalty_s'] * 1e6:.1f} | "
                   f"{i.get('cm_penalty_s', 0.0) * 1e6:.2f} | {i['launch_s'] * 1e6:.1f} | {i.get('regs_per_thread', '–')} | {occ} |")
    return out


def ptx_recombined(inp: Inputs) -> list[str]:
    """Diagnostic (not a recorded metric): each kernel's scheduled delay per wave and the error with and
    without the launch-overhead term, recombined from the recorded terms (d_kernel at the reported clock)."""
    run = inp.runs("cuda")[-1]
    m = merged(inp.runs("cuda"), prefer="last")
    clock_hz = float(run.device.get("clock_mhz") or 0) * 1e6
    if clock_hz <= 0:
        raise EvidenceError(f"{inp.block.where}: the run records no clock_mhz to turn cycles into time")
    out = ["| kernel | waves | d_kernel cycles / wave | d_kernel µs / measured | error, Eq. 4.8 | error without l_overhead |",
           "|" + " --- |" * 6]
    e_all, e_nol = [], []
    for k, i, _ in _kernel_rows(m):
        dk, meas = i["d_kernel_cycles"] / clock_hz, i["measured_s"]
        pen = i["gm_penalty_s"] + i["sm_penalty_s"] + i.get("cm_penalty_s", 0.0)
        e1, e2 = abs(i["predicted_s"] - meas) / meas, abs(dk + pen - meas) / meas
        e_all.append(e1)
        e_nol.append(e2)
        out.append(f"| {k} | {i['waves']} | {i['d_kernel_cycles'] / i['waves']:.0f} | {dk / meas:.2f} | {pct(e1)} | {pct(e2)} |")
    out.append(f"| **mean** | | | | {pct(statistics.fmean(e_all))} | {pct(statistics.fmean(e_nol))} |")
    return out


def ptx_latencies(inp: Inputs) -> list[str]:
    """The latency per instruction class the run's PTX model used, with its source."""
    m = merged(inp.runs("cuda"), prefer="last")
    info = (m.get("model.ptx.mean_error") or {}).get("info") or {}
    cyc, by_class = info.get("latency_cycles"), info.get("latency_by_class")
    if not (cyc and by_class):
        return ["Latency sources: " + "; ".join(info.get("latency_sources", []))] if info.get("latency_sources") else []
    out = ["| instruction class | latency (cycles) | source |", "| --- | --- | --- |"]
    out += [f"| {k} | {cyc[k]:g} | {by_class.get(k, '')} |" for k in sorted(cyc)]
    g = info.get("global_latency")
    used = [r["info"]["gm_latency_cycles"] for n, r in m.items() if n.startswith("model.ptx.")
            and n.endswith(".error") and "gm_latency_cycles" in (r.get("info") or {})]
    if g and info.get("global_latency_model") and used:
        out.append(f"| ld/st.global | {min(used):.1f}–{max(used):.1f} (per launch) | {g[1]} |")
    elif g:
        out.append(f"| ld/st.global | {g[0]:.1f} | {g[1]} |" if g[0] is not None else f"| ld/st.global | K20 model | {g[1]} |")
    return out


def ptx_latency_sensitivity(inp: Inputs) -> list[str]:
    """Diagnostic: the thesis variant's mean error re-predicted from the saved PTX (``tests/data/models``),
    the run's calibration and measured times, with ``L(gm)`` set to the probe run's DRAM, L2 and L1 latency."""
    from pytest_gpuperf.studies.ptx_model import cfg as cfgmod, ptx as ptxmod, scheduler  # noqa: PLC0415
    from pytest_gpuperf.studies.ptx_model.ptx_latency import LatencyTable  # noqa: PLC0415
    run = inp.runs("cuda")[-1]
    m = merged(inp.runs("cuda"), prefer="last")
    info = (m.get("model.ptx.mean_error") or {}).get("info") or {}
    cal_i, cyc = info.get("calibration"), info.get("latency_cycles")
    probes = merged(inp.runs("probes"))
    if not (cal_i and cyc):
        raise EvidenceError(f"{inp.block.where}: the cuda run records no calibration/latencies of the PTX model")
    ptx_dir = inp.root / "tests" / "data" / "models"
    cal = scheduler.Calibration(tuple(cal_i["launch_s"]), tuple(cal_i["global_tp"]), tuple(cal_i["shared_tp"]))
    dev = run.device
    out = ["| L(gm) from | cycles | mean error |", "| --- | --- | --- |"]
    for name in ("memory.dram.latency.cycles", "memory.l2.latency.cycles", "memory.l1.latency.cycles"):
        if name not in probes:
            continue
        lat = float(probes[name]["value"])
        table = LatencyTable(cyc, {}, lat, name)
        errs = []
        for k, i, _ in _kernel_rows(m):
            graph = cfgmod.build(ptxmod.parse((ptx_dir / f"{k}.ptx").read_text(), k))
            p = scheduler.predict(graph, table, cal, grid=i["grid"], block=i["block"], regs=i["regs_per_thread"],
                                  shared=i["shared_bytes_per_block"], trips=i["trips"], n_sm=int(dev["compute_units"]),
                                  clock_hz=float(dev["clock_mhz"]) * 1e6, l2_bytes=int(dev["l2_bytes"]))
            errs.append(abs(p.seconds - i["measured_s"]) / i["measured_s"])
        out.append(f"| `{name}` | {lat:.1f} | {pct(statistics.fmean(errs))} |")
    return out


def hopper_kernels(inp: Inputs) -> list[str]:
    """The hopper variant per kernel, sorted by error: measured → predicted and the limit that bound it."""
    run = inp.run("cuda")
    rows = []
    for n, r in run.metrics.items():
        mm = re.fullmatch(r"model\.ptx\.hopper\.([A-Za-z0-9_]+)\.error", n)
        if mm and mm.group(1) != "mean":
            i = r.get("info") or {}
            rows.append((r["value"], mm.group(1), i))
    out = ["| kernel | error | measured → predicted µs | bound by |", "| --- | --- | --- | --- |"]
    for err, k, i in sorted(rows):
        parts = i.get("parts") or {}
        out.append(f"| {k} | {err:.3f} | {i.get('measured_s', 0) * 1e6:.2f} → {i.get('predicted_s', 0) * 1e6:.2f} | "
                   f"{parts.get('bound', '–')} |")
    return out


def ptx_replay(inp: Inputs) -> list[str]:
    """The offline replay of saved runs (``results/offline/ptx-variants.json``): per replayed run, whether
    the thesis variant reproduced the run's own predictions, each variant's mean error, and the dwarfs at
    or below Table 4.9's median."""
    doc = inp.run("replay").doc
    variants = list((doc["runs"][0].get("mean_error") or {}) if doc.get("runs") else [])
    out = ["| replayed run | device | commit | reproduces the saved predictions | "
           + " | ".join(f"{v}: mean error" for v in variants) + " | "
           + " | ".join(f"{v}: dwarfs ≤ median" for v in variants) + " |", "|" + " --- |" * (4 + 2 * len(variants))]
    for r in doc.get("runs", []):
        out.append(f"| `{r['results']}` | {r['device'].replace('NVIDIA ', '')} | {r['commit']} | "
                   f"{'yes' if r.get('reproduces_saved') else '**no**'} | "
                   + " | ".join(f"{r['mean_error'][v]:.3f}" for v in variants) + " | "
                   + " | ".join(f"{r['at_or_below_thesis_median'][v]} of {len(THESIS_MAPE)}" for v in variants) + " |")
    return out


def ptx_study_replay(inp: Inputs) -> list[str]:
    """The offline replay of saved PTX studies (``scripts/ptx_offline.py --study``): per study, where its
    ``L(gm)`` model came from, how closely the run's own predictions came out again, and each variant's MAPE over
    every launch, the design kernels and the held-out ones."""
    doc = inp.run("replay").doc
    runs = doc.get("runs") or []
    if not runs:
        raise EvidenceError(f"{inp.block.where}: the replay file holds no replayed study (scripts/ptx_offline.py --study)")
    variants = list(runs[0]["mape"]["all"])
    out = ["| replayed study | device | commit | L(gm) model | the run's predictions within | "
           + " | ".join(f"{v}: all / design / held out" for v in variants) + " |", "|" + " --- |" * (5 + len(variants))]
    for r in runs:
        m = r["mape"]
        out.append(f"| `{r['results']}` | {r['device'].replace('NVIDIA ', '')} | {r['commit']} | "
                   f"{'its own' if r['fit_recorded'] else 'another run of the card'} | "
                   f"{100 * r['worst_reproduction']:.2f} % | "
                   + " | ".join(" / ".join(pct(m[part][v]) for part in ("all", "design", "held_out")) for v in variants)
                   + " |")
    return out


def ptx_study_replay_dwarfs(inp: Inputs) -> list[str]:
    """The offline replay per dwarf (``scripts/ptx_offline.py --study``): each replayed study's MAPE of the
    ``variants=`` the marker names, beside Table 4.9's median over the thesis' four GPUs; the last row counts the
    dwarfs at or below it."""
    runs = inp.run("replay").doc.get("runs") or []
    variants = inp.option("variants").split(",")
    missing = [v for r in runs for v in variants if v not in r.get("mape", {}).get("all", {})]
    if not runs or missing or any("dwarfs" not in r for r in runs):
        raise EvidenceError(f"{inp.block.where}: the replay file lacks the per-dwarf figures of {sorted(set(missing)) or variants} "
                            "(scripts/ptx_offline.py --study, with --trace for the traced variant)")
    cards = [r["device"].replace("NVIDIA ", "") for r in runs]
    out = ["| dwarf | Table 4.9 median | " + " | ".join(f"{c}: {v}" for c in cards for v in variants) + " |",
           "|" + " --- |" * (2 + len(cards) * len(variants))]
    below = {(k, v): 0 for k in range(len(runs)) for v in variants}
    for dwarf, thesis in THESIS_MAPE.items():
        med = statistics.median(thesis) / 100
        cells = []
        for k, r in enumerate(runs):
            for v in variants:
                x = r["dwarfs"][dwarf][v]
                below[k, v] += x <= med
                cells.append(f"**{pct(x)}**" if x <= med else pct(x))
        out.append(f"| {dwarf} | {pct(med)} | " + " | ".join(cells) + " |")
    out.append("| dwarfs at or below the median | | " + " | ".join(
        f"{below[k, v]} of {len(THESIS_MAPE)}" for k in range(len(runs)) for v in variants) + " |")
    return out


def ncu_dwarfs(inp: Inputs) -> list[str]:
    """Nsight Compute counters of each dwarf kernel as the suite launches it (role ``ncu``: the profile
    saved by the dwarfs' ncu run): DRAM bytes, hit rates, sectors per request, SASS warp instructions,
    issue slots, occupancy and the two largest stall reasons."""
    doc = inp.run("ncu").doc
    out = ["| kernel | DRAM bytes | L1 / L2 hit | global sectors per request (ld / st) | SASS warp instr. | "
           "issue slots busy | warps active | largest stalls (warps per issue) |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    stall = "smsp__average_warps_issue_stalled_"
    for name, d in doc.get("dwarfs", {}).items():
        ld = d["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] / max(d["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"], 1)
        st = d["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] / max(d["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"], 1)
        stalls = sorted(((v, k[len(stall):].split("_per_issue")[0]) for k, v in d.items() if k.startswith(stall)), reverse=True)[:2]
        out.append(f"| {name} | {(d['dram__bytes_read.sum'] + d['dram__bytes_write.sum']) / 1e6:.1f} MB | "
                   f"{d['l1tex__t_sector_hit_rate.pct']:.0f} % / {d['lts__t_sector_hit_rate.pct']:.0f} % | {ld:.1f} / {st:.1f} | "
                   f"{d['smsp__inst_executed.sum'] / 1e6:.2f} M | {d['smsp__issue_active.avg.pct_of_peak_sustained_active']:.0f} % | "
                   f"{d['sm__warps_active.avg.pct_of_peak_sustained_active']:.0f} % | "
                   + ", ".join(f"`{k}` {v:.1f}" for v, k in stalls) + " |")
    return out


# ---- classifiers and similarity ----------------------------------------------------------------------------
def _off_diagonal(conf: Mapping[str, Mapping[str, int]]) -> str:
    errs = [(t, p, n) for t, row in conf.items() for p, n in row.items() if p != t]
    return ", ".join(f"{t}→{p}×{n}" for t, p, n in sorted(errs, key=lambda e: -e[2])) or "none"


def classify(inp: Inputs) -> list[str]:
    """Timing-only and timing + source-mix classifiers per backend: held-out accuracy, errors, unseen votes."""
    out = ["| backend | features | classifier | held-out accuracy | misclassified (true→predicted) | "
           "unseen as the paper argues | votes (stencil9 / stencil9_shared / spmv) |", "|" + " --- |" * 7]
    for b, m in _backends(inp).items():
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


def _split_accuracy(x: Any, labels: Any, clf: str, seed: int) -> float:
    """Held-out accuracy of one classifier on one stratified 70/30 split (``seed``)."""
    import numpy as np  # noqa: PLC0415
    from sklearn.model_selection import train_test_split  # noqa: PLC0415

    from pytest_gpuperf.studies.classification import classify as clfmod  # noqa: PLC0415
    xtr, xte, ytr, yte = train_test_split(x, labels, test_size=0.3, random_state=seed, stratify=labels)
    c = clfmod.make_classifiers(0)[clf]
    c.fit(xtr, ytr)
    return float(np.mean(c.predict(xte) == yte))


#: the classifiers of the re-split table, in its row order
RESPLIT_CLASSIFIERS = ("random_forest", "naive_bayes", "mlp")
#: the order their fits are handed to the workers: the slowest first (the MLP's fits take about twice the
#: random forest's, the naive Bayes' a hundredth), so no core waits on a slow fit at the end
_SLOWEST_FIRST = ("mlp", "random_forest", "naive_bayes")


def resplit(inp: Inputs, splits: int = 20) -> list[str]:
    """Accuracy over 20 stratified 70/30 re-splits of each run's recorded timing-only dataset (the suite
    records one split; this shows its spread), and with K1+K2 merged (the pair timing cannot separate).
    The fits are independent and seeded, so they run on every core with the same figures: every backend's
    and classifier's fits in one batch, the slowest first."""
    import numpy as np  # noqa: PLC0415
    from joblib import Parallel, delayed  # noqa: PLC0415

    data: dict[str, dict[str, Any]] = {}
    for b, m in _backends(inp).items():
        ds = ((m.get("model.classify.random_forest.accuracy") or {}).get("info") or {}).get("dataset")
        if ds:
            x, y = np.array(ds["x"]), np.array(ds["y"])
            data[b] = {"x": x, "": y, "m": np.where(np.isin(y, ["K1", "K2"]), "K1+K2", y)}
    jobs = [(b, clf, key, seed) for clf in _SLOWEST_FIRST for b in data for seed in range(splits) for key in ("", "m")]
    got = Parallel(n_jobs=-1)(delayed(_split_accuracy)(data[b]["x"], data[b][key], clf, seed)
                              for b, clf, key, seed in jobs)
    accs: dict[tuple[str, str, str], list[float]] = {}
    for (b, clf, key, _), acc in zip(jobs, got):
        accs.setdefault((b, clf, key), []).append(acc)
    out = ["| backend | classifier | mean ± sd over re-splits | K1+K2 merged |", "|" + " --- |" * 4]
    for b in data:
        for clf in RESPLIT_CLASSIFIERS:
            plain, merged_k = accs[(b, clf, "")], accs[(b, clf, "m")]
            out.append(f"| {b} | {clf} | {np.mean(plain) * 100:.1f} ± {np.std(plain) * 100:.1f} % | "
                       f"{np.mean(merged_k) * 100:.1f} % |")
    return out


def counters(inp: Inputs) -> list[str]:
    """Classifiers on Nsight Compute counters (CUDA): held-out accuracy, misclassifications, unseen votes."""
    m = merged(inp.runs("cuda"), prefer="last")
    out = ["| classifier | held-out accuracy | misclassified (true→predicted) | unseen kernels: votes | agreement with the paper |",
           "| --- | --- | --- | --- | --- |"]
    for clf in ("random_forest", "naive_bayes", "mlp"):
        acc = m.get(f"model.classify.counters.{clf}.accuracy")
        un = m.get(f"model.classify.counters.{clf}.unseen_agreement")
        if not acc:
            continue
        votes = ((un or {}).get("info") or {}).get("votes", {})
        v = "; ".join(f"{k} → " + ", ".join(f"{c}×{n}" for c, n in sorted(row.items(), key=lambda e: -e[1]))
                      for k, row in votes.items())
        out.append(f"| {clf} | {pct(acc['value'])} ({acc['info'].get('test_runs')} runs) | "
                   f"{_off_diagonal(acc['info'].get('confusion', {}))} | {v} | {pct(un['value']) if un else '–'} |")
    return out


def similarity(inp: Inputs) -> list[str]:
    """CFG similarity: the unseen kernel, its nearest tuned kernel, the reused and own best group size."""
    m = merged(inp.runs("cuda"), prefer="last")
    out = ["| unseen kernel | most similar (CFG) | reused group size | own best | slowdown |", "|" + " --- |" * 5]
    for name, rec in sorted(m.items()):
        if name.startswith("model.similarity."):
            i = rec["info"]
            out.append(f"| {name.split('.')[2]} | {i['match']} | {i['reused_local']} | {i['own_best_local']} | {rec['value']:.2f}× |")
    return out


TABLES = {"models-sampled-vs-dao": sampled_vs_dao, "models-sampled": sampled, "models-ptx-dwarfs": ptx_dwarfs,
          "models-ptx-kernels": ptx_kernels, "models-ptx-recombined": ptx_recombined,
          "models-ptx-latencies": ptx_latencies, "models-ptx-latency-sensitivity": ptx_latency_sensitivity,
          "models-hopper-kernels": hopper_kernels, "models-ptx-replay": ptx_replay,
          "models-ptx-study-replay": ptx_study_replay, "models-ptx-study-replay-dwarfs": ptx_study_replay_dwarfs,
          "models-ncu-dwarfs": ncu_dwarfs, "models-classify": classify, "models-classify-resplit": resplit,
          "models-classify-counters": counters, "models-similarity": similarity}
