"""Nsight Compute counters of kernels (CUDA): running ncu over a worker process and reading what it counted.

* :mod:`.ncu` — the ncu command, its output and its failures; the kernel-class dataset's counters (paper
  004's own features). The sampled models' counter model (:mod:`pytest_gpuperf.studies.sampled.dao_counters`)
  runs ncu through the same command, parsing and checks.
* :mod:`.ncu_worker` — the process ncu profiles (each planned run launched once, in order), and the spec
  file and entry point every such worker shares.
* :mod:`.ncu_reference` — the kernel-class counters stored across runs and spot-checked on every run.

A room of the studies wing between the corpora it profiles (:mod:`pytest_gpuperf.corpora.kernel_classes`)
and the studies that read its counters (:mod:`pytest_gpuperf.studies.classification`,
:mod:`pytest_gpuperf.studies.sampled`), which import it and never the other way round.
"""
