"""Instruction-latency, throughput and memory-hierarchy microbenchmarks.

* :mod:`.ops` — the catalog of probed operations; :mod:`.chain` — dependent/independent chain kernels;
* :mod:`.sass_proof` — proof from the CUDA SASS that a probe timed what it claims;
* :mod:`.build` — one compile per group of kernels; :mod:`.bound_measurer` — ``gpu_measure`` bound to a
  probe's repeat settings; :mod:`.latency`, :mod:`.throughput`, :mod:`.memory` — the measurements;
  :mod:`.hierarchy` — the memory-hierarchy suite's sweeps over them; :mod:`.copy_bandwidth` — device copies
  over a rotation of buffers; :mod:`.launch_overhead` — empty launches, host-timed and over grid sizes;
  :mod:`.fit` — the Alavani piecewise-linear latency model;
  :mod:`.global_latency` — the thesis' global-latency microbenchmark over (nB, nT_b) that feeds it (PTX model).
"""
