"""Tables of docs/power.md: the static power model (Alavani ch. 5) under both hold-out protocols beside the
thesis' Tables 5.8–5.9, then our timed variant on held-out kernels (from the offline fit of the saved
corpora, role ``model``), and the reference
predictors without features computed from the corpora themselves (role ``corpora``, one per card), with the
same folds as the model: what a model must beat; then Alavani's energy estimate per launch (roles ``corpora``,
``studies`` and ``heldout``: the model's saved held-out predictions of each corpus).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from pytest_gpuperf.schemas.results_doc import ResultsDocument
from pytest_gpuperf.studies.ptx_model import ptx_sweep
from pytest_gpuperf.studies.static_power import energy_estimate as ee
from pytest_gpuperf.studies.static_power import power_model as pm
from pytest_gpuperf.util import jsonio
from . import power_heldout
from .registry import Inputs
from .runfile import EvidenceError, Run

FAMILIES = ("xgboost", "random_forest", "extra_trees", "svr")
SHORT = {"nvidia-h100-80gb-hbm3": "H100", "nvidia-h200": "H200"}


def _scores(fams: Mapping[str, Any]) -> list[str]:
    s = [fams[f]["scores"] for f in FAMILIES]
    return [" / ".join(f"{x['r2']:.3f}" for x in s), " / ".join(f"{x['rmse']:.1f}" for x in s),
            " / ".join(f"{x['mae']:.1f}" for x in s), " / ".join(f"{x['mape']:.2f}" for x in s) + " %"]


def model(inp: Inputs) -> list[str]:
    """The thesis' Tables 5.8–5.9, then each card's four families under the rows and kernels protocols, then
    the timed variant (static features + measured launch time, ours) on held-out kernels."""
    run = inp.run("model")
    doc = run.doc
    lacking = [k for k, dev in doc["devices"].items()
               if "kernels" not in dev.get("variants", {}).get("timed", {}).get("protocols", {})]
    if lacking:
        raise EvidenceError(f"{inp.block.where}: {run.path} has no timed variant (variants.timed.protocols.kernels) for "
                            f"{', '.join(lacking)}; rerun python scripts/power_model_offline.py")
    out = ["| | R² | RMSE (W) | MAE (W) | MAPE |", "| --- | --- | --- | --- | --- |"]
    t58 = doc["thesis_table_5_8"]
    for fam, label in (("xgboost", "XGBoost"), ("random_forest", "Random forest"), ("extra_trees", "Extra trees"), ("svr", "SVR")):
        gpus = list(t58)
        vals = [t58[g][fam] for g in gpus]
        out.append(f"| Thesis, Table 5.8 (shuffled rows, 5 folds), {label} — {' / '.join(g.split()[-1] for g in gpus)} | "
                   + " | ".join(" / ".join(f"{v[i]:g}" for v in vals) for i in range(3)) + " | — |")
    for gpu, v in doc["thesis_table_5_9"].items():
        out.append(f"| Thesis, Table 5.9 (XGBoost, shuffled rows, mean of 5 runs) — {gpu} | {v[0]:g} | {v[1]:g} | {v[2]:g} | {v[3]:g} % |")
    for protocol, label in (("rows", "thesis' protocol (rows)"), ("kernels", "held-out kernels (goal: MAPE ≤ 4 %)")):
        for key, dev in doc["devices"].items():
            out.append(f"| **{SHORT.get(key, key)}, {label}** — XGBoost / RF / ET / SVR ({dev['entries']} configurations "
                       f"of {dev['kernels']} kernels) | " + " | ".join(_scores(dev["protocols"][protocol])) + " |")
    for key, dev in doc["devices"].items():
        out.append(f"| **{SHORT.get(key, key)}, held-out kernels, static features + measured launch time (ours, not the "
                   f"thesis' model)** — XGBoost / RF / ET / SVR | "
                   + " | ".join(_scores(dev["variants"]["timed"]["protocols"]["kernels"])) + " |")
    return out


def _entries(inp: Inputs, run: Run) -> list[pm.Entry]:
    try:
        return pm.load_corpus(jsonio.saved(inp.root / run.path))[1]
    except ValueError as exc:
        raise EvidenceError(f"{inp.block.where}: {run.path} is not a power corpus: {exc}") from exc


def reference_scores(entries: list[pm.Entry], protocol: str, seed: int = 0) -> dict[str, float]:
    """Scores of the predictor without features, on the model's folds: ``kernels`` — the median watts of
    the training folds; ``rows`` — the median watts of the test kernel's other configurations in training
    (the training median where it has none)."""
    from sklearn.model_selection import KFold  # noqa: PLC0415
    x, y, g = pm.matrix(entries)
    pred = np.full(len(y), np.nan)
    if protocol == "kernels":
        for train, test in pm.outer_folds(g, 5):
            pred[test] = np.median(y[train])
    else:
        for train, test in KFold(n_splits=5, shuffle=True, random_state=seed).split(x):
            for i in test:
                same = [j for j in train if g[j] == g[i]]
                pred[i] = np.median(y[same] if same else y[train])
    return pm.scores(y, pred)


def reference(inp: Inputs) -> list[str]:
    """The no-feature reference predictors per card and protocol."""
    out = ["| | R² | RMSE (W) | MAE (W) | MAPE |", "| --- | --- | --- | --- | --- |"]
    runs = inp.runs("corpora")
    for protocol, what in (("rows", "rows, no features: the median watts of the kernel's other configurations in training"),
                           ("kernels", "held-out kernels, no features: the median watts of the training folds' rows")):
        s = [reference_scores(_entries(inp, r), protocol) for r in runs]
        names = " / ".join(SHORT.get(str(r.device.get("key", "")), r.stem) for r in runs)
        out.append(f"| {names}, {what} (same folds) | " + " | ".join(" / ".join(f"{x[k]:{f}}" for x in s) for k, f in
                   (("r2", ".2f"), ("rmse", ".1f"), ("mae", ".1f"), ("mape", ".2f"))) + " % |")
    return out


def energy_estimates(inp: Inputs) -> list[tuple[str, ee.Estimate]]:
    """(card, estimate) for each corpus and the launch study named in the same place of ``studies=``, with the
    power model's held-out predictions of the corpus saved in ``heldout=`` (:mod:`.power_heldout`: the fit
    runs once, when that file is made, and a test refits it; a corpus changed since is refused)."""
    corpora, studies, held = inp.runs("corpora"), inp.runs("studies"), inp.run("heldout")
    if len(corpora) != len(studies):
        raise EvidenceError(f"{inp.block.where}: {len(corpora)} corpora but {len(studies)} studies; name one PTX "
                            "launch study per corpus, in the same order")
    out = []
    for c, s in zip(corpora, studies):
        key, skey = str(c.device.get("key", "")), str(s.device.get("key", ""))
        if key != skey:
            raise EvidenceError(f"{inp.block.where}: {c.path} is {key!r} but {s.path} is {skey!r}; pair each card's "
                                "corpus with that card's study")
        entries = _entries(inp, c)
        try:
            watts = power_heldout.predictions(held.doc, c.path, entries)
        except ValueError as exc:
            raise EvidenceError(f"{inp.block.where}: {held.path} {exc}") from exc
        variant = inp.option("variant", ee.VARIANT)
        replay = inp.maybe("replay")
        times = (_replayed(inp, replay[0], s, variant) if replay
                 else ee.study_launches(ResultsDocument.from_json(s.doc, s.path), variant))
        est = ee.join(entries, watts, times, variant=variant)
        if not est.launches:
            raise EvidenceError(f"{inp.block.where}: {c.path} and {s.path} share no launch (kernel, grid, block, trips)")
        out.append((SHORT.get(key, key), est))
    return out


def _replayed(inp: Inputs, replay: Run, study: Run, variant: str) -> dict[Any, dict[str, Any]]:
    """The launches of ``study`` as the offline replay (``scripts/ptx_offline.py --study``) predicted them with
    ``variant``, keyed as :func:`ee.study_launches` keys a study's own: the traced variant no suite records."""
    runs = [r for r in replay.doc.get("runs", []) if Path(str(r["results"])).name == Path(study.path).name
            and Path(str(r["results"])).parent.name == Path(study.path).parent.name]
    if len(runs) != 1 or variant not in runs[0]["launches"][0]:
        raise EvidenceError(f"{inp.block.where}: {replay.path} holds no replay of {study.path} with the {variant} "
                            "variant (scripts/ptx_offline.py --study, with --trace for traced)")
    out: dict[Any, dict[str, Any]] = {}
    for r in runs[0]["launches"]:
        k = ptx_sweep.by_name(r["kernel"])
        shape = k.shape(next(c for c in k.configs if c.label == r["config"]))
        key = ee.launch_key(r["kernel"], shape.grid, shape.block, shape.trips)
        out[key] = {"config": r["config"], "grid": shape.grid, "block": shape.block,
                    "predicted_s": r[variant]["predicted_s"], "measured_s": r["measured_s"]}
    return out


