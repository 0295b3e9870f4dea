"""Alavani's protocol for the static PTX model (thesis ch. 4, §4.4.8–4.4.10, Table 4.9), as a study: every
launch of :mod:`.ptx_sweep` — 21 kernels over the eight dwarfs, 108 configurations — predicted from its
PTX by the thesis' model and the Hopper variants and measured on the device, the errors pooled per dwarf
as Table 4.9 pools them, and the held-out kernels' errors pooled apart, so that the Hopper variant is
judged on kernels it was not shaped on.

Why a study: a launch is cheap, but 108 of them with their inputs and compiles are a minute or more of a
GPU, which a gate on every change does not need (``--gpuperf-profile=study`` runs it). CUDA only, like
the model suite's test: the model reads PTX from NVRTC.

The figures (``model.ptx.study.<variant>.…``, ``variant`` one of :data:`.scheduler.VARIANTS`):

* ``<kernel>.error`` — the kernel's MAPE over its configurations (each launch's predicted and measured
  times in ``info``);
* ``dwarf.<dwarf>.mape`` — every kernel of the dwarf (design and held out), beside Table 4.9's row;
* ``held_out.dwarf.<dwarf>.mape`` and ``held_out.mape`` — the held-out kernels only;
* ``design.mape`` — the twelve kernels the Hopper variant was shaped on; ``mape`` — all 108 launches,
  beside the thesis' overall MAPE per GPU (Table 4.8).

Each identity names the latencies' source, the issue rates' (variants), the sweep's version, the kernels
and the configurations (``kernel@label``) the figure pools. A held-out kernel is run once on the device
against its NumPy reference before it is timed; a kernel that computes something else is left out of the
figures and named (:attr:`StudyResult.problems`).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ...util import aggregate
from . import cfg as cfgmod, ptx as ptxmod, scheduler
from .dwarfs import THESIS_MAPE, Shape
from ...corpora.heldout_port import HostProblem, mismatches
from .ptx_errors import THESIS_GPU_KEYS, DeviceModel, device_model, slug
from .ptx_latency import GlobalLatencyModel, LatencyTable
from .ptx_sweep import STUDY_KERNELS, SWEEP_VERSION, StudyKernel
from ...devices.base import Device
from ...helpers import KernelHelper, Measurer
from ...timing.measure import Measurement, measure
from ...timing.profiles import profile

PREFIX = "model.ptx.study"
#: the thesis' overall MAPE (%) per GPU over its 108 configurations (Table 4.8's last rows)
THESIS_OVERALL_MAPE = (28.3, 29.4, 47.8, 28.5)


@dataclass(frozen=True)
class LaunchRun:
    """One launch of the study: its kernel and configuration, what the model was given, every variant's
    prediction and the measured median time."""

    kernel: str
    dwarf: str
    held_out: bool
    config: str
    shape: Shape
    regs: int
    shared: int
    predicted: Mapping[str, scheduler.Prediction]  # variant → prediction
    measured_s: float

    def error(self, variant: str) -> float:
        """|predicted − measured| / measured."""
        return abs(self.predicted[variant].seconds - self.measured_s) / self.measured_s

    def signed(self, variant: str) -> float:
        """(predicted − measured) / measured: the thesis' MPE term (negative: under-predicted)."""
        return (self.predicted[variant].seconds - self.measured_s) / self.measured_s

    @property
    def name(self) -> str:
        return f"{self.kernel}@{self.config}"

    def row(self, variant: str) -> dict[str, Any]:
        """The launch in a record's ``info``: enough to replay its prediction offline."""
        p = self.predicted[variant]
        return {"config": self.config, "grid": self.shape.grid, "block": self.shape.block,
                "trips": list(self.shape.trips), "regs": self.regs, "shared": self.shared,
                "predicted_s": p.seconds, "measured_s": self.measured_s, "error": round(self.error(variant), 6),
                **({"bound": p.parts["bound"]} if "bound" in p.parts else {})}


