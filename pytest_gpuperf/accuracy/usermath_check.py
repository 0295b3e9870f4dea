"""One math function as a user calls it through a library (PyOpenCL's array math, CuPy's ufuncs,
``ElementwiseKernel`` or ``RawKernel``), checked like the project's own build on the same seeded set, with
the project's build beside it, and — for unary binary32 functions — a budgeted worst-case search through
the library's own call.

Why subnormals are set aside for some libraries: CuPy compiles everything with ``-ftz=true``; where a
library flushes binary32 subnormals, inputs whose argument or correctly rounded result is subnormal are
left out of the bound check and counted, and the maximum including them stays in ``info``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..util import memo
from . import check, expr_kernels, fp_formats, functions, inputs, search
from .fp_formats import Format
from .outcome import Outcome

#: the metric name's library component of each library of :data:`pytest_gpuperf.devices.usermath.LIBRARIES`
PREFIX = {"pyopencl": "pyopencl", "cupy": "cupy.ufunc", "cupy_elementwise": "cupy.elementwise", "cupy_raw": "cupy.raw"}
#: functions with bulk references in both formats (the MPFR-only ones are the math suite's business)
FNS = [n for n, f in functions.FUNCTIONS.items() if f.ref32 is not None and f.ref64 is not None]


def subnormal(a: np.ndarray, fmt: Format) -> np.ndarray:
    """Where ``a`` is a nonzero value below ``fmt``'s smallest normal in magnitude."""
    a = np.abs(np.asarray(a, np.float64))
    return (a > 0) & (a < float(fmt.min_normal))


#: Seconds of worst-case search per library and function, on any device: a probe beside the seeded set for a
#: library's own build (the project's build of each binary32 function has its exhaustive certificate in the
#: math suite); four libraries times every unary function make a longer search a large share of a run.
SEARCH_BUDGET_S = 0.25
#: the distributions whose version is part of a stored search's key (a library's math is its build's)
LIBRARY_DISTRIBUTIONS = ("cupy", "cupy-cuda12x", "cupy-cuda13x", "pyopencl", "numpy")


def _search(device: Any, um: Any, fn: str, fmt: Format, f: functions.MathFunction, expr: str, metric: str,
            rng: np.random.Generator) -> tuple[dict[str, Any] | None, float]:
    """The budgeted worst-case search through the library's call: its ``info`` entry (None when every input it
    found is one the library may flush) and its MPFR-confirmed maximum (-inf when nothing was scored, or on
    an inf/nan mismatch: those count in the seeded check).

    Kept across runs (:func:`.search.stored_search`) per library build and options, function, device, driver and
    toolkit: a later run evaluates the stored worst inputs through the library again — the same output bits, the
    same scores — instead of searching anew; any other bit is a new search."""

    def dev_eval(x: np.ndarray) -> np.ndarray:
        return np.asarray(um.evaluate(fn, [x], fmt.dtype, expr), fmt.dtype)

    def unflushed(x: np.ndarray) -> np.ndarray:
        return ~subnormal(x, fmt) & ~subnormal(f.ref32(x).astype(np.float64), fmt)

    info = device.info
    fields = {"library": um.library, "build": um.build, "options": list(um.options),
              "versions": memo.versions(LIBRARY_DISTRIBUTIONS), "call": um.spelling(fn), "fn": fn, "fmt": fmt.name,
              "expr": expr, "metric": metric, "flushes": um.flushes_subnormals, "device": info.key,
              "driver": info.driver_version, "runtime": info.runtime_version, "toolkit": info.toolkit_version}
    found = search.stored_search("usermath-search", fields, fmt, dev_eval, f.ref32, metric, SEARCH_BUDGET_S, rng,
                                 batch=1 << 12, domain=f.domain, keep=unflushed if um.flushes_subnormals else None)
    if not found.x.size:
        return None, -np.inf
    ss = check.score(found.y, [found.x], f.ref32(found.x), fmt, fn, metric)
    entry = check.jsonable({"max": ss.max, "worst": ss.worst([found.x], found.y), "rounds": found.rounds,
                            "evaluated": found.evaluated, "budget_s": SEARCH_BUDGET_S})
    return dict(entry, stored=found.stored), (-np.inf if ss.mismatches else float(ss.max))


