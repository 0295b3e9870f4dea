"""The studies wing: the seeds' reproductions and their corpora — the models whose prediction error the
model suites record, the kernel classes, the static power model and the precision studies.

The gate wing (devices, timing, baselines, report, compare, history, fleet, session, offline, the hardware
suites' protocols, the plugin and the ``gpuperf`` command) imports nothing from here; the studies import
the gate's device interface and timing path, and the shipped suites and :mod:`pytest_gpuperf.api` import
both. pytest loads :mod:`.fixtures` by name (the plugin's ``pytest_plugins``), and ``gpuperf offline
collect`` loads :mod:`.static_power.corpus_intake` by name, so neither is an import of the gate.

One sub-package per subject:

* :mod:`.ptx_model` — Alavani's static PTX model (ch. 3–4): the parser, the CFG, latencies, the
  scheduler, the dwarf benchmarks, the device calibration, its error and its study over launch configurations.
* :mod:`.sampled` — Dao's sampled-kernel models (ch. 2): sampling and the linear model, the SVR, the
  counter model and its Nsight Compute worker, the models over the corpora.
* :mod:`.classification` — paper 004's kernel classes, their dataset, classifiers and records; Lim's CFG
  similarity and the reuse of a tuned work-group size.
* :mod:`.nsight` — Nsight Compute counters of the kernel-class dataset, their worker and their store.
* :mod:`.corpora` — the kernel corpora: the sampled models' corpus, the application corpus (Parboil,
  Rodinia, SHOC, PolyBench) with its checks, the PTX model's held-out kernels, SRAD's host reference.
* :mod:`.static_power` — Alavani's static power model (ch. 5): features, the measured corpus, its
  collection on a GPU, its scores, and the join of a corpus brought back from an offline host.
* :mod:`.precision` — the precision studies: mixed-precision tuning, iterative refinement, emulated
  precision, integer quantization.
* :mod:`.fixtures` — the studies' pytest options and fixtures (``sampled_kernel``, ``--gpuperf-ncu-timeout``).

Kernel texts for both backends come from one portable form: :mod:`pytest_gpuperf.devices.dialect`.
"""
