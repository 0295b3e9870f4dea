"""The sampled-kernel model (Dao, thesis ch. 2) over the project's corpus, under each sampling protocol.

Two protocols are measured on the same kernels, buffers and full runs, and recorded as separate metric
families, so a baseline never compares unlike things:

* :data:`DAO` — the thesis' protocol and the default (``model.sampled.*``, ``model.svr.*``): samples at
  the 2nd and 3rd saturation points (``P_sat1 = 2·P_sat``, ``P_sat2 = 3·P_sat`` groups per compute unit,
  §2.5.1), the ML model evaluated leave-one-kernel-out (§2.6.1), overhead as the thesis defines it — the
  device time of the two samples relative to the run they predict (§2.6.4: "the overhead of sampling
  compared to the total runtime of the kernels").
* :data:`PROJECT` — the project's own geometry (``model.sampled_project.*``, ``model.svr_project.*``):
  the 2m-th and 3m-th saturation points, m the largest multiple keeping the 5m sampled waves within
  :data:`MAX_OVERHEAD` of the run (30 % on CPU devices, where a wave is ~1 µs against ~100 µs of launch
  jitter). A longer slope lowers the amplification of the samples' timing noise, at a larger overhead.

What differs from the thesis in both, and is named wherever the figures are quoted: the corpus is the
project's 24 self-written kernels (every work-group does its exact share), not Dao's 70 application
kernels of ≥ 0.1 s, and the ML model is an RBF SVR on portable features, not his regression on hardware
counters.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ...devices.base import Device, Kernel
from ...util import aggregate
from . import svr
from .sampling import GEOMETRY, SampledRun, describe, multiple_for, saturation_point, steady_state_flush

MAX_OVERHEAD = 0.035  # the project's geometry: 5m sampled waves ≤ 3.5 % of the run
#: CPU devices time the corpus warm: the whole data set of a CPU run (a few hundred KiB) stays in the
#: host's caches, and evicting a last-level cache PoCL may report as hundreds of MiB costs ~0.1 s a run,
#: more than the runs themselves; full and sampled runs are both warm, so the model's error compares like
#: with like (identity ``cache: warm``)
WARM_CPU = "none: full and sampled runs both warm (a CPU device's data set stays in the host's caches)"
#: run lengths (waves) per kernel; the longest is the reported run (a CPU device's wave is one work-group per
#: core and lasts microseconds: its runs start longer)
WAVES_GPU = (200, 400, 800)
WAVES_CPU = (400, 800)
MAX_OVERHEAD_CPU = 0.30  # CPU devices: a slope over a few ~1 µs waves is launch jitter, so sample longer


@dataclass(frozen=True)
class Protocol:
    """Where the two samples sit and which metric family records the figures."""

    name: str
    family: str
    svr_family: str
    label: str

    def multiple(self, waves: int, cpu: bool) -> int:
        """m: the samples sit at the 2m-th and 3m-th saturation points of a ``waves``-wave run."""
        return 1 if self.name == "dao" else multiple_for(waves, MAX_OVERHEAD_CPU if cpu else MAX_OVERHEAD)

    def identity(self, waves: int) -> dict[str, Any]:
        if self.name == "dao":
            return {"sampling": "dao", "saturation_points": "2,3", "waves": waves}
        return {"sampling": GEOMETRY, "waves": waves}


DAO = Protocol("dao", "model.sampled", "model.svr",
               "Dao §2.5.1/§2.6: the 2nd and 3rd saturation points, overhead = sampled time / full run")
PROJECT = Protocol("project", "model.sampled_project", "model.svr_project",
                   "the project's geometry: the 2m-th and 3m-th saturation points, 5m sampled waves ≤ 3.5 % of the run")
PROTOCOLS = (DAO, PROJECT)


def protocols_for(cpu: bool) -> tuple[Protocol, ...]:
    """The protocols a device is measured by. A CPU device's waves last about a microsecond, so Dao's
    one-wave samples time launch jitter, not the kernel (their error reads thousands of percent): there
    only the project's geometry, which samples longer, is measured."""
    return (PROJECT,) if cpu else PROTOCOLS


