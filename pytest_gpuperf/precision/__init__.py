"""Precision studies. Mixed precision: the precision auto-tuner of Surineni's thesis (ch. 6–7) over typed kernel
templates, fp32-LU with fp64 iterative refinement, and VPREC-style emulated precision (Lim, ch. VI).

One job per module:

* :mod:`.template` — a double-precision kernel written as a *typed source template*; parses its
  operations (the data-flow graph's nodes) and renders a precision mix;
* :mod:`.graph` — the data-flow graph: levels from the loads down (top-down, §7.4.2.2), blocks
  (cut points, §7.4.2.3.2);
* :mod:`.cost` — error measures (ulp of the double result, relative) and the thesis' cost;
* :mod:`.lowering` — the level-by-level lowering with step size and cut points, and the pool of best
  programs (§7.4.2.3, §7.4.3.1); pure Python, tested without a device;
* :mod:`.runner` — compiles, validates and times mixes on a device; :func:`.runner.tune`;
* :mod:`.programs` — the six kernels (Gaussian elimination, LU, LavaMD, stencil, n-body, reduction);
* :mod:`.conditioned`, :mod:`.lukernels`, :mod:`.refine` — matrices of prescribed condition, the
  device LU / triangular solves, and mixed-precision iterative refinement;
* :mod:`.vprec` — rounding to r exponent / p mantissa bits (host reference and in-kernel), and the
  search for the fewest mantissa bits that meet a bound.

Integer quantization (Dao, ch. 4): :mod:`.quant_scale` (scale choices, adaptive precision),
:mod:`.quant_kernels` (the kernels), :mod:`.quant_mlp` (the network trained and quantized on the device),
:mod:`.quant_runs` (networks trained once per device, the accuracy figures), :mod:`.quant_gemm` (int8
against fp32 GEMM, checked exact, then timed).
"""
