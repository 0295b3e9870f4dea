"""Tables of docs/models.md for the two model studies (``--gpuperf-profile=study``): Dao's protocol on the
application corpus beside his figures (``models-apps-dao``), and Alavani's 108-launch sweep of the PTX model
per dwarf and variant beside Table 4.9 (``models-ptx-study``).

Both read role ``runs`` (one or more results files) and refuse a file that does not hold what the table
shows, naming the file, the missing metrics and the run that makes them.
"""

from __future__ import annotations

import statistics
from typing import Any, Mapping, Sequence

from pytest_gpuperf.studies.sampled import dao_ml, svr
from pytest_gpuperf.corpora.app_kernels import APP_KERNELS, CORPUS_VERSION
from pytest_gpuperf.studies.ptx_model.dwarfs import THESIS_GPUS, THESIS_MAPE
from pytest_gpuperf.studies.ptx_model.ptx_errors import slug
from pytest_gpuperf.studies.ptx_model.ptx_study import PREFIX as PTX_STUDY, THESIS_OVERALL_MAPE
from pytest_gpuperf.studies.ptx_model.scheduler import VARIANTS
from .model_tables import (DAO_APPLICATIONS, DAO_KERNELS, DAO_ML, DAO_POINTS, DAO_SAMPLED, OUR_ML, TABLE_4_9, pct,
                           sample_geometry)
from .registry import Inputs
from .runfile import EvidenceError, Run

APPS, SVR_APPS, PROJECT, SVR_PROJECT = "model.sampled_apps", "model.svr_apps", "model.sampled_project", "model.svr_project"
DAO_ML_APPS = dao_ml.FAMILY
WHOLE = "(the whole study, not a part of it)"
APPS_FIX = f"name the results file of `gpuperf run suites/test_model_apps.py --gpuperf-profile=study` {WHOLE}"
PTX_FIX = ("name the results file of `gpuperf run suites/test_latency.py suites/test_model_ptx_study.py "
           f"--gpuperf-profile=study` {WHOLE}, a CUDA device's")
PROJECT_FIX = "name the results file of a default run (`gpuperf run --gpuperf-device=0`)"
PROCEDURE_CHECK = "no: a procedure check on a CPU device (PoCL size, warm caches), not comparable to Dao"


def _gpu(run: Run) -> str:
    return f"{str(run.device.get('name', '?')).replace('NVIDIA ', '')}, {run.backend or '?'}"


def _on_cpu(run: Run, identity: Mapping[str, Any]) -> bool:
    """A CPU device's run: the device says so, or the figures were measured at the PoCL size or warm."""
    return bool(run.device.get("is_cpu")) or identity.get("size") == "tiny" or identity.get("cache") == "warm"


def _require(inp: Inputs, run: Run, names: Sequence[str], what: str, fix: str) -> None:
    """Refuse ``run`` where it lacks any of ``names``, naming the first few and the ``fix``."""
    missing = [n for n in names if run.get(n) is None]
    if missing:
        shown = ", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
        raise EvidenceError(f"{inp.block.where}: {run.path} lacks {shown} of {what}; {fix}")


# ---- Dao's protocol on application kernels (Dao ch. 2, §2.6) -----------------------------------------------
def _waves(identity: Mapping[str, Any]) -> str:
    """The range of the kernels' reported runs in waves (a mean's ``waves``: ``name=w,…``)."""
    vals = [float(w.split("=", 1)[1]) for w in str(identity.get("waves", "")).split(",") if "=" in w]
    return f"{min(vals):g}–{max(vals):g} waves" if vals else "waves not recorded"


