"""Basic operations + − × ÷ sqrt fma in binary16/32/64 with each rounding-mode intrinsic, against the
exact result rounded in that mode (error-free transformations in long double, confirmed by MPFR).

Correctly rounded operations must be 0 ulp from the correctly rounded result — any nonzero figure is a
real finding and fails with the input. Metric: ``accuracy.<fmt>.<op>.<mode>.max_ulp`` (``better="bound"``,
bound 0, steps from the correctly rounded result).

* CUDA: ``__fadd_rz`` … (fp32), ``__dadd_rz`` … (fp64), native ``__hadd``/``__hdiv``/``hsqrt``/``__hfma``
  (fp16, round-to-nearest); fp16 in directed modes is the fp32 intrinsic in that mode followed by
  ``__float2half_r{z,u,d}`` — exact by construction (the binary16 grid is a subset of binary32's and
  directed roundings compose), so it tests the two intrinsics together.
* OpenCL: round-to-nearest only (the language has no per-operation rounding). binary32 ÷ and sqrt are
  not correctly rounded by default (OpenCL C 3.0 ULP table: x/y ≤ 2.5 ulp, sqrt ≤ 3 ulp): they are
  gated by those bounds in the default build (mode ``rn.default``) and must be 0 ulp with
  ``-cl-fp32-correctly-rounded-divide-sqrt`` (mode ``rn``).
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.accuracy import check, exact_ops, expr_kernels, fp_formats, inputs
from pytest_gpuperf.devices.dialect import per_language

CUDA32 = {"add": "__fadd_{m}(x0, x1)", "sub": "__fsub_{m}(x0, x1)", "mul": "__fmul_{m}(x0, x1)",
          "div": "__fdiv_{m}(x0, x1)", "sqrt": "__fsqrt_{m}(x0)", "fma": "__fmaf_{m}(x0, x1, x2)"}
CUDA64 = {"add": "__dadd_{m}(x0, x1)", "sub": "__dsub_{m}(x0, x1)", "mul": "__dmul_{m}(x0, x1)",
          "div": "__ddiv_{m}(x0, x1)", "sqrt": "__dsqrt_{m}(x0)", "fma": "__fma_{m}(x0, x1, x2)"}
CUDA16 = {"add": "__hadd(x0, x1)", "sub": "__hsub(x0, x1)", "mul": "__hmul(x0, x1)", "div": "__hdiv(x0, x1)",
          "sqrt": "hsqrt(x0)", "fma": "__hfma(x0, x1, x2)"}
OPENCL = {"add": "x0 + x1", "sub": "x0 - x1", "mul": "x0 * x1", "div": "x0 / x1", "sqrt": "sqrt(x0)",
          "fma": "fma(x0, x1, x2)"}
OCL_DEFAULT_BOUND = {("fp32", "div"): 2.5, ("fp32", "sqrt"): 3.0}
OCL_CITE = ("OpenCL C Specification 3.0, 'Relative Error as ULPs': x+y, x−y, x·y, fma correctly rounded; "
            "binary32 x/y ≤ 2.5 ulp and sqrt ≤ 3 ulp unless -cl-fp32-correctly-rounded-divide-sqrt; "
            "binary64 all correctly rounded")
CUDA_CITE = ("CUDA C++ Programming Guide, 'Mathematical Functions': IEEE-754 compliant intrinsics "
             "__f{add,sub,mul,div,sqrt}_r{n,z,u,d}, __fmaf_r*, __d*_r*, __fma_r* (0 ulp); cuda_fp16 __hadd etc.")


def cuda_expr(fmt: str, op: str, mode: str) -> str:
    if fmt == "fp32":
        return CUDA32[op].format(m=mode)
    if fmt == "fp64":
        return CUDA64[op].format(m=mode)
    if mode == "rn":
        return CUDA16[op]
    f32 = CUDA32[op].format(m=mode).replace("x0", "__half2float(x0)").replace("x1", "__half2float(x1)") \
        .replace("x2", "__half2float(x2)")
    return f"__float2half_{mode}({f32})"


def operands(fmt: fp_formats.Format, op: str, scale: float, rng: np.random.Generator) -> list[np.ndarray]:
    """All-binade operands plus the hard cases of each operation (cancellation, products near −c)."""
    per = {"fp16": 64, "fp32": 8, "fp64": 1}[fmt.name]
    per = max(1, int(per * scale))
    cols = inputs.sample(fmt, exact_ops.ARITY[op], per, 2000, (-4.0, 4.0), rng)
    n = cols[0].size
    if op in ("add", "sub"):  # near-cancellation: b = ∓a·(1 + k·eps)
        a = cols[0][: n // 4]
        k = rng.integers(-64, 64, a.size).astype(np.float64)
        with np.errstate(over="ignore"):  # an a in fp16's top binade may round b to infinity: a case as valid
            b = (a.astype(np.float64) * (1 + k * float(np.finfo(fmt.dtype).eps))).astype(fmt.dtype)
        cols[0] = np.concatenate([cols[0], a])
        cols[1] = np.concatenate([cols[1], -b if op == "add" else b])
    if op == "fma":  # c ≈ −a·b: the exact residue decides the result
        a, b = cols[0][: n // 4], cols[1][: n // 4]
        with np.errstate(all="ignore"):
            c = -(a.astype(np.float64) * b.astype(np.float64)).astype(fmt.dtype)
        cols = [np.concatenate([cols[0], a]), np.concatenate([cols[1], b]), np.concatenate([cols[2], c])]
    return cols


def _check_mode(dev, fmt, op, mode, expr, args, options, gpuperf_record, bound, metric, cite, extra_info):
    y = expr_kernels.evaluate(dev, fmt, expr, args, options)
    r, s = exact_ops.exact_op(op, *args)
    sc = check.score(y, args, r, fmt, op, metric, s, mode="rn" if mode.startswith("rn") else mode)
    info = {"citation": cite, "expr": expr, "options": list(options), "metric": metric, "n": sc.n,
            "mean": sc.mean, "worst": sc.worst(args, y), "mismatches": sc.mismatches,
            "mismatch_example": sc.mismatch_example, "mpfr_checked": sc.confirmed,
            "mpfr_corrected": sc.disagreements, **extra_info}
    gpuperf_record(f"accuracy.{fmt.name}.{op}.{mode}.max_ulp", sc.max, "ulp", better="bound", bound=bound,
                   info=check.jsonable(info), identity={**extra_info.get("identity", {}), "n": int(sc.n)})
    problems = []
    if sc.max > bound:
        problems.append(f"{fmt.name} {op} {mode} ({expr}, options {list(options)}): {sc.max} ulp > {bound} "
                        f"at {sc.worst(args, y)}")
    if sc.mismatches:
        problems.append(f"{fmt.name} {op} {mode}: inf/nan mismatches {sc.mismatches}, e.g. {sc.mismatch_example}")
    return problems


@pytest.mark.parametrize("op", exact_ops.OPS)
@pytest.mark.parametrize("fmt_name", ["fp16", "fp32", "fp64"])
def test_basic_op(gpu_device, gpuperf_record, accuracy_scale, accuracy_seed, accuracy_rng, fmt_name, op):
    info = gpu_device.info
    if fmt_name == "fp16" and not info.fp16:
        pytest.skip(f"{info.name} has no binary16 support (cl_khr_fp16)")
    if fmt_name == "fp64" and not info.fp64:
        pytest.skip(f"{info.name} has no binary64 support")
    fmt = fp_formats.get(fmt_name)
    backend = info.backend
    args = operands(fmt, op, accuracy_scale, accuracy_rng)
    ident = {"identity": {"inputs": "seeded", "scale": float(accuracy_scale), "seed": int(accuracy_seed)}}
    problems = CHECKS[backend](gpu_device, fmt, op, args, gpuperf_record, ident)
    assert not problems, "\n".join(problems)


def _cuda_checks(dev, fmt, op, args, gpuperf_record, ident) -> list[str]:
    """CUDA: every rounding mode through its intrinsic, 0 steps from the result correctly rounded in it."""
    problems = []
    for mode in dev.info.dialect.rounding_modes:
        problems += _check_mode(dev, fmt, op, mode, cuda_expr(fmt.name, op, mode), args, (), gpuperf_record,
                                0.0, "cr", CUDA_CITE, {"composed": fmt.name == "fp16" and mode != "rn", **ident})
    return problems


def _opencl_checks(dev, fmt, op, args, gpuperf_record, ident) -> list[str]:
    """OpenCL: round-to-nearest only; binary32 ÷ and sqrt correctly rounded only with
    -cl-fp32-correctly-rounded-divide-sqrt, gated by the specification's bound in the default build."""
    problems = []
    for _mode in dev.info.dialect.rounding_modes:
        opts = ("-cl-fp32-correctly-rounded-divide-sqrt",) if (fmt.name, op) in OCL_DEFAULT_BOUND else ()
        problems += _check_mode(dev, fmt, op, "rn", OPENCL[op], args, opts, gpuperf_record, 0.0, "cr",
                                OCL_CITE, ident)
        if (fmt.name, op) in OCL_DEFAULT_BOUND:
            problems += _check_mode(dev, fmt, op, "rn.default", OPENCL[op], args, (), gpuperf_record,
                                    OCL_DEFAULT_BOUND[fmt.name, op], "ulp", OCL_CITE, ident)
    return problems


#: What "correctly rounded" can be asked of each kernel language (its rounding-mode intrinsics or none).
CHECKS = per_language(cuda=_cuda_checks, opencl=_opencl_checks)
