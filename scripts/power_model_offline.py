"""The static power model (Alavani ch. 5) on the saved GPU corpora, with no GPU: both hold-out protocols,
every family, beside Tables 5.8–5.9, plus the corpus' own repeatability (configurations measured twice);
and the same for a variant of ours, not the thesis' model: the static features plus the configuration's
measured launch time (``power_model.timed_features``; ``devices.<key>.variants.timed`` in the json).

    python scripts/power_model_offline.py        # writes results/offline/power-model.{json,txt}.gz

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


def main() -> int:
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
