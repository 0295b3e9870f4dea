"""Observers: what else was true of the machine while a measurement ran (Kernel Tuner's observer idea).

A device time is only the figure the gate should judge if nothing outside the measured work shaped it.
On a CPU device (PoCL) the "device" is the host's cores, so another tenant of the host — a process
of the same VM, or the hypervisor taking the vCPU away (steal time) — runs inside every measurement;
on a GPU, a throttled clock does the same: :class:`PowerWatch` reads the board through NVML around
the same windows (energy, power, clocks, temperature, throttle reasons; ``info["power"]``) — and so does
another process running work on the same card: :class:`TenantWatch` lists the processes NVML sees on the
device around each window (``info["tenants"]``).

:class:`HostLoad` reads ``/proc/stat`` and this process's own CPU time around a measurement window
and reports two figures, both in cores (1.0 = one CPU fully used over the window):

* ``steal_cores`` — time the hypervisor ran someone else on this VM's CPUs;
* ``foreign_cores`` — CPU time used by other processes of this machine (busy time of all CPUs minus
  this process's own user + system time, PoCL's worker threads included).

``timing.measure`` re-measures a CPU device's window that was contended (:func:`contended`), and any
device's window during which another process was on the card, up to :data:`RETRIES` times — the
decision reads only the machine, never the measured value, so it cannot bias a verdict towards passing
— and leaves what it saw in ``Device.observations`` / ``Device.tenant_observations``; the session puts
the worst window of each test into its metrics' ``info["host"]`` / ``info["tenants"]``, so a figure
taken on a busy host or a shared card says so.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping

#: a window is contended when the hypervisor stole, or other processes used, this many cores
STEAL_LIMIT_CORES = 0.10
FOREIGN_LIMIT_CORES = 0.50
#: how often a contended CPU-device measurement is taken again before it is kept (and marked)
RETRIES = 2
#: the share of a device's metrics that may read ``contended`` before the run as a whole is not a valid
#: gate (the session fails it: a gate that could not judge a tenth of its figures says nothing) — a CPU
#: device's busy host and a GPU shared with another process alike
CONTENDED_RUN_LIMIT = 0.10
#: the same share for ``throttled``: a card that slows itself down through much of a run (cooling, a
#: power cap) would otherwise pass every timing gate it could not be judged on
THROTTLED_RUN_LIMIT = 0.10
#: tests in a row whose measurements all kept another process's share of the card (after re-measuring)
#: before a run stops early as GPU TOO BUSY TO GATE (``--gpuperf-when-busy=stop``): a tenant that stays
#: that long stays for the run, and every further test would only cost three windows of GPU time each
BUSY_STOP_TESTS = 5
#: the kernel's clock-tick unit of /proc/stat
_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _proc_stat() -> tuple[float, float] | None:
    """(busy seconds of all CPUs, steal seconds) since boot, or None where /proc/stat is absent."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            fields = fh.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    ticks = [int(x) for x in fields[1:]]
    # user nice system idle iowait irq softirq steal guest guest_nice (guest time is inside user)
    user, nice, system, _idle, _iowait, irq, softirq = ticks[:7]
    steal = ticks[7] if len(ticks) > 7 else 0
    return (user + nice + system + irq + softirq) / _HZ, steal / _HZ


def _own_cpu() -> float:
    t = os.times()
    return t.user + t.system


@dataclass(frozen=True)
class Window:
    """One observed measurement window."""

    wall_s: float
    steal_cores: float
    foreign_cores: float

    def to_json(self) -> dict[str, float]:
        return {"wall_s": round(self.wall_s, 4), "steal_cores": round(self.steal_cores, 3),
                "foreign_cores": round(self.foreign_cores, 3)}


class HostLoad:
    """Start/stop reader of the host's CPU use around one window (Linux; elsewhere it reports nothing)."""

    def __init__(self) -> None:
        self._start: tuple[float, tuple[float, float] | None, float] | None = None

    def start(self) -> None:
        self._start = (time.perf_counter(), _proc_stat(), _own_cpu())

    def stop(self) -> Window | None:
        if self._start is None:
            raise RuntimeError("HostLoad.stop() before start()")
        t0, stat0, own0 = self._start
        self._start = None
        stat1, own1, wall = _proc_stat(), _own_cpu(), time.perf_counter() - t0
        if stat0 is None or stat1 is None or wall <= 0:
            return None
        busy = stat1[0] - stat0[0]
        steal = stat1[1] - stat0[1]
        foreign = max(0.0, busy - (own1 - own0))
        return Window(wall, steal / wall, foreign / wall)


