"""Prediction error of Alavani's static PTX model (thesis ch. 4) on the thesis' dwarfs re-written for CUDA:
each kernel's PTX control-flow graph is scheduled against the device's calibration and latencies
(:mod:`.ptx_calibration`), predicted by the thesis' model and by the Hopper variants, and compared with
the kernel's measured time.

Why a module: the figures (per kernel, per dwarf and the means, per variant) share one identity rule —
where the latencies and issue rates came from, and the kernels a mean is over — kept here once.
CUDA only: PTX comes from NVRTC.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ...util import aggregate
from . import cfg as cfgmod, ptx as ptxmod, scheduler
from .dwarfs import DWARFS, THESIS_GPU_NAMES, THESIS_MAPE
from .ptx_calibration import calibrate, global_latency_model, session_latencies
from .ptx_latency import LatencyTable, latencies
from ...devices.base import Device, DeviceInfo, slugify
from ...helpers import KernelHelper, Measurer
from ...probes import global_latency

#: the Hopper variants recorded beside the thesis' model (``model.ptx.<variant>.*``)
ALT_VARIANTS: Mapping[str, str] = {
    "issue": "issue: a unit is busy only while issuing at its measured rate (models.scheduler.schedule_block)",
    "hopper": "hopper: launch fixed cost + max(dispatch, execution, memory stream), execution per wave the "
              "longer of issuing at the measured rates and one warp's dependent chain "
              "(models.scheduler.predict_hopper)",
    "launch_once": "launch_once: the hopper variant with its memory stream at the calibration copies' throughput "
                   "net of the launch overhead, so the launch's fixed cost is paid once "
                   "(models.scheduler.predict_hopper, Calibration.global_tp_net)"}
#: the GPUs of the thesis' Table 4.9, in its column order
THESIS_GPU_KEYS = tuple(THESIS_GPU_NAMES)


def slug(text: str) -> str:
    """A dwarf's name as a metric name part."""
    return slugify(text, "_", empty="")


@dataclass(frozen=True)
class KernelRun:
    """One dwarf kernel: the thesis model's prediction, each variant's, and the measured median time."""

    name: str
    dwarf: str
    pred: scheduler.Prediction
    alt: dict[str, scheduler.Prediction]  # variant → prediction
    measured_s: float
    trips: Any
    local_bytes: int

    def error(self, variant: str | None = None) -> float:
        """|predicted − measured| / measured of the thesis' model (``variant`` None) or a variant."""
        pred = self.pred if variant is None else self.alt[variant]
        return abs(pred.seconds - self.measured_s) / self.measured_s


@dataclass(frozen=True)
class PtxEvaluation:
    """The model over every dwarf kernel, and what the predictions were built from."""

    kernels: list[KernelRun]
    table: LatencyTable
    sweep: global_latency.Sweep
    cal_info: dict[str, Any]
    rates: dict[str, float]
    rate_sources: dict[str, str]

    @property
    def identity(self) -> dict[str, str]:
        return {"latencies": "probed in session"}

    @property
    def alt_identity(self) -> dict[str, str]:
        """The variants' identity also says where the issue rates came from (:func:`scheduler.rates_origin`)."""
        return {**self.identity, "issue_rates": scheduler.rates_origin(self.rate_sources)}

    @property
    def sources(self) -> list[str]:
        """Where each latency came from."""
        return sorted(set(self.table.sources.values()) | {self.table.global_source})

    def errors(self, variant: str | None = None) -> dict[str, float]:
        """Kernel name → error of the thesis' model (``variant`` None) or a variant."""
        return {k.name: k.error(variant) for k in self.kernels}

    def per_dwarf(self, variant: str | None = None) -> dict[str, dict[str, float]]:
        """Dwarf → kernel name → error."""
        out: dict[str, dict[str, float]] = {}
        for k in self.kernels:
            out.setdefault(k.dwarf, {})[k.name] = k.error(variant)
        return out