def _apps_row(inp: Inputs, run: Run) -> str:
    _require(inp, run, (f"{APPS}.mean_error", f"{APPS}.mean_overhead"), "the application study", APPS_FIX)
    mean = run.get(f"{APPS}.mean_error") or {}
    ident, info = mean.get("identity") or {}, mean.get("info") or {}
    k = int(info.get("kernels", len(str(ident.get("kernels", "")).split(","))))
    if run.get(f"{SVR_APPS}.mean_error") is None and k >= svr.MIN_KERNELS:
        _require(inp, run, (f"{SVR_APPS}.mean_error",), "the application study", APPS_FIX)
    ml = (pct(run.value(f"{SVR_APPS}.mean_error")) if run.get(f"{SVR_APPS}.mean_error") is not None else
          f"not recorded ({k} kernels; it trains on {svr.MIN_KERNELS} or more)")
    notes = [f"{len(v)} {label}" for key, label in (("full_runs_under_0.1s", "with full runs under 0.1 s"),
                                                      ("over_budget", "left out over the run budget"),
                                                      ("left_out_on_this_cpu", "left out on this CPU (too few waves)"))
             if (v := info.get(key))]
    kernels = f"{k} ported application kernels (corpus `{ident.get('corpus', '?')}`)" + (
        f"; {', '.join(notes)}" if notes else "")
    protocol = (f"Dao's points ({ident.get('saturation_points', '?')} × P_sat), run lengths {ident.get('run_lengths', '?')}, "
                f"{ident.get('size', '?')} size, {ident.get('cache', '?')} cache, {_waves(ident)}")
    beside = PROCEDURE_CHECK if _on_cpu(run, ident) else "his protocol; corpus and ML model differ (last row)"
    return (f"| ours (`{run.stem}`) | {_gpu(run)} | {kernels} | {protocol} | {OUR_ML} | "
            f"{pct(run.value(f'{APPS}.mean_error'))} | {ml} | {pct(run.value(f'{APPS}.mean_overhead'))} | {beside} |")


def _counter_row(run: Run) -> str:
    """The counter model's row (Dao's own ML model, a CUDA run's): its leave-one-kernel-out mean error beside
    the same run's linear model, the counters' ncu version and what differs from Dao."""
    mean = run.get(f"{DAO_ML_APPS}.mean_error") or {}
    ident, info = mean.get("identity") or {}, mean.get("info") or {}
    collection = info.get("collection") or {}
    dropped = collection.get("dropped") or []
    k = int(info.get("kernels", len(str(ident.get("kernels", "")).split(","))))
    kernels = f"{k} ported application kernels (corpus `{ident.get('corpus', '?')}`), {info.get('instances', '?')} runs"
    counters = (f"Dao's Table 2.1 counters mapped to Nsight Compute {collection.get('ncu_version', '?')} metrics "
                f"(set `{ident.get('counters', '?')}`)" + (f", {len(dropped)} dropped by this ncu" if dropped else ""))
    linear = run.value(f"{APPS}.mean_error")
    return (f"| ours, counter model (`{run.stem}`, a separate family) | {_gpu(run)} | {kernels} | Dao's points "
            f"({ident.get('saturation_points', '?')} × P_sat), {counters} | {dao_ml.MODEL} | "
            f"{pct(linear) if linear is not None else '– (not in this run: it measured the counter model only)'} | "
            f"{pct(run.value(f'{DAO_ML_APPS}.mean_error'))} | | "
            f"his protocol and model; counters, GPU and corpus differ (last row) |")


def _project_row(inp: Inputs, run: Run) -> str:
    _require(inp, run, (f"{PROJECT}.mean_error", f"{PROJECT}.mean_overhead"), "the project's geometry", PROJECT_FIX)
    mean = run.get(f"{PROJECT}.mean_error") or {}
    ident = mean.get("identity") or {}
    k = (mean.get("info") or {}).get("kernels", "?")
    beside = PROCEDURE_CHECK if _on_cpu(run, ident) else "no: another corpus and other sampling points"
    return (f"| ours, the project's geometry (`{run.stem}`, a separate family) | {_gpu(run)} | {k} self-written kernels "
            f"(§1) | {sample_geometry(run, PROJECT)} | {OUR_ML} | {pct(run.value(f'{PROJECT}.mean_error'))} | "
            f"{pct(run.value(f'{SVR_PROJECT}.mean_error'))} | {pct(run.value(f'{PROJECT}.mean_overhead'))} | {beside} |")


