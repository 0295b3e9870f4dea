"""Floating-point accuracy of device arithmetic against correctly rounded MPFR references.

One job per module:

* :mod:`fp_formats` — binary16/32/64 parameters (precision, exponent range, numpy dtypes).
* :mod:`rounding`  — vectorized correct rounding of an exact value ``r + e`` (long double pair) to a
  format in any IEEE rounding mode; the bulk reference path.
* :mod:`ulp`       — the ULP error metric (against the exact value and against the correctly rounded
  result) with inf/nan mismatches as their own class.
* :mod:`mpfr`      — gmpy2/MPFR (and mpmath) references, one element at a time, used to confirm
  near-boundary cases and every reported maximum.
* :mod:`functions` — the catalog: math functions, device spellings, references, documented bounds.
* :mod:`exact_ops` — exact results of + − × ÷ sqrt fma as long double pairs (error-free transforms).
* :mod:`inputs` / :mod:`region_strategies` — stratified inputs over every binade, hypothesis strategies for
  dangerous regions.
* :mod:`expr_kernels` — device evaluators (CUDA and OpenCL source generation, launch).
* :mod:`check`     — bulk check of a device result vector: max/mean ULP, worst input, MPFR confirmation.
* :mod:`search`    — worst-case search (random restarts + local search) under a budget.
* :mod:`sweep`     — exhaustive (all 2^32) or strided fp32 sweep on the device.
* :mod:`summation` — serial/parallel/pairwise/Kahan/float2/double2 sums against the exact MPFR sum.
* :mod:`findings`  — reproduced violations of specific implementations (xfail with the input).
* the suites' checks, each returning an :class:`~.outcome.Outcome` (records and problem) for its suite
  to record: :mod:`mathfn_check` (a math function of the device's library), :mod:`fastmath_check` (fast
  intrinsics, ``native_*``/``half_*``, fast-math builds), :mod:`usermath_check` (the libraries users
  call), :mod:`region_fuzz` (hypothesis over the dangerous regions), :mod:`search_check` (budgeted
  worst-case search), :mod:`sweep_check` (the binary32 sweep), :mod:`summation_check` (sums × layouts).
* :mod:`fixtures`  — ``--gpuperf-exhaustive``, ``--gpuperf-accuracy-scale``, ``--gpuperf-accuracy-budget``.
"""
