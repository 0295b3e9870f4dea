"""One fast variant (a CUDA intrinsic, an OpenCL ``native_*``/``half_*`` function or a fast-math build)
checked against its exact function: ``max_ulp``/``mean_ulp`` records and, where the variant documents
one, its bound's record (an absolute error, a per-input ulp bound or a plain ulp bound).

Why inputs are drawn per variant: each documents its accuracy only on its own domain (``__sinf`` on
[-π, π], ``__logf`` outside [0.5, 2]), so the seeded set is that domain's, never the full range."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import certificate, check, expr_kernels, fp_formats, functions, inputs, mathfn_check
from .outcome import Outcome

#: seeded inputs per variant on a CPU device (times the device's sample factor elsewhere)
SAMPLES = 20000


def variant_args(variant: functions.FastVariant, n: int, rng: np.random.Generator) -> tuple[list[np.ndarray], str]:
    """The seeded argument columns of ``variant`` (``n`` each) and its call in kernel source: dividends of
    either sign across 60 binades for divisions, exponents in [-8, 8] for powers."""
    fmt = fp_formats.FP32
    lo, hi = variant.domain
    if variant.base == "div":
        ya = inputs.dense(fmt, 1.0, 2.0 ** 60, n, rng) * rng.choice([-1, 1], n).astype(np.float32)
        yb = inputs.dense(fmt, lo, hi, n, rng)
        return [ya, yb], "x0 / x1" if variant.call == "DIV" else f"{variant.call}(x0, x1)"
    if variant.base == "pow":
        return [inputs.dense(fmt, lo, hi, n, rng), inputs.dense(fmt, -8.0, 8.0, n, rng)], f"{variant.call}(x0, x1)"
    return [inputs.dense(fmt, lo, hi, n, rng)], f"{variant.call}(x0)"


def check_variant(device: Any, variant: functions.FastVariant, rng: np.random.Generator, seed: int) -> Outcome:
    """Check ``variant`` on ``device``: its records in recording order and its bound's problems (one per
    line in ``problem``). Raises AssertionError where the certificate's device comparison and MPFR
    disagree (no proof)."""
    info = device.info
    fmt = fp_formats.FP32
    n = int(SAMPLES * inputs.sample_factor(device))
    lo, hi = variant.domain
    args, call = variant_args(variant, n, rng)
    y = expr_kernels.evaluate(device, fmt, call, args, variant.options)
    ref = functions.reference_fn(variant.base, "fp32")
    exact = ref(*args)
    metric = info.dialect.libm_bound_convention
    sc = check.score(y, args, exact, fmt, variant.base, metric)
    name = f"accuracy.fp32.{variant.label}"
    worst = sc.worst(args, y)
    base_info = {"call": call, "options": list(variant.options), "domain": list(variant.domain), "metric": metric,
                 "n": sc.n, "worst": worst, "mismatches": sc.mismatches, "mpfr_checked": sc.confirmed,
                 "citation": variant.citation or "implementation-defined (no documented bound)"}
    problems = []
    records = []
    seeded = {"inputs": "seeded", "n": int(sc.n), "seed": int(seed)}
    top, mean, max_identity, max_info = sc.max, sc.mean, seeded, dict(base_info)
    mean_info, mean_identity = {"metric": metric, "n": sc.n}, seeded
    fractional = None
    # the certificate: every input of the documented domain, on GPUs (an OpenCL fast-relaxed build would
    # relax the fp64 reference too, so those stay seeded)
    unary = variant.base not in ("div", "pow")
    if unary and not info.is_cpu and info.fp64 and (not info.dialect.fast_math_relaxes_fp64 or not variant.options):
        ref64 = functions.FUNCTIONS[variant.base].expr(info.backend, "fp64", ["x0"])
        cert = certificate.certify(device, variant.base, call, ref64, metric, domain=variant.domain,
                                   options=variant.options)
        if not cert.confirmed:
            raise AssertionError(f"{variant.label}: the device's fp64 comparison says {cert.device_fp64_error} ulp "
                                 f"at {cert.worst} but MPFR says {cert.max}: the certificate is not proven")
        top, mean, worst = cert.max, cert.mean, cert.worst
        max_identity = mean_identity = {"inputs": "exhaustive", "domain": [float(lo), float(hi)]}
        fractional = mathfn_check.fractional_record(name, cert, max_identity)
        max_info.update({"certificate": cert.info(), "worst": cert.worst, "seeded_max": sc.max})
        mean_info.update({"n": cert.scored, "reference": "the device's binary64 function", "seeded_mean": sc.mean})
    if variant.abs_bound is not None:
        with np.errstate(all="ignore"):
            abs_err = np.abs(y.astype(np.float64) - np.asarray(exact, np.float64))
        i = int(np.nanargmax(abs_err))
        records.append({"name": f"{name}.max_abs", "value": float(abs_err[i]), "unit": "1", "better": "bound",
                        "bound": variant.abs_bound,
                        "info": check.jsonable({**base_info, "worst_abs_input": float(args[0][i])}),
                        "identity": seeded})
        if abs_err[i] > variant.abs_bound:
            problems.append(f"{variant.label}: abs error {abs_err[i]:.3g} > {variant.abs_bound:.3g} "
                            f"at x={args[0][i]!r}")
    elif variant.bound_fn is not None:
        errs = sc.errors.cr if metric == "cr" else sc.errors.ulp
        b = variant.bound_fn(args[0].astype(np.float64))
        excess = np.where(np.isnan(errs), 0, errs) - b
        i = int(np.argmax(excess))
        records.append({"name": f"{name}.max_ulp_over_bound", "value": float(excess[i]), "unit": "ulp",
                        "better": "bound", "bound": 0.0,
                        "info": check.jsonable({**base_info, "at": float(args[0][i]), "err": float(errs[i]),
                                                "bound_there": float(b[i])}), "identity": seeded})
        if excess[i] > 0:
            problems.append(f"{variant.label}: {errs[i]} ulp > {b[i]} at x={args[0][i]!r}")
    elif variant.bound is not None:
        max_info["bound"] = float(variant.bound)
        if top > variant.bound:
            problems.append(f"{variant.label}: {top} ulp > {variant.bound} at {worst}")
    # a deterministic maximum (the same inputs, device and library): gated tightly, a change is news
    records.append({"name": f"{name}.max_ulp", "value": top, "unit": "ulp", "better": "lower",
                    "info": check.jsonable(max_info), "identity": max_identity})
    records.append({"name": f"{name}.mean_ulp", "value": mean, "unit": "ulp", "better": "lower",
                    "info": check.jsonable(mean_info), "identity": mean_identity})
    if fractional is not None:
        records.append(fractional)
    return Outcome(records, "\n".join(problems) or None)
