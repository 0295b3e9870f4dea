"""Nsight Compute counters of the kernel-class dataset (paper 004's own features, CUDA).

* :mod:`.ncu` — collects the counters; :mod:`.ncu_worker` is the process ncu profiles (each planned run
  launched once, in order).
* :mod:`.ncu_reference` — the counters stored across runs and spot-checked on every run.
"""
