"""Fuzzing the dangerous regions (hypothesis), a budgeted worst-case search, and the exhaustive /
strided binary32 sweep on the device.

* ``test_dangerous_region`` — hypothesis draws batches from the region strategies of
  :mod:`pytest_gpuperf.accuracy.region_strategies`; a batch exceeding the documented bound (or with an inf/nan
  mismatch) fails, shrinks to a minimal input list and the message names the hypothesis seed.
  Metric ``accuracy.fuzz.<fmt>.<fn>.<region>.max_ulp``.
* ``test_worst_case_search`` — random restarts + local search (``search.worst_case_search``) under a
  time budget; ``accuracy.search.fp32.<fn>.max_ulp`` (MPFR-confirmed, bound-gated).
* ``test_sweep`` — binary32 inputs checked on the device against the binary64 function:
  all 2^32 with ``--gpuperf-exhaustive`` (opt-in), else every k-th bit pattern. Records the maximum
  (MPFR-confirmed on the host) and ``accuracy.sweep.fp32.<fn>.checked_per_s`` (device time, one pass),
  plus ``accuracy.sweep.fp32.<fn>.checked_over_reference``: its device time over that of a plain
  one-kernel sweep against the fp64 reference (target: within 2×; bound 2 in exhaustive mode),
  and the evaluate-only sweep's rate.
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.accuracy import check, expr_kernels, findings, fp_formats, functions, mpfr, search, sweep

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is needed for the fuzz suite: pip install hypothesis")
from hypothesis import given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pytest_gpuperf.accuracy import region_strategies  # noqa: E402
from pytest_gpuperf.timing.measure import observed

FUZZ = [(fmt, fn, region) for fmt in ("fp32", "fp64") for fn, regs in region_strategies.regions(fp_formats.get(fmt)).items()
        for region, _ in regs if fmt == "fp32" or fn in ("sin", "cos", "log", "exp")]


@pytest.mark.parametrize("fmt_name,fn,region", FUZZ, ids=[f"{a}-{b}-{c}" for a, b, c in FUZZ])
def test_dangerous_region(gpu_device, gpuperf_record, accuracy_rng, fmt_name, fn, region):
    info = gpu_device.info
    if fmt_name == "fp64" and not info.fp64:
        pytest.skip(f"{info.name} has no binary64 support")
    fmt = fp_formats.get(fmt_name)
    f = functions.FUNCTIONS[fn]
    strat = dict(region_strategies.regions(fmt)[fn])[region]
    backend = info.backend
    bound = f.bound(backend, fmt_name)
    metric = f.metric(backend, fmt_name)
    expr = f.expr(backend, fmt_name, ["x0"])
    ref = functions.reference_fn(fn, fmt_name)
    worst = {"max": 0.0, "at": None}
    hseed = int(accuracy_rng.integers(0, 2 ** 31))
    examples = 10 if info.is_cpu else 25

    @seed(hseed)
    @settings(max_examples=examples, deadline=None, database=None, print_blob=True)
    @given(st.lists(strat, min_size=1, max_size=64))
    def check_batch(xs):
        x = np.array(xs, fmt.dtype)
        y = expr_kernels.evaluate(gpu_device, fmt, expr, [x])
        exact, sgn = (ref(x), 0) if ref is not None else mpfr.exact_pairs(fn, [x])
        sc = check.score(y, [x], exact, fmt, fn, metric, sgn, confirm_top=4)
        if sc.max > worst["max"]:
            worst.update(max=sc.max, at=sc.worst([x], y))
        assert not sc.mismatches, f"inf/nan mismatch {sc.mismatch_example} (hypothesis seed {hseed})"
        assert bound is None or sc.max <= bound, \
            f"{fn} {fmt_name} {region}: {sc.max} ulp ({metric}) > {bound} at {sc.worst([x], y)} (hypothesis seed {hseed})"

    problem = None
    try:
        check_batch()
    except AssertionError as exc:
        problem = str(exc)
    finally:
        gpuperf_record(f"accuracy.fuzz.{fmt_name}.{fn}.{region}.max_ulp", worst["max"], "ulp",
                       better="bound" if bound is not None else "lower", bound=None if bound is None else float(bound),
                       tolerance=None if bound is not None else {"abs": 1.0},
                       info=check.jsonable({"citation": f.citation(backend, fmt_name), "metric": metric,
                                            "worst": worst["at"], "hypothesis_seed": hseed, "examples": examples}),
                       # hypothesis draws from its seed: the same batches every run of this test id
                       identity={"inputs": "hypothesis", "seed": hseed, "examples": examples})
    findings.check(info, f"fuzz.{fmt_name}.{fn}.{region}", problem)


SEARCH = ["sin", "tan", "exp", "log", "erfc", "tgamma", "cbrt"]


@pytest.mark.parametrize("fn", SEARCH)
def test_worst_case_search(gpu_device, gpuperf_record, accuracy_seed, accuracy_rng, fn):
    info = gpu_device.info
    fmt = fp_formats.FP32
    f = functions.FUNCTIONS[fn]
    backend = info.backend
    bound = f.bound(backend, "fp32")
    metric = f.metric(backend, "fp32")
    expr = f.expr(backend, "fp32", ["x0"])
    budget = 1.0 if info.is_cpu else 2.0
    batch = 1 << (12 if info.is_cpu else 16)
    res = search.worst_case_search(fmt, lambda x: expr_kernels.evaluate(gpu_device, fmt, expr, [x]), f.ref32, metric,
                                   budget, accuracy_rng, batch=batch, domain=f.domain)
    x = res.best_x
    y = expr_kernels.evaluate(gpu_device, fmt, expr, [x])
    sc = check.score(y, [x], f.ref32(x), fmt, fn, metric)
    worst = sc.worst([x], y)
    gpuperf_record(f"accuracy.search.fp32.{fn}.max_ulp", sc.max, "ulp", better="bound", bound=float(bound),
                   info=check.jsonable({"citation": f.citation(backend, "fp32"), "metric": metric, "worst": worst,
                                        "rounds": res.rounds, "evaluated": res.evaluated, "budget_s": budget}),
                   # how far the search gets depends on the device's speed within the budget: gated by the
                   # documented bound only, never as a reproducible figure
                   identity={"inputs": "search", "seed": int(accuracy_seed), "budget_s": budget, "batch": batch})
    problem = (f"{fn}: inf/nan mismatch {sc.mismatch_example}" if sc.mismatches else
               f"{fn} fp32: search found {sc.max} ulp ({metric}) > documented {bound} at {worst}" if sc.max > bound
               else None)
    findings.check(info, f"search.fp32.{fn}", problem)


SWEEP = {"cuda": {"exp": ("expf", "exp"), "sin": ("sinf", "sin"), "log": ("logf", "log")},
         "opencl": {"exp": ("exp", "exp"), "sin": ("sin", "sin"), "log": ("log", "log")}}


@pytest.mark.parametrize("fn", ["exp", "sin", "log"])
@pytest.mark.gpuperf(requires=["fp64"])
def test_sweep(gpu_device, gpuperf_record, request, fn):
    info = gpu_device.info
    # exp is swept over all 2^32 inputs on GPUs (a fraction of a second) and, with --gpuperf-exhaustive, on CPU
    # devices too; the others stay strided. The mode is part of every sweep metric's identity.
    exhaustive = fn == "exp" and (not info.is_cpu or request.config.getoption("--gpuperf-exhaustive"))
    fn32, fn64 = SWEEP[info.backend][fn]
    if exhaustive:
        stride, count = 1, 1 << 32
    else:
        count = 1 << (18 if info.is_cpu else 24)
        stride = (1 << 32) // count + 1  # odd stride: every residue class of the exponent field is visited
    # one timed pass, watched like every measurement (its rate is a device figure: checked_per_s)
    r = observed(gpu_device, lambda: sweep.run_sweep(gpu_device, fn32, fn64, stride, count))
    f = functions.FUNCTIONS[fn]
    bound = f.bound(info.backend, "fp32")
    metric = f.metric(info.backend, "fp32")
    err, bits = r.worst_cr if metric == "cr" else r.worst_ulp
    fmt = fp_formats.FP32
    x = np.array([bits], np.uint32).view(np.float32)
    y = expr_kernels.evaluate(gpu_device, fmt, f.expr(info.backend, "fp32", ["x0"]), [x])
    ex, sgn = mpfr.exact_pairs(fn, [x])
    sc = check.score(y, [x], ex, fmt, fn, metric, sgn)
    mode = "exhaustive" if exhaustive else f"stride{stride}"
    ident = {"inputs": mode, "checked": int(r.count)}
    rate = r.count / r.seconds
    gpuperf_record(f"accuracy.sweep.fp32.{fn}.max_ulp", sc.max, "ulp", better="bound", bound=float(bound),
                   info=check.jsonable({"citation": f.citation(info.backend, "fp32"), "metric": metric,
                                        "mode": mode, "checked": r.count, "device_fp64_error": err,
                                        "worst": sc.worst([x], y), "mismatch_input_bits": r.mismatch_bits}),
                   identity=ident)
    gpuperf_record(f"accuracy.sweep.fp32.{fn}.checked_per_s", rate, "1/s", better="higher",
                   # one timed pass on 2 shared CPU cores: a concurrent process halved it (PoCL A/A run, −45 %)
                   # and one pass of an unchanged run took 2.2x its baseline (A/A run 3): a 200 % band there
                   tolerance={"rel": 2.0} if info.is_cpu else None,
                   info=check.jsonable({"mode": mode, "checked": r.count, "device_s": r.seconds, "single_pass": True,
                         "plain_sweep_per_s": r.count / r.plain_seconds,
                         "checked_over_plain_time": r.seconds / r.plain_seconds,
                         "reference_sweep_per_s": r.count / r.ref_seconds,
                         "checked_over_reference_time": r.seconds / r.ref_seconds}), identity=ident)
    # the yardstick: a plain one-kernel sweep against the fp64 reference (evaluate, compare, max)
    gpuperf_record(f"accuracy.sweep.fp32.{fn}.checked_over_reference", r.seconds / r.ref_seconds, "x",
                   better="bound" if exhaustive else "lower", bound=2.0 if exhaustive else None,
                   # one short pass each: noisy; on CPU devices one pass of an unchanged run took 2.2x (A/A run 3)
                   tolerance=None if exhaustive else {"rel": 2.0 if info.is_cpu else 1.0},
                   info=check.jsonable({"target": "issue 4: checked sweep within 2x of a plain one-kernel sweep "
                                                  "against an fp64 reference on the device", "mode": mode,
                                        "checked_s": r.seconds, "reference_s": r.ref_seconds,
                                        "evaluate_only_s": r.plain_seconds,
                                        # inf where an fp32 result overflows below a finite fp64 reference
                                        "reference_max_ulp": r.ref_max_ulp}), identity=ident)
    if exhaustive:
        gpuperf_record(f"accuracy.sweep.fp32.{fn}.exhaustive_s", r.seconds, "s", better="bound", bound=6.0,
                       info={"target": "issue 4: all 2^32 inputs in <= 6 s", "plain_s": r.plain_seconds,
                             "reference_s": r.ref_seconds}, identity=ident)
    assert abs(sc.max - err) <= 0.01 + 1e-6 * err, \
        f"device fp64 check says {err} but MPFR says {sc.max} at x={x[0]!r}: the fp64 reference is not good enough"
    assert r.mismatch_bits is None, \
        f"{fn}: inf/nan mismatch at x={float(np.array([r.mismatch_bits], np.uint32).view(np.float32)[0])!r}"
    assert sc.max <= bound, f"{fn} fp32 sweep: {sc.max} ulp ({metric}) > documented {bound} at {sc.worst([x], y)}"
