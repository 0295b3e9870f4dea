"""Instruction latencies for the static PTX model, with their provenance.

Order of sources, per instruction class:

1. the project's probe baselines (``baselines/<device key>.json``, backend section) — the metrics
   named in :data:`PROBE_NAMES`, in cycles (or ns, converted at the device clock); classes the probes
   do not chase (``and``, ``setp``, ``mov``) take the integer-add chain as a labelled stand-in, because
   on sm_90 they issue on the same ALU — better than a Volta row that is 10x off on this device;
2. the probe results of the same device (``results/<device key>/probes-<backend>.json``), then those of
   the same device through the other API (``probes-opencl.json`` for CUDA: event-timed chains converted
   at the reported clock), metric by metric;
3. the fallback: Alavani thesis Table 3.2, the Tesla V100 (Volta) column — the newest architecture
   the thesis measured — and Table 3.3's piecewise model for global memory (Tesla K20).

Global loads and stores are the exception the thesis makes (§3.3.3): their latency is a piecewise-linear
model of the launch's threads, ``L = a·(nT_b·nB) + b`` per interval, measured on the device
(:mod:`pytest_gpuperf.probes.global_latency`). When such a fit exists — measured in the session and passed
to :func:`latencies`, else recorded in the device's results (``info["fit"]`` of
:data:`GLOBAL_MODEL_METRIC`) — it gives ``L(gm)`` for each launch; the single probe value (DRAM chase)
and then the K20 model stay the fallbacks.

:func:`latencies` returns the table and, per class, which source it came from, so the suite records
it beside every prediction.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

from ...baselines import lookup
from ...devices import BACKENDS
from ...probes.fit import PiecewiseFit
from ...probes.global_latency import K20_TABLE_3_3
from ...util import jsonio

#: Alavani Table 3.2, Tesla V100 column (cycles); ``sfu`` uses the ``sqrt`` row (an SFU operation).
THESIS_V100: Mapping[str, float] = {
    "addf": 15, "adds": 15, "mulf": 15, "mul": 15, "and": 15, "fma": 232, "mads": 30, "divf": 977,
    "divs": 815, "cvt": 218, "sqrt": 487, "setp": 30, "mov": 49, "ld.shared": 39, "st.shared": 39, "sfu": 487,
}
#: Classes without a row of their own borrow one (documented substitution).
ALIASES: Mapping[str, str] = {
    "daddf": "addf", "dmulf": "mulf", "dfma": "fma", "div64": "divf", "sqrt64": "sqrt", "other": "adds",
    "bra": "setp", "bar": "mov", "ld.param": "mov", "atom.shared": "ld.shared",
}
GLOBAL_CLASSES = ("ld.global", "st.global", "ld.local", "st.local", "ld.generic", "st.generic", "atom.global",
                  "atom.generic")
def global_latency_k20(threads_total: int) -> float:
    """Alavani Table 3.3: piecewise-linear global load/store latency over ``nT_b × nB`` (Tesla K20); the
    fallback when the device has neither a fitted model nor a probe value. Beyond the table's last
    interval the last line holds, never below the one-thread 220 cycles."""
    x = float(threads_total)
    for _, hi, a, b in K20_TABLE_3_3[:-1]:
        if x < hi:
            return a * x + b
    _, _, a, b = K20_TABLE_3_3[-1]
    return max(a * x + b, K20_TABLE_3_3[0][3])


#: The metric whose ``info["fit"]`` holds the device's fitted global-latency model (suites/test_model_error.py).
GLOBAL_MODEL_METRIC = "model.ptx.global_latency.r2"


@dataclass(frozen=True)
class GlobalLatencyModel:
    """Alavani §3.3.3 on the device under test: ``L = a·(nT_b·nB) + b`` per interval of the launch's threads.

    Outside the measured range the latency is held at the range's end instead of extrapolating a
    segment's slope: the sweep reaches one thread and many full-device waves, and a launch beyond the
    last wave count runs more waves under the same per-wave load."""

    fit: PiecewiseFit
    source: str

    def __call__(self, threads_total: float) -> float:
        lo, hi = self.fit.segments[0].x_lo, self.fit.segments[-1].x_hi
        return self.fit.predict(min(max(float(threads_total), lo), hi))

    @classmethod
    def from_info(cls, info: Mapping[str, Any], source: str) -> "GlobalLatencyModel | None":
        """The model recorded in a metric's ``info`` (``{"fit": PiecewiseFit.to_json()}``), or None."""
        data = info.get("fit") if isinstance(info, Mapping) else None
        if not isinstance(data, Mapping):
            return None
        try:
            return cls(PiecewiseFit.from_json(dict(data)), source)
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class LatencyTable:
    cycles: Mapping[str, float]
    sources: Mapping[str, str]
    global_cycles: float | None  # fixed global latency (probe); None → the thesis' K20 model for the launch
    global_source: str
    global_model: GlobalLatencyModel | None = None  # the device's fitted model: wins over global_cycles

    def of(self, klass: str, threads_total: int) -> float:
        """Latency in cycles of one instruction class in a launch of ``threads_total`` threads (only the
        global classes depend on the launch, as in the thesis)."""
        if klass in GLOBAL_CLASSES:
            if self.global_model is not None:
                return self.global_model(threads_total)
            return self.global_cycles if self.global_cycles is not None else global_latency_k20(threads_total)
        k = klass if klass in self.cycles else ALIASES.get(klass, klass)
        if k not in self.cycles:
            raise KeyError(f"no latency for instruction class {klass!r}")
        return self.cycles[k]