@dataclass
class CorpusResult:
    """One protocol's runs: the longest run of every kernel and the SVR's instances over all lengths."""

    protocol: Protocol
    waves: tuple[int, ...]
    cpu: bool
    main: dict[str, SampledRun] = field(default_factory=dict)
    instances: list[svr.Instance] = field(default_factory=list)
    #: the kernels were a part of the corpus (a suite profile's): the leave-one-kernel-out SVR would be
    #: trained on another set, so it is another model and is not recorded
    part: bool = False

    @property
    def errors(self) -> list[float]:
        return [r.error_rel for r in self.main.values()]

    def svr_errors(self) -> dict[str, tuple[float, float, float, int]]:
        """kernel → (error, predicted s, measured s, training instances), leave-one-kernel-out."""
        loko = svr.leave_one_kernel_out(self.instances)
        out = {}
        for name, preds in loko.items():
            inst, t_ml = max(preds, key=lambda p: p[0].n)
            out[name] = (abs(t_ml - inst.t_full) / inst.t_full, t_ml, inst.t_full,
                         sum(len(v) for k, v in loko.items() if k != name))
        return out


Sampler = Callable[..., SampledRun]


def waves_for(cpu: bool) -> tuple[int, ...]:
    """The run lengths (in waves) a device class measures each kernel at."""
    return WAVES_CPU if cpu else WAVES_GPU


def measure(dev: Device, kernels: Mapping[str, Kernel], sampled_kernel: Sampler, timing: Mapping[str, Any],
            protocols: tuple[Protocol, ...] | None = None, only: Sequence[str] | None = None) -> list[CorpusResult]:
    """Every kernel at every run length under every protocol; the full run is measured once per kernel and
    length (with the first protocol's samples) and shared. GPUs pre-run each kernel over 2×L2 scratch
    buffers before every timed run (:func:`.sampling.steady_state_flush`); CPU devices run warm (:data:`WARM_CPU`).

    ``only``: measure these of ``kernels`` (a suite profile's part). The buffers are sized and filled over
    all of ``kernels`` all the same, so a kernel's figures do not depend on which others ran."""
    info = dev.info
    cpu = info.is_cpu
    protocols = protocols_for(cpu) if protocols is None else protocols
    local = 64 if cpu else 256
    waves = waves_for(cpu)
    sats = {n: saturation_point(info, k.attributes, local) for n, k in kernels.items()}
    n_items = max(waves) * max(s.wave for s in sats.values()) * local
    rng = np.random.default_rng(42)
    a, b = (dev.to_device(rng.random(n_items, dtype=np.float32) + 0.5) for _ in range(2))
    c = dev.empty(4 * n_items)
    scratch: list[Any] = []
    flush_items = max(2 * int(info.l2_bytes or 0), 64 << 20) // 4 // local * local
    if not cpu:
        scratch = [dev.to_device(rng.random(flush_items, dtype=np.float32) + 0.5) for _ in range(2)]
        scratch += [dev.empty(4 * flush_items), np.int32(flush_items)]
    chosen = list(kernels) if only is None else list(only)
    unknown = sorted(set(chosen) - set(kernels))
    if unknown or not chosen:
        raise ValueError(f"sampled corpus: cannot measure {unknown or 'no kernel'}; known: {', '.join(kernels)}")
    part = set(chosen) != set(kernels)
    results = [CorpusResult(p, waves, cpu, part=part) for p in protocols]
    for name, kern in ((n, kernels[n]) for n in chosen):
        pre = None if cpu else steady_state_flush(dev, kern, local, scratch)
        attrs = kern.attributes
        for w in waves:
            n_groups = w * sats[name].wave
            args = [a, b, c, np.int32(n_groups * local)]
            full = None
            for res in results:
                run = sampled_kernel(kern, local, args, n_groups, multiple=res.protocol.multiple(w, cpu), flush=pre,
                                     cold=not cpu, geometry=GEOMETRY, full=full is None, **timing)
                run = run if full is None else dataclasses.replace(run, t_full=full)
                full = run.t_full
                res.instances.append(svr.Instance(
                    name, sats[name].p_sat, float(attrs.get("num_regs", 0)),
                    float(attrs.get("shared_size_bytes", attrs.get("local_bytes", 0))), local, run.plan.p1,
                    run.plan.p2, n_groups, run.t_p1.stats.median, run.t_p2.stats.median, run.measured))
                if w == max(waves):
                    res.main[name] = run
    return results


