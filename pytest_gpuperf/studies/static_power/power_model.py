"""Alavani's static power model (thesis ch. 5): program features from PTX, a measured corpus, and the
thesis' model families compared under nested cross-validation.

**Features** (:func:`features`, Algorithms 9–10 and Table 5.4). The CFG, loop multipliers, instruction
classes, latencies, occupancy and penalties are the project's static PTX model (``studies.ptx_model.ptx``,
``studies.ptx_model.cfg``, ``studies.ptx_model.ptx_latency``, ``studies.ptx_model.scheduler``) — the same analysis chapter 4's time model
uses, as the thesis reuses its Algorithms 6–8. Per thread, each instruction counts once per execution
(its block's loop multiplier: Alg. 10 line 12) in one of four types — computation, global memory,
shared memory, miscellaneous (moves, branches, barriers, parameter loads) — with its latency from the
device's table (Alg. 9 lines 6–7); global loads, stores and branches are also counted on their own
(line 15). Alg. 10 repeats the per-block counts once per wave, so ``*_sm`` = ``*_kernel`` × waves (the
thesis' illustration: ``comp_inst_sm`` is ``comp_inst_kernel`` added thrice over three waves). Then
Eq. 5.1 (``inst_issue_cycles``), Eq. 5.2 (``cache_penalty``, ``scheduler.cache_miss_cycles``), the
occupancy, registers per thread and shared memory per block from the compiled kernel. The thesis'
final fifteen features are :data:`SELECTED` (Table 5.4's highlighted rows less ``avg_misc_lat``, §5.5.3).

**Corpus** (:class:`Entry`, :func:`save_corpus`, :func:`load_corpus`): one row per (kernel, launch
configuration) with its features and the *measured* average board power at steady state
(``timing.energy.steady_state_energy``). Only a GPU run makes one (``studies.static_power.collect``); the tests here
run on saved corpora.

**Evaluation** (:func:`nested_cv`): outer folds are grouped by kernel (scikit-learn ``GroupKFold``), so
every held-out kernel is unseen in training in all its configurations — the thesis' shuffled k-fold
lets a kernel's other launch configurations leak into training, which flatters the score; the inner
``GridSearchCV`` (also grouped) picks each family's hyper-parameters on the training kernels only.
Families: XGBoost (or scikit-learn's ``HistGradientBoostingRegressor`` when xgboost is missing, said in
the result), random forest, extra trees, SVR (on standardised features, as SVR needs). Scores on the
held-out predictions: R², RMSE, MAE, MAPE (Table 5.8–5.9's columns), and feature importances.

**Timed variant** (ours, not the thesis' model; :func:`timed_features`, :data:`TIMED`): the fifteen static
features plus the configuration's measured launch time, as per-class instruction rates and its logarithm.
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..ptx_model.cfg import Cfg
from ..ptx_model.ptx_latency import LatencyTable
from ..ptx_model.scheduler import cache_miss_cycles, global_penalty_s, memory_counts, occupancy, shared_penalty_s, Calibration
from ...devices.architectures import ARCHITECTURES
from ...devices.occupancy import sm_limits
from ...paths import safe_name
from ...util import jsonio

#: the corpus file format
CORPUS_SCHEMA = "pytest-gpuperf-power-corpus/1"
#: Table 5.4's highlighted (finally selected) features, less ``avg_misc_lat`` (removed in §5.5.3)
SELECTED: tuple[str, ...] = ("avg_comp_lat", "avg_glob_lat", "avg_shar_lat", "branch", "comp_inst_kernel",
                             "glob_inst_kernel", "glob_load_sm", "glob_store_sm", "misc_inst_kernel",
                             "inst_issue_cycles", "cache_penalty", "occupancy", "reg_thread", "shmem_block",
                             "block_size")
#: the instruction classes of Alg. 9 whose per-thread counts are ``<class>_inst_kernel`` features
CLASSES: tuple[str, ...] = ("comp", "glob", "shar", "misc")
#: the timed variant's features (ours, not the thesis' model: :func:`timed_features`)
TIMED: tuple[str, ...] = SELECTED + tuple(f"{c}_rate" for c in CLASSES) + ("inst_rate", "log_launch_s")
#: the thesis' top five (Table 5.10 / §5.8), for the docs and the model metrics' info
THESIS_TOP5 = ("inst_issue_cycles", "avg_comp_lat", "reg_thread", "glob_inst_kernel", "glob_store_sm")
#: Table 5.8 (R², RMSE W, MAE W) and Table 5.9 (XGBoost over 5 runs: R², RMSE, MAE, MAPE %)
THESIS_TABLE_5_8: Mapping[str, Mapping[str, tuple[float, float, float]]] = {
    "Tesla K20": {"random_forest": (0.8899, 7.9265, 4.4177), "extra_trees": (0.8893, 7.9438, 3.9346),
                  "xgboost": (0.9101, 7.1592, 3.4816), "svr": (0.7041, 13.0078, 8.4063)},
    "Tesla M60": {"random_forest": (0.9398, 4.5547, 2.2427), "extra_trees": (0.9557, 3.9610, 1.9362),
                  "xgboost": (0.9544, 3.9172, 1.7588), "svr": (0.6021, 12.0735, 8.7283)},
    "Tesla V100": {"random_forest": (0.9415, 8.8127, 3.7447), "extra_trees": (0.9526, 7.9428, 3.1989),
                   "xgboost": (0.9646, 6.9968, 2.9028), "svr": (0.6435, 22.6876, 13.5012)},
}
THESIS_TABLE_5_9: Mapping[str, tuple[float, float, float, float]] = {
    "Kepler (K20)": (0.901, 7.4919, 3.6740, 4.5784), "Maxwell (M60)": (0.9418, 4.4000, 1.8780, 2.9278),
    "Volta (V100)": (0.9553, 7.7712, 3.0521, 3.9900)}

_GLOBAL = {"ld.global", "st.global", "atom.global", "ld.generic", "st.generic", "atom.generic", "ld.local", "st.local"}
_SHARED = {"ld.shared", "st.shared", "atom.shared"}
_MISC = {"mov", "bra", "bar", "ld.param", "other"}


def issue_width(cc: str) -> tuple[int, int]:
    """Warp schedulers (nWS) and dispatch units (nDU) per SM of ``cc`` (:data:`ARCHITECTURES`' ``issue``);
    4 × 4 (Volta to Hopper) where the table has none."""
    arch = ARCHITECTURES.get(cc)
    return arch.issue if arch is not None and arch.issue is not None else (4, 4)


def kind(klass: str) -> str:
    """Alg. 9's instruction type of a ``ptx.classify`` class: comp, glob, shar or misc."""
    if klass in _GLOBAL:
        return "glob"
    if klass in _SHARED:
        return "shar"
    if klass in _MISC:
        return "misc"
    return "comp"


def features(cfg: Cfg, table: LatencyTable, *, grid: int, block: int, regs: int, shared: int,
             trips: Sequence[float], n_sm: int, cc: str, l2_bytes: int = 0, warp: int = 32,
             calibration: Calibration | None = None) -> dict[str, float]:
    """Table 5.4's features of one launch (Algorithms 9–10, Eq. 5.1–5.4). ``calibration`` (the time model's
    measured throughputs) adds ``glb_penalty`` and ``sh_penalty`` (Eq. 5.3/5.4; not in the final set)."""
    if grid <= 0 or block <= 0:
        raise ValueError(f"grid and block must be positive, got {grid}, {block}")
    threads_total = grid * block
    mult = cfg.multipliers(trips)
    count = {"comp": 0.0, "glob": 0.0, "shar": 0.0, "misc": 0.0}
    lat = dict(count)
    loads = stores = branches = 0.0
    for b, m in zip(cfg.blocks, mult):  # Alg. 9 over every block, × its loop multiplier (Alg. 10 l. 12)
        for ins in b.instructions:
            k = ins.klass
            t = kind(k)
            count[t] += m
            lat[t] += m * table.of(k, threads_total)
            if k in ("ld.global", "ld.generic", "atom.global", "atom.generic"):
                loads += m
            elif k in ("st.global", "st.generic"):
                stores += m
            elif k == "bra":
                branches += m
    occ = occupancy(cc, block, regs, shared)
    per_sm = -(-grid // n_sm) * block  # Alg. 10 line 3
    waves = max(1, -(-per_sm // max(occ.threads_per_sm, 1)))  # lines 5–16
    total_inst = sum(count.values())
    n_ws, n_du = issue_width(cc)
    ngm, gbytes, nshm, sbytes = memory_counts(cfg, trips)
    l_gm = table.of("ld.global", threads_total)
    lim = sm_limits(cc)
    out = {
        "avg_comp_lat": lat["comp"] / count["comp"] if count["comp"] else 0.0,
        "avg_glob_lat": lat["glob"] / count["glob"] if count["glob"] else 0.0,
        "avg_shar_lat": lat["shar"] / count["shar"] if count["shar"] else 0.0,
        "avg_misc_lat": lat["misc"] / count["misc"] if count["misc"] else 0.0,
        "branch": branches,
        "comp_inst_kernel": count["comp"], "glob_inst_kernel": count["glob"],
        "shar_inst_kernel": count["shar"], "misc_inst_kernel": count["misc"],
        "comp_inst_sm": count["comp"] * waves, "glob_inst_sm": count["glob"] * waves,
        "shar_inst_sm": count["shar"] * waves, "misc_inst_sm": count["misc"] * waves,
        "comp_lat_sm": lat["comp"] * waves, "glob_lat_sm": lat["glob"] * waves,
        "shar_lat_sm": lat["shar"] * waves, "misc_lat_sm": lat["misc"] * waves,
        "glob_load_sm": loads * waves, "glob_store_sm": stores * waves,
        "sm_active": float(min(grid, n_sm)), "n_warps": occ.threads_per_sm / warp, "waves": float(waves),
        "total_threads": float(threads_total),
        "inst_issue_cycles": threads_total / (n_ws * warp) * total_inst / n_du,  # Eq. 5.1
        "cache_penalty": cache_miss_cycles(threads_total, ngm, gbytes, waves, l2_bytes, l_gm),  # Eq. 5.2
        "occupancy": occ.threads_per_sm / lim.max_threads,
        "reg_thread": float(regs), "shmem_block": float(shared), "block_size": float(block), "grid_size": float(grid),
    }
    if calibration is not None:
        out["glb_penalty"] = global_penalty_s(threads_total, ngm, gbytes, 32, calibration.global_tp)  # Eq. 5.3
        out["sh_penalty"] = shared_penalty_s(threads_total, nshm, sbytes, 32, n_sm, calibration.shared_tp)  # Eq. 5.4
    return {k: float(v) for k, v in out.items()}


# ---- the corpus -------------------------------------------------------------------------------------
@dataclass
class Entry:
    """One measured (kernel, launch configuration). ``watts``: average board power over the steady-state
    span; ``kernel`` is the group the cross-validation holds out together."""

    kernel: str
    config: str
    features: dict[str, float]
    watts: float
    joules_per_launch: float
    info: dict[str, Any] = field(default_factory=dict)


#: the file name of a device's corpus under ``results/<key>/`` (a repository keeps it compressed: ``….json.gz``)
CORPUS_NAME = "power-corpus-{backend}.json"


def corpus_path(results: Path, key: str, backend: str) -> Path:
    """A device's measured corpus under a results folder: ``<results>/<key>/power-corpus-<backend>.json``, or its
    compressed twin ``….json.gz`` where that is the file there (:func:`pytest_gpuperf.util.jsonio.saved`)."""
    return jsonio.saved(results / safe_name(key) / CORPUS_NAME.format(backend=backend))


def save_corpus(path: Path, device: Mapping[str, Any], entries: Sequence[Entry],
                meta: Mapping[str, Any] | None = None) -> None:
    """Write a measured corpus atomically (a killed collection never leaves a torn file), compressed where
    ``path`` ends in ``.gz`` or ``.xz`` (so a collection resumed from a compressed corpus stays compressed)."""
    from ...util.atomic import atomic_write_json

    doc = {"schema": CORPUS_SCHEMA, "device": dict(device), "meta": dict(meta or {}),
           "entries": [asdict(e) for e in entries]}
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix in jsonio.COMPRESSED:
        jsonio.write_compressed(path, (json.dumps(doc, indent=2, allow_nan=False) + "\n").encode("utf-8"))
    else:
        atomic_write_json(path, doc)


def load_corpus(path: Path) -> tuple[dict[str, Any], list[Entry]]:
    """(device section, entries) of a saved corpus; ValueError for another schema or a malformed entry."""
    device, entries, _ = read_corpus(path)
    return device, entries


def read_corpus(path: Path) -> tuple[dict[str, Any], list[Entry], dict[str, Any]]:
    """(device section, entries, meta) of a saved corpus, from one read of the file (a merge needs the
    collection's meta too: jobs, latency sources, left-out configurations)."""
    try:
        doc = jsonio.read_json(path)
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:  # a torn or foreign .gz or .xz
        raise ValueError(f"{path}: not a readable compressed file ({exc})") from None
    if not isinstance(doc, dict) or doc.get("schema") != CORPUS_SCHEMA:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise ValueError(f"{path}: schema {found!r}, expected {CORPUS_SCHEMA!r}")
    try:
        entries = [Entry(str(e["kernel"]), str(e["config"]), {k: float(v) for k, v in e["features"].items()},
                         float(e["watts"]), float(e["joules_per_launch"]), dict(e.get("info") or {}))
                   for e in doc["entries"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: malformed entry ({exc})") from None
    return dict(doc.get("device") or {}), entries, dict(doc.get("meta") or {})


def timed_features(entry: Entry) -> dict[str, float]:
    """The entry's features plus the timed ones of :data:`TIMED` — a variant of ours, not the thesis'
    model (static PTX features only): the configuration's measured time per launch ``t`` (``info.span_s``
    / ``info.launches``) turns each class's instructions into an issue rate, ``<class>_inst_kernel`` ×
    ``total_threads`` / 32 / ``t`` (warp instructions per second; ``inst_rate`` over all four classes), and
    ``log_launch_s`` = ln ``t``. Power follows how fast work is issued, which PTX alone cannot say; the price
    is one timed launch of the kernel. ValueError naming the entry where the time or a count is missing or
    impossible (not a positive finite number)."""
    where = f"power corpus entry {entry.kernel} {entry.config}"
    span, launches = entry.info.get("span_s"), entry.info.get("launches")
    for name, v in (("span_s", span), ("launches", launches)):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{where}: info.{name} is {v!r}; the timed features need a positive measured "
                             "span and launch count")
    needed = ["total_threads"] + [f"{c}_inst_kernel" for c in CLASSES]
    missing = [n for n in needed if n not in entry.features]
    if missing:
        raise ValueError(f"{where}: lacks features {missing} the timed features are computed from")
    t = span / launches
    warps = entry.features["total_threads"] / 32.0
    out = dict(entry.features)
    for c in CLASSES:
        out[f"{c}_rate"] = entry.features[f"{c}_inst_kernel"] * warps / t
    out["inst_rate"] = sum(entry.features[f"{c}_inst_kernel"] for c in CLASSES) * warps / t
    out["log_launch_s"] = math.log(t)
    return out


# ---- scores -----------------------------------------------------------------------------------------
def scores(y: Sequence[float], pred: Sequence[float]) -> dict[str, float]:
    """R², RMSE, MAE (units of y) and MAPE (%) of predictions — the columns of Tables 5.8–5.9."""
    a, p = np.asarray(y, dtype=float), np.asarray(pred, dtype=float)
    if a.shape != p.shape or a.size == 0:
        raise ValueError("y and pred must be non-empty and of one length")
    err = p - a
    ss_res = float(np.sum(err ** 2))
    ss_tot = float(np.sum((a - a.mean()) ** 2))
    if np.any(a == 0):
        raise ValueError("MAPE is undefined for a zero measured value")
    return {"r2": 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan"), "rmse": math.sqrt(ss_res / a.size),
            "mae": float(np.mean(np.abs(err))), "mape": float(np.mean(np.abs(err / a))) * 100.0}


# ---- the model families and nested cross-validation -----------------------------------------------
def families(seed: int = 0) -> dict[str, tuple[Any, dict[str, list[Any]], str]]:
    """name → (estimator, inner grid, what it is). XGBoost where installed, else scikit-learn's histogram
    gradient boosting (the same family: regularised boosted trees), named so in the result."""
    from sklearn.ensemble import ExtraTreesRegressor, HistGradientBoostingRegressor, RandomForestRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVR

    try:
        from xgboost import XGBRegressor

        gb = (XGBRegressor(n_estimators=300, random_state=seed, n_jobs=1, verbosity=0),
              {"max_depth": [3, 6], "learning_rate": [0.05, 0.2]}, "xgboost.XGBRegressor")
    except ImportError:
        gb = (HistGradientBoostingRegressor(random_state=seed),
              {"max_depth": [3, None], "learning_rate": [0.05, 0.2]},
              "sklearn HistGradientBoostingRegressor (xgboost not installed)")
    return {
        "xgboost": gb,
        "random_forest": (RandomForestRegressor(n_estimators=200, random_state=seed, n_jobs=-1),
                          {"max_depth": [None, 8], "min_samples_leaf": [1, 3]}, "sklearn RandomForestRegressor"),
        "extra_trees": (ExtraTreesRegressor(n_estimators=200, random_state=seed, n_jobs=-1),
                        {"max_depth": [None, 8], "min_samples_leaf": [1, 3]}, "sklearn ExtraTreesRegressor"),
        "svr": (make_pipeline(StandardScaler(), SVR()),
                {"svr__C": [1.0, 10.0, 100.0], "svr__epsilon": [0.1, 1.0]}, "sklearn SVR (RBF), standardised"),
    }


@dataclass
class FamilyResult:
    name: str
    estimator: str
    scores: dict[str, float]
    importances: dict[str, float]  # mean over outer folds (impurity importances; SVR: none)
    folds: list[dict[str, Any]]
    #: each row's prediction by the outer fold that held it out, in the corpus' order (the energy estimate
    #: multiplies these by a predicted time)
    predictions: list[float] = field(default_factory=list)


def matrix(entries: Sequence[Entry], names: Sequence[str] = SELECTED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y = watts, groups = kernel names) of a corpus over the feature ``names``."""
    missing = sorted({n for e in entries for n in names if n not in e.features})
    if missing:
        raise ValueError(f"corpus entries lack features {missing}")
    x = np.array([[e.features[n] for n in names] for e in entries], dtype=float)
    return x, np.array([e.watts for e in entries], dtype=float), np.array([e.kernel for e in entries])


def outer_folds(groups: Sequence[str], k: int = 5) -> list[tuple[np.ndarray, np.ndarray]]:
    """GroupKFold splits (train, test) with ``min(k, kernels)`` folds: no kernel in both. At least two
    kernels are needed (one to train on, one to hold out)."""
    from sklearn.model_selection import GroupKFold

    g = np.asarray(groups)
    n = len(set(g.tolist()))
    if n < 2:
        raise ValueError(f"the corpus holds {n} kernel(s): held-out kernels need at least 2")
    splitter = GroupKFold(n_splits=min(k, n))
    return list(splitter.split(np.zeros(len(g)), groups=g))


#: the two ways of holding data out: ``kernels`` — no kernel in both train and test (the goal: a
#: new kernel predicted from its PTX alone); ``rows`` — the thesis' protocol (Alavani §5.4.3: "after
#: shuffling the dataset randomly, we split the dataset into 5 folds"), where other launch configurations
#: of a test kernel are in the training folds
PROTOCOLS = ("kernels", "rows")


def nested_cv(entries: Sequence[Entry], names: Sequence[str] = SELECTED, k_outer: int = 5, k_inner: int = 3,
              seed: int = 0, only: Sequence[str] | None = None,
              protocol: str = "kernels") -> dict[str, FamilyResult]:
    """Every family's held-out scores: outer folds by ``protocol`` (:data:`PROTOCOLS`), inner
    GridSearchCV split the same way."""
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, GroupKFold, KFold
    from threadpoolctl import threadpool_limits

    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol {protocol!r}: choose one of {PROTOCOLS}")
    x, y, groups = matrix(entries, names)
    by_kernel = protocol == "kernels"

    def splitter(groups_of: np.ndarray, k: int) -> tuple[Any, int]:
        """(cross-validator, folds) over these rows: by kernel, or shuffled rows as the thesis did; no
        cross-validator where fewer than two folds can be made."""
        n = min(k, len(set(groups_of.tolist())) if by_kernel else len(groups_of))
        if n < 2:
            return None, n
        return (GroupKFold(n_splits=n) if by_kernel else KFold(n_splits=n, shuffle=True, random_state=seed)), n

    folds = outer_folds(groups, k_outer) if by_kernel else list(splitter(groups, k_outer)[0].split(x))
    out: dict[str, FamilyResult] = {}
    # this process's fits (the refits) on one OpenMP thread: on hundreds of rows the boosted trees' thread
    # barriers cost more than they share, seconds a fit on a busy host; the scores are the same
    with threadpool_limits(limits=1):
        for name, (est, grid, what) in families(seed).items():
            if only is not None and name not in only:
                continue
            pred = np.full(len(y), np.nan)
            imps: list[np.ndarray] = []
            fold_info: list[dict[str, Any]] = []
            for train, test in folds:
                inner, n_inner = splitter(groups[train], k_inner)
                if n_inner >= 2:
                    # the grid's fits in parallel (every estimator is seeded, so the choice and the scores do not
                    # depend on how many run at once): CPU-only work that a GPU runner would otherwise wait on
                    search = GridSearchCV(clone(est), grid, cv=inner, scoring="neg_mean_absolute_error", n_jobs=-1)
                    search.fit(x[train], y[train], groups=groups[train] if by_kernel else None)
                    model, params = search.best_estimator_, search.best_params_
                else:
                    model, params = clone(est).fit(x[train], y[train]), {}
                pred[test] = model.predict(x[test])
                if hasattr(model, "feature_importances_"):
                    imps.append(np.asarray(model.feature_importances_, dtype=float))
                fold_info.append({"test_kernels": sorted(set(groups[test].tolist())), "params": params})
            imp = np.mean(imps, axis=0) if imps else np.zeros(len(names))
            ranked = {n: float(v) for n, v in sorted(zip(names, imp), key=lambda t: -t[1])} if imps else {}
            out[name] = FamilyResult(name, what, scores(y, pred), ranked, fold_info, [float(v) for v in pred])
    return out


def top(importances: Mapping[str, float], n: int = 5) -> list[str]:
    """The ``n`` most important features, most important first."""
    return [k for k, _ in sorted(importances.items(), key=lambda t: -t[1])[:n]]