def _results_metrics(path: Path) -> dict[str, dict[str, Any]]:
    """name → metric record of a results JSON (``{"metrics": [{"name": …, "value": …, "unit": …}, …]}``);
    empty when the file is absent or unreadable (results are optional inputs here)."""
    try:
        data = jsonio.read_json(path)
    except (EOFError, OSError, ValueError):
        return {}
    metrics = data.get("metrics") if isinstance(data, dict) else None
    return {m["name"]: m for m in metrics if isinstance(m, dict) and "name" in m} if isinstance(metrics, list) else {}


def _value_cycles(m: Mapping[str, Any], clock_mhz: float) -> float | None:
    value = m.get("value", m.get("expected"))
    if not isinstance(value, (int, float)) or value <= 0:
        return None
    unit = str(m.get("unit", "")).lower()
    if "cycle" in unit or unit in ("clk", "clocks"):
        return float(value)
    if unit == "ns" and clock_mhz:
        return float(value) * clock_mhz / 1e3
    return None


#: One probe metric that can stand for an instruction class: name, a scale applied to its value, and
#: whether it is the class's own operation or a documented stand-in for a class the probes do not chase.
@dataclass(frozen=True)
class ProbeRef:
    metric: str
    scale: float = 1.0
    substitute: str = ""  # why a different operation's latency stands in for this class


_ALU = "no dependent-chain probe for this class; on sm_90 it issues on the integer ALU like IADD3"
#: Instruction class → probe metrics (the probes suite records ``latency.<fp16|fp32|fp64|int32>.<op>.cycles``,
#: ``memory.<l1|l2|dram|shared>.latency.cycles`` and ``memory.global.latency.unloaded.cycles``); first found wins.
#: ``sfu`` (PTX ``.approx`` sin/cos/ex2/lg2/rcp/rsqrt) takes ``__sinf``/``native_sin`` (the MUFU path on both
#: APIs; OpenCL's ``rsqrt`` is not a bare MUFU.RSQ); ``cvt`` takes half of the ``(float)(int)x`` round trip (F2I + I2F per step).
PROBE_NAMES: Mapping[str, tuple[ProbeRef, ...]] = {
    "addf": (ProbeRef("latency.fp32.add.cycles"),), "mulf": (ProbeRef("latency.fp32.mul.cycles"),),
    "fma": (ProbeRef("latency.fp32.fma.cycles"),),
    "adds": (ProbeRef("latency.int32.add.cycles"),), "mul": (ProbeRef("latency.int32.mul.cycles"),),
    "mads": (ProbeRef("latency.int32.mad.cycles"),),
    "and": (ProbeRef("latency.int32.add.cycles", substitute=_ALU),),
    "setp": (ProbeRef("latency.int32.add.cycles", substitute=_ALU),),
    "mov": (ProbeRef("latency.int32.add.cycles", substitute=_ALU),),
    "divf": (ProbeRef("latency.fp32.div.cycles"),), "sqrt": (ProbeRef("latency.fp32.sqrt.cycles"),),
    "sfu": (ProbeRef("latency.fp32.sin_intr.cycles"), ProbeRef("latency.fp32.rsqrt.cycles"),
            ProbeRef("latency.fp32.exp_intr.cycles")),
    "cvt": (ProbeRef("latency.fp32.f32_s32_f32.cycles", 0.5),),
    "daddf": (ProbeRef("latency.fp64.add.cycles"),), "dmulf": (ProbeRef("latency.fp64.mul.cycles"),),
    "dfma": (ProbeRef("latency.fp64.fma.cycles"),), "div64": (ProbeRef("latency.fp64.div.cycles"),),
    "sqrt64": (ProbeRef("latency.fp64.sqrt.cycles"),),
    "ld.shared": (ProbeRef("memory.shared.latency.cycles"),),
    "ld.global": (ProbeRef("memory.dram.latency.cycles"), ProbeRef("memory.global.latency.unloaded.cycles")),
}
#: Classes that share a row: after the probes are mapped, these copy their partner's latency and source.
SHARED_ROWS: Mapping[str, str] = {"st.shared": "ld.shared", "bra": "setp", "bar": "mov", "ld.param": "mov",
                                  "other": "adds"}


