"""The power sensor of an NVIDIA card, through NVML (``nvidia-ml-py``, the ``cuda`` extra).

Why NVML: it is the driver's own account of the board — the total-energy counter (mJ since the driver
loaded, Volta and later), the power draw, the clocks, the temperature and the reasons the clocks are
held down. A timed kernel's figure is only a figure of *that kernel* when none of those moved under it,
and an energy per operation is only comparable between runs at the same clocks.

The card is found by its PCI bus id, as :func:`.cuda._nvml_identity` does: a CUDA ordinal and an NVML
index need not agree (``CUDA_VISIBLE_DEVICES``, MIG, NVML's own order), a PCI address always does.
NVIDIA's OpenCL devices carry the same id (``DeviceInfo.extra["pci_bus_id"]``, ``opencl._nv_pci_bus_id``),
so one card has one sensor whichever API times it.

The same handle lists the card's other tenants (:meth:`PowerSensor.tenants`): the processes NVML sees
on the device besides this one, and the device's utilization. A figure timed while another process ran
work on the card is that process's as much as the code's (``timing.observers``).

Nothing here raises into a measurement: opening a sensor returns ``(None, reason)`` on any NVML error
(no library, no permission, a card without the counter), and a reading that fails mid-run returns None.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
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


#: NVML's "not available" used memory (an unsigned -1), which older pynvml releases pass through
_NOT_AVAILABLE = (1 << 64) - 1


@dataclass(frozen=True)
class Process:
    """One process NVML lists on the device. ``name``: its ``/proc/<pid>/comm`` or NVML's name for it
    (None when neither knows: a pid of another PID namespace); ``used_memory_mib``: the device memory it
    holds (None where NVML does not say, as under Windows' WDDM or in some containers)."""

    pid: int
    name: str | None = None
    used_memory_mib: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"pid": self.pid, "name": self.name, "used_memory_mib": self.used_memory_mib}

    def describe(self) -> str:
        """``pid 4242 (python3, 20480 MiB)``: how a line names the process."""
        parts = [self.name or "name unknown"]
        if self.used_memory_mib is not None:
            parts.append(f"{self.used_memory_mib:.0f} MiB")
        return f"pid {self.pid} ({', '.join(parts)})"


@dataclass(frozen=True)
class Tenants:
    """The device's processes at one reading, this process's own entries left out.

    ``listed``: how many distinct processes NVML listed (this one included). ``foreign_pids``: NVML
    listed none of this process's pids — its pids are another PID namespace's (a container on a driver
    that does not translate them), so ``others`` holds this process too and the device is shared only
    when more than :attr:`ours` are listed. ``utilization_gpu_pct`` / ``utilization_memory_pct``: NVML's utilization
    rates of the whole device (this process's work included, so they are recorded, never judged)."""

    others: tuple[Process, ...] = ()
    listed: int = 0
    foreign_pids: bool = False
    utilization_gpu_pct: float | None = None
    utilization_memory_pct: float | None = None
    errors: tuple[str, ...] = field(default=())
    #: how many of the listed processes are this measurement's own: 1, or 2 in a process a run started to
    #: measure for it (:func:`parent_pids`), whose context is listed too
    ours: int = 1

    @property
    def shared(self) -> bool:
        """Whether another process held a context on the device at this reading."""
        return self.listed > self.ours if self.foreign_pids else bool(self.others)


#: the environment variable naming the pids of the run that started this process to measure in a process of its
#: own (``probes.launch_streams``): that run's context on the card is the measurement's own, not a tenant's
PARENT_ENV = "GPUPERF_PARENT_PIDS"


def parent_pids() -> frozenset[int]:
    """The pids :data:`PARENT_ENV` names (none where it is unset)."""
    return frozenset(int(x) for x in os.environ.get(PARENT_ENV, "").split(",") if x.strip().isdigit())


def own_pids() -> frozenset[int]:
    """This process's pids: ``os.getpid()`` and, on Linux, its pid in every PID namespace that
    ``/proc/self/status`` shows (``NSpid``), so a driver that reports an outer namespace's pid still
    finds this process where that namespace's ``/proc`` is the one mounted; and the pids of the run that
    started it to measure for it (:func:`parent_pids`)."""
    pids = {os.getpid(), *parent_pids()}
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("NSpid:"):
                    pids.update(int(x) for x in line.split()[1:] if x.isdigit())
                    break
    except OSError:
        pass
    return frozenset(pids)


