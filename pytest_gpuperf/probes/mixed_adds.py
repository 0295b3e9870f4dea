"""Mixed-precision addition throughput (Surineni thesis §6.2, Fig. 27, Table IX).

Three kernels run dependent floating-point additions at full occupancy: binary32 only, binary64 only, and
both interleaved 50:50 (``fadd a; dadd c; fadd b; dadd d``). Surineni's point: on a GPU whose binary64
units are few, the interleaved kernel keeps both kinds of unit busy, so it issues binary64 additions at
the binary64-only rate *and* binary32 ones beside them — on a Maxwell Titan X 186 GFLOP/s against 93 for
binary64 alone (Table IX: 2×). The figure that carries the claim is ``mixed_over_fp64``: the mixed
kernel's additions per second over the binary64-only kernel's.

Each chain is ``x = x + y; y = y - x`` (two dependent additions per step, period 6, so the values stay
bounded and never become subnormal or infinite); every work-item writes its result, so no chain is dead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..devices.base import Device
from ..devices.dialect import dialect, portable
from ..timing import observers
from ..timing.stats import Stats
from .throughput import geometry

THESIS = ("Surineni thesis §6.2 Table IX (Maxwell Titan X): binary32 2.4 TFLOP/s, binary64 93 GFLOP/s, "
          "mixed 50:50 186 GFLOP/s (2x binary64)")

_BODY = r"""
KERNEL void mix_fp32(GLOBAL float* out, float x0, float y0, int n) {
  float a = x0 + (float)(GID & 7), b = y0;
  for (int i = 0; i < n; ++i) { a = a + b; b = b - a; }
  out[GID] = a + b;
}
KERNEL void mix_fp64(GLOBAL double* out, double x0, double y0, int n) {
  double c = x0 + (double)(GID & 7), d = y0;
  for (int i = 0; i < n; ++i) { c = c + d; d = d - c; }
  out[GID] = c + d;
}
KERNEL void mix_both(GLOBAL double* out, float x0, float y0, double u0, double v0, int n) {
  float a = x0 + (float)(GID & 7), b = y0;
  double c = u0 + (double)(GID & 7), d = v0;
  for (int i = 0; i < n; ++i) { a = a + b; c = c + d; b = b - a; d = d - c; }
  out[GID] = (double)(a + b) + (c + d);
}
"""

#: dependent steps per work-item (each step: two additions per precision)
STEPS = {"gpu": 4096, "cpu": 128}


def source(backend: str) -> str:
    """The three kernels in ``backend``'s language (binary64 declared where the language needs it)."""
    return portable(dialect(backend).fp64_prelude + _BODY, backend)


@dataclass(frozen=True)
class MixedAdds:
    """Additions per second of each kernel (``fp32``, ``fp64``, ``mixed``: both kinds counted) and the ratio."""

    rates: dict[str, Stats]
    steps: int
    work_items: int
    inherited: dict[str, Any]

    def records(self) -> list[dict[str, Any]]:
        """The suite's records: ``throughput.mixed_add.<kind>.adds_per_s`` and ``.mixed_over_fp64``."""
        ident = {"steps": self.steps, "work_items": self.work_items}
        out = [{"name": f"throughput.mixed_add.{k}.adds_per_s", "value": s.median, "unit": "1/s", "better": "higher",
                "stats": s, "identity": ident, "info": {"definition": f"{k}: dependent additions per second",
                                                        "citation": THESIS}} for k, s in self.rates.items()]
        ratio = self.rates["mixed"].median / self.rates["fp64"].median
        out.append({"name": "throughput.mixed_add.mixed_over_fp64", "value": ratio, "unit": "x", "better": "higher",
                    "identity": ident, "info": {"definition": "mixed kernel's additions per second / binary64-only "
                                                "kernel's", "citation": THESIS, **self.inherited}})
        return out


def measure(device: Device, measurer: Callable[..., Any]) -> MixedAdds:
    """Time the three kernels at full occupancy with ``measurer`` (``gpu_measure`` bound to a profile)."""
    info = device.info
    glob, local = geometry(device)
    steps = STEPS["cpu" if info.is_cpu else "gpu"]
    src = source(info.backend)
    k32, k64, kmix = (device.compile(src, name) for name in ("mix_fp32", "mix_fp64", "mix_both"))
    out = device.empty(glob * 8)
    n = np.int32(steps)
    adds = 2.0 * steps * glob  # per precision
    runs = {"fp32": (k32, [out, np.float32(1.0), np.float32(-0.5), n], adds),
            "fp64": (k64, [out, np.float64(1.0), np.float64(-0.5), n], adds),
            "mixed": (kmix, [out, np.float32(1.0), np.float32(-0.5), np.float64(1.0), np.float64(-0.5), n], 2 * adds)}
    rates = {}
    for kind, (k, args, count) in runs.items():
        m = measurer(k, (glob,), (local,), args)
        rates[kind] = m.stats.reciprocal(count)
    return MixedAdds(rates, steps, glob, observers.inherit(device))
