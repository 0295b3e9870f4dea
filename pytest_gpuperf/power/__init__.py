"""The card's power: the sustained-load figures (:mod:`.sustained`) and the measured corpus of the static
power model (:mod:`.model_corpus`, collected by ``python -m pytest_gpuperf.power.collect``); the power
suite's procedures — its standard FMA load (:mod:`.fma_load`), an energy as figures (:mod:`.energy_figures`),
the model's scores (:mod:`.model_scores`) and a tuning kernel's (time, energy) front (:mod:`.front_figures`).
The sensor
lives with the devices (``devices.nvml``), the energy of a launch with the measurements (``timing.energy``),
the model itself in ``models.power_model``; the energy-aware tuner is ``tuning.pareto`` and ``tuning.evaluate``."""
