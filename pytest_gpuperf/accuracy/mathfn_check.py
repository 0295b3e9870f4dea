"""One math function of the device's library in one format, checked against MPFR on its seeded input set
(and, for unary binary32 functions on GPUs, certified over every input): its ``max_ulp`` and ``mean_ulp``
records and the documented bound's verdict.

Why the bound is the test's own business and not the gate's: the metrics are deterministic (the same
inputs, device and library give the same figures) and gated tightly against the baseline, so any change
of the library is news; a bound exceeded fails the test whether or not a baseline exists."""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from . import certificate, check, expr_kernels, fp_formats, functions, inputs, mpfr
from .outcome import Outcome

#: binary64 functions with only a per-element MPFR reference get a smaller sample (host time)
MPFR_ONLY_MAX = 6000
#: the gate check's ulp plant (``--gpuperf-plant ulp=FN``) in ``info``: a plant is a regression of the
#: measured system, never another way to measure, so it never enters the identity
PLANT_NOTE = "gate check: +1 ulp (next float up) on inputs whose low 4 mantissa bits are zero"


def reference(name: str, fmt_name: str, args: list[np.ndarray]) -> tuple[np.ndarray, Any]:
    """The exact values of ``name`` at ``args``: the bulk long double reference where there is one, else MPFR
    per element; with the remainder signs :func:`check.score` takes (0 for the bulk reference)."""
    ref: Optional[Callable] = functions.reference_fn(name, fmt_name)
    if ref is None:
        return mpfr.exact_pairs(name, args)
    return ref(*args), 0


def seeded_args(device: Any, f: functions.MathFunction, fmt_name: str, rng: np.random.Generator) -> list[np.ndarray]:
    """The math suite's seeded input set of ``f``: the device's sample factor, except for binary64 functions
    with only an MPFR reference (factor 1, at most :data:`MPFR_ONLY_MAX` inputs drawn from the set)."""
    fmt = fp_formats.get(fmt_name)
    mpfr_only = fmt_name == "fp64" and f.ref64 is None
    scale = 1.0 if mpfr_only else inputs.sample_factor(device)
    args = inputs.function_sample(fmt, f, scale, rng)
    if mpfr_only and args[0].size > MPFR_ONLY_MAX:
        keep = rng.choice(args[0].size, MPFR_ONLY_MAX, replace=False)
        args = [a[keep] for a in args]
    return args


def fractional_record(name: str, cert: certificate.Certificate, identity: dict[str, Any],
                      planted: bool = False) -> dict[str, Any]:
    """The ``<name>.max_ulp_fractional`` record of a certificate: the fractional maximum ulp error over every
    input (as the published exhaustive tables give it) and the input where it occurs, MPFR-scored there.
    Raises AssertionError where MPFR does not confirm the sweep at that input."""
    if not cert.ulp_confirmed:
        raise AssertionError(f"{name}: the sweep's fractional maximum at {cert.worst_ulp} is not what MPFR says "
                             f"({cert.max_ulp} ulp): the certificate is not proven")
    worst = cert.worst_ulp or {}
    info = {"metric": "ulp", "definition": "max over every input of |y - f(x)| / ulp(f(x)) (Goldberg ulp, "
            "binary32 exponent range), MPFR-scored at the input where the sweep found it",
            "worst_input_hex": (worst.get("input_hex") or [None])[0], "worst_input_bits": worst.get("input_bits"),
            "worst": worst, "checked": cert.checked}
    if planted:
        info["planted"] = PLANT_NOTE
    return {"name": f"{name}.max_ulp_fractional", "value": cert.max_ulp, "unit": "ulp", "better": "lower",
            "info": check.jsonable(info), "identity": identity}


def check_function(device: Any, fn: str, fmt_name: str, rng: np.random.Generator, seed: int,
                   plant: Optional[str] = None) -> Outcome:
    """Check ``fn`` in ``fmt_name`` on ``device``: ``accuracy.<fmt>.<fn>.max_ulp`` / ``.mean_ulp`` in the
    backend's documented convention, with the worst input, the citation and MPFR's confirmation in
    ``info``. ``plant``: the function the gate check's ulp plant targets (binary32 only), or None.
    Raises AssertionError where the certificate's device comparison and MPFR disagree (no proof)."""
    info = device.info
    f = functions.FUNCTIONS[fn]
    fmt = fp_formats.get(fmt_name)
    backend = info.backend
    planted = plant == fn and fmt_name == "fp32"
    args = seeded_args(device, f, fmt_name, rng)
    expr = f.expr(backend, fmt_name, [f"x{k}" for k in range(f.arity)])
    y = expr_kernels.evaluate(device, fmt, expr, args, plant=planted)
    exact, sgn = reference(fn, fmt_name, args)
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
    seeded = {"inputs": "seeded", "n": int(sc.n), "seed": int(seed)}
    top, mean, identity = sc.max, sc.mean, seeded
    mean_info = {"metric": metric, "n": sc.n}
    extra: list[dict[str, Any]] = []
    if planted:
        info_d["planted"] = mean_info["planted"] = PLANT_NOTE
    if fmt_name == "fp32" and f.arity == 1 and not info.is_cpu and info.fp64:
        excl = functions.EXCLUDE.get(fn, {}).get("fp32")
        cert = certificate.certify(device, fn, expr, f.expr(backend, "fp64", ["x0"]), metric, exclude=excl,
                                   plant=planted)
        top, mean, worst = cert.max, cert.mean, cert.worst
        identity = {"inputs": "exhaustive", "range": "all 2^32" if excl is None else
                    f"all 2^32 except ({excl[0]:g}, {excl[1]:g})"}
        info_d.update(check.jsonable({"certificate": cert.info(), "worst": cert.worst, "seeded_max": sc.max}))
        mean_info.update({"n": cert.scored, "reference": "the device's binary64 function", "seeded_mean": sc.mean})
        if not cert.confirmed:
            raise AssertionError(f"{fn}: the device's fp64 comparison says {cert.device_fp64_error} ulp at "
                                 f"{cert.worst} but MPFR says {cert.max}: the certificate is not proven")
        extra.append(fractional_record(name, cert, identity, planted))
        # an inf/nan class difference the sweep saw against the device's fp64 stays in the certificate's
        # info (mismatch_input_bits): the fp64 reference rounds to inf at the overflow edge, so only the
        # MPFR-scored seeded set decides the failure class
    if bound is not None:
        info_d.update({"bound": float(bound)})
    records = [{"name": f"{name}.max_ulp", "value": top, "unit": "ulp", "better": "lower", "info": info_d,
                "identity": identity},
               {"name": f"{name}.mean_ulp", "value": mean, "unit": "ulp", "better": "lower",
                "info": check.jsonable(mean_info), "identity": identity}, *extra]
    problem = None
    if sc.mismatches:
        problem = f"{fn} {fmt_name} on {info.name}: inf/nan mismatches {sc.mismatches}, e.g. {sc.mismatch_example}"
    elif bound is not None and top > bound:
        problem = f"{fn} {fmt_name} on {info.name}: {top} ulp ({metric}) > documented {bound} at {worst}"
    return Outcome(records, problem, f"math.{fmt_name}.{fn}")
