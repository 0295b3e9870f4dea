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
* ``per_item``  — log(time per work-item relative to the copy's time per element);
* ``group_exp`` — least-squares slope of log(time) over log(work-group size) at this size: how the
  kernel responds to group size (≈0 for streaming, negative where larger groups share loaded data);
* ``group_best``— log(time ÷ the best time over all group sizes at this size);
* ``size_span`` — the size exponent over the whole size range (first to last size) for this group size,
  which separates L2-resident small problems from DRAM-bound large ones.

Timing cannot separate classes that differ only in instructions hidden behind the memory roofline
(K1 vs K2: an add vs two multiplies per streamed element; K4 vs K5: 32- vs 64-bit loads under
compute-bound ``sinf``/``cosf``). Paper 004 sees those through counters (instruction mix). The
portable stand-in is :func:`code_features`: a static instruction mix read from the kernel source the
user runs (same text on every backend). It identifies a kernel's code, so with a split over *runs*
(the paper's protocol) it is near-perfect by construction; its real test is the unseen kernels.
It is evaluated and recorded separately from the timing-only features.

Classifiers (scikit-learn): random forest, Gaussian naive Bayes and an MLP (the paper's DNN), with the
paper's input normalisation for NB/MLP (standardisation). The same :func:`evaluate` also classifies from
Nsight Compute counters on CUDA (:mod:`.ncu` collects them; :func:`split_unseen` separates the unseen
kernels' rows of that one-pass dataset), so both feature sets meet the same split and the same models.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

FEATURES = ("bw_frac", "fma_frac", "size_exp", "group_sens", "per_item", "group_exp", "group_best", "size_span")
CODE_FEATURES = ("loads", "vector_width", "transcendentals", "multiplies", "adds", "local_memory", "barriers",
                 "loops")


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
    t_by_local: Mapping[int, float] = field(default_factory=dict)  # same size, every group size
    t_first: float = 0.0  # same group size, smallest problem
    t_last: float = 0.0  # same group size, largest problem
    bytes_first: float = 0.0
    bytes_last: float = 0.0


def _slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    if len(xs) < 2:
        return 0.0
    return float(np.polyfit(np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float)), 1)[0])


def features(r: RunTimes) -> list[float]:
    """The timing-only feature vector (:data:`FEATURES`) of one run."""
    if min(r.t, r.t_next, r.t_small_group, r.t_copy, r.t_fma) <= 0:
        raise ValueError(f"non-positive time in run of {r.label}: {r}")
    ratio = r.bytes_next / r.bytes_
    by_local = dict(r.t_by_local) or {0: r.t}
    if min(by_local.values()) <= 0:
        raise ValueError(f"non-positive time over group sizes in run of {r.label}: {by_local}")
    locals_ = sorted(k for k in by_local if k > 0)
    span = r.bytes_last / r.bytes_first if r.bytes_first > 0 else 0.0
    return [math.log((r.bytes_ / r.t) / (r.bytes_ / r.t_copy)),
            math.log(r.t / r.t_fma),
            math.log(r.t_next / r.t) / math.log(ratio) if ratio > 1 else 1.0,
            math.log(r.t_small_group / r.t),
            math.log((r.t / r.items) / (r.t_copy / r.copy_elems)),
            _slope(locals_, [by_local[k] for k in locals_]),
            math.log(r.t / min(by_local.values())),
            math.log(r.t_last / r.t_first) / math.log(span) if span > 1 and r.t_first > 0 else 1.0]


_CALLS = re.compile(r"\b(sinf?|cosf?|expf?|exp2f?|logf?|powf?|sqrtf?|tanhf?|native_\w+)\s*\(")


def code_features(source: str) -> list[float]:
    """Static instruction mix of a kernel's source body (:data:`CODE_FEATURES`), the portable stand-in for
    the paper's instruction-mix counters: indexed accesses, widest vector type, transcendental calls,
    multiplies, adds, local-memory use, barriers and loops."""
    body = source[source.find("{"):] if "{" in source else source
    body = re.sub(r"\(\s*(GLOBAL\s+)?(const\s+)?float[24]?\s*\*\s*\)", "", body)  # pointer casts
    width = 4 if "float4" in body else 2 if "float2" in body else 1
    return [float(body.count("[")), float(width), float(len(_CALLS.findall(body))),
            float(len(re.findall(r"(?<![*/])\*(?![*/=])", body))), float(len(re.findall(r"(?<!\+)\+(?![+=])", body))),
            float("LOCAL_MEM" in body or "__shared__" in body or "__local" in body),
            float(body.count("BARRIER") + body.count("__syncthreads") + body.count("barrier(")),
            float(len(re.findall(r"\b(for|while)\s*\(", body)))]


def make_classifiers(seed: int = 0) -> dict[str, object]:
    # scikit-learn is imported where a model is made, not with the module: a run that only collects the suites
    # (every ``gpuperf run``, whatever its selection) would otherwise pay its import, about a second
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

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
    confusion: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)  # clf → true → predicted → n
    predictions: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # clf → unseen kernel → per run


def evaluate(x: np.ndarray, y: Sequence[str], unseen: Mapping[str, np.ndarray], test_size: float = 0.3,
             seed: int = 0) -> Evaluation:
    """Stratified hold-out split; fit each classifier on the training part; accuracy on the held-out
    runs; votes for every run of each unseen kernel."""
    y = np.asarray(y)
    if len(set(y)) < 2:
        raise ValueError("the dataset needs at least two classes")
    from sklearn.model_selection import train_test_split

    xtr, xte, ytr, yte = train_test_split(x, y, test_size=test_size, random_state=seed, stratify=y)
    ev = Evaluation({"train_runs": len(ytr), "test_runs": len(yte), "classes": len(set(y))})
    for name, clf in make_classifiers(seed).items():
        clf.fit(xtr, ytr)
        pred = clf.predict(xte)
        ev.accuracy[name] = float(np.mean(pred == yte))
        conf: dict[str, dict[str, int]] = {}
        for t, p in zip(yte, pred):
            row = conf.setdefault(str(t), {})
            row[str(p)] = row.get(str(p), 0) + 1
        ev.confusion[name] = conf
        ev.unseen[name] = {}
        ev.predictions[name] = {}
        for kname, feats in unseen.items():
            votes: dict[str, int] = {}
            preds = [str(p) for p in clf.predict(feats)]
            for p in preds:
                votes[p] = votes.get(p, 0) + 1
            ev.unseen[name][kname] = votes
            ev.predictions[name][kname] = preds
    return ev


def unseen_agreement(votes: Mapping[str, Mapping[str, int]], expected: Mapping[str, Sequence[str]]) -> float:
    """Share of the unseen kernels' runs classified into a class the paper argues for (§6.1): the 9-point
    stencils into their 5-point classes, SpMV into K7, K3 or K10."""
    agree = sum(n for k, v in votes.items() for c, n in v.items() if c in expected[k])
    total = sum(n for v in votes.values() for n in v.values())
    if total == 0:
        raise ValueError("no unseen-kernel runs were classified")
    return agree / total


def split_unseen(x: np.ndarray, labels: Sequence[str], classes: Sequence[str],
                 unseen: Sequence[str]) -> tuple[np.ndarray, list[str], dict[str, np.ndarray]]:
    """Rows of one dataset (e.g. the counter dataset, profiled in one pass over all kernels) → the
    training classes' rows and labels, and each unseen kernel's rows."""
    labels = list(labels)
    known = [i for i, lab in enumerate(labels) if lab in classes]
    other = set(labels) - set(classes) - set(unseen)
    if other:
        raise ValueError(f"rows of kernels that are neither classes nor unseen: {sorted(other)}")
    return (x[known], [labels[i] for i in known],
            {k: x[[i for i, lab in enumerate(labels) if lab == k]] for k in unseen if k in labels})