def apps_vs_dao(inp: Inputs) -> list[str]:
    """Dao's rows per GPU (linear and ML model, his conditions), then per results file of the application study
    its linear model's mean error and overhead, the SVR's leave-one-kernel-out mean error and the kernels
    measured (a CPU device's run marked a procedure check), the counter model's row where the file holds it
    (Dao's own ML model on Nsight Compute counters: CUDA runs), the project's geometry as its own row where a
    file holds it, and a last row saying what differs from Dao."""
    runs = inp.runs("runs")
    neither = [r.path for r in runs if all(r.get(f"{f}.mean_error") is None for f in (APPS, DAO_ML_APPS, PROJECT))]
    if neither:
        raise EvidenceError(f"{inp.block.where}: {', '.join(neither)} record neither the application study "
                            f"({APPS}.mean_error or {DAO_ML_APPS}.mean_error) nor the project's geometry "
                            f"({PROJECT}.mean_error); {APPS_FIX}, or of a default run")
    if all(r.get(f"{APPS}.mean_error") is None for r in runs):
        raise EvidenceError(f"{inp.block.where}: no file named records the application study ({APPS}.*); "
                            f"{APPS_FIX}")
    out = ["| row | GPU | kernels | protocol | ML model | linear model, mean error | ML model, mean error "
           "(leave-one-kernel-out) | sampling overhead | beside Dao |", "|" + " --- |" * 9]
    for gpu, lin, ml, ovh in DAO_SAMPLED:
        out.append(f"| Dao thesis §2.6 | {gpu} | {DAO_KERNELS} kernels of {DAO_APPLICATIONS} OpenCL applications "
                   f"(≥ 0.1 s, hundreds of work-groups) | {DAO_POINTS}; overhead = sampled time / full run | {DAO_ML} | "
                   f"{lin:.2f} % | {ml:.2f} % | {ovh} | the reference |")
    for run in runs:
        if run.get(f"{APPS}.mean_error") is not None:
            out.append(_apps_row(inp, run))
        if run.get(f"{DAO_ML_APPS}.mean_error") is not None:
            out.append(_counter_row(run))
        if run.get(f"{PROJECT}.mean_error") is not None:
            out.append(_project_row(inp, run))
    suites = sorted({k.origin.suite for k in APP_KERNELS})
    # the corpus the named runs measured (a later corpus version would not describe them)
    measured = sorted({str(((run.get(f"{APPS}.mean_error") or {}).get("identity") or {}).get("corpus", CORPUS_VERSION))
                       for run in runs if run.get(f"{APPS}.mean_error") is not None})
    out.append(f"| what differs | | ours: {len(APP_KERNELS)} kernels ported from {', '.join(suites)} (corpus "
               f"{', '.join(f'`{c}`' for c in measured)}); Dao: {DAO_KERNELS} kernels of {DAO_APPLICATIONS} applications | the same points, "
               f"overhead definition and leave-one-kernel-out evaluation | ours: {OUR_ML}, and on CUDA devices "
               f"{dao_ml.MODEL} ({dao_ml.DIFFERS}); Dao: {DAO_ML} | | | | |")
    return out


# ---- Alavani's protocol: the 108-launch sweep (thesis ch. 4, Table 4.9) ------------------------------------
def _variants(inp: Inputs, runs: list[Run]) -> list[str]:
    """The ``variants=`` the marker names, else every variant that each named run recorded (a run made before a
    variant existed has none of its figures)."""
    recorded = [v for v in VARIANTS if all(r.get(f"{PTX_STUDY}.{v}.mape") is not None for r in runs)] or list(VARIANTS)
    variants = inp.option("variants", ",".join(recorded)).split(",")
    bad = [v for v in variants if v not in VARIANTS]
    if bad:
        raise EvidenceError(f"{inp.block.where}: unknown variant {', '.join(bad)}; known: {', '.join(VARIANTS)}")
    return variants


def _problems(run: Run, variant: str) -> list[str]:
    return list(run.info(f"{PTX_STUDY}.{variant}.mape").get("problems") or [])


