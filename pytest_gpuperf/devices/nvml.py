"""The power sensor of an NVIDIA card, through NVML (``nvidia-ml-py``, the ``cuda`` extra).

Why NVML: it is the driver's own account of the board — the total-energy counter (mJ since the driver
loaded, Volta and later), the power draw, the clocks, the temperature and the reasons the clocks are
held down. A timed kernel's figure is only a figure of *that kernel* when none of those moved under it,
and an energy per operation is only comparable between runs at the same clocks.

The card is found by its PCI bus id, as :func:`.cuda._nvml_identity` does: a CUDA ordinal and an NVML
index need not agree (``CUDA_VISIBLE_DEVICES``, MIG, NVML's own order), a PCI address always does.
NVIDIA's OpenCL devices carry the same id (``DeviceInfo.extra["pci_bus_id"]``, ``opencl._nv_pci_bus_id``),
so one card has one sensor whichever API times it.

Nothing here raises into a measurement: opening a sensor returns ``(None, reason)`` on any NVML error
(no library, no permission, a card without the counter), and a reading that fails mid-run returns None.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

#: NVML's clock-event (throttle) reason bits, by the name pynvml gives each constant, and whether the bit
#: is a *real slowdown* of a running kernel. Counted: thermal (hardware or software), the power cap and the
#: hardware slowdowns (power brake, external slowdown signal). Not counted: ``GpuIdle`` (the clocks drop
#: because nothing runs — true between launches of every short kernel), ``ApplicationsClocksSetting`` and
#: ``UserDefinedClocks`` (clocks someone chose: the same for every run of a pinned machine, and part of its
#: identity, not a disturbance), ``SyncBoost`` (a group of cards held to one clock on purpose),
#: ``DisplayClockSetting`` (a display clock setting).
THROTTLE_BITS: tuple[tuple[str, str, bool], ...] = (
    ("gpu_idle", "nvmlClocksThrottleReasonGpuIdle", False),
    ("applications_clocks_setting", "nvmlClocksThrottleReasonApplicationsClocksSetting", False),
    ("sw_power_cap", "nvmlClocksThrottleReasonSwPowerCap", True),
    ("hw_slowdown", "nvmlClocksThrottleReasonHwSlowdown", True),
    ("sync_boost", "nvmlClocksThrottleReasonSyncBoost", False),
    ("sw_thermal_slowdown", "nvmlClocksThrottleReasonSwThermalSlowdown", True),
    ("hw_thermal_slowdown", "nvmlClocksThrottleReasonHwThermalSlowdown", True),
    ("hw_power_brake_slowdown", "nvmlClocksThrottleReasonHwPowerBrakeSlowdown", True),
    ("display_clock_setting", "nvmlClocksThrottleReasonDisplayClockSetting", False),
    ("user_defined_clocks", "nvmlClocksThrottleReasonUserDefinedClocks", False),
)
#: the NVML header's values, for a pynvml that lacks a constant (older releases miss the newer bits)
_FALLBACK_VALUES = {"gpu_idle": 0x1, "applications_clocks_setting": 0x2, "sw_power_cap": 0x4, "hw_slowdown": 0x8,
                    "sync_boost": 0x10, "sw_thermal_slowdown": 0x20, "hw_thermal_slowdown": 0x40,
                    "hw_power_brake_slowdown": 0x80, "display_clock_setting": 0x100}
SLOWDOWN_REASONS = frozenset(name for name, _, real in THROTTLE_BITS if real)


def throttle_bits(module: Any = None) -> dict[str, int]:
    """Bit value of every reason name: pynvml's constant where it exists, the header's value where it
    does not; a reason neither knows is left out (its bit then decodes as ``unknown_0x…``)."""
    out: dict[str, int] = {}
    for name, const, _ in THROTTLE_BITS:
        value = getattr(module, const, None) if module is not None else None
        if value is None:
            value = _FALLBACK_VALUES.get(name)
        if value is not None:
            out[name] = int(value)
    return out


def decode_throttle(mask: int, bits: dict[str, int] | None = None) -> list[str]:
    """Names of the reasons set in NVML's bitmask; a bit without a known name reads ``unknown_0x…``."""
    bits = throttle_bits() if bits is None else bits
    names = [name for name, bit in bits.items() if mask & bit]
    rest = mask & ~sum(set(bits.values()))
    k = 0
    while rest >> k:
        if (rest >> k) & 1:
            names.append(f"unknown_{1 << k:#x}")
        k += 1
    return names


