"""Alavani's static power model (thesis ch. 5).

* :mod:`.power_model` — PTX features, the corpus file, nested cross-validation of the model families.
* :mod:`.model_corpus` — the corpus' kernels × configurations and how one is measured, collected by
  ``python -m pytest_gpuperf.studies.static_power.collect`` (:mod:`.collect`).
* :mod:`.model_scores` — the model's scores on a device's saved corpus, as the power suite's figures.
* :mod:`.corpus_intake` — a corpus brought back by ``gpuperf offline collect``, joined with the store's.

The sensor lives with the devices (``devices.nvml``), the energy of a launch with the measurements
(``timing.energy``), the card's sustained-load figures in ``power``.
"""