def _check_ptx(inp: Inputs, runs: list[Run], variants: list[str]) -> None:
    """Every run a whole study of one device and one sweep: each variant's overall, design, held-out and
    per-dwarf MAPE; a held-out dwarf's only where no kernel of the run was left out."""
    for run in runs:
        if not any(n.startswith(f"{PTX_STUDY}.") for n in run.metrics):
            raise EvidenceError(f"{inp.block.where}: {run.path} records no figure of the PTX study ({PTX_STUDY}.*); "
                                f"{PTX_FIX}")
        parts = ["mape", "design.mape", "held_out.mape"] + [f"dwarf.{slug(d)}.mape" for d in THESIS_MAPE]
        _require(inp, run, [f"{PTX_STUDY}.{v}.{p}" for v in variants for p in parts], "the PTX study", PTX_FIX)
        if not _problems(run, variants[0]):
            _require(inp, run, [f"{PTX_STUDY}.{v}.held_out.dwarf.{slug(d)}.mape" for v in variants for d in THESIS_MAPE],
                     "the PTX study (no kernel of the run was left out)", PTX_FIX)
    for what, key in (("devices", lambda r: str(r.device.get("name", "?"))),
                      ("sweeps", lambda r: str(r.get(f"{PTX_STUDY}.{variants[0]}.mape")["identity"].get("sweep", "?")))):
        seen = sorted({key(r) for r in runs})
        if len(seen) > 1:
            raise EvidenceError(f"{inp.block.where}: the runs named are of different {what} ({', '.join(seen)}); "
                                "one table is one card's runs of one sweep: make a table per device and sweep")


def _scope(runs: list[Run], name: str) -> str:
    """'k kernels, n launches' of a figure, per run where the runs differ."""
    cells = []
    for r in runs:
        m = r.get(name)
        n = len(str(m["identity"].get("kernels", "")).split(",")) if m else 0
        cells.append("–" if m is None else f"{n} kernel{'s' * (n != 1)}, {m['info'].get('launches', '?')} launches")
    return cells[0] if len(set(cells)) == 1 else " / ".join(cells)


def _row(label: str, runs: list[Run], variants: list[str], part: str, thesis: Sequence[float] | None) -> str:
    ref = [f"{t:.2f} %" for t in thesis] + [f"{statistics.median(thesis):.2f} %"] if thesis else [""] * (len(THESIS_GPUS) + 1)
    ours = [" / ".join(pct(r.value(f"{PTX_STUDY}.{v}.{part}")) for r in runs) for v in variants]
    return f"| {label} | {_scope(runs, f'{PTX_STUDY}.{variants[0]}.{part}')} | " + " | ".join(ref + ours) + " |"


def _at_or_below(runs: list[Run], variants: list[str], held: str) -> str:
    cells = []
    for v in variants:
        counts = []
        for r in runs:
            vals = [(r.value(f"{PTX_STUDY}.{v}.{held}dwarf.{slug(d)}.mape"), statistics.median(t) / 100)
                    for d, t in THESIS_MAPE.items()]
            counts.append(f"{sum(x is not None and x <= med for x, med in vals)} of {len(THESIS_MAPE)}")
        cells.append(" / ".join(counts))
    return " | ".join(cells)


