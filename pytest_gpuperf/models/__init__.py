"""Performance models and their prediction error.

One module per job:

* :mod:`.source` — one kernel text for both backends (a small macro prelude).
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
"""