@dataclass
class StudyResult:
    """Every launch measured, the device model they were predicted with, the kernels left out and why,
    and the study's wall time on the host."""

    runs: list[LaunchRun]
    model: DeviceModel
    problems: list[str] = field(default_factory=list)
    wall_s: float = 0.0

    def identity(self, variant: str) -> dict[str, str]:
        """What a variant's figures depend on besides the launches: the latencies' source (all), the issue
        rates' (the variants that take them), the sweep."""
        ident = {"latencies": "probed in session", "sweep": SWEEP_VERSION}
        if variant != "thesis":
            ident["issue_rates"] = scheduler.rates_origin(self.model.rate_sources)
        return ident


def upload(dev: Device, k: StudyKernel, shape: Shape, problem: HostProblem | None
           ) -> tuple[list[Any], list[tuple[Any, Any, int]]]:
    """The launch's arguments on ``dev``, and the (buffer, pristine copy, bytes) a timed run restores first."""
    if problem is None:
        assert k.dwarf_kernel is not None
        return k.dwarf_kernel.inputs(dev, shape), []
    bufs = {n: dev.to_device(np.ascontiguousarray(a)) for n, a in problem.buffers.items()}
    restore = [(bufs[n], dev.to_device(np.ascontiguousarray(problem.buffers[n])), int(problem.buffers[n].nbytes))
               for n in problem.restore]
    return [bufs[a] if isinstance(a, str) else a for a in problem.args], restore


def time_launch(dev: Device, gpu_measure: Measurer, kern: Any, shape: Shape, args: list[Any],
                restore: list[tuple[Any, Any, int]]) -> Measurement:
    """The launch timed with the study's repeat settings; the restored buffers copied back untimed first."""
    config = dataclasses.replace(gpu_measure.config, **profile("ptx_study", dev.info.is_cpu))

    def before() -> None:
        for dst, src, nbytes in restore:
            dev.copy(dst, src, nbytes)
    return measure(dev, lambda: dev.launch(kern, shape.global_size, shape.local_size, args), config,
                   before_each=before if restore else None)


def run(dev: Device, gpu_kernel: KernelHelper, gpu_measure: Measurer, root: Path, baseline_dir: Path,
        recorded: Mapping[str, float], kernels: Sequence[StudyKernel] = STUDY_KERNELS) -> StudyResult:
    """The device's model (:func:`.ptx_errors.device_model`), then every configuration of ``kernels``:
    compiled (once per text), predicted by every variant, measured. Each held-out kernel is first run once
    at its first configuration against its NumPy reference; one that differs is not timed and is named."""
    start = time.perf_counter()
    info = dev.info
    model = device_model(dev, gpu_kernel, gpu_measure, root, baseline_dir, recorded)
    graphs: dict[str, cfgmod.Cfg] = {}
    res = StudyResult([], model)
    for k in kernels:
        for i, c in enumerate(k.configs):
            shape = k.shape(c)
            src = k.source(info.backend, shape)
            kern = gpu_kernel.compile(src, k.name)
            if src not in graphs:
                graphs[src] = cfgmod.build(ptxmod.parse(dev.ptx(kern), k.name))
            problem = None
            if k.port is not None:
                problem = k.port.problem(np.random.default_rng(k.port.seed), shape)
                if i == 0:
                    wrong = mismatches(dev, k.port, shape, problem, kern)
                    if wrong:
                        res.problems += [f"{m} — left out of the study's figures" for m in wrong]
                        break
            args, restore = upload(dev, k, shape, problem)
            pshape = model.shape(info, kern, shape.grid, shape.block, list(shape.trips))
            pred, alt = model.predict(graphs[src], pshape)
            m = time_launch(dev, gpu_measure, kern, shape, args, restore)
            res.runs.append(LaunchRun(k.name, k.dwarf, k.held_out, c.label, shape, pshape["regs"], pshape["shared"],
                                      {"thesis": pred, **alt}, m.stats.median))
            del args, restore
    dev.release_pooled_memory()
    res.wall_s = time.perf_counter() - start
    return res


def _pooled(runs: Sequence[LaunchRun], variant: str) -> tuple[float, float]:
    """MAPE and MPE (ratios) of ``runs`` under ``variant``."""
    return (float(np.mean([r.error(variant) for r in runs])), float(np.mean([r.signed(variant) for r in runs])))