def energy(inp: Inputs) -> list[str]:
    """Alavani's energy estimate (ch. 6, Table 6.1) on every launch a card's corpus and PTX study share:
    measured / predicted time, power and energy, then the MAPE of each per card (``rows=mape``: those alone).
    ``variant=``: the PTX model's variant whose time is t_pred (the thesis' by default); with ``replay=``, taken
    from the offline replay of the studies (:func:`_replayed`)."""
    out = ["| card | kernel | launch (grid × block; corpus / study) | time, µs: measured / predicted | power, W: "
           "measured / predicted | energy, µJ: measured (P × t) / predicted (P_pred × t_pred) | NVML energy per "
           "launch of the corpus' loop, µJ |", "| --- | --- | --- | --- | --- | --- | --- |"]
    ests = energy_estimates(inp)
    every = inp.option("rows", "all") != "mape"  # rows=mape: the MAPE rows alone (a second time model's table)
    for card, est in ests if every else ():
        for x in est.launches:
            out.append(f"| {card} | `{x.kernel}` | {x.grid} × {x.block}; `{x.corpus_config}` / `{x.study_config}` | "
                       f"{x.t_meas_s * 1e6:.1f} / {x.t_pred_s * 1e6:.1f} | {x.p_meas_w:.0f} / {x.p_pred_w:.0f} | "
                       f"{x.e_meas_j * 1e6:.0f} / {x.e_pred_j * 1e6:.0f} | {x.e_nvml_j * 1e6:.0f} |")
    for card, est in ests:
        out.append(f"| **{card}, MAPE** | {len({x.kernel for x in est.launches})} kernels | {len(est.launches)} launches | "
                   f"{est.mape('time'):.1f} % | {est.mape('power'):.1f} % | {est.mape('energy'):.1f} % | "
                   f"{est.mape('energy_nvml'):.1f} % (predicted against it) |")
    return out


