"""The static power model's scores on a device's saved corpus as the power suite's figures
(``model.power.<family>[.<protocol>].{r2,rmse_w,mae_w,mape}``), with what the thesis reported beside them."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from . import power_model as pmodel
from ...util import memo

#: the libraries whose versions the scores depend on (a new version of one is a new computation)
LIBRARIES = ("numpy", "scipy", "scikit-learn", "xgboost", "joblib")

#: (score, metric suffix, unit, better) of each figure
SCORES = (("r2", "r2", "ratio", "higher"), ("rmse", "rmse_w", "W", "lower"), ("mae", "mae_w", "W", "lower"),
          ("mape", "mape", "%", "lower"))


def corpus_path(info: Any, root: Path) -> Path:
    """Where the device ``info`` describes keeps its saved corpus in the user's repository (``root``:
    pytest's rootdir), as ``python -m pytest_gpuperf.studies.static_power.collect`` writes it (plain or compressed)."""
    return pmodel.corpus_path(root / "results", info.key, info.backend)


def records(path: Path, root: Path, cache: Path | None = None) -> list[dict[str, Any]]:
    """Every protocol's nested cross-validation (``studies.static_power.power_model.PROTOCOLS``: held-out kernels, unnamed;
    the thesis' shuffled rows, ``.<protocol>``) of the corpus at ``path`` as ``gpuperf_record`` arguments; the
    corpus' size is their identity.

    The scores are a function of the corpus, this code and its libraries alone (seeded estimators), so they
    are computed once per such combination and kept (:func:`pytest_gpuperf.util.memo.remember`; ``cache``
    moves the store); each record's ``info['computed']`` says whether this run computed them."""
    fields = {"corpus": memo.file_digest(path), "libraries": memo.versions(LIBRARIES)}
    value, how = memo.remember("power-model", fields, lambda: _compute(path, root), root=cache)
    for r in value:
        r["info"] = {**r["info"], "computed": how}
    return value


def _compute(path: Path, root: Path) -> list[dict[str, Any]]:
    _, entries = pmodel.load_corpus(path)
    identity = {"corpus_entries": len(entries), "kernels": len({e.kernel for e in entries})}
    corpus = str(path.relative_to(root))
    out: list[dict[str, Any]] = []
    for protocol in pmodel.PROTOCOLS:
        out += _protocol_records(pmodel.nested_cv(entries, protocol=protocol), protocol, identity, corpus)
    return out


def _protocol_records(results: Mapping[str, Any], protocol: str, identity: dict[str, Any],
                      corpus: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name, r in results.items():
        info = {"estimator": r.estimator, "importances": r.importances, "top5": pmodel.top(r.importances),
                "thesis_top5": list(pmodel.THESIS_TOP5), "thesis_table_5_8": {g: v.get(name) for g, v in
                                                                             pmodel.THESIS_TABLE_5_8.items()},
                "thesis_table_5_9_xgboost": dict(pmodel.THESIS_TABLE_5_9), "folds": r.folds,
                "corpus": corpus, "goal": "MAPE ≤ 4 % on held-out kernels",
                "protocol": protocol}
        where = name if protocol == "kernels" else f"{name}.{protocol}"
        for score, suffix, unit, better in SCORES:
            out.append({"name": f"model.power.{where}.{suffix}", "value": r.scores[score], "unit": unit,
                        "better": better, "identity": identity, "info": info})
    return out