def _figure(name: str, runs: Sequence[LaunchRun], variant: str, identity: Mapping[str, str],
            info: Mapping[str, Any]) -> dict[str, Any]:
    """A MAPE over ``runs``: its identity names the kernels and the launches it pools."""
    mape, mpe = _pooled(runs, variant)
    return dict(name=name, value=mape, unit="ratio", better="lower",
                identity={**identity, **aggregate.over(r.kernel for r in runs),
                          **aggregate.over((r.name for r in runs), key="configurations")},
                info={"launches": len(runs), "mpe": mpe, **info})


def records(res: StudyResult) -> list[dict[str, Any]]:
    """Every figure of the study (module docstring), for each variant."""
    out = []
    for v in scheduler.VARIANTS:
        ident, base = res.identity(v), f"{PREFIX}.{v}"
        by_kernel: dict[str, list[LaunchRun]] = {}
        for r in res.runs:
            by_kernel.setdefault(r.kernel, []).append(r)
        for kernel, runs in by_kernel.items():
            mape, mpe = _pooled(runs, v)
            out.append(dict(name=f"{base}.{kernel}.error", value=mape, unit="ratio", better="lower",
                            identity={**ident, **aggregate.over((r.config for r in runs), key="configurations")},
                            info={"dwarf": runs[0].dwarf, "held_out": runs[0].held_out, "mpe": mpe,
                                  "launches": [r.row(v) for r in runs]}))
        for dwarf in sorted({r.dwarf for r in res.runs}):
            thesis = dict(zip(THESIS_GPU_KEYS, THESIS_MAPE[dwarf]))
            every = [r for r in res.runs if r.dwarf == dwarf]
            held = [r for r in every if r.held_out]
            out.append(_figure(f"{base}.dwarf.{slug(dwarf)}.mape", every, v, ident,
                               {"thesis_mape_pct": thesis, "held_out_kernels": sorted({r.kernel for r in held})}))
            if held:
                out.append(_figure(f"{base}.held_out.dwarf.{slug(dwarf)}.mape", held, v, ident, {"thesis_mape_pct": thesis}))
        parts = {"held_out": [r for r in res.runs if r.held_out], "design": [r for r in res.runs if not r.held_out]}
        for part, runs in parts.items():
            if runs:
                out.append(_figure(f"{base}.{part}.mape", runs, v, ident, {}))
        out.append(_figure(f"{base}.mape", res.runs, v, ident,
                           {"thesis_mape_pct": dict(zip(THESIS_GPU_KEYS, THESIS_OVERALL_MAPE)), "study_wall_s":
                            round(res.wall_s, 1), "calibration": res.model.cal_info,
                            "latency_cycles": {k: round(float(c), 2) for k, c in sorted(res.model.table.cycles.items())},
                            **latency_info(res.model.table),
                            "rates": res.model.rates, "problems": list(res.problems)}))
    return out


def latency_info(table: LatencyTable) -> dict[str, Any]:
    """What a replay needs of the latency table besides its cycles: each class's source, the fixed global
    latency and its source, and the device's fitted ``L(gm)`` model (None where it had none), so that every
    launch of a saved study can be predicted again without the GPU (``scripts/ptx_offline.py``)."""
    fit = table.global_model
    return {"latency_by_class": dict(sorted(table.sources.items())),
            "global_latency": [table.global_cycles, table.global_source],
            "global_latency_fit": None if fit is None else {"fit": fit.fit.to_json(), "source": fit.source}}


def table_from_info(info: Mapping[str, Any]) -> LatencyTable:
    """The latency table a study record's ``info`` holds (:func:`latency_info` and ``latency_cycles``); a
    ``ValueError`` naming what is missing for a record made before the study recorded it."""
    missing = [k for k in ("latency_cycles", "latency_by_class", "global_latency", "global_latency_fit") if k not in info]
    if missing:
        raise ValueError(f"the study's record holds no {', '.join(missing)}: it was made before the study recorded "
                         "its latency table, so its launches cannot be predicted again from it alone")
    saved = info["global_latency_fit"]
    fit = None if not saved else GlobalLatencyModel.from_info(saved, str(saved.get("source", "saved run")))
    glat, gsrc = info["global_latency"]
    return LatencyTable(dict(info["latency_cycles"]), dict(info["latency_by_class"]), glat, gsrc, fit)