@dataclass(frozen=True)
class DeviceModel:
    """What every prediction on one device is built from, measured in the session: the calibration (launch
    overhead and throughput fits), the global-latency sweep, the latency table, and the issue rates of the
    variants (:data:`ALT_VARIANTS`) with where each came from."""

    cal: scheduler.Calibration
    cal_info: dict[str, Any]
    sweep: global_latency.Sweep
    table: LatencyTable
    rates: dict[str, float]
    rate_sources: dict[str, str]

    def shape(self, info: DeviceInfo, kernel: Any, grid: int, block: int, trips: Any) -> dict[str, Any]:
        """The keyword arguments of :func:`scheduler.predict` for a launch of ``kernel`` (its registers and
        shared memory from the build) on the device ``info`` describes."""
        attrs = kernel.attributes
        return dict(grid=grid, block=block, regs=int(attrs.get("num_regs", 0)),
                    shared=int(attrs.get("shared_size_bytes", 0)), trips=trips, n_sm=info.compute_units,
                    clock_hz=info.clock_mhz * 1e6, cc=info.compute_capability, l2_bytes=int(info.l2_bytes or 0))

    def predict(self, graph: cfgmod.Cfg, shape: Mapping[str, Any]
                ) -> tuple[scheduler.Prediction, dict[str, scheduler.Prediction]]:
        """The thesis model's prediction and each of :data:`ALT_VARIANTS`'."""
        pred = scheduler.predict(graph, self.table, self.cal, **shape)
        alt = {v: scheduler.predict(graph, self.table, self.cal, **shape, variant=v, rates=self.rates)
               for v in ALT_VARIANTS}
        return pred, alt


def device_model(dev: Device, gpu_kernel: KernelHelper, gpu_measure: Measurer, root: Path, baseline_dir: Path,
                 recorded: Mapping[str, float]) -> DeviceModel:
    """Calibrate the device and build its latency table (probed now; ``root``/``baseline_dir`` for the classes
    no probe ran for), once per device and session (the model suite's test and the study share them); the
    issue rates from ``recorded`` (this session's throughput probes, where the latency suite ran first),
    else from the architecture table, at every call."""
    info = dev.info

    def measure() -> dict[str, Any]:
        cache: dict[str, Any] = {"cal": calibrate(dev, gpu_kernel, gpu_measure), "sweep": global_latency.measured(dev)}
        cache["table"] = latencies(root, info.key, info.backend, info.clock_mhz,
                                   global_model=global_latency_model(cache["sweep"]), baseline_dir=baseline_dir,
                                   measured=session_latencies(dev, gpu_measure))
        return cache

    cache = dev.once("ptx_device_model", measure)  # a later test notes the kernels the model was measured with
    rates, rate_sources = scheduler.issue_rates(recorded, info.compute_capability)
    (cal, cal_info), sweep, table = cache["cal"], cache["sweep"], cache["table"]
    return DeviceModel(cal, cal_info, sweep, table, rates, rate_sources)


def evaluate(dev: Device, gpu_kernel: KernelHelper, gpu_measure: Measurer, root: Path, baseline_dir: Path,
             recorded: Mapping[str, float]) -> PtxEvaluation:
    """The device's model (:func:`device_model`), then every dwarf kernel predicted and measured."""
    info = dev.info
    model = device_model(dev, gpu_kernel, gpu_measure, root, baseline_dir, recorded)
    runs = []
    for d in DWARFS:
        kern = gpu_kernel.compile(d.source, d.name)
        graph = cfgmod.build(ptxmod.parse(dev.ptx(kern), d.name))
        launch = d.setup(dev, 1)
        pred, alt = model.predict(graph, model.shape(info, kern, launch.grid, launch.block, launch.trips))
        m = gpu_measure(kern, (launch.grid * launch.block,), (launch.block,), launch.args, budget_s=0.5)
        runs.append(KernelRun(d.name, d.dwarf, pred, alt, m.stats.median, launch.trips,
                              int(kern.attributes.get("local_size_bytes", 0))))
    return PtxEvaluation(runs, model.table, model.sweep, model.cal_info, model.rates, model.rate_sources)


