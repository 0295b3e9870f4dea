"""The ML-based sampled model (Dao §2.5.2): an SVR estimates the *saturated throughput* of the full
run from the features of the two sampling runs, and

    t_ML(N) = I_P2 × N / (P2 × IPS_est)                                  (thesis, §2.5.2)

Portable features stand in for the GTX 580's counters (Table 2.1), one for one where possible:
active work-groups (``P_sat``), registers per work-item, local-memory bytes, work-group size, the
two sampled execution times (per group), the sampled work-items, and the linear model's throughput.
Throughput is counted in work-groups per second (``I`` = groups: the corpus spreads work evenly over
groups, the thesis' own assumption for the ML model), so the SVR learns
``y = log(saturated throughput / throughput at P2)`` and ``t_ML = N / (P2/t_P2 · e^ŷ)``.

Evaluation is the thesis' leave-one-kernel-out cross validation (§2.6.1): every instance of the
kernel under test is removed from the training set before the SVR is fitted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .sampling import linear_model

FEATURES = ("p_sat", "registers", "local_bytes", "local_size", "log_t1_per_group", "log_t2_per_group",
            "marginal_over_average", "log_work_items_p2", "log_n_over_p2", "log_linear_ips_ratio")


@dataclass(frozen=True)
class Instance:
    """One run of one kernel at ``n`` groups with its sampled data and (training label) full time."""

    kernel: str
    p_sat: int
    registers: float
    local_bytes: float
    local_size: int
    p1: int
    p2: int
    n: int
    t1: float
    t2: float
    t_full: float

    @property
    def t_linear(self) -> float:
        return linear_model(self.t1, self.t2, self.p1, self.p2, self.n)

    def features(self) -> list[float]:
        marginal = (self.t2 - self.t1) / (self.p2 - self.p1)
        lin = max(self.t_linear, 1e-12)
        return [self.p_sat, self.registers, self.local_bytes, self.local_size,
                math.log(self.t1 / self.p1), math.log(self.t2 / self.p2), marginal / (self.t2 / self.p2),
                math.log(self.p2 * self.local_size), math.log(self.n / self.p2),
                math.log((self.n / lin) / (self.p2 / self.t2))]

    @property
    def target(self) -> float:
        """log(saturated groups/s of the full run ÷ groups/s at P2)."""
        return math.log((self.n / self.t_full) / (self.p2 / self.t2))

    def time_from(self, y: float) -> float:
        return self.n / ((self.p2 / self.t2) * math.exp(y))


def make_model() -> object:
    """RBF ε-SVR on standardised features (the thesis uses an SVR, §2.3.3). scikit-learn is imported here, not
    with the module, so collecting the suites does not pay its import."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVR

    return make_pipeline(StandardScaler(), SVR(kernel="rbf", C=10.0, epsilon=0.01, gamma="scale"))


#: the fewest kernels leave-one-kernel-out trains on (each fit sees at least two)
MIN_KERNELS = 3


def leave_one_kernel_out(instances: Sequence[Any], make_model: Callable[[], Any] = make_model
                         ) -> dict[str, list[tuple[Any, float]]]:
    """For each kernel: fit a fresh ``make_model()`` on all other kernels' instances, predict its own
    (instance, t_ML). An instance has ``kernel``, ``features()``, ``target`` and ``time_from(y)``
    (:class:`Instance`; Dao's counter model's runs, ``dao_ml.Run``)."""
    kernels = sorted({i.kernel for i in instances})
    if len(kernels) < MIN_KERNELS:
        raise ValueError(f"leave-one-kernel-out needs at least {MIN_KERNELS} kernels, got {len(kernels)}")
    out: dict[str, list[tuple[Instance, float]]] = {}
    for k in kernels:
        train = [i for i in instances if i.kernel != k]
        test = [i for i in instances if i.kernel == k]
        model = make_model()
        model.fit(np.array([i.features() for i in train]), np.array([i.target for i in train]))
        ys = model.predict(np.array([i.features() for i in test]))
        out[k] = [(inst, inst.time_from(float(y))) for inst, y in zip(test, ys)]
    return out


def split_report(instances: Sequence[Instance]) -> Mapping[str, int]:
    kernels = {i.kernel for i in instances}
    return {"kernels": len(kernels), "instances": len(instances), "train_kernels_per_fold": len(kernels) - 1}
