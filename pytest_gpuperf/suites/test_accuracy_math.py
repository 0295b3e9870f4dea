"""Math functions of the CUDA math library and OpenCL built-ins in binary32 and binary64 against MPFR
(through long double bulk references, every maximum and every near-boundary case re-derived by MPFR),
plus CUDA fast intrinsics, OpenCL ``native_*``/``half_*`` and fast-math builds.

Per function and precision:

* ``accuracy.<fmt>.<fn>.max_ulp`` — measured maximum in the backend's documented convention (CUDA:
  steps from the correctly rounded result; OpenCL: ulps of the exact value), gated ``better="lower"``
  against the baseline, while the test itself checks the documented bound (``info.bound``, citation);
  ``info`` holds the worst input (decimal, hex, bits), the device and MPFR results, the other
  convention's maximum and the inf/nan mismatch counts.
* ``accuracy.<fmt>.<fn>.mean_ulp`` — mean error in the same convention, over the same inputs.

Inputs: every binade of the format (subnormals included, both signs), the special values (all pairs
for binary functions) and a dense sample of the useful domain (see ``functions.FUNCTIONS``) — a seeded
set of fixed size per device type (identity ``{"inputs": "seeded", "n", "seed"}``), the same every run.
On GPUs every unary binary32 function, fast intrinsic and CUDA fast-math build is also swept over all
its inputs (2^32 — lgamma's less the interval without a documented bound —, or every input of an
intrinsic's documented domain): its ``max_ulp`` is then a certificate, MPFR-confirmed at the worst
input, and its ``mean_ulp`` the mean over all those inputs (identity ``{"inputs": "exhaustive", ...}``).
Deterministic statistics are gated tightly against the baseline (any change of the library is news);
the documented bound is checked by the test itself, baseline or not.
An inf/nan mismatch is its own failure class and fails the test with the input.
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.accuracy import certificate, check, expr_kernels, findings, fp_formats, functions, inputs, mpfr
from pytest_gpuperf.gatecheck import plants

PER_BINADE = {"fp32": 4, "fp64": 1}
DENSE = {"fp32": 2000, "fp64": 1000}
#: binary64 functions with only a per-element MPFR reference get a smaller sample (host time)
MPFR_ONLY_MAX = 6000
#: a deterministic statistic (the same inputs on the same device and library) moves only when
#: something changed: the gate allows float formatting noise, nothing more
EXACT = {"abs": 1e-6}
#: the gate check's ulp plant (``--gpuperf-plant ulp=FN``) in ``info``: a plant is a regression of the
#: measured system, never another way to measure, so it never enters the identity
PLANT_NOTE = "gate check: +1 ulp (next float up) on inputs whose low 4 mantissa bits are zero"


def _reference(name: str, fmt_name: str, args):
    ref = functions.reference_fn(name, fmt_name)
    if ref is None:
        return mpfr.exact_pairs(name, args)
    return ref(*args), 0


@pytest.mark.parametrize("fmt_name", ["fp32", "fp64"])
@pytest.mark.parametrize("fn", list(functions.FUNCTIONS))
def test_math_function(gpu_device, gpuperf_record, gpuperf_plant, accuracy_seed, accuracy_rng, fn, fmt_name):
    info = gpu_device.info
    if fmt_name == "fp64" and not info.fp64:
        pytest.skip(f"{info.name} has no binary64 support")
    f = functions.FUNCTIONS[fn]
    fmt = fp_formats.get(fmt_name)
    backend = info.backend
    scale = inputs.sample_factor(gpu_device)
    planted = plants.ulp_function(gpuperf_plant) == fn and fmt_name == "fp32"
    if fmt_name == "fp64" and f.ref64 is None:
        scale = 1.0  # MPFR per element on the host
    per = max(1, int(PER_BINADE[fmt_name] * scale))
    args = inputs.sample(fmt, f.arity, per, int(DENSE[fmt_name] * scale), f.domain, accuracy_rng,
                         functions.EXCLUDE.get(fn, {}).get(fmt_name))
    if fmt_name == "fp64" and f.ref64 is None and args[0].size > MPFR_ONLY_MAX:
        keep = accuracy_rng.choice(args[0].size, MPFR_ONLY_MAX, replace=False)
        args = [a[keep] for a in args]
    expr = f.expr(backend, fmt_name, [f"x{k}" for k in range(f.arity)])
    y = expr_kernels.evaluate(gpu_device, fmt, expr, args, plant=planted)
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
    seeded = {"inputs": "seeded", "n": int(sc.n), "seed": int(accuracy_seed)}
    top, mean, identity = sc.max, sc.mean, seeded
    mean_info = {"metric": metric, "n": sc.n}
    if planted:
        info_d["planted"] = mean_info["planted"] = PLANT_NOTE
    if fmt_name == "fp32" and f.arity == 1 and not info.is_cpu and info.fp64:
        excl = functions.EXCLUDE.get(fn, {}).get("fp32")
        cert = certificate.certify(gpu_device, fn, expr, f.expr(backend, "fp64", ["x0"]), metric, exclude=excl,
                                   plant=planted)
        top, mean, worst = cert.max, cert.mean, cert.worst
        identity = {"inputs": "exhaustive", "range": "all 2^32" if excl is None else
                    f"all 2^32 except ({excl[0]:g}, {excl[1]:g})"}
        info_d.update(check.jsonable({"certificate": cert.info(), "worst": cert.worst, "seeded_max": sc.max}))
        mean_info.update({"n": cert.scored, "reference": "the device's binary64 function", "seeded_mean": sc.mean})
        assert cert.confirmed, (f"{fn}: the device's fp64 comparison says {cert.device_fp64_error} ulp at "
                                f"{cert.worst} but MPFR says {cert.max}: the certificate is not proven")
        # an inf/nan class difference the sweep saw against the device's fp64 stays in the certificate's
        # info (mismatch_input_bits): the fp64 reference rounds to inf at the overflow edge, so only the
        # MPFR-scored seeded set decides the failure class
    if bound is not None:
        info_d.update({"bound": float(bound)})
    gpuperf_record(f"{name}.max_ulp", top, "ulp", better="lower", tolerance=EXACT, info=info_d, identity=identity)
    gpuperf_record(f"{name}.mean_ulp", mean, "ulp", better="lower", tolerance=EXACT,
                   info=check.jsonable(mean_info), identity=identity)
    problem = None
    if sc.mismatches:
        problem = f"{fn} {fmt_name} on {info.name}: inf/nan mismatches {sc.mismatches}, e.g. {sc.mismatch_example}"
    elif bound is not None and top > bound:
        problem = f"{fn} {fmt_name} on {info.name}: {top} ulp ({metric}) > documented {bound} at {worst}"
    findings.check(info, f"math.{fmt_name}.{fn}", problem)


def _fast_params():
    return [pytest.param(v, id=f"{v.backend}-{v.label}") for v in functions.FAST]


@pytest.mark.parametrize("variant", _fast_params())
def test_fast_variant(gpu_device, gpuperf_record, accuracy_seed, accuracy_rng, variant):
    info = gpu_device.info
    if variant.backend != info.backend:
        pytest.skip(f"{variant.label} is a {variant.backend} function; this device is {info.backend}")
    fmt = fp_formats.FP32
    n = int(20000 * inputs.sample_factor(gpu_device))
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
    y = expr_kernels.evaluate(gpu_device, fmt, call, args, variant.options)
    ref = functions.reference_fn(variant.base, "fp32")
    exact = ref(*args)
    metric = functions.CONVENTION[info.backend]
    sc = check.score(y, args, exact, fmt, variant.base, metric)
    name = f"accuracy.fp32.{variant.label}"
    worst = sc.worst(args, y)
    base_info = {"call": call, "options": list(variant.options), "domain": list(variant.domain), "metric": metric,
                 "n": sc.n, "worst": worst, "mismatches": sc.mismatches, "mpfr_checked": sc.confirmed,
                 "citation": variant.citation or "implementation-defined (no documented bound)"}
    problems = []
    seeded = {"inputs": "seeded", "n": int(sc.n), "seed": int(accuracy_seed)}
    top, mean, max_identity, max_info = sc.max, sc.mean, seeded, dict(base_info)
    mean_info, mean_identity = {"metric": metric, "n": sc.n}, seeded
    # the certificate: every input of the documented domain, on GPUs (an OpenCL fast-relaxed build would
    # relax the fp64 reference too, so those stay seeded)
    unary = variant.base not in ("div", "pow")
    if unary and not info.is_cpu and info.fp64 and (not info.dialect.fast_math_relaxes_fp64 or not variant.options):
        ref64 = functions.FUNCTIONS[variant.base].expr(info.backend, "fp64", ["x0"])
        cert = certificate.certify(gpu_device, variant.base, call, ref64, metric, domain=variant.domain,
                                   options=variant.options)
        assert cert.confirmed, (f"{variant.label}: the device's fp64 comparison says {cert.device_fp64_error} ulp "
                                f"at {cert.worst} but MPFR says {cert.max}: the certificate is not proven")
        top, mean, worst = cert.max, cert.mean, cert.worst
        max_identity = mean_identity = {"inputs": "exhaustive", "domain": [float(lo), float(hi)]}
        max_info.update({"certificate": cert.info(), "worst": cert.worst, "seeded_max": sc.max})
        mean_info.update({"n": cert.scored, "reference": "the device's binary64 function", "seeded_mean": sc.mean})
    if variant.abs_bound is not None:
        with np.errstate(all="ignore"):
            abs_err = np.abs(y.astype(np.float64) - np.asarray(exact, np.float64))
        i = int(np.nanargmax(abs_err))
        gpuperf_record(f"{name}.max_abs", float(abs_err[i]), "1", better="bound", bound=variant.abs_bound,
                       info=check.jsonable({**base_info, "worst_abs_input": float(args[0][i])}), identity=seeded)
        if abs_err[i] > variant.abs_bound:
            problems.append(f"{variant.label}: abs error {abs_err[i]:.3g} > {variant.abs_bound:.3g} at x={args[0][i]!r}")
    elif variant.bound_fn is not None:
        errs = sc.errors.cr if metric == "cr" else sc.errors.ulp
        b = variant.bound_fn(args[0].astype(np.float64))
        excess = np.where(np.isnan(errs), 0, errs) - b
        i = int(np.argmax(excess))
        gpuperf_record(f"{name}.max_ulp_over_bound", float(excess[i]), "ulp", better="bound", bound=0.0,
                       info=check.jsonable({**base_info, "at": float(args[0][i]), "err": float(errs[i]),
                                            "bound_there": float(b[i])}), identity=seeded)
        if excess[i] > 0:
            problems.append(f"{variant.label}: {errs[i]} ulp > {b[i]} at x={args[0][i]!r}")
    elif variant.bound is not None:
        max_info["bound"] = float(variant.bound)
        if top > variant.bound:
            problems.append(f"{variant.label}: {top} ulp > {variant.bound} at {worst}")
    # a deterministic maximum (the same inputs, device and library): gated tightly, a change is news
    gpuperf_record(f"{name}.max_ulp", top, "ulp", better="lower", tolerance=EXACT, info=check.jsonable(max_info),
                   identity=max_identity)
    gpuperf_record(f"{name}.mean_ulp", mean, "ulp", better="lower", tolerance=EXACT,
                   info=check.jsonable(mean_info), identity=mean_identity)
    assert not problems, "\n".join(problems)