def learning_curve(inp: Inputs) -> list[str]:
    """The thesis' protocol on random subsets of each saved corpus (``scripts/power_model_offline.py
    --learning-curve``): XGBoost's MAPE by the number of rows, a power law through those points, and where
    that law would put the plan's rows (as the file records the plan) — a projection, marked as one, beside the
    thesis' own figures."""
    doc = inp.run("model").doc
    if "plan" not in doc:
        raise EvidenceError(f"{inp.block.where}: {inp.run('model').path} names no plan size; rerun "
                            "python scripts/power_model_offline.py --learning-curve")
    plan = int(doc["plan"])
    out = ["| card | rows (share of the corpus) | XGBoost MAPE, thesis' protocol (mean ± sd of the draws) |",
           "| --- | --- | --- |"]
    for key, dev in doc["devices"].items():
        pts = dev["points"]
        for p in pts:
            out.append(f"| {SHORT.get(key, key)} | {p['rows']} ({100 * p['share']:.0f} %) | "
                       f"{p['mean']:.2f} ± {p['sd']:.2f} % ({len(p['mape'])} draws) |")
        slope, icpt = np.polyfit(np.log([p["rows"] for p in pts]), np.log([p["mean"] for p in pts]), 1)
        out.append(f"| {SHORT.get(key, key)} | {plan} (the grown plan; a projection: MAPE ∝ rows^{slope:.2f} through the "
                   f"points above, not a measurement) | {np.exp(icpt) * plan ** slope:.1f} % |")
    mapes = [v[3] for v in pm.THESIS_TABLE_5_9.values()]
    out.append(f"| Thesis, Table 5.9 (990 and 1,810 tuples) | | {min(mapes):g}–{max(mapes):g} % |")
    return out


TABLES = {"power-model": model, "power-reference": reference, "power-energy": energy,
          "power-learning-curve": learning_curve}
