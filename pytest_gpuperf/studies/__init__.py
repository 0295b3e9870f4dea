"""The seeds' models, one sub-package per subject: the top room of the studies wing, which also holds the
kernel corpora (:mod:`pytest_gpuperf.corpora`), the Nsight Compute counters (:mod:`pytest_gpuperf.counters`)
and the precision studies (:mod:`pytest_gpuperf.precision`).

The gate wing (devices, timing, baselines, report, compare, history, fleet, session, offline, the hardware
suites' protocols, the plugin and the ``gpuperf`` command) imports nothing from here; the studies import
the gate's device interface and timing path, and the shipped suites and :mod:`pytest_gpuperf.api` import
both. pytest loads :mod:`.fixtures` by name (the plugin's ``pytest_plugins``), and ``gpuperf offline
collect`` loads :mod:`.static_power.corpus_intake` by name, so neither is an import of the gate.

* :mod:`.ptx_model` — Alavani's static PTX model (ch. 3–4): the parser, the CFG, latencies, the
  scheduler, the dwarf benchmarks, the device calibration, its error and its study over launch configurations.
* :mod:`.sampled` — Dao's sampled-kernel models (ch. 2): sampling and the linear model, the SVR, the
  counter model and its Nsight Compute worker, the models over the corpora.
* :mod:`.classification` — paper 004's kernel classes: their dataset, classifiers and records; Lim's CFG
  similarity and the reuse of a tuned work-group size.
* :mod:`.static_power` — Alavani's static power model (ch. 5): features, the measured corpus, its
  collection on a GPU, its scores, and the join of a corpus brought back from an offline host.
* :mod:`.fixtures` — the wing's pytest options and fixtures (``sampled_kernel``, ``--gpuperf-ncu-timeout``).

Kernel texts for both backends come from one portable form: :mod:`pytest_gpuperf.devices.dialect`.
"""
