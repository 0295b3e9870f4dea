"""What the kernel-class suite records: paper 004's classifiers evaluated on a dataset (the portable timing
dataset of :mod:`.class_dataset`, or the Nsight Compute counter dataset of :mod:`.ncu`), as the argument
dicts of ``gpuperf_record``.

Why one module: both feature sets meet the same split, the same classifiers and the same figures
(held-out accuracy, the unseen kernels' agreement with the paper), so their names, identity and
``info`` are built once. Tolerances come from the catalog's "kernel classes" rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ...util import aggregate
from . import classify
from ...corpora import kernel_classes as kc
from ...counters import ncu
from .class_dataset import ClassDataset
from ...devices.base import DeviceInfo
from ...options import fill_json, fixed_part

#: what paper 004 reports as good held-out accuracy
TARGET = "≥ 0.90 held-out"
#: the feature-set suffix of the figures with the static code features added to the timing features
WITH_CODE = "_with_code"
WITH_CODE_NOTE = ("static source features identify each class's code, so a split over runs is "
                  "near-perfect by construction; the unseen kernels are the real test")


def scope(classes: Sequence[str], unseen: Mapping[str, Any]) -> dict[str, str]:
    """The identity of a classifier figure: the classes of its split and the unseen kernels it votes on."""
    return {**aggregate.over(classes, "classes"), **aggregate.over(unseen, "unseen")}


def _expected() -> dict[str, list[str]]:
    return {k: list(v) for k, v in kc.UNSEEN_EXPECTED.items()}


def _advice(votes: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, str]]:
    """The optimisation advice of each class an unseen kernel was voted into."""
    return {k: {c: kc.STRATEGY[c] for c in v} for k, v in votes.items()}


def evaluations(ds: ClassDataset) -> dict[str, classify.Evaluation]:
    """The classifiers on the timing features alone (suffix ``""``) and with the code features added."""
    x, unseen = ds.timing_only()
    return {"": classify.evaluate(x, ds.y, unseen), WITH_CODE: classify.evaluate(ds.x, ds.y, ds.unseen)}


def timing_records(ds: ClassDataset, evs: Mapping[str, classify.Evaluation]) -> list[dict[str, Any]]:
    """``model.classify.<clf>.accuracy<suffix>`` and ``….unseen_agreement<suffix>`` of each evaluation; the
    random forest's timing-only accuracy carries the dataset itself, for offline analysis."""
    timing_x, timing_unseen = ds.timing_only()
    names = {"": list(classify.FEATURES), WITH_CODE: list(classify.FEATURES + classify.CODE_FEATURES)}
    identity = scope(ds.y, ds.unseen)
    out = []
    for suffix, ev in evs.items():
        for clf, acc in ev.accuracy.items():
            votes = ev.unseen[clf]
            meta = {**ev.split, "features": names[suffix], "target": TARGET, "confusion": ev.confusion[clf],
                    "runs_per_class": len(ds.y) // len(kc.CLASSES), "locals": list(ds.grid.locals), "reps": ds.reps}
            if suffix == WITH_CODE:
                meta["note"] = WITH_CODE_NOTE
            if clf == "random_forest" and not suffix:
                meta["dataset"] = {"y": list(ds.y), "x": np.round(timing_x, 4).tolist(),
                                   "unseen": {k: np.round(v, 4).tolist() for k, v in timing_unseen.items()}}
            out.append(dict(name=f"model.classify.{clf}.accuracy{suffix}", value=acc, unit="ratio", better="higher",
                            identity=identity, info=meta))
            out.append(dict(name=f"model.classify.{clf}.unseen_agreement{suffix}",
                            value=classify.unseen_agreement(votes, kc.UNSEEN_EXPECTED), unit="ratio",
                            better="higher", identity=identity,
                            info={"votes": votes, "expected": _expected(), "advice": _advice(votes)}))
    return out


@dataclass(frozen=True)
class CounterClassification:
    """The classifiers on the counter dataset: the evaluation, the classes' labels, the unseen kernels'
    rows and how many non-finite counter values were set to 0 (per metric)."""

    evaluation: classify.Evaluation
    y: list[str]
    unseen: dict[str, np.ndarray]
    non_finite: dict[str, int]


def classify_counters(prof: ncu.Profile) -> CounterClassification:
    """Split the one-pass counter dataset into the classes' and the unseen kernels' rows and evaluate."""
    x, non_finite = ncu.feature_matrix(prof.results, prof.metrics)
    xk, y, unseen = classify.split_unseen(x, [r.kernel for r in prof.runs], kc.CLASSES, kc.UNSEEN)
    return CounterClassification(classify.evaluate(xk, y, unseen), y, unseen, non_finite)


def raw_csv_path(json_template: str | None, info: DeviceInfo, fallback: Path) -> Path:
    """Where ncu's raw CSV goes: beside the results JSON when ``--gpuperf-json`` gives its template (so a GPU
    session brings it home), else ``fallback`` (the test's temporary directory); the folder is created."""
    folder = fallback
    if json_template:  # the run's commit and date are the session's: the folder up to them where they are used
        filled = fill_json(json_template, info.key, info.backend, info.index, "{commit}", "{date}")
        folder = Path(filled).parent if "{" not in str(Path(filled).parent) else fixed_part(filled)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"ncu-kernel-classes-{info.backend}{info.index}.csv"


def counter_records(prof: ncu.Profile, cc: CounterClassification, raw: Path,
                    reference: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """``model.classify.counters.<clf>.accuracy`` and ``….unseen_agreement``, with how the counters were
    collected; the random forest's accuracy carries the counter dataset itself. ``reference``: whether
    the counters came from the stored profile (:meth:`.ncu_reference.CounterReference.info`), kept in
    every record's ``info`` — never in the identity: the figures mean the same either way."""
    ev, y, unseen = cc.evaluation, cc.y, cc.unseen
    identity = scope(y, unseen)
    by_name = {m.name: m for m in ncu.METRICS}
    collection = {"ncu": prof.version, "command": " ".join(prof.command),
                  "wall_s": round(prof.wall_s, 1), "launches": len(prof.runs), "passes": prof.passes,
                  "metrics": {m: by_name[m].paper for m in prof.metrics}, "dropped_metrics": prof.dropped,
                  "non_finite_set_to_0": cc.non_finite, "raw_csv": str(raw)}
    if reference is not None:
        collection["reference"] = dict(reference)
    out = []
    for clf, acc in ev.accuracy.items():
        meta = {**ev.split, "features": list(prof.metrics), "target": TARGET,
                "confusion": ev.confusion[clf], "runs_per_class": len(y) // len(kc.CLASSES),
                "locals": list(kc.GPU_GRID.locals), "reps": 1, "collection": collection}
        if clf == "random_forest":
            meta["dataset"] = ncu.compact(prof)
        out.append(dict(name=f"model.classify.counters.{clf}.accuracy", value=acc, unit="ratio", better="higher",
                        identity=identity, info=meta))
        votes = ev.unseen[clf]
        out.append(dict(name=f"model.classify.counters.{clf}.unseen_agreement",
                        value=classify.unseen_agreement(votes, kc.UNSEEN_EXPECTED), unit="ratio", better="higher",
                        identity=identity,
                        info={"votes": votes, "predictions": ev.predictions[clf],
                              "tags": {k: [r.tag for r in prof.runs if r.kernel == k] for k in unseen},
                              "expected": _expected(), "advice": _advice(votes),
                              **({"reference": dict(reference)} if reference is not None else {})}))
    return out
