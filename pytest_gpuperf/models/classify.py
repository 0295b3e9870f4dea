"""Portable measured features, the dataset and the three classifiers of paper 004 (§4–5).

Paper 004 classifies from Nsight Compute counters. Counters are unavailable on OpenCL and PoCL, so
each run's feature vector is built from *measured times* that any backend gives, normalised by two
reference kernels run over the same buffers/NDRange (so they are fractions, like the paper's SM% and
Mem%):

* ``bw_frac``   — log(buffer bytes / time ÷ achieved copy bandwidth at the same bytes): memory-roofline fraction;
* ``fma_frac``  — log(time ÷ time of a compute-bound reference (64 FMAs per item) over the same items);
* ``size_exp``  — log2(time at the next problem size ÷ time at this one) ÷ log2(size ratio of buffers):
  how time scales with data (1 for streaming kernels, 1.5 for matrix products);
* ``group_sens``— log(time at the smallest work-group size ÷ time at this one);
* ``per_item``  — log(time per work-item relative to the copy's time per element).

Classifiers (scikit-learn): random forest, Gaussian naive Bayes and an MLP (the paper's DNN), with the
paper's input normalisation for NB/MLP (standardisation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

FEATURES = ("bw_frac", "fma_frac", "size_exp", "group_sens", "per_item")


@dataclass(frozen=True)
class RunTimes:
    """The measured times behind one feature vector (seconds, bytes)."""

    label: str
    t: float  # this run
    t_next: float  # same kernel, next problem size
    bytes_: float
    bytes_next: float
    t_small_group: float  # same size, smallest work-group size
    t_copy: float  # copy of ``bytes_`` (reference)
    t_fma: float  # compute-bound reference over the same work-items
    items: int
    copy_elems: int


def features(r: RunTimes) -> list[float]:
    if min(r.t, r.t_next, r.t_small_group, r.t_copy, r.t_fma) <= 0:
        raise ValueError(f"non-positive time in run of {r.label}: {r}")
    ratio = r.bytes_next / r.bytes_
    return [math.log((r.bytes_ / r.t) / (r.bytes_ / r.t_copy)),
            math.log(r.t / r.t_fma),
            math.log(r.t_next / r.t) / math.log(ratio) if ratio > 1 else 1.0,
            math.log(r.t_small_group / r.t),
            math.log((r.t / r.items) / (r.t_copy / r.copy_elems))]


def make_classifiers(seed: int = 0) -> dict[str, object]:
    return {
        "random_forest": RandomForestClassifier(n_estimators=200, random_state=seed),
        "naive_bayes": make_pipeline(StandardScaler(), GaussianNB()),
        "mlp": make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(64, 32), max_iter=3000,
                                                             random_state=seed)),
    }


@dataclass
class Evaluation:
    split: Mapping[str, int]
    accuracy: dict[str, float] = field(default_factory=dict)
    unseen: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)  # clf → kernel → class → votes


def evaluate(x: np.ndarray, y: Sequence[str], unseen: Mapping[str, np.ndarray], test_size: float = 0.3,
             seed: int = 0) -> Evaluation:
    """Stratified hold-out split; fit each classifier on the training part; accuracy on the held-out
    runs; votes for every run of each unseen kernel."""
    y = np.asarray(y)
    if len(set(y)) < 2:
        raise ValueError("the dataset needs at least two classes")
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=test_size, random_state=seed, stratify=y)
    ev = Evaluation({"train_runs": len(ytr), "test_runs": len(yte), "classes": len(set(y))})
    for name, clf in make_classifiers(seed).items():
        clf.fit(xtr, ytr)
        ev.accuracy[name] = float(np.mean(clf.predict(xte) == yte))
        ev.unseen[name] = {}
        for kname, feats in unseen.items():
            votes: dict[str, int] = {}
            for p in clf.predict(feats):
                votes[str(p)] = votes.get(str(p), 0) + 1
            ev.unseen[name][kname] = votes
    return ev
