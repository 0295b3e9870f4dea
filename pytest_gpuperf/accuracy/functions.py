"""The catalog of math functions under test: device spellings, bulk references, sampling domains and
the documented maximum errors with their citations.

Documented bounds (maximum ULP error over the full range, default build):

* CUDA — CUDA C++ Programming Guide, appendix "Mathematical Functions", tables "Single-Precision
  Mathematical Standard Library Functions with Maximum ULP Error" and "Double-Precision ...". CUDA
  states its figure as "the absolute value of the difference in ulps between the correctly rounded
  result and the result returned by the CUDA library function", so CUDA bounds are checked against
  :attr:`ulp.UlpErrors.cr` (representable steps to the correctly rounded result).
* OpenCL — OpenCL C Specification 3.0, section "Relative Error as ULPs", tables "ULP values for
  single precision built-in math functions" and "... double precision ..." (full profile). OpenCL
  measures against the exact value (ulp(x) of the infinitely precise result), so OpenCL bounds are
  checked against :attr:`ulp.UlpErrors.ulp`.

``None`` means "no documented bound" (OpenCL leaves lgamma's accuracy undefined): the value is
recorded, not gated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ..devices.dialect import CUDA, OPENCL, dialect, per_language
from .rounding import LD

CUDA_CITE = ("CUDA C++ Programming Guide (CUDA 12/13), Appendix 'Mathematical Functions', table "
             "'{prec}-Precision Mathematical Standard Library Functions with Maximum ULP Error' "
             "(ulps from the correctly rounded result)")
OPENCL_CITE = ("OpenCL C Specification 3.0, 'Relative Error as ULPs', table 'ULP values for {prec} precision "
               "built-in math functions' (full profile; ulps of the exact result)")


#: The document a bound is cited from, per kernel language, for "Single"/"Double" precision. (The error
#: convention each states its bounds in is the dialect's ``libm_bound_convention``.)
CITATION: dict[str, Callable[[str], str]] = per_language(cuda=lambda prec: CUDA_CITE.format(prec=prec),
                                                         opencl=lambda prec: OPENCL_CITE.format(prec=prec.lower()))


def _ld(fn: Callable) -> Callable:
    """A numpy ufunc evaluated in x87 long double (64-bit significand): ≥ 11 bits beyond binary64."""
    def call(*args: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return fn(*[np.asarray(a).astype(LD) for a in args])
    return call


def _special(name: str) -> Callable:
    """``scipy.special.<name>`` (vectorized) when scipy is installed, else Python's ``math`` module
    element-wise (a fallback loop, ~0.3 µs per element). Both are binary64 functions good to a few ulp of
    binary64, i.e. < 2^-25 ulp of binary32 — and every maximum is re-derived by MPFR anyway."""
    try:
        import scipy.special as sp
        return {"erf": sp.erf, "erfc": sp.erfc, "gamma": sp.gamma, "gammaln": sp.gammaln}[name]
    except ImportError:  # pragma: no cover - depends on the host
        def safe(f):
            def g(v):
                try:
                    return f(v)
                except (ValueError, OverflowError):
                    return math.nan if name != "gamma" or v < 0 else math.inf
            return g
        fn = {"erf": math.erf, "erfc": math.erfc, "gamma": math.gamma, "gammaln": math.lgamma}[name]
        return np.vectorize(safe(fn), otypes=[np.float64])


def _scipy(name: str) -> Callable:
    """A binary64 special function (see :func:`_special`) as a long double reference for binary32."""
    def call(*args: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            v = _special(name)(*[np.asarray(a, np.float64) for a in args])
            return np.asarray(v, np.float64).astype(LD)
    return call


def _lgamma(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        x = np.asarray(x, np.float64)
        v = _special("gammaln")(x)
        v = np.where((x <= 0) & (x == np.floor(x)), np.inf, v)  # poles: C lgamma returns +inf
        v = np.where(np.isinf(x), np.inf, v)
        return v.astype(LD)


def _tgamma(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        x = np.asarray(x, np.float64)
        v = _special("gamma")(x)
        v = np.where((x < 0) & (x == np.floor(x)), np.nan, v)  # C: negative integers are a domain error
        v = np.where(x == 0, np.copysign(np.inf, x), v)
        v = np.where(x == -np.inf, np.nan, v)
        return v.astype(LD)


@dataclass(frozen=True)
class MathFunction:
    """One libm function and everything needed to test it on both backends."""

    name: str
    arity: int
    #: bulk reference in long double (fp32 targets); None: MPFR per element
    ref32: Optional[Callable]
    #: bulk reference good to < 2^-10 ulp of binary64 (long double); None: MPFR per element (smaller sample)
    ref64: Optional[Callable]
    #: documented bounds per kernel language (:func:`per_language`): (fp32, fp64), None where undocumented
    bounds: dict = field(default_factory=dict)
    #: interval sampled densely besides the all-binade stratification (per argument)
    domain: tuple = (-1e30, 1e30)
    #: spelling on each backend: "{name}f" style templates; %s are the arguments
    cuda32: str = ""
    cuda64: str = ""
    opencl: str = ""
    note: str = ""

    def expr(self, backend: str, fmt: str, args: list[str]) -> str:
        """The call in the language of ``backend``: this function's own spelling there if it has one, else
        the C library's name (binary32 with the dialect's ``f`` suffix where built-ins are not overloaded)."""
        spelled = per_language(cuda={"fp32": self.cuda32, "fp64": self.cuda64},
                               opencl={"fp32": self.opencl, "fp64": self.opencl})[backend][fmt]
        suffix = dialect(backend).libm_float_suffix if fmt == "fp32" else ""
        fn = spelled or f"{self.name}{suffix}"
        return f"{fn}({', '.join(args)})"

    def bound(self, backend: str, fmt: str) -> Optional[float]:
        b = self.bounds.get(backend)
        return None if b is None else b[0 if fmt == "fp32" else 1]

    def metric(self, backend: str, fmt: str) -> str:
        """The convention the documented bound is stated in (see the module docstring): ``cr`` on CUDA,
        ``ulp`` on OpenCL — except OpenCL's "correctly rounded" (bound 0, i.e. ≤ 0.5 ulp of the exact
        value), which is gated as 0 steps (``cr``)."""
        return "cr" if dialect(backend).libm_bound_convention == "cr" or self.bound(backend, fmt) == 0 else "ulp"

    def citation(self, backend: str, fmt: str) -> str:
        prec = {"fp32": "Single", "fp64": "Double"}[fmt]
        return CITATION[backend](prec)


def _f(name, arity, ref32, ref64, cuda, opencl, domain=(-1e30, 1e30), **kw) -> MathFunction:
    return MathFunction(name, arity, ref32, ref64, per_language(cuda=cuda, opencl=opencl), domain, **kw)


HUGE = 1e30
# name, arity, ref32, ref64, CUDA (fp32, fp64), OpenCL (fp32, fp64), dense domain
FUNCTIONS: dict[str, MathFunction] = {f.name: f for f in [
    _f("sin", 1, _ld(np.sin), _ld(np.sin), (2, 2), (4, 4), (-10.0, 10.0)),
    _f("cos", 1, _ld(np.cos), _ld(np.cos), (2, 2), (4, 4), (-10.0, 10.0)),
    _f("tan", 1, _ld(np.tan), _ld(np.tan), (4, 2), (5, 5), (-10.0, 10.0)),
    _f("asin", 1, _ld(np.arcsin), _ld(np.arcsin), (2, 2), (4, 4), (-1.0, 1.0)),
    _f("acos", 1, _ld(np.arccos), _ld(np.arccos), (2, 2), (4, 4), (-1.0, 1.0)),
    _f("atan", 1, _ld(np.arctan), _ld(np.arctan), (2, 2), (5, 5), (-100.0, 100.0)),
    _f("atan2", 2, _ld(np.arctan2), _ld(np.arctan2), (3, 2), (6, 6), (-100.0, 100.0)),
    _f("sinh", 1, _ld(np.sinh), _ld(np.sinh), (3, 2), (4, 4), (-90.0, 90.0)),
    _f("cosh", 1, _ld(np.cosh), _ld(np.cosh), (2, 1), (4, 4), (-90.0, 90.0)),
    _f("tanh", 1, _ld(np.tanh), _ld(np.tanh), (2, 1), (5, 5), (-10.0, 10.0)),
    _f("asinh", 1, _ld(np.arcsinh), _ld(np.arcsinh), (3, 3), (4, 4), (-100.0, 100.0)),
    _f("acosh", 1, _ld(np.arccosh), _ld(np.arccosh), (4, 3), (4, 4), (1.0, 100.0)),
    _f("atanh", 1, _ld(np.arctanh), _ld(np.arctanh), (3, 2), (5, 5), (-1.0, 1.0)),
    _f("exp", 1, _ld(np.exp), _ld(np.exp), (2, 1), (3, 3), (-100.0, 90.0)),
    _f("exp2", 1, _ld(np.exp2), _ld(np.exp2), (2, 1), (3, 3), (-150.0, 130.0)),
    _f("exp10", 1, _ld(lambda x: np.power(LD(10), x)), _ld(lambda x: np.power(LD(10), x)), (2, 1), (3, 3),
       (-45.0, 39.0)),
    _f("expm1", 1, _ld(np.expm1), _ld(np.expm1), (1, 1), (3, 3), (-20.0, 20.0)),
    _f("log", 1, _ld(np.log), _ld(np.log), (1, 1), (3, 3), (0.0, 10.0)),
    _f("log2", 1, _ld(np.log2), _ld(np.log2), (1, 1), (3, 3), (0.0, 10.0)),
    _f("log10", 1, _ld(np.log10), _ld(np.log10), (2, 1), (3, 3), (0.0, 10.0)),
    _f("log1p", 1, _ld(np.log1p), _ld(np.log1p), (1, 1), (2, 2), (-1.0, 10.0)),
    _f("pow", 2, _ld(np.power), _ld(np.power), (4, 2), (16, 16), (0.0, 10.0)),
    _f("cbrt", 1, _ld(np.cbrt), _ld(np.cbrt), (1, 1), (2, 2), (-HUGE, HUGE)),
    _f("rsqrt", 1, _ld(lambda x: 1 / np.sqrt(x)), _ld(lambda x: 1 / np.sqrt(x)), (2, 1), (2, 2), (0.0, 100.0)),
    _f("sqrt", 1, _ld(np.sqrt), _ld(np.sqrt), (0, 0), (3, 0), (0.0, 100.0)),
    _f("hypot", 2, _ld(np.hypot), _ld(np.hypot), (3, 2), (4, 4), (-100.0, 100.0)),
    _f("fmod", 2, _ld(np.fmod), _ld(np.fmod), (0, 0), (0, 0), (-100.0, 100.0)),
    _f("erf", 1, _scipy("erf"), None, (2, 2), (16, 16), (-5.0, 5.0)),
    _f("erfc", 1, _scipy("erfc"), None, (4, 5), (16, 16), (-5.0, 12.0)),
    _f("tgamma", 1, _tgamma, None, (5, 10), (16, 16), (-20.0, 36.0)),
    # CUDA's lgamma bound holds outside (-10.001, -2.264) (fp32) / (-23.0001, -2.2637) (fp64): the
    # dense domain stays positive and the stratified sample drops that interval (see inputs.exclude).
    _f("lgamma", 1, _lgamma, None, (6, 4), None, (0.0, 100.0),
       note="CUDA bound outside [-10.001, -2.264] (fp32) / [-23.0001, -2.2637] (fp64); OpenCL: undefined"),
]}

#: intervals excluded from sampling because the documented bound does not cover them
EXCLUDE = {"lgamma": {"fp32": (-10.001, -2.264), "fp64": (-23.0001, -2.2637)}}


@dataclass(frozen=True)
class FastVariant:
    """A fast intrinsic / native / half_ function or a fast-math build, compared with its exact function.

    ``bound`` is the documented bound in ulps (None: implementation-defined, recorded only); ``abs_bound``
    a documented maximum absolute error on ``domain`` instead; ``bound_fn(x)`` a per-input ulp bound."""

    label: str  # metric name component, e.g. "__sinf"
    backend: str
    base: str  # MathFunction name giving the reference
    call: str  # C spelling, e.g. "__sinf" or "native_sin"
    domain: tuple
    bound: Optional[float] = None
    abs_bound: Optional[float] = None
    bound_fn: Optional[Callable] = None
    options: tuple = ()
    citation: str = ""


CUDA_INTR = ("CUDA C++ Programming Guide, Appendix 'Mathematical Functions', 'Intrinsic Functions', table "
             "'Single-Precision Floating-Point Intrinsic Functions'")
OPENCL_HALF = "OpenCL C Specification 3.0, single precision ULP table: half_* functions ≤ 8192 ulp"
FAST = [
    FastVariant("__sinf", "cuda", "sin", "__sinf", (-np.pi, np.pi), abs_bound=2 ** -21.41, citation=CUDA_INTR),
    FastVariant("__cosf", "cuda", "cos", "__cosf", (-np.pi, np.pi), abs_bound=2 ** -21.19, citation=CUDA_INTR),
    FastVariant("__tanf", "cuda", "tan", "__tanf", (-1.5, 1.5), citation=CUDA_INTR + " (derived from __sinf/__cosf)"),
    FastVariant("__expf", "cuda", "exp", "__expf", (-80.0, 80.0), bound_fn=lambda x: 2 + np.floor(np.abs(1.173 * x)),
                citation=CUDA_INTR + ": 2 + floor(|1.173·x|) ulp"),
    FastVariant("__exp10f", "cuda", "exp10", "__exp10f", (-35.0, 35.0),
                bound_fn=lambda x: 2 + np.floor(np.abs(2.97 * x)), citation=CUDA_INTR + ": 2 + floor(|2.97·x|) ulp"),
    FastVariant("__logf", "cuda", "log", "__logf", (2.0, 1e30), bound=3, citation=CUDA_INTR + ": 3 ulp outside [0.5, 2]"),
    FastVariant("__log2f", "cuda", "log2", "__log2f", (2.0, 1e30), bound=2, citation=CUDA_INTR + ": 2 ulp outside [0.5, 2]"),
    FastVariant("__log10f", "cuda", "log10", "__log10f", (2.0, 1e30), bound=3,
                citation=CUDA_INTR + ": 3 ulp outside [0.5, 2]"),
    FastVariant("__powf", "cuda", "pow", "__powf", (0.5, 4.0), citation=CUDA_INTR + " (exp2f(y·__log2f(x)))"),
    FastVariant("__fdividef", "cuda", "div", "__fdividef", (2.0 ** -100, 2.0 ** 100), bound=2,
                citation=CUDA_INTR + ": 2 ulp for 2^-126 ≤ |y| ≤ 2^126"),
    FastVariant("fastmath.sin", "cuda", "sin", "sinf", (-np.pi, np.pi), options=CUDA.fast_math),
    FastVariant("fastmath.exp", "cuda", "exp", "expf", (-80.0, 80.0), options=CUDA.fast_math),
    FastVariant("fastmath.log", "cuda", "log", "logf", (1e-30, 1e30), options=CUDA.fast_math),
    FastVariant("fastmath.div", "cuda", "div", "DIV", (2.0 ** -100, 2.0 ** 100), options=CUDA.fast_math),
    FastVariant("native_sin", "opencl", "sin", "native_sin", (-np.pi, np.pi)),
    FastVariant("native_cos", "opencl", "cos", "native_cos", (-np.pi, np.pi)),
    FastVariant("native_exp", "opencl", "exp", "native_exp", (-80.0, 80.0)),
    FastVariant("native_log", "opencl", "log", "native_log", (1e-30, 1e30)),
    FastVariant("native_sqrt", "opencl", "sqrt", "native_sqrt", (0.0, 1e30)),
    FastVariant("native_divide", "opencl", "div", "native_divide", (2.0 ** -100, 2.0 ** 100)),
    FastVariant("half_sin", "opencl", "sin", "half_sin", (-np.pi, np.pi), bound=8192, citation=OPENCL_HALF),
    FastVariant("half_exp", "opencl", "exp", "half_exp", (-80.0, 80.0), bound=8192, citation=OPENCL_HALF),
    FastVariant("half_log", "opencl", "log", "half_log", (1e-30, 1e30), bound=8192, citation=OPENCL_HALF),
    FastVariant("half_divide", "opencl", "div", "half_divide", (2.0 ** -60, 2.0 ** 60), bound=8192,
                citation=OPENCL_HALF),
    FastVariant("fastmath.sin", "opencl", "sin", "sin", (-np.pi, np.pi), options=OPENCL.fast_math),
    FastVariant("fastmath.exp", "opencl", "exp", "exp", (-80.0, 80.0), options=OPENCL.fast_math),
    FastVariant("fastmath.log", "opencl", "log", "log", (1e-30, 1e30), options=OPENCL.fast_math),
]

#: the fp32 reference of "div" for fast variants
DIV_REF = _ld(lambda a, b: a / b)


def reference_fn(name: str, fmt: str) -> Optional[Callable]:
    if name == "div":
        return DIV_REF
    f = FUNCTIONS[name]
    return f.ref32 if fmt == "fp32" else f.ref64