def is_slowdown(reasons: list[str] | set[str] | tuple[str, ...]) -> bool:
    """Whether any of the reasons is a real slowdown (:data:`SLOWDOWN_REASONS`)."""
    return any(r in SLOWDOWN_REASONS for r in reasons)


@dataclass(frozen=True)
class Reading:
    """One sample of the board. ``energy_mj``: NVML's total-energy counter (mJ since the driver loaded)."""

    t: float  # host perf_counter seconds
    energy_mj: float
    power_w: float
    sm_clock_mhz: float
    mem_clock_mhz: float
    temperature_c: float
    throttle_mask: int

    def to_json(self) -> dict[str, float]:
        return {"t": self.t, "energy_mj": self.energy_mj, "power_w": self.power_w, "sm_clock_mhz": self.sm_clock_mhz,
                "mem_clock_mhz": self.mem_clock_mhz, "temperature_c": self.temperature_c,
                "throttle_mask": self.throttle_mask}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> "Reading":
        return cls(float(doc["t"]), float(doc["energy_mj"]), float(doc["power_w"]), float(doc["sm_clock_mhz"]),
                   float(doc["mem_clock_mhz"]), float(doc["temperature_c"]), int(doc["throttle_mask"]))


class PowerSensor:
    """Readings of one card. Thread-safe (the energy observer samples it from a background thread)."""

    def __init__(self, nvml: Any, handle: Any, pci_bus_id: str) -> None:
        self._nvml = nvml
        self._handle = handle
        self._lock = threading.Lock()
        self.pci_bus_id = pci_bus_id
        self.bits = throttle_bits(nvml)
        self.last_error: str | None = None
        self._reasons_fn: Any = None

    def read(self) -> Reading | None:
        """One reading, or None (with :attr:`last_error`) when NVML fails: never an exception."""
        nv = self._nvml
        try:
            with self._lock:
                t = time.perf_counter()
                energy = float(nv.nvmlDeviceGetTotalEnergyConsumption(self._handle))
                power = nv.nvmlDeviceGetPowerUsage(self._handle) / 1000.0
                sm = float(nv.nvmlDeviceGetClockInfo(self._handle, nv.NVML_CLOCK_SM))
                mem = float(nv.nvmlDeviceGetClockInfo(self._handle, nv.NVML_CLOCK_MEM))
                temp = float(nv.nvmlDeviceGetTemperature(self._handle, nv.NVML_TEMPERATURE_GPU))
                mask = self._mask()
        except Exception as exc:  # noqa: BLE001 - an NVML failure is a missing reading, not a failed test
            self.last_error = f"{type(exc).__name__}: {exc}"
            return None
        return Reading(t, energy, power, sm, mem, temp, mask)

    def _mask(self) -> int:
        """The clock-event reasons bitmask: the newer call (drivers ≥ 535, pynvml ≥ 12.535) where it works,
        else the older one it replaced; the first that answers is kept."""
        if self._reasons_fn is not None:
            return int(self._reasons_fn(self._handle))
        error: Exception | None = None
        for name in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
            fn = getattr(self._nvml, name, None)
            if fn is None:
                continue
            try:
                mask = int(fn(self._handle))
            except Exception as exc:  # noqa: BLE001 - try the older call
                error = exc
                continue
            self._reasons_fn = fn
            return mask
        raise error or RuntimeError("this pynvml has no clock-event reasons call")

    def reasons(self, mask: int) -> list[str]:
        return decode_throttle(mask, self.bits)


def open_sensor(pci_bus_id: str | None) -> tuple[PowerSensor | None, str]:
    """The sensor of the card at ``pci_bus_id``, or (None, why not). NVML stays initialised for the
    process (pynvml counts init/shutdown pairs; the session's sensors live as long as its devices)."""
    if not pci_bus_id:
        return None, "no PCI bus id for this device (not an NVIDIA card, or the driver does not report it)"
    try:
        import pynvml
    except ImportError:
        return None, "nvidia-ml-py is not installed (pip install 'pytest-gpuperf[cuda]')"
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001
        return None, f"NVML unavailable: {type(exc).__name__}: {exc}"
    try:
        bus = pci_bus_id.encode() if isinstance(pci_bus_id, str) else pci_bus_id
        handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus)
    except Exception as exc:  # noqa: BLE001
        return None, f"NVML has no device at PCI {pci_bus_id}: {type(exc).__name__}: {exc}"
    sensor = PowerSensor(pynvml, handle, str(pci_bus_id))
    if sensor.read() is None:
        return None, f"NVML cannot read the card at {pci_bus_id}: {sensor.last_error}"
    return sensor, "NVML"
