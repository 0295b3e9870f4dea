"""Emulated precision in the spirit of Verificarlo's VPREC backend (Lim, ch. VI; Chatelain et al. 2019):
a binary64 value rounded to a format of ``r`` exponent bits and ``p`` mantissa bits (``p`` stored bits,
precision p + 1), round to nearest, ties to even, with gradual underflow and overflow to ±inf.

Format: emax = 2^(r−1) − 1, emin = 1 − emax; the spacing of [2^e, 2^(e+1)) is 2^(e−p) for e ≥ emin and
the subnormal spacing 2^(emin−p) below 2^emin. (r, p) = (8, 23) is binary32, (5, 10) binary16,
(11, 52) binary64 itself. Restricted to r ≤ 11, p ≤ 52: a binary64 holds every such value exactly.

Where the rounding happens: **in the kernel**. :func:`render` rewrites a typed template (:mod:`.template`)
so that every template operation computes in double and rounds its result with ``gp_vprec`` (one call
per operation statement — an operation whose statement holds several flops is rounded once, not per flop
as Verificarlo does; inputs are not rounded, i.e. Verificarlo's "outbound" mode). :func:`round_host` is
the NumPy reference the device rounding is checked against.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .template import _DECL, TypedTemplate

DEVICE_FUNCTION = r"""
WL_FN double gp_vprec(double x, int p, int emin, int emax) {
  if (x == 0.0 || isnan(x) || isinf(x)) return x;
  int e = ilogb(x);
  double q = ldexp(1.0, (e > emin ? e : emin) - p);
  double y = rint(x / q) * q;
  double big = ldexp(2.0 - ldexp(1.0, -p), emax);
  if (fabs(y) > big) y = copysign(ldexp(1.0, 1024), x);
  return y;
}
"""


@dataclass(frozen=True)
class Format:
    r: int  # exponent bits
    p: int  # mantissa (stored) bits

    def __post_init__(self) -> None:
        if not (2 <= self.r <= 11 and 1 <= self.p <= 52):
            raise ValueError(f"VPREC format r={self.r}, p={self.p} outside 2 ≤ r ≤ 11, 1 ≤ p ≤ 52")

    @property
    def emax(self) -> int:
        return 2 ** (self.r - 1) - 1

    @property
    def emin(self) -> int:
        return 1 - self.emax

    @property
    def max_finite(self) -> float:
        return float(np.ldexp(2.0 - np.ldexp(1.0, -self.p), self.emax))

    def defines(self) -> str:
        return f"#define GP_P {self.p}\n#define GP_EMIN {self.emin}\n#define GP_EMAX {self.emax}\n"


def round_host(x: np.ndarray, fmt: Format) -> np.ndarray:
    """``x`` (float64) rounded to ``fmt``, round to nearest even; the reference of the device rounding."""
    x = np.asarray(x, dtype=np.float64)
    out = x.copy()
    fin = np.isfinite(x) & (x != 0)
    xf = x[fin]
    _, e2 = np.frexp(xf)
    e = np.maximum(e2 - 1, fmt.emin)
    q = np.ldexp(1.0, e - fmt.p)
    y = np.rint(xf / q) * q
    y = np.where(np.abs(y) > fmt.max_finite, np.copysign(np.inf, xf), y)
    out[fin] = y
    return out


def render(template: TypedTemplate, fmt: Format) -> str:
    """The template with every operation in double and its result rounded to ``fmt`` in the kernel."""
    src = template.source
    for name in template.ops:  # updates first: afterwards declarations no longer carry their T_ prefix
        upd = re.compile(r"(?<![\w.])(" + re.escape(name) + r")\s*(\[[^\]]*\])?\s*([-+*/]?)=(?!=)\s*([^;]*);")

        def repl(m: re.Match, name: str = name) -> str:
            if m.string[max(0, m.start() - 40):m.start()].rstrip().endswith(f"T_{name}"):
                return m.group(0)
            target = m.group(1) + (m.group(2) or "")
            rhs = m.group(4) if not m.group(3) else f"{target} {m.group(3)} ({m.group(4)})"
            return f"{target} = VP({rhs});"

        src = upd.sub(repl, src)

    def decl(m: re.Match) -> str:
        var, sub, init = m.group(2), m.group(3) or "", m.group(4)
        return f"double {var}{sub} = VP({init});" if init is not None else f"double {var}{sub};"

    src = _DECL.sub(decl, src)
    casts = "".join(f"#define T_{n} double\n" for n in template.ops)
    return (fmt.defines() + casts + DEVICE_FUNCTION +
            "#define VP(v) gp_vprec((double)(v), GP_P, GP_EMIN, GP_EMAX)\n" + src)


@dataclass(frozen=True)
class BitsSearch:
    p: int | None  # fewest mantissa bits that meet the bound (None: not even p = 52)
    errors: dict[int, float]  # p → error, for every p evaluated

    @property
    def evaluations(self) -> int:
        return len(self.errors)


def fewest_bits(error_at: Callable[[int], float], bound: float, lo: int = 1, hi: int = 52) -> BitsSearch:
    """Binary search of the fewest mantissa bits p in [lo, hi] with ``error_at(p) ≤ bound``, assuming the
    error falls as p grows; both neighbours of the answer are evaluated, so a non-monotone error shows up
    in ``errors`` (p − 1 fails, p passes is what the answer asserts)."""
    errs: dict[int, float] = {}

    def ok(p: int) -> bool:
        if p not in errs:
            errs[p] = float(error_at(p))
            if errs[p] < 0:
                raise ValueError(f"impossible negative error {errs[p]} at p={p}")
        return errs[p] <= bound

    if not ok(hi):
        return BitsSearch(None, errs)
    a, b = lo, hi  # invariant: b passes
    while a < b:
        mid = (a + b) // 2
        if ok(mid):
            b = mid
        else:
            a = mid + 1
    return BitsSearch(b, errs)


def fewest_bits_on_device(dev, program, rng, bound: float, kind: str = "rel", r: int = 11) -> tuple[BitsSearch, float]:
    """:func:`fewest_bits` for a tuner program (:mod:`.programs`) on ``dev``: every operation rounded in the
    kernel to (r, p), error against the double original in ``kind`` (:func:`.cost.errors`). Returns the
    search and the original's output scale (max |output|)."""
    from .cost import errors
    from .runner import Bench

    bench = Bench(dev, program, program.setup(rng, dev.info.is_cpu))
    reference = bench.output(frozenset())

    def error_at(p: int) -> float:
        y = bench.output_of(bench.compile(render(bench.template, Format(r, p))))
        return errors(y, reference)[kind]

    return fewest_bits(error_at, bound), float(np.max(np.abs(reference)))


ROUNDING_KERNEL = DEVICE_FUNCTION + r"""
__kernel void gp_vprec_round(__global const double* x, __global double* y, int n) {
  int i = get_global_id(0);
  if (i < n) y[i] = gp_vprec(x[i], GP_P, GP_EMIN, GP_EMAX);
}
"""


def round_device(dev, x: np.ndarray, fmt: Format) -> np.ndarray:
    """The in-kernel rounding applied to ``x`` on ``dev`` (to check it against :func:`round_host`)."""
    from ..devices import ndrange
    from ..devices.dialect import portable_fp64

    x = np.ascontiguousarray(x, dtype=np.float64)
    k = dev.compile(portable_fp64(fmt.defines() + ROUNDING_KERNEL, dev.info.backend), "gp_vprec_round")
    xb, yb = dev.to_device(x), dev.empty(x.nbytes)
    dev.launch(k, ndrange((x.size,), (256,)), (256,), [xb, yb, np.int32(x.size)])
    dev.synchronize()
    return dev.to_host(yb, np.float64, x.size)
