"""Composite-precision (CMP float2) multiplication, division and exponential against MPFR (Surineni thesis
§2.3 and ch. 4: Taufer et al.'s CMP library; Table II counts the operations), beside the plain binary32
operation on the same inputs.

A float2 holds a value and an error component, ``x = x.v + x.e`` (here ``x.e`` is the rounding error of a
binary64 number rounded to ``x.v``). The forms, each evaluated on the device element-wise:

* **mul** (4 multiplications, 2 additions): ``z.v = x.v·y.v``, ``z.e = x.v·y.e + x.e·y.v + x.e·y.e``;
* **div** (1 reciprocal, 4 multiplications, 3 additions/subtractions): ``r = 1/y.v``, ``z.v = x.v·r``,
  ``z.e = ((x.v − z.v·y.v) + x.e − z.v·y.e)·r`` — the correction of the quotient by its residual, the form
  Taufer's division takes (the thesis' Fig. 3 is a figure the text does not carry; this form is ours);
* **exp** (built-in based, the thesis' eq. 5): ``exp(x) = exp(x.v)·exp(x.e)``, the product kept as a float2
  (``z.e = fma(a, b, −z.v)``, its exact rounding error).

The error is ``|(z.v + z.e) − f(x, y)| / |f(x, y)|`` against MPFR at 200 bits of the float2 inputs' exact
values; the binary32 row applies the plain operation to ``x.v`` (and ``y.v``), so it also loses the
inputs' error components — what a program that stores float instead of float2 loses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gmpy2
import numpy as np

from ..devices.dialect import dialect
from . import expr_kernels, fp_formats

OPS = ("mul", "div", "exp")
THESIS = ("Surineni thesis §2.3, §4.3-4.4 (CMP float2 after Taufer et al.; Table II: mul 4 mul + 2 add, "
          "div 1 rcp + 4 mul + 1 add + 1 sub; exp = exp(x.v)·exp(x.e))")
#: inputs per operation (seeded), and where they lie
N = 2000
DOMAIN = {"mul": (0.1, 100.0), "div": (0.1, 100.0), "exp": (-10.0, 10.0)}


def expressions(backend: str, op: str) -> tuple[str, str, str]:
    """(z.v, z.e, plain binary32) expressions in x0 = x.v, x1 = x.e, x2 = y.v, x3 = y.e."""
    sfx = dialect(backend).libm_float_suffix
    e, fma = "exp" + sfx, "fma" + sfx
    if op == "mul":
        return "x0 * x2", "x0 * x3 + x1 * x2 + x1 * x3", "x0 * x2"
    if op == "div":
        q = "(x0 * (1.0f / x2))"
        return q, f"((x0 - {q} * x2) + x1 - {q} * x3) * (1.0f / x2)", "x0 / x2"
    if op == "exp":
        return f"{e}(x0) * {e}(x1)", f"{fma}({e}(x0), {e}(x1), -({e}(x0) * {e}(x1)))", f"{e}(x0)"
    raise ValueError(f"unknown composite operation {op!r}; expected one of {', '.join(OPS)}")


def float2_inputs(lo: float, hi: float, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(x.v, x.e): binary64 draws in [lo, hi] split into their binary32 rounding and its residual."""
    d = rng.uniform(lo, hi, n)
    v = d.astype(np.float32)
    return v, (d - v.astype(np.float64)).astype(np.float32)


def _exact(op: str, xv: float, xe: float, yv: float, ye: float) -> Any:
    x = gmpy2.mpfr(xv) + gmpy2.mpfr(xe)
    y = gmpy2.mpfr(yv) + gmpy2.mpfr(ye)
    return x * y if op == "mul" else x / y if op == "div" else gmpy2.exp(x)


def relative_errors(op: str, cols: list[np.ndarray], value: np.ndarray, error: np.ndarray) -> np.ndarray:
    """|(value + error) − f| / |f| per element, with f and the sum in MPFR at 200 bits."""
    out = np.empty(value.size)
    with gmpy2.context(precision=200):
        for i in range(value.size):
            f = _exact(op, *(float(c[i]) for c in cols))
            z = gmpy2.mpfr(float(value[i])) + gmpy2.mpfr(float(error[i]))
            out[i] = float(abs(z - f) / abs(f))
    return out


@dataclass(frozen=True)
class CompositeResult:
    """One operation's maximum relative errors, float2 and plain binary32, on the same seeded inputs."""

    op: str
    float2: float
    float32: float
    n: int
    seed: int

    def records(self) -> list[dict[str, Any]]:
        ident = {"inputs": "seeded", "n": self.n, "seed": self.seed, "domain": list(DOMAIN[self.op])}
        return [{"name": f"accuracy.cmp.{kind}.{self.op}.max_rel_err", "value": v, "unit": "1", "better": "lower",
                 "identity": ident, "info": {"citation": THESIS, "reference": "MPFR, 200 bits, of the float2 inputs"}}
                for kind, v in (("float2", self.float2), ("float", self.float32))]


def check(device: Any, op: str, rng: np.random.Generator, seed: int) -> CompositeResult:
    """Evaluate ``op`` in float2 and in plain binary32 on ``device`` over :data:`N` seeded inputs."""
    lo, hi = DOMAIN[op]
    xv, xe = float2_inputs(lo, hi, N, rng)
    yv, ye = float2_inputs(lo, hi, N, rng)
    cols = [xv, xe, yv, ye]
    zv_expr, ze_expr, plain_expr = expressions(device.info.backend, op)
    fmt = fp_formats.FP32
    zv = expr_kernels.evaluate(device, fmt, zv_expr, cols)
    ze = expr_kernels.evaluate(device, fmt, ze_expr, cols)
    plain = expr_kernels.evaluate(device, fmt, plain_expr, cols)
    e2 = relative_errors(op, cols, zv, ze)
    e1 = relative_errors(op, cols, plain, np.zeros_like(plain))
    return CompositeResult(op, float(e2.max()), float(e1.max()), N, seed)
