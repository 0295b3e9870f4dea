"""Alavani's energy estimate (thesis ch. 6): a launch's energy predicted as the static power model's
predicted average power times the static PTX time model's predicted time, set beside the measured energy.

It joins two saved runs of one card: the power corpus (measured watts and NVML energy per launch of each
configuration, and the power model's cross-validated prediction of every row, never from a model that saw
that row) and the PTX model's launch study (each launch's predicted and measured time). A launch counts
where both hold the same kernel at the same grid, block and loop trip counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...schemas.results_doc import ResultsDocument
from ...util import jsonio
from . import power_model as pm

#: the power model's family and hold-out protocol the estimate uses by default: the held-out family with the
#: lowest error in docs/power.md, each kernel predicted by folds that never saw any of its configurations
FAMILY = "extra_trees"
PROTOCOL = "kernels"
#: the PTX model's variant: the thesis' own model (the other two were designed on the dwarf kernels)
VARIANT = "thesis"

Key = tuple[str, int, int, tuple[float, ...]]


@dataclass(frozen=True)
class Launch:
    """One launch both runs measured: predicted and measured time (s), power (W) and energy (J)."""

    kernel: str
    study_config: str
    corpus_config: str
    grid: int
    block: int
    t_pred_s: float
    t_meas_s: float
    p_pred_w: float
    p_meas_w: float
    e_nvml_j: float  # the corpus' NVML energy per launch of its steady-state loop

    @property
    def e_pred_j(self) -> float:
        """E = P_pred × t_pred (thesis §6.1: "energy is computed by multiplying the results")."""
        return self.p_pred_w * self.t_pred_s

    @property
    def e_meas_j(self) -> float:
        """The thesis' actual energy (Table 6.1): measured power × measured time."""
        return self.p_meas_w * self.t_meas_s


@dataclass(frozen=True)
class Estimate:
    """Every matched launch of one card, with the MAPE of each predicted quantity."""

    launches: tuple[Launch, ...]
    family: str
    protocol: str
    variant: str

    def mape(self, quantity: str) -> float:
        """MAPE (%) of ``time``, ``power``, ``energy`` (against P_meas × t_meas) or ``energy_nvml`` (against the
        NVML energy per launch of the corpus' loop)."""
        pairs = {"time": lambda x: (x.t_pred_s, x.t_meas_s), "power": lambda x: (x.p_pred_w, x.p_meas_w),
                 "energy": lambda x: (x.e_pred_j, x.e_meas_j), "energy_nvml": lambda x: (x.e_pred_j, x.e_nvml_j)}
        if quantity not in pairs:
            raise ValueError(f"quantity {quantity!r}: choose one of {sorted(pairs)}")
        pred, meas = zip(*(pairs[quantity](x) for x in self.launches)) if self.launches else ((), ())
        return pm.scores(meas, pred)["mape"]  # the power model's own scores (Tables 5.8–5.9)


def launch_key(kernel: str, grid: Any, block: Any, trips: Sequence[Any]) -> Key:
    """How a corpus entry and a study's launch are matched: the same kernel at the same grid, block and trips."""
    return (kernel, int(grid), int(block), tuple(round(float(t), 6) for t in trips))


def study_launches(doc: ResultsDocument, variant: str = VARIANT) -> dict[Key, dict[str, Any]]:
    """Each launch of a PTX launch study (``model.ptx.study.<variant>.<kernel>.error``'s ``info.launches``),
    keyed by (kernel, grid, block, trip counts)."""
    prefix = f"model.ptx.study.{variant}."
    out: dict[Key, dict[str, Any]] = {}
    for m in doc.metrics:
        name = m.name or ""
        if not (name.startswith(prefix) and name.endswith(".error")) or name.count(".") != 5:
            continue
        kernel = name[len(prefix):-len(".error")]
        for ln in m.info.get("launches") or []:
            out[launch_key(kernel, ln["grid"], ln["block"], ln.get("trips") or [])] = dict(ln)
    if not out:
        raise ValueError(f"{doc.source}: no model.ptx.study.{variant}.<kernel>.error metric with launches; "
                         f"is it a run of suites/test_model_ptx_study.py (--gpuperf-profile=study)?")
    return out


def heldout_watts(entries: Sequence[pm.Entry], family: str = FAMILY, protocol: str = PROTOCOL) -> list[float]:
    """Every corpus row's predicted watts from the outer fold that held it out (``pm.nested_cv``)."""
    if family not in pm.families():
        raise ValueError(f"family {family!r}: choose one of {sorted(pm.families())}")
    return pm.nested_cv(entries, only=[family], protocol=protocol)[family].predictions


def join(entries: Sequence[pm.Entry], watts_pred: Sequence[float], study: Mapping[Key, Mapping[str, Any]],
         family: str = FAMILY, protocol: str = PROTOCOL, variant: str = VARIANT) -> Estimate:
    """The launches a corpus and a study share, in the corpus' order."""
    if len(entries) != len(watts_pred):
        raise ValueError(f"{len(watts_pred)} predictions for {len(entries)} corpus entries")
    out = []
    for e, p in zip(entries, watts_pred):
        ln = study.get(launch_key(e.kernel, e.info.get("grid", -1), e.info.get("block", -1), e.info.get("trips") or []))
        if ln is None:
            continue
        out.append(Launch(e.kernel, str(ln["config"]), e.config, int(ln["grid"]), int(ln["block"]),
                          float(ln["predicted_s"]), float(ln["measured_s"]), float(p), e.watts, e.joules_per_launch))
    return Estimate(tuple(out), family, protocol, variant)


def estimate(corpus: Path, study: Path, family: str = FAMILY, protocol: str = PROTOCOL,
             variant: str = VARIANT) -> Estimate:
    """The estimate of one card from its saved power corpus and its saved PTX launch study."""
    _, entries = pm.load_corpus(jsonio.saved(corpus))
    doc = ResultsDocument.load(jsonio.saved(study))
    return join(entries, heldout_watts(entries, family, protocol), study_launches(doc, variant),
                family, protocol, variant)