def contended(window: Window | None) -> bool:
    """Whether a window's host load can have shaped a CPU device's figure.

    The tick counters advance in 1/HZ steps (10 ms), so a window shorter than ten ticks is judged on
    at least ten ticks' worth of time: one stray tick in a 20 ms window is not half a core."""
    if window is None:
        return False
    scale = window.wall_s / max(window.wall_s, 10.0 / _HZ)
    return (window.steal_cores * scale > STEAL_LIMIT_CORES
            or window.foreign_cores * scale > FOREIGN_LIMIT_CORES)


def summarize(windows: list[Mapping[str, float]]) -> dict[str, float]:
    """The worst of a test's windows, for ``info["host"]``."""
    return {"windows": len(windows),
            "steal_cores_max": max(w["steal_cores"] for w in windows),
            "foreign_cores_max": max(w["foreign_cores"] for w in windows),
            "remeasured": sum(int(w.get("remeasured", 0)) for w in windows),
            "busy": sum(int(w.get("busy", 0)) for w in windows),
            "contended": sum(int(w.get("contended", 0)) for w in windows)}


# ---- the energy observer ------------------------------------------------------------------------------
#: how often the background sampler reads the clocks and throttle reasons inside a window
POWER_SAMPLE_S = 0.020


class PowerWatch:
    """Board readings around one window: the energy counter at start and stop (its delta is the window's
    energy), and a light background thread sampling clocks, temperature and throttle reasons every
    :data:`POWER_SAMPLE_S` — a throttle that comes and goes inside a window is seen even when neither end
    reading shows it. The thread is stopped at the window's end; a failed reading is skipped."""

    def __init__(self, sensor: Any, period_s: float = POWER_SAMPLE_S) -> None:
        self.sensor = sensor
        self.period_s = period_s
        self._samples: list[Any] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._samples = []
        self._stop.clear()
        first = self.sensor.read()
        if first is not None:
            self._samples.append(first)
        self._thread = threading.Thread(target=self._run, name="gpuperf-power", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            r = self.sensor.read()
            if r is not None:
                self._samples.append(r)

    def stop(self) -> dict[str, Any] | None:
        """The window's summary (:func:`power_window`), or None when fewer than two readings came back."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
            self._thread = None
        last = self.sensor.read()
        if last is not None:
            self._samples.append(last)
        return power_window(self._samples, self.sensor.reasons)


def power_window(samples: list[Any], reasons: Any) -> dict[str, Any] | None:
    """Energy delta (J), average power (W = delta / wall), SM clock range, peak temperature, memory clock
    and every throttle reason seen, of time-ordered readings (:class:`~..devices.nvml.Reading`).
    ``throttled`` is 1 when a reason was a real slowdown (``devices.nvml.SLOWDOWN_REASONS``). Pure: the
    tests feed it saved NVML samples."""
    from ..devices.nvml import is_slowdown

    if len(samples) < 2:
        return None
    first, last = samples[0], samples[-1]
    wall = last.t - first.t
    energy_j = (last.energy_mj - first.energy_mj) / 1000.0
    mask = 0
    for s in samples:
        mask |= int(s.throttle_mask)
    seen = sorted(reasons(mask))
    return {"wall_s": round(wall, 4), "energy_j": round(energy_j, 4),
            "avg_power_w": round(energy_j / wall, 2) if wall > 0 else None,
            "sm_clock_min_mhz": min(s.sm_clock_mhz for s in samples),
            "sm_clock_max_mhz": max(s.sm_clock_mhz for s in samples),
            "mem_clock_mhz": max(s.mem_clock_mhz for s in samples),
            "temperature_max_c": max(s.temperature_c for s in samples),
            "throttle_reasons": seen, "throttled": int(is_slowdown(seen)), "samples": len(samples)}


def summarize_power(windows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """A test's windows for ``info["power"]``: total energy and wall, the average power over them, the
    SM clock range, the hottest reading, the union of throttle reasons, and ``throttled`` (True when any
    window throttled — the session then gives the metrics the verdict ``throttled``, never a gate)."""
    energy = sum(float(w["energy_j"]) for w in windows)
    wall = sum(float(w["wall_s"]) for w in windows)
    reasons = sorted({r for w in windows for r in w.get("throttle_reasons", [])})
    return {"windows": len(windows), "energy_j": round(energy, 4), "wall_s": round(wall, 4),
            "avg_power_w": round(energy / wall, 2) if wall > 0 else None,
            "sm_clock_min_mhz": min(w["sm_clock_min_mhz"] for w in windows),
            "sm_clock_max_mhz": max(w["sm_clock_max_mhz"] for w in windows),
            "temperature_max_c": max(w["temperature_max_c"] for w in windows),
            "throttle_reasons": reasons, "throttled": any(bool(w.get("throttled")) for w in windows),
            "throttled_windows": sum(int(bool(w.get("throttled"))) for w in windows)}


# ---- other processes on the card -----------------------------------------------------------------
class TenantWatch:
    """The card's other processes around one window: NVML's process list (and the device's utilization)
    read at the window's start and at its end (:meth:`~..devices.nvml.PowerSensor.tenants`). A process
    that holds a context at either end shares the card with the measurement; utilization is recorded
    only — this process's own work fills it, so it cannot tell who ran."""

    def __init__(self, sensor: Any) -> None:
        self.sensor = sensor
        self._readings: list[Any] = []

    def start(self) -> None:
        self._readings = [self._read()]

    def stop(self) -> dict[str, Any] | None:
        """The window's summary (:func:`tenant_window`), or None when NVML listed no processes at all."""
        self._readings.append(self._read())
        return tenant_window([r for r in self._readings if r is not None])

    def _read(self) -> Any:
        try:
            return self.sensor.tenants()
        except Exception:  # noqa: BLE001 - a stand-in or broken sensor: nothing is known of this reading
            return None


def tenant_window(readings: list[Any]) -> dict[str, Any] | None:
    """One window's tenants from its readings (:class:`~..devices.nvml.Tenants`): ``shared`` is 1 when
    another process was on the device at any reading; ``processes`` names each other process once (the
    most memory it was seen to hold). Pure: the tests feed it saved readings."""
    if not readings:
        return None
    procs: dict[int, dict[str, Any]] = {}
    for r in readings:
        for p in r.others:
            doc = procs.setdefault(p.pid, p.to_json())
            doc["name"] = doc["name"] or p.name
            if p.used_memory_mib is not None:
                doc["used_memory_mib"] = max(doc["used_memory_mib"] or 0.0, p.used_memory_mib)
    gpu = [r.utilization_gpu_pct for r in readings if r.utilization_gpu_pct is not None]
    mem = [r.utilization_memory_pct for r in readings if r.utilization_memory_pct is not None]
    return {"readings": len(readings), "shared": int(any(r.shared for r in readings)),
            "listed_max": max(r.listed for r in readings), "foreign_pids": int(any(r.foreign_pids for r in readings)),
            "processes": [procs[pid] for pid in sorted(procs)],
            "utilization_gpu_pct_max": max(gpu) if gpu else None,
            "utilization_memory_pct_max": max(mem) if mem else None}


def summarize_tenants(windows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """A test's windows for ``info["tenants"]``: how many were ``shared`` (another process on the card),
    ``remeasured`` and ``contended`` (kept although still shared: the figure was taken on a shared card),
    every other process seen (each once), and the highest utilization read."""
    procs: dict[int, dict[str, Any]] = {}
    for w in windows:
        for p in w.get("processes", []):
            doc = procs.setdefault(int(p["pid"]), dict(p))
            doc["name"] = doc.get("name") or p.get("name")
            if p.get("used_memory_mib") is not None:
                doc["used_memory_mib"] = max(doc.get("used_memory_mib") or 0.0, p["used_memory_mib"])
    gpu = [w["utilization_gpu_pct_max"] for w in windows if w.get("utilization_gpu_pct_max") is not None]
    mem = [w["utilization_memory_pct_max"] for w in windows if w.get("utilization_memory_pct_max") is not None]
    return {"windows": len(windows), "shared": sum(int(w.get("shared", 0)) for w in windows),
            "remeasured": sum(int(w.get("remeasured", 0)) for w in windows),
            "contended": sum(int(w.get("contended", 0)) for w in windows),
            "foreign_pids": int(any(w.get("foreign_pids") for w in windows)),
            "processes": [procs[pid] for pid in sorted(procs)],
            "utilization_gpu_pct_max": max(gpu) if gpu else None,
            "utilization_memory_pct_max": max(mem) if mem else None}


def describe_processes(processes: list[Mapping[str, Any]], limit: int = 5) -> str:
    """``pid 4242 (python3, 20480 MiB), pid 77 (Xorg)``: the processes a line names (at most ``limit``)."""
    from ..devices.nvml import Process

    shown = [Process(int(p["pid"]), p.get("name"), p.get("used_memory_mib")).describe() for p in processes[:limit]]
    more = len(processes) - limit
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


#: the verdicts a measurement that was not the code's own replaces: nothing else was gated
_GATED = ("regressed", "improved", "loose", "pass")


def throttled_metric(info: Mapping[str, Any] | None) -> bool:
    """Whether a metric's ``info["power"]`` says the card slowed itself down while it was measured (a
    thermal, power-cap or hardware slowdown: ``devices.nvml.SLOWDOWN_REASONS``)."""
    power = (info or {}).get("power")
    return isinstance(power, Mapping) and bool(power.get("throttled"))


def contended_metric(info: Mapping[str, Any] | None) -> bool:
    """Whether a metric's ``info["host"]`` says one of its measurement windows stayed contended after
    re-measuring (on a CPU device the measured "device" then shared its cores with another tenant)."""
    host = (info or {}).get("host")
    return isinstance(host, Mapping) and bool(host.get("contended"))


def shared_metric(info: Mapping[str, Any] | None) -> bool:
    """Whether a metric's ``info["tenants"]`` says one of its measurement windows still had another
    process on the card after re-measuring (the device's time was shared, whatever kind it is)."""
    tenants = (info or {}).get("tenants")
    return isinstance(tenants, Mapping) and bool(tenants.get("contended"))


def throttled_verdict(verdict: str, info: Mapping[str, Any] | None) -> str:
    """``throttled`` in place of a gated verdict when the card slowed itself down during the metric's
    measurement: the figure is the throttle's, not the code's, so it neither fails nor passes the gate.
    ``new``, ``incomparable`` and ``ungated`` stay what they are (nothing was gated)."""
    return "throttled" if throttled_metric(info) and verdict in _GATED else verdict


def contended_verdict(verdict: str, info: Mapping[str, Any] | None, is_cpu: bool) -> str:
    """``contended`` in place of a gated verdict of a metric measured, even after re-measuring, while
    another process ran on the card (any device: ``info["tenants"]``) or while other work held the host's
    cores (a CPU device: ``info["host"]``): the figure is the neighbour's as much as the code's, so it
    neither fails nor passes the gate — the run says so (summary line, and the run fails when more than
    :data:`CONTENDED_RUN_LIMIT` of its metrics are contended). A GPU's figures are device-timed, so a busy
    host alone leaves their verdict as it is."""
    busy = shared_metric(info) or (is_cpu and contended_metric(info))
    return "contended" if busy and verdict in _GATED else verdict


def measured_verdict(verdict: str, info: Mapping[str, Any] | None, is_cpu: bool) -> str:
    """A gated verdict, unless what the observers saw makes the figure not the code's own: ``contended``
    when another process shared the card (it also explains a throttle: its work heats the card and draws
    its power), else ``throttled`` (the card slowed itself down), else ``contended`` (a CPU device's host
    was busy)."""
    if shared_metric(info):
        return contended_verdict(verdict, info, is_cpu)
    return contended_verdict(throttled_verdict(verdict, info), info, is_cpu)
