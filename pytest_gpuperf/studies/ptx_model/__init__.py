"""Alavani's static PTX model (thesis ch. 3–4) and its study.

* :mod:`.ptx` — PTX parser (instructions, operands, classes).
* :mod:`.cfg` — basic blocks, control-flow graph, natural loops, data-dependence graphs.
* :mod:`.ptx_latency` — instruction latencies: probe baselines first, the thesis table as fallback.
* :mod:`.scheduler` — Algorithms 6–8, memory penalties (Eq. 4.10–4.12) and launch overhead.
* :mod:`.dwarfs` — the thesis' dwarf benchmarks re-written for CUDA, with their loop trip counts.
* :mod:`.ptx_calibration` — the model's dynamic analysis of the device (§3.3.3, §3.4, §4.4.5);
  :mod:`.ptx_errors` its prediction error on the dwarfs.
* :mod:`.ptx_sweep` and :mod:`.ptx_study` — every dwarf kernel over launch configurations (§4.4.8–4.4.10).
"""
