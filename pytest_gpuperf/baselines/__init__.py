"""Reviewed expectations per device model (:mod:`.baseline_file`) and the verdict logic (:mod:`.verdicts`)."""

from .verdicts import DIRECTIONS, VERDICTS, Comparison, band, compare
from .baseline_file import BaselineFile, device_class, load, make_entry, noise_tolerance, path_for, update, validate

__all__ = ["DIRECTIONS", "VERDICTS", "BaselineFile", "Comparison", "band", "compare", "device_class", "load",
           "make_entry", "noise_tolerance", "path_for", "update", "validate"]