def _dwarf_records(prefix: str, per_dwarf: dict[str, dict[str, float]], identity: dict[str, str]
                   ) -> list[dict[str, Any]]:
    """``<prefix>.dwarf.<dwarf>.mape``: a variant's mean error per dwarf (kernel name → error), beside the
    thesis' Table 4.9 row; the dwarf's kernels are part of the identity."""
    return [dict(name=f"{prefix}.dwarf.{slug(dwarf)}.mape", value=float(np.mean(list(e.values()))), unit="ratio",
                 better="lower", identity={**identity, **aggregate.over(e)},
                 info={"kernels": len(e), "thesis_mape_pct": dict(zip(THESIS_GPU_KEYS, THESIS_MAPE[dwarf]))})
            for dwarf, e in per_dwarf.items()]


def records(ev: PtxEvaluation) -> list[dict[str, Any]]:
    """Every figure of the evaluation: ``model.ptx[.<variant>].<kernel>.error``, ``….dwarf.<dwarf>.mape``
    and ``….mean_error``, with what each prediction was built from in ``info``."""
    identity, alt_identity, sources = ev.identity, ev.alt_identity, ev.sources
    out = []
    for k in ev.kernels:
        err = k.error()
        out.append(dict(name=f"model.ptx.{k.name}.error", value=err, unit="ratio", better="lower", identity=identity,
                        info={**k.pred.info(), "predicted_s": k.pred.seconds, "measured_s": k.measured_s,
                              "dwarf": k.dwarf, "trips": k.trips, "local_bytes_per_thread": k.local_bytes,
                              "latency_sources": sources}))
        for variant in ALT_VARIANTS:
            alt = k.alt[variant]
            out.append(dict(name=f"model.ptx.{variant}.{k.name}.error", value=k.error(variant), unit="ratio",
                            better="lower", identity=alt_identity,
                            info={"predicted_s": alt.seconds, "measured_s": k.measured_s, "dwarf": k.dwarf,
                                  "d_kernel_cycles": round(alt.d_kernel_cycles, 1), "thesis_variant_error": err,
                                  **({"parts": alt.parts} if alt.parts else {})}))
    for variant in ALT_VARIANTS:
        errs = ev.errors(variant)
        out += _dwarf_records(f"model.ptx.{variant}", ev.per_dwarf(variant), alt_identity)
        out.append(dict(name=f"model.ptx.{variant}.mean_error", value=float(np.mean(list(errs.values()))),
                        unit="ratio", better="lower", identity={**alt_identity, **aggregate.over(errs)},
                        info={"kernels": len(errs), "rates": ev.rates, "rate_sources": ev.rate_sources,
                              "variant": ALT_VARIANTS[variant]}))
    errs = ev.errors()
    out += _dwarf_records("model.ptx", ev.per_dwarf(), identity)
    table = ev.table
    out.append(dict(name="model.ptx.mean_error", value=float(np.mean(list(errs.values()))), unit="ratio",
                    better="lower", identity={**identity, **aggregate.over(errs)},
                    info={"kernels": len(errs), "calibration": ev.cal_info, "latency_sources": sources,
                          "latency_cycles": {k: round(float(v), 2) for k, v in sorted(table.cycles.items())},
                          "latency_by_class": dict(sorted(table.sources.items())),
                          "global_latency": [table.global_cycles, table.global_source],
                          "global_latency_model": ev.sweep.table(),
                          "thesis": "Alavani Table 4.9 MAPE per dwarf (K20 … GTX 1050)"}))
    for r in out:  # every prediction uses the global-latency sweep, perhaps measured in another test
        r["info"] = {**(r.get("info") or {}), **ev.sweep.marks}
    return out