def check_user_math(device: Any, um: Any, library: str, fn: str, fmt_name: str, rng: np.random.Generator,
                    seed: int) -> Outcome:
    """Check ``fn`` in ``fmt_name`` through library ``library`` (``um``: its
    :class:`~pytest_gpuperf.devices.usermath.UserMath` on ``device``): ``accuracy.<lib>.<fmt>.<fn>.max_ulp`` /
    ``.mean_ulp``, the documented bound's verdict (seeded set and search) under the library's findings key."""
    info = device.info
    f = functions.FUNCTIONS[fn]
    fmt = fp_formats.get(fmt_name)
    backend = info.backend
    args = inputs.function_sample(fmt, f, inputs.sample_factor(device), rng)
    expr = f.expr(backend, fmt_name, [f"x{k}" for k in range(f.arity)])
    y = np.asarray(um.evaluate(fn, args, fmt.dtype, expr), fmt.dtype)
    y_proj = expr_kernels.evaluate(device, fmt, expr, args)
    ref = functions.reference_fn(fn, fmt_name)
    exact = ref(*args)
    bound = f.bound(backend, fmt_name)
    metric = f.metric(backend, fmt_name)
    sc_all = check.score(y, args, exact, fmt, fn, metric)
    sc_proj = check.score(y_proj, args, exact, fmt, fn, metric)
    keep = np.ones(y.size, bool)
    if um.flushes_subnormals and fmt_name == "fp32":
        keep = ~(np.any([subnormal(a, fmt) for a in args], axis=0) | subnormal(sc_all.errors.rounded, fmt))
    sub = [a[keep] for a in args]
    sc = check.score(y[keep], sub, exact[keep], fmt, fn, metric) if not keep.all() else sc_all
    worst = sc.worst(sub, y[keep])
    differ = ~((y.view(fmt.bits) == y_proj.view(fmt.bits)) | (np.isnan(y) & np.isnan(y_proj)))
    example = None
    if differ.any():
        i = int(np.flatnonzero(differ)[0])
        example = {"input": [float(a[i]) for a in args], "input_hex": [float(a[i]).hex() for a in args],
                   "library": float(y[i]), "project": float(y_proj[i])}
    info_d = {"library": library, "call": um.spelling(fn), "build": um.build, "options": list(um.options),
              "citation": f.citation(backend, fmt_name) if bound is not None else "no documented bound",
              "metric": metric, "expr_project": expr, "n": sc.n, "worst": worst, "mismatches": sc.mismatches,
              "mismatch_example": sc.mismatch_example, "mpfr_checked": sc.confirmed,
              "mpfr_corrected": sc.disagreements, "project_max_ulp": sc_proj.max, "project_mean_ulp": sc_proj.mean,
              "differs_from_project": int(differ.sum()), "differ_example": example}
    if not keep.all():
        info_d.update({"ftz_excluded": int((~keep).sum()), "max_ulp_including_flushed": sc_all.max,
                       "worst_including_flushed": sc_all.worst(args, y)})
    problems = []
    if sc.mismatches:
        problems.append(f"{library} {fn} {fmt_name}: inf/nan mismatches {sc.mismatches}, e.g. {sc.mismatch_example}")
    elif bound is not None and sc.max > bound:
        problems.append(f"{library} {fn} {fmt_name}: {sc.max} ulp ({metric}) > documented {bound} at {worst}")
    if fmt_name == "fp32" and f.arity == 1:
        found, found_max = _search(device, um, fn, fmt, f, expr, metric, rng)
        if found is not None:
            info_d["search"] = found
            if bound is not None and found_max > bound:
                problems.append(f"{library} {fn} fp32 (search): {found_max} ulp > documented {bound} at "
                                f"{found['worst']}")
    if bound is not None:
        info_d["bound"] = float(bound)
    name = f"accuracy.{PREFIX[library]}.{fmt_name}.{fn}"
    identity = {"inputs": "seeded", "n": int(sc.n), "seed": int(seed)}
    records = [{"name": f"{name}.max_ulp", "value": sc.max, "unit": "ulp", "better": "lower",
                "info": check.jsonable(info_d), "identity": identity},
               {"name": f"{name}.mean_ulp", "value": sc.mean, "unit": "ulp", "better": "lower",
                "info": check.jsonable({"metric": metric, "n": sc.n, "project_mean_ulp": sc_proj.mean}),
                "identity": identity}]
    # the library's own key: a finding of CuPy's build is not one of the project's build of the same function
    return Outcome(records, "\n".join(problems) or None, f"{library}.math.{fmt_name}.{fn}")
