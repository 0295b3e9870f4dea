"""Kernel classes (paper 004) and CFG similarity (Lim, ch. IV).

* :mod:`.kernel_classes` — the ten kernel classes K1–K10 and the three unseen kernels.
* :mod:`.classify` — portable measured features, dataset, RF / naive Bayes / MLP classifiers.
* :mod:`.class_dataset` — the timing dataset of the classes on the device; :mod:`.class_records` what
  the kernel-class suite records.
* :mod:`.similarity` — Lim's CFG transition-probability matching to reuse tuned configurations;
  :mod:`.similarity_reuse` — reusing a tuned work-group size by CFG similarity on the device.
"""
