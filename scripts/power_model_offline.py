"""The static power model (Alavani ch. 5) on the saved GPU corpora, with no GPU: both hold-out protocols,
every family, beside Tables 5.8–5.9, plus the corpus' own repeatability (configurations measured twice);
and the same for a variant of ours, not the thesis' model: the static features plus the configuration's
measured launch time (``power_model.timed_features``; ``devices.<key>.variants.timed`` in the json).

    python scripts/power_model_offline.py        # writes results/offline/power-model.{json,txt}.gz
    python scripts/power_model_offline.py --learning-curve   # writes results/offline/power-learning-curve.json.xz

``--learning-curve``: the thesis' protocol (shuffled rows, 5 folds, nested) for XGBoost on random subsets of each
saved corpus — :data:`CURVE_SHARES` of its rows, :data:`CURVE_DRAWS` draws each — so the docs can show how the
error moves with the number of rows, the one way this corpus differs most from the thesis' 990–1,810 tuples.

The corpora are real NVML measurements (results/<key>/power-corpus-cuda.json.gz, collected by
``python -m pytest_gpuperf.studies.static_power.collect``); this script only fits and scores, deterministically (seeded
folds and estimators), so its figures are what the power suite's ``model.power.*`` metrics read on a GPU
with the same corpus. Both files are stored as the repository keeps its evidence: gzip-compressed, the
JSON compact (``util.jsonio.write_gz``: equal content gives equal bytes).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_gpuperf.studies.static_power import power_model as pm  # noqa: E402
from pytest_gpuperf.studies.static_power.model_corpus import repeatability  # noqa: E402
from pytest_gpuperf.util import jsonio  # noqa: E402

KEYS = ("nvidia-h100-80gb-hbm3", "nvidia-h200")
#: what the timed variant is, stored beside its figures
TIMED_WHAT = ("ours, not the thesis' model: the static features plus the configuration's measured launch time "
              "(per-class instruction rates and log time per launch, power_model.timed_features)")


def fit(entries: list, names: tuple[str, ...], label: str, lines: list[str]) -> dict:
    """Both protocols' nested CV over ``names``: protocol → family → scores, top five, importances; a
    line per family appended to ``lines``."""
    protocols: dict = {}
    for protocol in pm.PROTOCOLS:
        res = pm.nested_cv(entries, names=names, protocol=protocol)
        protocols[protocol] = {n: {"scores": r.scores, "top5": pm.top(r.importances),
                                   "importances": r.importances} for n, r in res.items()}
        for n, r in res.items():
            s = r.scores
            lines.append(f"  {label}{protocol:7s} {n:13s} R2 {s['r2']:6.3f}  RMSE {s['rmse']:6.2f} W  MAE {s['mae']:6.2f} W"
                         f"  MAPE {s['mape']:5.2f} %  top5 {', '.join(pm.top(r.importances)) or '-'}")
    return protocols


#: the shares of a corpus' rows the learning curve fits on, and how many random subsets of each it draws
CURVE_SHARES = (0.4, 0.6, 0.8, 1.0)
CURVE_DRAWS = 5


def learning_curve() -> dict:
    """Per card, per share of its corpus' rows: the rows-protocol MAPE of XGBoost over :data:`CURVE_DRAWS`
    subsets (seeded: subset ``d`` is the first rows of permutation ``d``, its folds shuffled with seed ``d``)."""
    import numpy as np

    from pytest_gpuperf.studies.static_power.model_corpus import PlanDevice, jobs

    out: dict = {"protocol": "rows: the thesis' shuffled 5-fold, inner 3-fold grid search (power_model.nested_cv)",
                 "family": "xgboost", "shares": list(CURVE_SHARES), "draws": CURVE_DRAWS,
                 "plan": len(jobs(PlanDevice(), "cuda")), "devices": {}}
    for key in KEYS:
        path = pm.corpus_path(ROOT / "results", key, "cuda")
        _, entries = pm.load_corpus(path)
        dev: dict = {"corpus": str(path.relative_to(ROOT)), "entries": len(entries), "points": []}
        for share in CURVE_SHARES:
            n = int(round(share * len(entries)))
            mapes = []
            for d in range(CURVE_DRAWS):
                keep = sorted(np.random.default_rng(d).permutation(len(entries))[:n].tolist())
                res = pm.nested_cv([entries[i] for i in keep], protocol="rows", only=("xgboost",), seed=d)
                mapes.append(res["xgboost"].scores["mape"])
            dev["points"].append({"share": share, "rows": n, "mape": mapes,
                                  "mean": float(np.mean(mapes)), "sd": float(np.std(mapes, ddof=1))})
            print(f"{key}: {n} rows, rows-protocol XGBoost MAPE {np.mean(mapes):.2f} % (sd {np.std(mapes, ddof=1):.2f})",
                  flush=True)
        out["devices"][key] = dev
    return out


def main() -> int:
    if sys.argv[1:] == ["--learning-curve"]:
        doc = learning_curve()
        jsonio.write_xz(ROOT / "results" / "offline" / "power-learning-curve.json",
                        json.dumps(doc, separators=(",", ":"), allow_nan=False).encode("utf-8"))
        return 0
    if sys.argv[1:]:
        raise SystemExit(f"unknown arguments {sys.argv[1:]}: none, or --learning-curve")
    doc: dict = {"thesis_table_5_8": pm.THESIS_TABLE_5_8, "thesis_table_5_9": pm.THESIS_TABLE_5_9,
                 "thesis_top5": list(pm.THESIS_TOP5), "devices": {}}
    lines = ["Static power model (Alavani ch. 5) on the saved corpora: nested CV, 5 outer folds, 3 inner",
             "protocol kernels = no kernel in both train and test (the goal: MAPE <= 4 %);",
             "protocol rows = the thesis' shuffled 5-fold over kernel x configuration rows;",
             "timed = " + TIMED_WHAT, ""]
    for key in KEYS:
        path = pm.corpus_path(ROOT / "results", key, "cuda")
        if not path.exists():
            lines.append(f"{key}: no corpus")
            continue
        _, entries = pm.load_corpus(path)
        rep = repeatability(entries)
        dev = {"corpus": str(path.relative_to(ROOT)), "entries": len(entries),
               "kernels": len({e.kernel for e in entries}), "repeatability": rep, "protocols": {}}
        lines.append(f"{key}: {dev['entries']} configurations of {dev['kernels']} kernels; watts of "
                     f"{rep.get('n', 0)} configurations measured twice differ by median "
                     f"{100 * rep.get('median_rel', float('nan')):.1f} %, mean {100 * rep.get('mean_rel', float('nan')):.1f} %, "
                     f"max {100 * rep.get('max_rel', float('nan')):.1f} %")
        dev["protocols"] = fit(entries, pm.SELECTED, "", lines)
        timed = [replace(e, features=pm.timed_features(e)) for e in entries]
        dev["variants"] = {"timed": {"what": TIMED_WHAT, "features": list(pm.TIMED),
                                     "protocols": fit(timed, pm.TIMED, "timed ", lines)}}
        doc["devices"][key] = dev
        lines.append("")
    lines.append("thesis Table 5.9 (XGBoost, shuffled 5-fold): " + "; ".join(
        f"{g} R2 {v[0]} MAPE {v[3]} %" for g, v in pm.THESIS_TABLE_5_9.items()))
    lines.append("thesis top five features: " + ", ".join(pm.THESIS_TOP5))
    out = ROOT / "results" / "offline"
    jsonio.write_gz(out / "power-model.json", json.dumps(doc, separators=(",", ":"), allow_nan=False).encode("utf-8"))
    jsonio.write_gz(out / "power-model.txt", ("\n".join(lines) + "\n").encode("utf-8"))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
