"""Kernel classes (paper 004) and CFG similarity (Lim, ch. IV).

The ten kernel classes K1–K10 and the three unseen kernels are a corpus
(:mod:`pytest_gpuperf.corpora.kernel_classes`), profiled by Nsight Compute in :mod:`pytest_gpuperf.counters`.

* :mod:`.classify` — portable measured features, dataset, RF / naive Bayes / MLP classifiers.
* :mod:`.class_dataset` — the timing dataset of the classes on the device; :mod:`.class_records` what
  the kernel-class suite records.
* :mod:`.similarity` — Lim's CFG transition-probability matching to reuse tuned configurations;
  :mod:`.similarity_reuse` — reusing a tuned work-group size by CFG similarity on the device.
"""
