"""Instruction-latency, throughput and memory-hierarchy microbenchmarks.

* :mod:`.ops` — the catalog of probed operations; :mod:`.chain` — dependent/independent chain kernels;
* :mod:`.sass_proof` — proof from the CUDA SASS that a probe timed what it claims;
* :mod:`.build` — one compile per group of kernels; :mod:`.latency`, :mod:`.throughput`,
  :mod:`.memory` — the measurements; :mod:`.fit` — the Alavani piecewise-linear latency model;
  :mod:`.global_latency` — the thesis' global-latency microbenchmark over (nB, nT_b) that feeds it (PTX model).
"""