def ptx_study(inp: Inputs) -> list[str]:
    """Per dwarf the MAPE of each variant (option ``variants``, default all) over the sweep's launches beside
    Table 4.9's four GPUs and their median; the same for the held-out kernels alone, then the held-out,
    design and all-launch MAPE (the last beside Table 4.8's overall figure). Several runs of one device and
    sweep read ``first / second / …``."""
    runs = inp.runs("runs")
    variants = _variants(inp, runs)
    _check_ptx(inp, runs, variants)
    first = runs[0].get(f"{PTX_STUDY}.{variants[0]}.mape") or {}
    out = [f"Table 4.9: Alavani's static PTX model, {TABLE_4_9} (Tesla K20, Quadro K4200, Tesla M60, GTX 1050; about "
           f"four nvprof samples a configuration); its overall MAPE per GPU is Table 4.8's. Ours: "
           f"{str(runs[0].device.get('name', '?')).replace('NVIDIA ', '')}, the study's sweep "
           f"`{first['identity'].get('sweep', '?')}` ({_scope(runs, f'{PTX_STUDY}.{variants[0]}.mape')}; one median of "
           "warm repeated launches each), every variant predicting every launch; held out: the kernels the Hopper "
           "variant was not designed on.", "",
           "| dwarf or set | kernels, launches | " + " | ".join(f"Table 4.9 {g}" for g in THESIS_GPUS) + " | median | "
           + " | ".join(f"ours, {v} variant" for v in variants) + " |", "|" + " --- |" * (3 + len(THESIS_GPUS) + len(variants))]
    out += [_row(d, runs, variants, f"dwarf.{slug(d)}.mape", t) for d, t in THESIS_MAPE.items()]
    out += [_row(f"{d}, held-out kernels only", runs, variants, f"held_out.dwarf.{slug(d)}.mape", None) for d in THESIS_MAPE]
    out.append(_row("held-out kernels, all dwarfs", runs, variants, "held_out.mape", None))
    out.append(_row("design kernels, all dwarfs", runs, variants, "design.mape", None))
    out.append(_row("all launches (Table 4.8: overall MAPE)", runs, variants, "mape", THESIS_OVERALL_MAPE))
    blank = " | " * (len(THESIS_GPUS) + 2)
    out.append(f"| dwarfs at or below Table 4.9's median |{blank}{_at_or_below(runs, variants, '')} |")
    out.append(f"| held-out dwarfs at or below Table 4.9's median |{blank}{_at_or_below(runs, variants, 'held_out.')} |")
    left = [f"`{r.stem}`: {'; '.join(_problems(r, variants[0]))}" for r in runs if _problems(r, variants[0])]
    if left:
        out += ["", "Left out of the figures: " + " ".join(left)]
    return out


def dao_ml_offline(inp: Inputs) -> list[str]:
    """Dao's counter model refitted from the datasets its runs keep (``scripts/dao_ml_offline.py``): per run, the
    error it recorded (and refitted: they must agree), the linear model's on the same kernels, the same model
    trained on fewer kernels, and with its regressor's settings chosen inside each training fold."""
    doc = inp.run("model").doc
    cited = {r.path for r in inp.runs("runs")}
    named = {s["run"] for s in doc["studies"]}
    if cited != named:
        raise EvidenceError(f"{inp.block.where}: the marker's runs {sorted(cited)} are not the runs the refit read "
                            f"{sorted(named)}; name those runs, or rerun python scripts/dao_ml_offline.py")
    sizes = sorted({p["kernels"] for s in doc["studies"] for p in s["curve"]})
    out = ["| run | kernels (runs) | linear model | counter model, recorded (refitted) | "
           + " | ".join(f"trained on {k} kernels" for k in sizes) + " | all other kernels, settings chosen inside "
           "each training fold |", "|" + " --- |" * (5 + len(sizes))]
    for s in doc["studies"]:
        if abs(s["refit"] - s["recorded"]) > 1e-9:
            raise EvidenceError(f"{inp.block.where}: {s['run']} recorded {s['recorded']:.6f} but refits to "
                                f"{s['refit']:.6f}: its dataset or the model's code moved; rerun the script")
        curve = {p["kernels"]: p for p in s["curve"]}
        cells = [f"{100 * curve[k]['mean']:.1f} % ({len(curve[k]['means'])} draws)" if k in curve else "–"
                 for k in sizes]
        picks = s["nested"]["picks"][0]
        chosen = ", ".join(f"{k.split('__')[1]} {v}" for k, v in sorted(picks["params"].items()))
        out.append(f"| `{s['run']}` | {s['kernels']} ({s['instances']}) | {100 * s['linear']:.1f} % | "
                   f"{100 * s['recorded']:.1f} % ({100 * s['refit']:.1f} %) | " + " | ".join(cells)
                   + f" | {100 * s['nested']['mean']:.1f} % (most folds: {chosen}, in {picks['folds']} of "
                   f"{s['kernels']}) |")
    dao = doc["dao"]
    out.append(f"| Dao thesis §2.6 (GTX 580 / GTX 280) | {dao['kernels']} ({dao['instances']}) | 5.72 / 7.19 % | "
               "4.76 / 6.42 % |" + " |" * len(sizes) + " |")
    return out


TABLES = {"models-apps-dao": apps_vs_dao, "models-ptx-study": ptx_study, "models-dao-ml-offline": dao_ml_offline}
