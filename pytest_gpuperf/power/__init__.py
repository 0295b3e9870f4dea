"""The card's power: the sustained-load figures (:mod:`.sustained`) and the measured corpus of the static
power model (:mod:`.model_corpus`, collected by ``python -m pytest_gpuperf.power.collect``). The sensor
lives with the devices (``devices.nvml``), the energy of a launch with the measurements (``timing.energy``),
the model itself in ``models.power_model``; the energy-aware tuner is ``tuning.pareto`` and ``tuning.evaluate``."""
