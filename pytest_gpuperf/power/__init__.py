"""The card's power: the sustained-load figures (:mod:`.sustained`); the power suite's procedures — its
standard FMA load (:mod:`.fma_load`), an energy as figures (:mod:`.energy_figures`) and a tuning kernel's
(time, energy) front (:mod:`.front_figures`). The sensor lives with the devices (``devices.nvml``), the
energy of a launch with the measurements (``timing.energy``); the energy-aware tuner is ``tuning.pareto`` and
``tuning.evaluate``. The static power model, its measured corpus and its scores are a study
(``studies.static_power``)."""
