"""Dao's ML-based sampled model on hardware counters (thesis §2.5.2, Table 2.1), on the application corpus.

Per run of a kernel (its full run and its quarter- and half-length runs: Dao's "each kernel is run several
times, every time with a different number of work-groups"), a feature vector combines

* the compiler's static features: active work-groups per SM (``P_sat``) and registers per work-item;
* the counters of the two sampling runs (``P1 = 2·P_sat``, ``P2 = 3·P_sat`` groups per SM; :mod:`.dao_counters`
  maps Dao's counters onto ncu's), as rates per issued instruction at ``P2`` and as their growth from ``P1`` to
  ``P2`` against the groups' (the non-linear scaling Dao names as what the model corrects, §2.6.2);
* the sampled work-items and times, and the IPS of the linear model (§2.5.1).

Dao fed raw counts; here each count is divided by the issued instructions (his "L1/L2 miss rate" already is)
because the corpus' kernels differ in size by orders of magnitude and forty of them cannot teach a regressor
that scale. The target is the run's saturated IPS: the instructions of the run, ``I_N = I_P2 · N / P2`` (the
count his t_ML formula assumes, work spread evenly over the groups), over its measured time. It is learned
relative to the linear model's IPS, ``y = log(IPS_sat / IPS_linear)``, so a model that has learnt nothing
predicts the linear model, and

    t_ML(N) = I_P2 · N / (P2 · IPS_est),   IPS_est = IPS_linear · e^ŷ                  (thesis §2.5.2)

with ``I_P2`` the instructions issued over the GPU at ``P2`` groups and ``P2`` the groups over the GPU (Dao
counts one SM's instructions over its groups: the same ratio). The regressor is :func:`.svr.make_model`:
scikit-learn's ε-SVR, the algorithm Dao used (§2.3.3), with an RBF kernel on standardised features.
Evaluation is his leave-one-kernel-out (§2.6.1): every run of the kernel under test is left out of training;
a kernel's error is that of its full run's prediction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ...util import aggregate
from . import svr
from . import dao_counters as dc
from .sampled_apps import APPS, SEED_ML, AppsResult, identity, waves_over
from .sampled_corpus import svr_per_kernel
from .sampling import linear_model

FAMILY = "model.dao_ml_apps"
#: the model's name where figures are quoted beside Dao's
MODEL = "ε-SVR on Nsight Compute counters (Dao's Table 2.1, mapped to sm_90)"
REGRESSOR = ("sklearn.svm.SVR (ε-SVR, RBF kernel, C=10, ε=0.01, standardised features; svr.make_model): Dao "
             "used ε-SVR (§2.3.3), so the maintained implementation of the same algorithm")
#: the features, in the vector's order (:func:`features`)
FEATURES = ("active_work_groups", "registers", "log_work_items_p2", "log_n_over_p2", "log_ips_p2_over_linear",
            "time_growth", "log_issued_per_group", "executed_per_issued", "branches_per_issued",
            "divergent_per_branch", "l1_miss_rate", "l1_accesses_per_issued", "l2_miss_rate",
            "bank_conflicts_per_issued", "shared_ldst_per_issued", "global_ld_per_issued", "sectors_per_global_ld",
            "cta_imbalance", "issued_growth", "l1_miss_growth", "l2_miss_growth")
#: the counters a feature vector needs (a metric ncu dropped leaves its features at 0, said in the records)
NEEDED = dc.METRIC_NAMES
#: what differs from the thesis, quoted with the figures
DIFFERS = ("counters: Dao's GTX 280/580 counters mapped to their sm_90 Nsight Compute equivalents (counter_table) "
           "and read over the whole GPU, not one SM; counts as rates per issued instruction; the run's instruction "
           "count extrapolated from the P2 sample (the full runs are not profiled); a modern NVIDIA GPU, not a "
           "GTX 280/580; corpus: the project's ported application kernels, not his 70")


@dataclass(frozen=True)
class Run:
    """One timed run of a kernel at ``n`` groups (the study's :class:`.svr.Instance`) with its sampling
    points' counters (``metric → value`` at ``P1`` and at ``P2``)."""

    inst: svr.Instance
    c1: Mapping[str, float]
    c2: Mapping[str, float]

    @property
    def kernel(self) -> str:
        return self.inst.kernel

    @property
    def issued_p2(self) -> float:
        """``I_P2``: warp instructions issued over the GPU by the first ``P2`` groups."""
        v = float(self.c2.get(dc.ISSUED, 0.0))
        if not v > 0:
            raise ValueError(f"{self.kernel}: no issued instructions counted at P2 ({dc.ISSUED}={v}); "
                             "the sample ran no instruction or the counter is missing")
        return v

    @property
    def instructions(self) -> float:
        """``I_N = I_P2 · N / P2``: the run's issued instructions under an even spread over the groups."""
        return self.issued_p2 * self.inst.n / self.inst.p2

    @property
    def t_linear(self) -> float:
        """The linear model's time, at least the ``P2`` sample's (a run of more groups takes no less; a
        negative slope of noisy samples would otherwise give no IPS)."""
        i = self.inst
        return max(linear_model(i.t1, i.t2, i.p1, i.p2, i.n), i.t2)

    @property
    def ips_linear(self) -> float:
        return self.instructions / self.t_linear

    @property
    def ips_saturated(self) -> float:
        """The target: the run's instructions over its measured time."""
        return self.instructions / self.inst.t_full

    @property
    def target(self) -> float:
        """``y = log(IPS_sat / IPS_linear)``."""
        return math.log(self.ips_saturated / self.ips_linear)

    def features(self) -> list[float]:
        """The feature vector (:data:`FEATURES`' order)."""
        i, c1, c2 = self.inst, self.c1, self.c2
        issued = self.issued_p2

        def at(c: Mapping[str, float], m: str) -> float:
            return float(c.get(m, 0.0))

        branches = at(c2, dc.BRANCHES)
        l1 = at(c2, dc.L1_HIT) + at(c2, dc.L1_MISS)
        gld = at(c2, dc.GLOBAL_LD)
        return [float(i.p_sat), float(i.registers), math.log(i.p2 * i.local_size), math.log(i.n / i.p2),
                math.log((issued / i.t2) / self.ips_linear), growth(i.t1, i.t2, i.p1, i.p2),
                math.log(issued / i.p2), at(c2, dc.EXECUTED) / issued, branches / issued,
                ratio(at(c2, dc.DIVERGENT), branches), at(c2, dc.L1_MISS) / issued, l1 / issued,
                at(c2, dc.L2_MISS) / issued, at(c2, dc.BANK_CONFLICTS) / issued,
                (at(c2, dc.SHARED_LD) + at(c2, dc.SHARED_ST)) / issued, gld / issued,
                ratio(at(c2, dc.GLOBAL_SECTORS), gld), ratio(at(c2, dc.CTAS_MAX), at(c2, dc.CTAS_AVG)),
                growth(at(c1, dc.ISSUED), issued, i.p1, i.p2, 1.0),
                growth(at(c1, dc.L1_MISS), at(c2, dc.L1_MISS), i.p1, i.p2, 1.0),
                growth(at(c1, dc.L2_MISS), at(c2, dc.L2_MISS), i.p1, i.p2, 1.0)]

    def time_from(self, y: float) -> float:
        """``t_ML(N)`` for a predicted ``y``."""
        return t_ml(self.issued_p2, self.inst.n, self.inst.p2, self.ips_linear * math.exp(y))


def t_ml(issued_p2: float, n: int, p2: int, ips_est: float) -> float:
    """Dao's ``t_ML(N) = I_P2 · N / (P2 · IPS_est)``."""
    if not (issued_p2 > 0 and n > 0 and p2 > 0 and ips_est > 0):
        raise ValueError(f"t_ML needs positive I_P2, N, P2 and IPS_est; got {issued_p2}, {n}, {p2}, {ips_est}")
    return issued_p2 * n / (p2 * ips_est)


def ratio(num: float, den: float) -> float:
    """``num / den``, 0 where nothing was counted (no branches: none diverged). The CTA imbalance is one:
    work-groups on the busiest SM over the mean per SM (1: even)."""
    return num / den if den > 0 else 0.0


def growth(a1: float, a2: float, p1: int, p2: int, plus: float = 0.0) -> float:
    """How a quantity grows from ``P1`` to ``P2`` groups against linear growth: ``log((a2+plus)/(a1+plus)) −
    log(P2/P1)``, 0 for linear; ``plus`` keeps counts that are 0 at a point finite (a time is never 0)."""
    if not (a1 + plus > 0 and a2 + plus > 0):
        raise ValueError(f"growth of non-positive values {a1}, {a2} (plus {plus})")
    return math.log((a2 + plus) / (a1 + plus)) - math.log(p2 / p1)


@dataclass(frozen=True)
class Fold:
    """One kernel left out: its runs' (run, t_ML) and the kernels and runs the model was trained on."""

    kernel: str
    predictions: tuple[tuple[Run, float], ...]
    train_kernels: tuple[str, ...]
    train_runs: int

    @property
    def full(self) -> tuple[Run, float]:
        """The kernel's longest run (the reported one) and its prediction."""
        return max(self.predictions, key=lambda p: p[0].inst.n)

    @property
    def error(self) -> float:
        run, pred = self.full
        return abs(pred - run.inst.t_full) / run.inst.t_full


def leave_one_kernel_out(runs: Sequence[Run], make_model: Callable[[], Any] = svr.make_model) -> dict[str, Fold]:
    """For each kernel: fit a fresh model on every other kernel's runs, predict its own (Dao §2.6.1), through
    the SVR's :func:`.svr.leave_one_kernel_out`, once every run's features and target are finite."""
    bad = set()
    for r in runs:
        try:
            f, t = r.features(), r.target
        except (ValueError, ZeroDivisionError, OverflowError):
            f, t = [math.nan], math.nan
        if not (np.isfinite(f).all() and math.isfinite(t)):
            bad.add(r.kernel)
    if bad:
        raise ValueError(f"non-finite features or targets for {', '.join(sorted(bad))}: a counter or time is "
                         "missing, 0 or not finite")
    names = [r.kernel for r in runs]
    return {k: Fold(k, tuple(preds), tuple(sorted(set(names) - {k})), sum(n != k for n in names))
            for k, preds in svr.leave_one_kernel_out(runs, make_model).items()}


def runs_of(res: AppsResult, counters: Mapping[str, Mapping[str, Mapping[str, float]]]) -> list[Run]:
    """Every instance of the study whose kernel has both points' counters (a kernel without is an error:
    the collection profiled the study's kernels)."""
    missing = sorted({i.kernel for i in res.runs.instances} - {k for k, v in counters.items() if set(dc.POINTS) <= set(v)})
    if missing:
        raise ValueError(f"no counters at both sampling points for {', '.join(missing)}")
    return [Run(i, counters[i.kernel]["p1"], counters[i.kernel]["p2"]) for i in res.runs.instances]


def samples_of(res: AppsResult) -> dict[str, tuple[int, int, int]]:
    """Each measured kernel's sampling points and work-group size (what :func:`.dao_counters.plan` profiles)."""
    return {name: (run.plan.p1, run.plan.p2, run.plan.local_size) for name, run in res.runs.main.items()}


#: the columns of a record's ``info['dataset']['runs']`` (:func:`dataset`)
DATASET_COLUMNS = ("kernel", "p_sat", "registers", "local_bytes", "local_size", "p1", "p2", "n", "t1", "t2", "t_full")


def dataset(runs: Sequence[Run]) -> dict[str, Any]:
    """The model's whole input as JSON: each run's study figures (:data:`DATASET_COLUMNS`) and each kernel's
    counters at both points, so a results file can be fitted again without the device."""
    counters: dict[str, dict[str, dict[str, float]]] = {}
    for r in runs:
        counters.setdefault(r.kernel, {"p1": dict(r.c1), "p2": dict(r.c2)})
    return {"columns": list(DATASET_COLUMNS), "runs": [[getattr(r.inst, c) for c in DATASET_COLUMNS] for r in runs],
            "counters": counters}


def runs_from(doc: Mapping[str, Any]) -> list[Run]:
    """The runs a :func:`dataset` holds."""
    cols = list(doc["columns"])
    if cols != list(DATASET_COLUMNS):
        raise ValueError(f"dataset columns {cols} are not {list(DATASET_COLUMNS)}: written by another version")
    out = []
    for row in doc["runs"]:
        inst = svr.Instance(**dict(zip(cols, row)))
        c = doc["counters"][inst.kernel]
        out.append(Run(inst, c["p1"], c["p2"]))
    return out


def records(res: AppsResult, sc: dc.SampleCounters) -> list[dict[str, Any]]:
    """``model.dao_ml_apps.mean_error`` as ``gpuperf_record`` keywords: the leave-one-kernel-out mean of the
    kernels' full-run errors, each kernel's in ``info['per_kernel']`` (as the SVR family's: one kernel's ML
    error moves with the other kernels' training data, so only the mean is gated). The identity is the
    study's (:func:`.sampled_apps.identity`, the kernel set, each kernel's waves) plus the counter set."""
    main = res.runs.main
    if len(main) < svr.MIN_KERNELS:
        raise ValueError(f"Dao's ML model trains leave-one-kernel-out on {svr.MIN_KERNELS} or more kernels; "
                         f"the study measured {len(main)}")
    runs = runs_of(res, sc.values)
    folds = leave_one_kernel_out(runs)
    errs = {k: (f.error, f.full[1], f.full[0].inst.t_full, f.train_runs) for k, f in folds.items()}
    ident = {**identity(res.size, res.cold), **aggregate.over(errs), **waves_over({n: main[n] for n in errs}),
             "counters": dc.counter_set(sc.dropped)}
    info = {"kernels": len(folds), "instances": len(runs), "train_kernels_per_fold": len(folds) - 1,
            "features": list(FEATURES), "per_kernel": svr_per_kernel(errs), "protocol": APPS.label, "seed": SEED_ML,
            "model": MODEL, "regressor": REGRESSOR, "target": "saturated IPS, learned as log(IPS_sat / IPS_linear)",
            "formula": "t_ML(N) = I_P2 * N / (P2 * IPS_est)", "differs": DIFFERS, "collection": sc.info(),
            "dataset": dataset(runs)}
    return [dict(name=f"{FAMILY}.mean_error", value=float(np.mean([e[0] for e in errs.values()])), unit="ratio",
                 better="lower", identity=ident, info=info)]
