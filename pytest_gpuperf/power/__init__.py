"""Energy and power of kernels: steady-state energy per launch from the board's NVML counter
(:mod:`.energy`). The sensor itself lives with the devices (``devices.nvml``); the static power model is
``models.power_model``; the energy-aware tuner is ``tuning.pareto`` and ``tuning.evaluate``."""
