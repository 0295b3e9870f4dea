"""The math as users call it: PyOpenCL's array math (``pyopencl.clmath`` on ``pyopencl.array``) and
CuPy's ufuncs, ``ElementwiseKernel`` and ``RawKernel`` with their default build options, through the
same checks as the project's own builds (``suites/test_accuracy_math.py``): the seeded input sets of
:mod:`~pytest_gpuperf.accuracy.inputs`, long double references with MPFR confirmation of every maximum
and near-boundary case (:func:`~pytest_gpuperf.accuracy.check.score`), the documented bounds, and — for
unary binary32 functions — a budgeted worst-case search (:mod:`~pytest_gpuperf.accuracy.search`).

Per library, format and function:

* ``accuracy.<lib>.<fmt>.<fn>.max_ulp`` / ``.mean_ulp`` — ``<lib>`` is ``pyopencl``, ``cupy.ufunc``,
  ``cupy.elementwise`` or ``cupy.raw``. ``info`` puts the project's own build beside it on the same
  inputs (``project_max_ulp``, ``project_mean_ulp``) and counts the inputs where the two results differ
  bit for bit (``differs_from_project``, with an example), names the library's build options and the
  search's maximum and worst input.

Libraries a device cannot run skip with the reason (:func:`pytest_gpuperf.devices.usermath.user_math`:
CuPy needs a CUDA device, PyOpenCL an OpenCL one). CuPy compiles everything with ``-ftz=true``: where a
library flushes binary32 subnormals, inputs whose argument or correctly rounded result is subnormal are
left out of the bound check and counted (``ftz_excluded``; the maximum including them is in ``info``).
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.accuracy import check, expr_kernels, findings, fp_formats, functions, inputs, search
from pytest_gpuperf.devices import usermath
from pytest_gpuperf.errors import BackendUnavailableError

PER_BINADE = {"fp32": 4, "fp64": 1}
DENSE = {"fp32": 2000, "fp64": 1000}
EXACT = {"abs": 1e-6}
PREFIX = {"pyopencl": "pyopencl", "cupy": "cupy.ufunc", "cupy_elementwise": "cupy.elementwise", "cupy_raw": "cupy.raw"}
#: functions with bulk references in both formats (the MPFR-only ones are the math suite's business)
FNS = [n for n, f in functions.FUNCTIONS.items() if f.ref32 is not None and f.ref64 is not None]


def _subnormal(a: np.ndarray, fmt) -> np.ndarray:
    a = np.abs(np.asarray(a, np.float64))
    return (a > 0) & (a < float(fmt.min_normal))


@pytest.mark.parametrize("fmt_name", ["fp32", "fp64"])
@pytest.mark.parametrize("fn", FNS)
@pytest.mark.parametrize("library", list(usermath.LIBRARIES))
def test_user_math(gpu_device, gpuperf_record, accuracy_seed, accuracy_rng, library, fn, fmt_name):
    info = gpu_device.info
    try:
        um = usermath.user_math(gpu_device, library)
    except BackendUnavailableError as exc:
        pytest.skip(f"{library}: {exc.reason}")
    spelled = um.spelling(fn)
    if spelled is None:
        pytest.skip(f"{library} has no {fn}")
    if fmt_name == "fp64" and not info.fp64:
        pytest.skip(f"{info.name} has no binary64 support")
    f = functions.FUNCTIONS[fn]
    fmt = fp_formats.get(fmt_name)
    backend = info.backend
    scale = inputs.sample_factor(gpu_device)
    args = inputs.sample(fmt, f.arity, max(1, int(PER_BINADE[fmt_name] * scale)), int(DENSE[fmt_name] * scale),
                         f.domain, accuracy_rng, functions.EXCLUDE.get(fn, {}).get(fmt_name))
    expr = f.expr(backend, fmt_name, [f"x{k}" for k in range(f.arity)])
    y = np.asarray(um.evaluate(fn, args, fmt.dtype, expr), fmt.dtype)
    y_proj = expr_kernels.evaluate(gpu_device, fmt, expr, args)
    ref = functions.reference_fn(fn, fmt_name)
    exact = ref(*args)
    bound = f.bound(backend, fmt_name)
    metric = f.metric(backend, fmt_name)
    sc_all = check.score(y, args, exact, fmt, fn, metric)
    sc_proj = check.score(y_proj, args, exact, fmt, fn, metric)
    keep = np.ones(y.size, bool)
    if um.flushes_subnormals and fmt_name == "fp32":
        keep = ~(np.any([_subnormal(a, fmt) for a in args], axis=0) | _subnormal(sc_all.errors.rounded, fmt))
    sub = [a[keep] for a in args]
    sc = check.score(y[keep], sub, exact[keep], fmt, fn, metric) if not keep.all() else sc_all
    worst = sc.worst(sub, y[keep])
    differ = ~((y.view(fmt.bits) == y_proj.view(fmt.bits)) | (np.isnan(y) & np.isnan(y_proj)))
    example = None
    if differ.any():
        i = int(np.flatnonzero(differ)[0])
        example = {"input": [float(a[i]) for a in args], "input_hex": [float(a[i]).hex() for a in args],
                   "library": float(y[i]), "project": float(y_proj[i])}
    info_d = {"library": library, "call": spelled, "build": um.build, "options": list(um.options),
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
    # the worst-case search (unary binary32): random restarts + local search through the library's own call
    if fmt_name == "fp32" and f.arity == 1:
        budget = 0.25 if info.is_cpu else 1.0
        lo = float(fmt.min_normal) if um.flushes_subnormals else 0.0

        def dev_eval(x):
            return np.asarray(um.evaluate(fn, [x], fmt.dtype, expr), fmt.dtype)

        res = search.worst_case_search(fmt, dev_eval, f.ref32, metric, budget, accuracy_rng, batch=1 << 12,
                                       domain=f.domain)
        x = res.best_x
        if lo > 0:
            x = x[~_subnormal(x, fmt) & ~_subnormal(f.ref32(x).astype(np.float64), fmt)]
        if x.size:
            ys = dev_eval(x)
            ss = check.score(ys, [x], f.ref32(x), fmt, fn, metric)
            info_d["search"] = {"max": ss.max, "worst": ss.worst([x], ys), "rounds": res.rounds,
                                "evaluated": res.evaluated, "budget_s": budget}
            if not ss.mismatches and bound is not None and ss.max > bound:
                problems.append(f"{library} {fn} fp32 (search): {ss.max} ulp > documented {bound} at "
                                f"{ss.worst([x], ys)}")
    if bound is not None:
        info_d["bound"] = float(bound)
    name = f"accuracy.{PREFIX[library]}.{fmt_name}.{fn}"
    identity = {"inputs": "seeded", "n": int(sc.n), "seed": int(accuracy_seed)}
    gpuperf_record(f"{name}.max_ulp", sc.max, "ulp", better="lower", tolerance=EXACT, info=check.jsonable(info_d),
                   identity=identity)
    gpuperf_record(f"{name}.mean_ulp", sc.mean, "ulp", better="lower", tolerance=EXACT,
                   info=check.jsonable({"metric": metric, "n": sc.n, "project_mean_ulp": sc_proj.mean}),
                   identity=identity)
    # the library's own key: a finding of CuPy's build is not one of the project's build of the same function
    findings.check(info, f"{library}.math.{fmt_name}.{fn}", "\n".join(problems) or None)
