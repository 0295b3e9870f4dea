"""Math functions of the CUDA math library and OpenCL built-ins in binary32 and binary64 against MPFR
(through long double bulk references, every maximum and every near-boundary case re-derived by MPFR),
plus CUDA fast intrinsics, OpenCL ``native_*``/``half_*`` and fast-math builds.

Per function and precision:

* ``accuracy.<fmt>.<fn>.max_ulp`` — measured maximum in the backend's documented convention (CUDA:
  steps from the correctly rounded result; OpenCL: ulps of the exact value), ``better="bound"`` with the
  documented bound and its citation; ``info`` holds the worst input (decimal and hex), the device and
  reference results, the other convention's maximum and the inf/nan mismatch counts.
* ``accuracy.<fmt>.<fn>.mean_ulp`` — mean error in the same convention.

Inputs: every binade of the format (subnormals included, both signs), the special values (all pairs
for binary functions) and a dense sample of the useful domain (see ``functions.FUNCTIONS``).
An inf/nan mismatch is its own failure class and fails the test with the input.
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.accuracy import check, findings, formats, functions, inputs, kernels, mpfr

PER_BINADE = {"fp32": 4, "fp64": 1}
DENSE = {"fp32": 2000, "fp64": 1000}
#: binary64 functions with only a per-element MPFR reference get a smaller sample (host time)
MPFR_ONLY_MAX = 6000


def _reference(name: str, fmt_name: str, args):
    ref = functions.reference_fn(name, fmt_name)
    if ref is None:
        return mpfr.exact_pairs(name, args)
    return ref(*args), 0


@pytest.mark.parametrize("fmt_name", ["fp32", "fp64"])
@pytest.mark.parametrize("fn", list(functions.FUNCTIONS))
def test_math_function(gpu_device, gpuperf_record, accuracy_scale, accuracy_rng, fn, fmt_name):
    info = gpu_device.info
    if fmt_name == "fp64" and not info.fp64:
        pytest.skip(f"{info.name} has no binary64 support")
    f = functions.FUNCTIONS[fn]
    fmt = formats.get(fmt_name)
    backend = info.backend
    scale = accuracy_scale
    if fmt_name == "fp64" and f.ref64 is None:
        scale = 1.0  # MPFR per element on the host
    per = max(1, int(PER_BINADE[fmt_name] * scale))
    args = inputs.sample(fmt, f.arity, per, int(DENSE[fmt_name] * scale), f.domain, accuracy_rng,
                         functions.EXCLUDE.get(fn, {}).get(fmt_name))
    if fmt_name == "fp64" and f.ref64 is None and args[0].size > MPFR_ONLY_MAX:
        keep = accuracy_rng.choice(args[0].size, MPFR_ONLY_MAX, replace=False)
        args = [a[keep] for a in args]
    expr = f.expr(backend, fmt_name, [f"x{k}" for k in range(f.arity)])
    y = kernels.evaluate(gpu_device, fmt, expr, args)
    exact, sgn = _reference(fn, fmt_name, args)
    bound = f.bound(backend, fmt_name)
    metric = f.metric(backend, fmt_name)
    sc = check.score(y, args, exact, fmt, fn, metric, sgn)
    worst = sc.worst(args, y)
    info_d = check.jsonable({"citation": f.citation(backend, fmt_name) if bound is not None else
                             f"no documented bound ({f.note or 'implementation-defined'})",
                             "metric": metric, "expr": expr, "n": sc.n, "worst": worst,
                             "other_metric_max": sc.other_max, "mismatches": sc.mismatches,
                             "mismatch_example": sc.mismatch_example, "mpfr_checked": sc.confirmed,
                             "mpfr_corrected": sc.disagreements, "note": f.note,
                             "reference": "long double" if functions.reference_fn(fn, fmt_name) else "MPFR"})
    name = f"accuracy.{fmt_name}.{fn}"
    if bound is not None:
        gpuperf_record(f"{name}.max_ulp", sc.max, "ulp", better="bound", bound=float(bound), info=info_d)
    else:
        gpuperf_record(f"{name}.max_ulp", sc.max, "ulp", better="lower", tolerance={"abs": 1.0}, info=info_d)
    gpuperf_record(f"{name}.mean_ulp", sc.mean, "ulp", better="lower", tolerance={"abs": 0.05},
                   info={"metric": metric, "n": sc.n})
    problem = None
    if sc.mismatches:
        problem = f"{fn} {fmt_name} on {info.name}: inf/nan mismatches {sc.mismatches}, e.g. {sc.mismatch_example}"
    elif bound is not None and sc.max > bound:
        problem = f"{fn} {fmt_name} on {info.name}: {sc.max} ulp ({metric}) > documented {bound} at {worst}"
    findings.check(info, f"math.{fmt_name}.{fn}", problem)


def _fast_params():
    return [pytest.param(v, id=f"{v.backend}-{v.label}") for v in functions.FAST]


@pytest.mark.parametrize("variant", _fast_params())
def test_fast_variant(gpu_device, gpuperf_record, accuracy_scale, accuracy_rng, variant):
    info = gpu_device.info
    if variant.backend != info.backend:
        pytest.skip(f"{variant.label} is a {variant.backend} function; this device is {info.backend}")
    fmt = formats.FP32
    n = int(20000 * accuracy_scale)
    lo, hi = variant.domain
    if variant.base == "div":
        ya = inputs.dense(fmt, 1.0, 2.0 ** 60, n, accuracy_rng) * accuracy_rng.choice([-1, 1], n).astype(np.float32)
        yb = inputs.dense(fmt, lo, hi, n, accuracy_rng)
        args = [ya, yb]
        call = "x0 / x1" if variant.call == "DIV" else f"{variant.call}(x0, x1)"
    elif variant.base == "pow":
        args = [inputs.dense(fmt, lo, hi, n, accuracy_rng), inputs.dense(fmt, -8.0, 8.0, n, accuracy_rng)]
        call = f"{variant.call}(x0, x1)"
    else:
        args = [inputs.dense(fmt, lo, hi, n, accuracy_rng)]
        call = f"{variant.call}(x0)"
    y = kernels.evaluate(gpu_device, fmt, call, args, variant.options)
    ref = functions.reference_fn(variant.base, "fp32")
    exact = ref(*args)
    metric = "cr" if info.backend == "cuda" else "ulp"
    sc = check.score(y, args, exact, fmt, variant.base, metric)
    name = f"accuracy.fp32.{variant.label}"
    worst = sc.worst(args, y)
    base_info = {"call": call, "options": list(variant.options), "domain": list(variant.domain), "metric": metric,
                 "n": sc.n, "worst": worst, "mismatches": sc.mismatches, "mpfr_checked": sc.confirmed,
                 "citation": variant.citation or "implementation-defined (no documented bound)"}
    problems = []
    if variant.abs_bound is not None:
        with np.errstate(all="ignore"):
            abs_err = np.abs(y.astype(np.float64) - np.asarray(exact, np.float64))
        i = int(np.nanargmax(abs_err))
        gpuperf_record(f"{name}.max_abs", float(abs_err[i]), "1", better="bound", bound=variant.abs_bound,
                       info=check.jsonable({**base_info, "worst_abs_input": float(args[0][i])}))
        if abs_err[i] > variant.abs_bound:
            problems.append(f"{variant.label}: abs error {abs_err[i]:.3g} > {variant.abs_bound:.3g} at x={args[0][i]!r}")
        gpuperf_record(f"{name}.max_ulp", sc.max, "ulp", better="lower", tolerance={"rel": 0.5, "abs": 2.0},
                       info=check.jsonable(base_info))
    elif variant.bound_fn is not None:
        errs = sc.errors.cr if metric == "cr" else sc.errors.ulp
        b = variant.bound_fn(args[0].astype(np.float64))
        excess = np.where(np.isnan(errs), 0, errs) - b
        i = int(np.argmax(excess))
        gpuperf_record(f"{name}.max_ulp_over_bound", float(excess[i]), "ulp", better="bound", bound=0.0,
                       info=check.jsonable({**base_info, "at": float(args[0][i]), "err": float(errs[i]),
                                            "bound_there": float(b[i])}))
        if excess[i] > 0:
            problems.append(f"{variant.label}: {errs[i]} ulp > {b[i]} at x={args[0][i]!r}")
        gpuperf_record(f"{name}.max_ulp", sc.max, "ulp", better="lower", tolerance={"rel": 0.5, "abs": 2.0},
                       info=check.jsonable(base_info))
    elif variant.bound is not None:
        gpuperf_record(f"{name}.max_ulp", sc.max, "ulp", better="bound", bound=float(variant.bound),
                       info=check.jsonable(base_info))
        if sc.max > variant.bound:
            problems.append(f"{variant.label}: {sc.max} ulp > {variant.bound} at {worst}")
    else:
        gpuperf_record(f"{name}.max_ulp", sc.max, "ulp", better="lower", tolerance={"rel": 0.5, "abs": 2.0},
                       info=check.jsonable(base_info))
    gpuperf_record(f"{name}.mean_ulp", sc.mean, "ulp", better="lower", tolerance={"rel": 0.5, "abs": 0.1},
                   info={"metric": metric})
    assert not problems, "\n".join(problems)
