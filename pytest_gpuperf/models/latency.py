"""Instruction latencies for the static PTX model, with their provenance.

Order of sources, per instruction class:

1. the project's probe baselines (``baselines/<device key>.json``, backend section) — metrics whose
   named in :data:`PROBE_NAMES`, in cycles (or ns, converted at the device clock);
2. the probe results of the same device (``results/<device key>/probes-<backend>.json``);
3. the fallback: Alavani thesis Table 3.2, the Tesla V100 (Volta) column — the newest architecture
   the thesis measured — and Table 3.3's piecewise model for global memory (Tesla K20).

:func:`latencies` returns the table and, per class, which source it came from, so the suite records
it beside every prediction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

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
    """Alavani Table 3.3: piecewise-linear global load/store latency over ``nT_b × nB`` (Tesla K20)."""
    x = float(threads_total)
    if x < 4096:
        return 0.02828 * x + 220
    if x < 24576:
        return 0.004780 * x + 251.7
    if x < 991232:
        return 0.0001679 * x + 307.8
    return max(-0.00002529 * x + 501.8, 220.0)


@dataclass(frozen=True)
class LatencyTable:
    cycles: Mapping[str, float]
    sources: Mapping[str, str]
    global_cycles: float | None  # None → use the thesis' piecewise model for the launch
    global_source: str

    def of(self, klass: str, threads_total: int) -> float:
        if klass in GLOBAL_CLASSES:
            return self.global_cycles if self.global_cycles is not None else global_latency_k20(threads_total)
        k = klass if klass in self.cycles else ALIASES.get(klass, klass)
        if k not in self.cycles:
            raise KeyError(f"no latency for instruction class {klass!r}")
        return self.cycles[k]


def _metrics_of(path: Path, backend: str) -> dict[str, dict[str, Any]]:
    """name → {value, unit} from a baseline or results JSON (either schema: a ``metrics`` mapping or list)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    sections = [data.get(backend, {}), data.get("backends", {}).get(backend, {}), data]
    for sec in sections:
        metrics = sec.get("metrics") if isinstance(sec, dict) else None
        if isinstance(metrics, dict):
            return {k: v for k, v in metrics.items() if isinstance(v, dict)}
        if isinstance(metrics, list):
            return {m["name"]: m for m in metrics if isinstance(m, dict) and "name" in m}
    return {}


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


#: Instruction class → probe metric names (the probes suite records
#: ``latency.<fp32|fp64|int32|fp16>.<op>.cycles`` and ``memory.<l1|l2|dram|shared>.latency.cycles``), first found wins.
PROBE_NAMES: Mapping[str, tuple[str, ...]] = {
    "addf": ("latency.fp32.add.cycles",), "mulf": ("latency.fp32.mul.cycles",), "fma": ("latency.fp32.fma.cycles",),
    "adds": ("latency.int32.add.cycles",), "mul": ("latency.int32.mul.cycles",), "mads": ("latency.int32.mad.cycles",),
    "and": ("latency.int32.and.cycles", "latency.int32.xor.cycles", "latency.int32.add.cycles"),
    "divf": ("latency.fp32.div.cycles",), "divs": ("latency.int32.div.cycles",), "sqrt": ("latency.fp32.sqrt.cycles",),
    "sfu": ("latency.fp32.sin.cycles", "latency.fp32.ex2.cycles", "latency.fp32.rcp.cycles"),
    "daddf": ("latency.fp64.add.cycles",), "dmulf": ("latency.fp64.mul.cycles",), "dfma": ("latency.fp64.fma.cycles",),
    "div64": ("latency.fp64.div.cycles",), "sqrt64": ("latency.fp64.sqrt.cycles",),
    "ld.shared": ("memory.shared.latency.cycles",), "ld.global": ("memory.dram.latency.cycles",),
}


def latencies(root: Path, device_key: str, backend: str, clock_mhz: float) -> LatencyTable:
    """The latency table for a device: the probe baseline (``baselines/<key>.json``), else the probe
    results (``results/<key>/probes-<backend>.json``), else the thesis' fallback — per class, and
    ``sources`` says which one each class came from."""
    files = ((root / "baselines" / f"{device_key}.json", "probe baseline"),
             (root / "results" / device_key / f"probes-{backend}.json", "probe results"))
    found: dict[str, tuple[float, str]] = {}
    for path, label in files:
        for name, m in _metrics_of(path, backend).items():
            v = _value_cycles(m, clock_mhz)
            if v is not None and name not in found:
                found[name] = (v, f"{label} {path.name}: {name}")
    cycles: dict[str, float] = dict(THESIS_V100)
    sources = {k: "Alavani Table 3.2 (Tesla V100) - no probe data for this device yet" for k in THESIS_V100}
    global_cycles, global_source = None, "Alavani Table 3.3 (Tesla K20 piecewise model) - no probe data yet"
    for klass, names in PROBE_NAMES.items():
        hit = next((found[n] for n in names if n in found), None)
        if hit is None:
            continue
        if klass == "ld.global":
            global_cycles, global_source = hit
            continue
        cycles[klass], sources[klass] = hit
        if klass == "ld.shared":
            cycles["st.shared"], sources["st.shared"] = hit
    return LatencyTable(cycles, sources, global_cycles, global_source)