def _proc_comm(pid: int) -> str | None:
    """The command name of ``pid`` from ``/proc/<pid>/comm`` (None where there is none, e.g. a pid of
    another PID namespace)."""
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as fh:
            return fh.read().strip() or None
    except OSError:
        return None


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

    # ---- other tenants of the card -------------------------------------------------------------
    def tenants(self, own: frozenset[int] | None = None) -> Tenants | None:
        """The processes NVML lists on the device (compute and graphics, one entry per pid) other than
        this one (``own``: this process's pids, :func:`own_pids` by default), and the device's
        utilization; None when NVML can list no processes at all (a pynvml without the calls, a driver
        that refuses them) — then nothing is known, which is not the same as "no one else"."""
        own = own_pids() if own is None else own
        found: dict[int, Any] = {}
        errors: list[str] = []
        answered = False
        for kind in ("Compute", "Graphics"):
            try:
                entries = self._processes(kind)
            except Exception as exc:  # noqa: BLE001 - a list NVML cannot give is unknown, not empty
                errors.append(f"{kind.lower()}: {type(exc).__name__}: {exc}")
                continue
            answered = True
            for entry in entries or ():
                pid = int(getattr(entry, "pid", -1))
                if pid > 0:
                    found.setdefault(pid, entry)
        if not answered:
            self.last_error = "; ".join(errors)
            return None
        foreign = bool(found) and not own.intersection(found)
        # pids of another namespace name other processes in this one's /proc: only NVML may name them
        others = tuple(self._process(pid, entry, proc=not foreign) for pid, entry in sorted(found.items())
                       if pid not in own)
        gpu, mem = self._utilization()
        return Tenants(others, len(found), foreign, gpu, mem, tuple(errors), ours=2 if parent_pids() else 1)

    def _processes(self, kind: str) -> list[Any]:
        """NVML's list of ``kind`` (``Compute`` / ``Graphics``) processes: the v3 call where pynvml has it
        and the driver answers, else the older ones; the first that answers is kept."""
        cache = f"_{kind.lower()}_fn"
        fn = getattr(self, cache, None)
        if fn is not None:
            with self._lock:
                return list(fn(self._handle))
        error: Exception | None = None
        for suffix in ("_v3", "_v2", ""):
            fn = getattr(self._nvml, f"nvmlDeviceGet{kind}RunningProcesses{suffix}", None)
            if fn is None:
                continue
            try:
                with self._lock:
                    out = list(fn(self._handle))
            except Exception as exc:  # noqa: BLE001 - try the older call
                error = exc
                continue
            setattr(self, cache, fn)
            return out
        raise error or RuntimeError(f"this pynvml has no {kind.lower()} processes call")

    def _process(self, pid: int, entry: Any, proc: bool = True) -> Process:
        """A listed process with its name (``/proc/<pid>/comm`` where ``proc``, else NVML's) and its
        device memory."""
        name = _proc_comm(pid) if proc else None
        if name is None:
            fn = getattr(self._nvml, "nvmlSystemGetProcessName", None)
            try:
                raw = fn(pid) if fn is not None else None
            except Exception:  # noqa: BLE001 - a name NVML cannot give stays unknown
                raw = None
            if isinstance(raw, bytes):
                raw = raw.decode("utf-8", "replace")
            if raw:
                name = os.path.basename(str(raw).strip()) or None
        used = getattr(entry, "usedGpuMemory", None)
        mib = None if used is None or int(used) >= _NOT_AVAILABLE else round(int(used) / 2**20, 1)
        return Process(pid, name, mib)

    def _utilization(self) -> tuple[float | None, float | None]:
        """NVML's GPU and memory utilization rates (percent over the driver's last sample period), or
        (None, None) where the device does not report them."""
        fn = getattr(self._nvml, "nvmlDeviceGetUtilizationRates", None)
        if fn is None:
            return None, None
        try:
            with self._lock:
                util = fn(self._handle)
            return float(util.gpu), float(util.memory)
        except Exception:  # noqa: BLE001 - no utilization is a missing figure, not a failed test
            return None, None


def open_sensor(pci_bus_id: str | None) -> tuple[PowerSensor | None, str]:
    """The sensor of the card at ``pci_bus_id``, or (None, why not). NVML stays initialised for the
    process (pynvml counts init/shutdown pairs; the session's sensors live as long as its devices)."""
    if not pci_bus_id:
        return None, "no PCI bus id for this device (not an NVIDIA card, or the driver does not report it)"
    try:
        import pynvml
    except ImportError:
        from ..util.provenance import install_hint

        return None, f"nvidia-ml-py is not installed ({install_hint('cuda')})"
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


def _text(value: Any) -> str:
    """NVML's strings: ``bytes`` in older pynvml releases, ``str`` in newer ones."""
    return value.decode(errors="replace").strip() if isinstance(value, (bytes, bytearray)) else str(value).strip()


#: what :func:`card_identity` asks NVML for, each as (key, call); a query the card or driver does not
#: support leaves its key out (a GeForce has no serial number, a card without ECC no ECC mode)
def _identity_queries(nv: Any, h: Any) -> list[tuple[str, Any]]:
    return [
        ("uuid", lambda: _text(nv.nvmlDeviceGetUUID(h))),
        ("serial", lambda: _text(nv.nvmlDeviceGetSerial(h))),
        ("vbios", lambda: _text(nv.nvmlDeviceGetVbiosVersion(h))),
        ("application_sm_clock_mhz", lambda: int(nv.nvmlDeviceGetApplicationsClock(h, nv.NVML_CLOCK_SM))),
        ("application_mem_clock_mhz", lambda: int(nv.nvmlDeviceGetApplicationsClock(h, nv.NVML_CLOCK_MEM))),
        ("max_mem_clock_mhz", lambda: int(nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_MEM))),
        ("ecc_mode", lambda: "on" if int(nv.nvmlDeviceGetEccMode(h)[0]) else "off"),
    ]


def card_identity(nv: Any, handle: Any) -> dict[str, Any]:
    """The physical card's identity and settings as NVML reports them (``nv``: the initialised pynvml
    module, ``handle``: the card's): UUID, serial, VBIOS, application clocks, maximum memory clock and ECC
    mode. A fleet tells cards apart by the UUID and sorts them into cohorts by the settings
    (``report.results.card_identity``); a query that fails is left out, never raised."""
    out: dict[str, Any] = {}
    for key, query in _identity_queries(nv, handle):
        try:
            out[key] = query()
        except Exception:  # noqa: BLE001 - NVMLError_NotSupported and kin: the field stays absent
            continue
    return out
