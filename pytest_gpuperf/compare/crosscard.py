"""Across two cards: what is comparable, and what is a device-specific absolute figure.

An H200 copies more GB/s than an H100 because it has more bandwidth, not because its driver is better;
calling that ``better`` (or, the other way round, calling a smaller card ``worse``) buries the real
differences. Across two device keys the comparison therefore keeps only figures normalised by the card
itself:

* per-clock and per-unit figures — ``cycles`` (latencies), ``ops/clk/SM`` (throughput per SM per clock);
* accuracy — ``ulp`` and the dimensionless error figures (unit ``1``);
* ratios and fractions — model errors, tuning costs, occupancies, ``x``, ``R²``, ILP, counts of configs;
* bandwidth as a **fraction of the card's own theoretical peak**, where both results name the peak
  (``device.peak_bandwidth_gbs``: memory clock × bus width × 2 as the driver reports them, see
  :attr:`pytest_gpuperf.devices.base.DeviceInfo.peak_bandwidth_gbs`) — the row states both peaks.

Absolute times, rates, bandwidths, sizes and clocks (µs, ns, GB/s without a peak, 1/s, bytes, MHz) are
``incomparable: device-specific absolute figure`` unless ``--raw`` asks for the raw ratios anyway.
On one card (the same device key) everything is comparable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

#: units whose figures depend on the card's size or clocks (absolute times, rates, sizes, clocks)
DEVICE_SPECIFIC_UNITS = frozenset({"s", "ms", "us", "ns", "ns/kthread", "GB/s", "1/s", "FLOP/s", "GFLOP/s",
                                   "TFLOP/s", "bytes", "MHz"})

#: units normalised by the card itself (compared across cards as they are)
CROSS_CARD_UNITS = frozenset({"cycles", "ops/clk/SM", "ulp", "1", "ratio", "fraction", "x", "R²", "ilp",
                              "configs"})

PEAK_SOURCE = ("theoretical DRAM peak from the driver's memory clock × bus width × 2 "
               "(device.peak_bandwidth_gbs in the results file)")


@dataclass(frozen=True)
class Normalisation:
    """How a metric is compared across two cards: as it is, divided by each card's own peak, or not."""

    mode: str  # "as-is", "fraction-of-peak", "incomparable"
    reason: str | None = None
    peak_a: float | None = None
    peak_b: float | None = None
    unit: str | None = None  # the unit of the compared figures (fraction-of-peak: "fraction of peak")

    def note(self) -> str | None:
        """What a reader must know about the comparison (the peak's source, or why not)."""
        if self.mode == "fraction-of-peak":
            return (f"compared as fraction of each card's own peak: A {self.peak_a:.6g} GB/s, "
                    f"B {self.peak_b:.6g} GB/s ({PEAK_SOURCE})")
        return self.reason if self.mode == "as-is" else None  # an incomparable row states it as its reason


def same_card(device_a: Mapping[str, Any], device_b: Mapping[str, Any]) -> bool:
    """One device model (the baseline key) on both sides: a driver/toolkit A/B, not a card change."""
    return device_a.get("key") == device_b.get("key")


def normalisation(unit: str, device_a: Mapping[str, Any], device_b: Mapping[str, Any], raw: bool = False
                  ) -> Normalisation:
    """How a metric in ``unit`` is compared between the two devices (see the module doc)."""
    if same_card(device_a, device_b):
        return Normalisation("as-is", None, unit=unit)
    if raw and unit not in CROSS_CARD_UNITS:
        return Normalisation("as-is", "raw ratio of a device-specific figure across two cards (--raw)", unit=unit)
    if unit == "GB/s":
        pa, pb = device_a.get("peak_bandwidth_gbs"), device_b.get("peak_bandwidth_gbs")
        if pa and pb:
            return Normalisation("fraction-of-peak", None, float(pa), float(pb), unit="fraction of peak")
        return Normalisation("incomparable", "incomparable: device-specific absolute figure (GB/s; a card's "
                             "peak bandwidth is unknown, so no fraction of its own peak) — --raw compares "
                             "the raw values", unit=unit)
    if unit in CROSS_CARD_UNITS:
        return Normalisation("as-is", None, unit=unit)
    if unit in DEVICE_SPECIFIC_UNITS:
        return Normalisation("incomparable", f"incomparable: device-specific absolute figure ({unit}) — "
                             "--raw compares the raw values", unit=unit)
    return Normalisation("incomparable", f"incomparable: unit {unit!r} is not known to be comparable across "
                         "cards — --raw compares the raw values", unit=unit)
