"""Statistical timing with device events (see :mod:`.measure`) and robust statistics (:mod:`.stats`)."""

from .measure import MeasureConfig, Measurement, measure, measure_kernel, measure_pair
from .stats import MAD_TO_SIGMA, Stats, noise_floor

__all__ = ["MAD_TO_SIGMA", "MeasureConfig", "Measurement", "Stats", "measure", "measure_kernel", "measure_pair", "noise_floor"]
