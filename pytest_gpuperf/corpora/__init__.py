"""The kernel corpora of the studies.

* :mod:`.corpus` — the kernel corpus of the sampled-kernel models (Dao, ch. 2).
* :mod:`.app_kernels` (with :mod:`.app_parboil`, :mod:`.app_shoc`, :mod:`.app_rodinia`, :mod:`.app_polybench`) —
  the application corpus ported for Dao's protocol; :mod:`.app_kernel` — one application kernel (origin,
  text, inputs); :mod:`.app_check` runs one and checks its outputs against its NumPy reference.
* :mod:`.heldout` names the PTX model's held-out kernels; :mod:`.heldout_kernels` (:mod:`.heldout_rodinia`,
  :mod:`.heldout_samples`, :mod:`.heldout_port`) ports them.
* :mod:`.kernel_classes` — paper 004's ten kernel classes K1–K10 and its three unseen kernels: what the
  kernel-class study times and what :mod:`pytest_gpuperf.counters` profiles.
* :mod:`.srad_reference` — SRAD's coefficients on the host, the reference of both SRAD ports.
"""