def latencies(root: Path, device_key: str, backend: str, clock_mhz: float,
              global_model: GlobalLatencyModel | None = None, baseline_dir: Path | None = None,
              measured: Mapping[str, float] | None = None) -> LatencyTable:
    """The latency table for a device: the probe baseline (``<baseline_dir>/<key>.json``, default
    ``root/baselines``: pass the run's ``--gpuperf-baseline-dir``), else the probe
    results (``results/<key>/probes-<backend>.json``), else the thesis' fallback — per class, and
    ``sources`` says which one each class came from. Global accesses take ``global_model`` (measured in
    the session), else the fitted model recorded in ``results/<key>/models-<backend>.json``, else the fixed
    probe value or the K20 model; ``global_source`` names the one used. ``measured`` (probe metric name →
    cycles, measured in this session: :func:`..probes.latency.chain_cycles`) wins over every file, so a
    model whose latencies were all measured now depends on the device alone."""
    other = next(b for b in BACKENDS if b != backend)  # the same GPU through the other API
    baseline = lookup.resolve(baseline_dir if baseline_dir is not None else root / "baselines", device_key,
                              backend).file  # the user's file, else the reviewed one shipped with the package
    results = root / "results" / device_key
    session = {name: {"value": v, "unit": "cycles"} for name, v in (measured or {}).items()}
    sections = ((session, "probed in this session"),
                (baseline.metrics(backend), f"probe baseline {baseline.path.name}"),
                (_results_metrics(results / f"probes-{backend}.json"), f"probe results probes-{backend}.json"),
                # the same GPU probed through the other API (e.g. OpenCL events when the CUDA run has none yet)
                (_results_metrics(results / f"probes-{other}.json"),
                 f"probe results ({other}, same device) probes-{other}.json"))
    found: dict[str, tuple[float, str]] = {}
    for metrics, label in sections:
        for name, m in metrics.items():
            v = _value_cycles(m, clock_mhz)
            if v is not None and name not in found:
                found[name] = (v, f"{label}: {name}")
    cycles: dict[str, float] = dict(THESIS_V100)
    sources = {k: "Alavani Table 3.2 (Tesla V100) - no probe data for this device" for k in THESIS_V100}
    global_cycles, global_source = None, "Alavani Table 3.3 (Tesla K20 piecewise model) - no probe data"
    for klass, refs in PROBE_NAMES.items():
        ref = next((r for r in refs if r.metric in found), None)
        if ref is None:
            continue
        value, where = found[ref.metric]
        value *= ref.scale
        label = where + (f" x{ref.scale:g}" if ref.scale != 1.0 else "") + \
            (f" (substitute: {ref.substitute})" if ref.substitute else "")
        if klass == "ld.global":
            global_cycles, global_source = value, label
            continue
        cycles[klass], sources[klass] = value, label
    for klass, partner in SHARED_ROWS.items():
        if partner in cycles and sources.get(partner, "").startswith("probe"):
            cycles[klass], sources[klass] = cycles[partner], sources[partner]
    table = LatencyTable(cycles, sources, global_cycles, global_source)
    model = global_model or recorded_global_model(root, device_key, backend)
    return with_global_model(table, model) if model is not None else table


def recorded_global_model(root: Path, device_key: str, backend: str) -> GlobalLatencyModel | None:
    """The fitted global-latency model of the device's last model-error run (results JSON keep ``info``;
    baselines do not), or None."""
    path = root / "results" / device_key / f"models-{backend}.json"
    m = _results_metrics(path).get(GLOBAL_MODEL_METRIC)
    if m is None:
        return None
    return GlobalLatencyModel.from_info(m.get("info", {}), f"fitted model recorded in {path.name}: {GLOBAL_MODEL_METRIC}")


def with_global_model(table: LatencyTable, model: GlobalLatencyModel) -> LatencyTable:
    """``table`` with ``model`` for the global classes; the fixed value it replaces stays in the source text."""
    before = f"{table.global_cycles:.1f} cycles" if table.global_cycles is not None else "the K20 model"
    return replace(table, global_model=model,
                   global_source=f"{model.source} (replaces {before}: {table.global_source})")


def chain_ops() -> list[str]:
    """The probe operations (``fp32.fma``, …) whose dependent-chain latencies :data:`PROBE_NAMES` uses:
    what :func:`..probes.latency.chain_cycles` measures for the PTX model."""
    from ...probes.ops import ALL_OPS
    by_metric = {o.metric("latency", "cycles"): o.name for o in ALL_OPS}
    return sorted({by_metric[r.metric] for refs in PROBE_NAMES.values() for r in refs if r.metric in by_metric})