def kernel_records(p: Protocol, name: str, run: SampledRun, kernel: Mapping[str, Any], cpu: bool,
                   meta: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One kernel's error and sampling overhead under protocol ``p``, as ``gpuperf_record`` keyword sets.

    The error's own standard error in this run (``error_se``: the slope's amplification times the scatter
    of the alternating sample pairs, :meth:`SampledRun.noise`) travels in its info, so a baseline's band
    holds the larger of it and the runs' spread: three runs that agree by chance do not make a band
    narrower than one run's own noise. On CPU devices a one-wave slope is launch jitter, so there the
    per-kernel figures gate only where the baseline's runs agree (``gate: if-stable``)."""
    noise = run.noise()
    stable = {"gate": "if-stable"} if cpu else {}
    return [dict(name=f"{p.family}.{name}.error", value=run.error_rel, info={**meta, **noise, **stable}, **kernel),
            dict(name=f"{p.family}.{name}.overhead", value=run.overhead,
                 info={**noise, "protocol": p.label, **stable}, **kernel)]


def svr_per_kernel(svr_err: Mapping[str, tuple[float, float, float, int]]) -> dict[str, dict[str, float]]:
    """The SVR's leave-one-kernel-out error per kernel, kept in its mean's info: one kernel's SVR error
    moves several-fold between unchanged runs (its features carry the samples' amplified noise and the
    other kernels' training data), so only the mean over the kernels is a gated figure."""
    return {name: {"error": round(err, 6), "predicted_s": t_ml, "measured_s": t_full, "train_instances": n}
            for name, (err, t_ml, t_full, n) in sorted(svr_err.items())}


def records(res: CorpusResult) -> list[dict[str, Any]]:
    """The protocol's figures as ``gpuperf_record`` keyword sets: per kernel (:func:`kernel_records`) and
    the means over the kernels, each with the protocol in its identity and info."""
    p, cpu = res.protocol, res.cpu
    ident = {**p.identity(max(res.waves)), **({"cache": "warm"} if cpu else {})}
    kernel = dict(unit="ratio", better="lower", identity=ident)  # bands: baselines/catalog.py
    out: list[dict[str, Any]] = []
    for name, run in res.main.items():
        meta = {**describe(run.plan), "predicted_s": run.predicted, "measured_s": run.measured,
                "model": "Dao thesis §2.5.1 linear model", "protocol": p.label}
        out += kernel_records(p, name, run, kernel, cpu, meta)
    svr_err = {} if res.part else res.svr_errors()
    scope = {**ident, **aggregate.over(res.main)}
    mean = dict(unit="ratio", better="lower")
    out.append(dict(name=f"{p.family}.mean_error", value=float(np.mean(res.errors)), identity=scope, **mean,
                    info={"kernels": len(res.main), "protocol": p.label,
                          "seed": "Dao: linear 5.72 / 7.19 / 8.10 % (GTX 580 / GTX 280 / HD 6970), 70 application kernels"}))
    out.append(dict(name=f"{p.family}.mean_overhead", value=float(np.mean([r.overhead for r in res.main.values()])),
                    identity=scope, **mean,
                    info={"protocol": p.label, "waves": list(res.waves), "seed": "Dao: 8 % (NVIDIA), 15 % (AMD)",
                          "definition": "(t_P1 + t_P2) / t_full per kernel, mean over kernels",
                          "cold_cache": WARM_CPU if cpu else "steady-state pre-run of the same kernel over 2xL2 "
                                                                 "scratch buffers"}))
    if not svr_err:
        return out
    out.append(dict(name=f"{p.svr_family}.mean_error", value=float(np.mean([e[0] for e in svr_err.values()])),
                    identity={**ident, **aggregate.over(svr_err)}, **mean,
                    info={**svr.split_report(res.instances), "features": list(svr.FEATURES), "protocol": p.label,
                          "per_kernel": svr_per_kernel(svr_err),
                          "seed": "Dao: ML 4.76 / 6.42 / 7.91 % (GTX 580 / GTX 280 / HD 6970), leave-one-kernel-out"}))
    return out
