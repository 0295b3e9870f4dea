"""Reviewed expectations per device model (:mod:`.store`) and the verdict logic (:mod:`.compare`)."""

from .compare import DIRECTIONS, VERDICTS, Comparison, band, compare
from .store import BaselineFile, load, make_entry, noise_tolerance, path_for, update, validate

__all__ = ["DIRECTIONS", "VERDICTS", "BaselineFile", "Comparison", "band", "compare", "load", "make_entry", "noise_tolerance",
           "path_for", "update", "validate"]
