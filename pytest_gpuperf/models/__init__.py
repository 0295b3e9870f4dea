"""Performance models and their prediction error.

One module per job:

* :mod:`.corpus` — the kernel corpus of the sampled-kernel models (Dao, ch. 2).
* :mod:`.sampling` — saturation points, sampled runs and the linear model (Dao §2.4–2.5.1).
* :mod:`.svr` — the ML (SVR) model over sampled features, leave-one-kernel-out (Dao §2.5.2, §2.6.1).
* :mod:`.ptx` — PTX parser (instructions, operands, classes).
* :mod:`.cfg` — basic blocks, control-flow graph, natural loops, data-dependence graphs.
* :mod:`.ptx_latency` — instruction latencies: probe baselines first, the Alavani thesis table as fallback.
* :mod:`.scheduler` — Alavani's Algorithms 6–8, memory penalties (Eq. 4.10–4.12) and launch overhead.
* :mod:`.dwarfs` — the thesis' dwarf benchmarks re-written for CUDA, with their loop trip counts.
* :mod:`.kernel_classes` — the ten kernel classes K1–K10 of paper 004 and its three unseen kernels.
* :mod:`.classify` — portable measured features, dataset, RF / naive Bayes / MLP classifiers.
* :mod:`.ncu` — Nsight Compute counters of the kernel-class dataset (paper 004's own features, CUDA);
  :mod:`.ncu_worker` is the process ncu profiles (each planned run launched once, in order).
* :mod:`.similarity` — Lim's CFG transition-probability matching to reuse tuned configurations.
* :mod:`.fixtures` — the ``sampled_kernel`` pytest fixture.
* :mod:`.app_kernels` (with :mod:`.app_parboil`, :mod:`.app_shoc`, :mod:`.app_rodinia`, :mod:`.app_polybench`) —
  the application corpus ported for Dao's protocol; :mod:`.sampled_apps` measures it.
* :mod:`.heldout` names the PTX model's held-out kernels; :mod:`.heldout_kernels` (:mod:`.heldout_rodinia`,
  :mod:`.heldout_samples`, :mod:`.heldout_port`) ports them; :mod:`.ptx_sweep` and :mod:`.ptx_study` sweep
  every dwarf kernel over launch configurations (Alavani ch. 4).
* :mod:`.srad_reference` — SRAD's coefficients on the host, the reference of both SRAD ports.
* :mod:`.sampled_corpus` — the sampled-kernel model over the corpus, under each sampling protocol;
  :mod:`.aggregate` — the identity of a figure computed over a set of kernels (the set itself).
* :mod:`.app_kernel` — one application kernel (origin, text, inputs); :mod:`.app_check` runs one and checks
  its outputs against its NumPy reference.
* :mod:`.dao_ml` — Dao's ML model on hardware counters (Table 2.1); :mod:`.dao_counters` collects them
  through Nsight Compute from :mod:`.dao_counters_worker`, the process it profiles.
* :mod:`.class_dataset` — the timing dataset of paper 004's classes on the device; :mod:`.class_records`
  what the kernel-class suite records; :mod:`.ncu_reference` their Nsight Compute counters across runs.
* :mod:`.power_model` — Alavani's static power model (ch. 5): PTX features, a measured corpus, the regressor.
* :mod:`.ptx_calibration` — the PTX model's dynamic analysis of the device (§3.3.3, §3.4, §4.4.5);
  :mod:`.ptx_errors` its prediction error on the dwarfs.
* :mod:`.similarity_reuse` — reusing a tuned work-group size by CFG similarity (Lim ch. IV) on the device.

Kernel texts for both backends come from one portable form: :mod:`pytest_gpuperf.devices.dialect`.
"""
