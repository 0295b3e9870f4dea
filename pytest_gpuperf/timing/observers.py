"""Observers: what else was true of the machine while a measurement ran (Kernel Tuner's observer idea).

A device time is only the figure the gate should judge if nothing outside the measured work shaped it.
On a CPU device (PoCL) the "device" is the host's cores, so another tenant of the host — a process
of the same VM, or the hypervisor taking the vCPU away (steal time) — runs inside every measurement;
on a GPU, a throttled clock does the same: :class:`PowerWatch` reads the board through NVML around
the same windows (energy, power, clocks, temperature, throttle reasons; ``info["power"]``) — and so does
another process running work on the same card: :class:`TenantWatch` lists the processes NVML sees on the
device around each window (``info["tenants"]``).

:class:`HostLoad` reads the host's CPU time counters (Linux's ``/proc/stat``, through psutil) and this
process's own CPU time around a measurement window and reports two figures, both in cores (1.0 = one CPU
fully used over the window):

* ``steal_cores`` — time the hypervisor ran someone else on this VM's CPUs;
* ``foreign_cores`` — CPU time used by other processes of this machine (busy time of all CPUs minus
  this process's own user + system time, PoCL's worker threads included).

``timing.measure`` re-measures a CPU device's window that was contended (:func:`contended`), and any
device's window during which another process was on the card, up to :data:`RETRIES` times — the
decision reads only the machine, never the measured value, so it cannot bias a verdict towards passing
— and leaves what it saw in ``Device.observations`` / ``Device.tenant_observations``; the session puts
the worst window of each test into its metrics' ``info["host"]`` / ``info["tenants"]``, so a figure
taken on a busy host or a shared card says so.

A figure computed from measurements (a cache size on the chase's curve, a fit, a model's error, a mean
over figures of earlier tests) carries their marks in ``info["inherited"]`` (:func:`inherit`) and reads
``contended``/``throttled`` as they would; a deterministic figure reads only those inherited marks
(:func:`measured_verdict`). What sharing can explain of a change is bounded from the same readings
(:func:`explained_slowdown`): a contended figure far beyond it is named "would have regressed"
(:func:`would_regress`).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping
from ..verdictwords import Gate

import psutil

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
#: the kernel's clock-tick unit of the CPU time counters (/proc/stat)
_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _proc_stat() -> tuple[float, float] | None:
    """(busy seconds of all CPUs, steal seconds) since boot — ``psutil.cpu_times()``, Linux's /proc/stat —
    or None where it is not Linux's (no steal time) or cannot be read."""
    if not psutil.LINUX:
        return None
    try:
        t = psutil.cpu_times()
    except OSError:
        return None
    # guest time is inside user; idle and iowait are not busy
    return t.user + t.nice + t.system + t.irq + t.softirq, getattr(t, "steal", 0.0)


def _own_cpu() -> float:
    t = os.times()
    return t.user + t.system


class Observer:
    """One thing watched around a measurement window, in Kernel Tuner's observer interface:
    :meth:`before_start` just before the window, :meth:`after_start` once it runs, :meth:`during` while it runs
    (an observer that samples calls it from its own thread), :meth:`after_finish` when it ends, and
    :meth:`get_results` the window's summary (None when nothing was read). :meth:`start` and :meth:`stop` run
    those steps around one window: what ``timing.measure`` calls.

    ``mark`` is the key of a metric's ``info`` the summaries go to (:data:`MARKS`), ``verdict`` the verdict a
    figure whose window the observer found disturbed reads instead of being judged (:func:`measured_verdict`)."""

    mark: str = ""
    verdict: str = ""

    def before_start(self) -> None:
        """Read what the window starts from."""

    def after_start(self) -> None:
        """The window has begun."""

    def during(self) -> None:
        """One reading while the window runs."""

    def after_finish(self) -> None:
        """Read what the window ends with."""

    def get_results(self) -> Any:
        """The window's summary, or None."""
        return None

    def start(self) -> None:
        self.before_start()
        self.after_start()

    def stop(self) -> Any:
        self.after_finish()
        return self.get_results()


@dataclass(frozen=True)
class Window:
    """One observed measurement window."""

    wall_s: float
    steal_cores: float
    foreign_cores: float

    def to_json(self) -> dict[str, float]:
        return {"wall_s": round(self.wall_s, 4), "steal_cores": round(self.steal_cores, 3),
                "foreign_cores": round(self.foreign_cores, 3)}


class HostLoad(Observer):
    """Start/stop reader of the host's CPU use around one window (Linux; elsewhere it reports nothing): a CPU
    device's figure whose window stayed :func:`contended` reads ``contended``."""

    mark = "host"
    verdict = Gate.CONTENDED

    def __init__(self) -> None:
        self._start: tuple[float, tuple[float, float] | None, float] | None = None
        self._window: Window | None = None

    def before_start(self) -> None:
        self._start = (time.perf_counter(), _proc_stat(), _own_cpu())

    def after_finish(self) -> None:
        if self._start is None:
            raise RuntimeError("HostLoad.stop() before start()")
        t0, stat0, own0 = self._start
        self._start = None
        self._window = None
        stat1, own1, wall = _proc_stat(), _own_cpu(), time.perf_counter() - t0
        if stat0 is None or stat1 is None or wall <= 0:
            return
        busy = stat1[0] - stat0[0]
        steal = stat1[1] - stat0[1]
        foreign = max(0.0, busy - (own1 - own0))
        self._window = Window(wall, steal / wall, foreign / wall)

    def get_results(self) -> Window | None:
        return self._window

    def stop(self) -> Window | None:
        self.after_finish()
        return self.get_results()


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


class PowerWatch(Observer):
    """Board readings around one window: the energy counter at start and stop (its delta is the window's
    energy), and a light background thread sampling clocks, temperature and throttle reasons every
    :data:`POWER_SAMPLE_S` — a throttle that comes and goes inside a window is seen even when neither end
    reading shows it. The thread is stopped at the window's end; a failed reading is skipped. A figure
    measured while the card slowed itself down reads ``throttled``."""

    mark = "power"
    verdict = Gate.THROTTLED

    def __init__(self, sensor: Any, period_s: float = POWER_SAMPLE_S) -> None:
        self.sensor = sensor
        self.period_s = period_s
        self._samples: list[Any] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def before_start(self) -> None:
        self._samples = []
        self._stop.clear()
        self.during()

    def after_start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="gpuperf-power", daemon=True)
        self._thread.start()

    def during(self) -> None:
        r = self.sensor.read()
        if r is not None:
            self._samples.append(r)

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            self.during()

    def after_finish(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
            self._thread = None
        self.during()

    def get_results(self) -> dict[str, Any] | None:
        """The window's summary (:func:`power_window`), or None when fewer than two readings came back."""
        return power_window(self._samples, self.sensor.reasons)

    def stop(self) -> dict[str, Any] | None:
        self.after_finish()
        return self.get_results()


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
class TenantWatch(Observer):
    """The card's other processes around one window: NVML's process list (and the device's utilization)
    read at the window's start and at its end (:meth:`~..devices.nvml.PowerSensor.tenants`). A process
    that holds a context at either end shares the card with the measurement (its figures read
    ``contended``); utilization is recorded only — this process's own work fills it, so it cannot tell who ran."""

    mark = "tenants"
    verdict = Gate.CONTENDED

    def __init__(self, sensor: Any) -> None:
        self.sensor = sensor
        self._readings: list[Any] = []

    def before_start(self) -> None:
        self._readings = [self._read()]

    def after_finish(self) -> None:
        self._readings.append(self._read())

    def get_results(self) -> dict[str, Any] | None:
        """The window's summary (:func:`tenant_window`), or None when NVML listed no processes at all."""
        return tenant_window([r for r in self._readings if r is not None])

    def stop(self) -> dict[str, Any] | None:
        self.after_finish()
        return self.get_results()

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


# ---- marks a derived figure inherits ------------------------------------------------------------------
#: the keys of a metric's ``info`` the observers write: the host's load, the card's other processes, its power
MARKS = (HostLoad.mark, TenantWatch.mark, PowerWatch.mark)
#: the key of a derived figure's ``info`` holding the marks of the measurements it was computed from
#: (:func:`inherit`): a cache size found on chase latencies, a fit's slope, a model's error, a mean over
#: kernels taken in earlier tests — a figure is no more the code's own than the figures it came from
INHERITED = "inherited"


def window_marks(host: list[Mapping[str, Any]], tenants: list[Mapping[str, Any]],
                 power: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``info`` keys of a set of measurement windows (:func:`summarize`, :func:`summarize_tenants`,
    :func:`summarize_power`); a kind with no window is left out. What the session writes into every
    metric of a test, and what :class:`Capture` hands a figure computed from some of the windows."""
    out: dict[str, Any] = {}
    if host:
        out["host"] = summarize(list(host))
    if tenants:
        out["tenants"] = summarize_tenants(list(tenants))
    if power:
        out["power"] = summarize_power(list(power))
    return out


class Capture:
    """The windows a device records from the moment this is made (``from_start``: since the current test
    began): :meth:`marks` summarises them as a metric's ``info`` would. A result measured once and reused by
    later tests (a clock, a calibration) keeps its capture's marks, so the figures built on it in those
    tests inherit them (:func:`inherit`)."""

    def __init__(self, device: Any, from_start: bool = False) -> None:
        self.device = device
        self._start = (0, 0, 0) if from_start else (len(device.observations), len(device.tenant_observations),
                                                     len(device.power_observations))

    def marks(self) -> dict[str, Any]:
        d, (h, t, p) = self.device, self._start
        return window_marks(d.observations[h:], d.tenant_observations[t:], d.power_observations[p:])


def _merge_host(docs: list[Mapping[str, Any]]) -> dict[str, Any]:
    return {"windows": sum(int(d.get("windows", 0)) for d in docs),
            "steal_cores_max": max(float(d.get("steal_cores_max", 0.0)) for d in docs),
            "foreign_cores_max": max(float(d.get("foreign_cores_max", 0.0)) for d in docs),
            **{k: sum(int(d.get(k, 0)) for d in docs) for k in ("remeasured", "busy", "contended")}}


def _merge_power(docs: list[Mapping[str, Any]]) -> dict[str, Any]:
    """What of several power summaries marks a figure: whether and why the card slowed itself down, and the
    clock range and hottest reading (the energy of several windows belongs to their own figures)."""
    def extreme(fn: Any, key: str) -> Any:
        xs = [d[key] for d in docs if isinstance(d.get(key), (int, float))]
        return fn(xs) if xs else None

    return {"windows": sum(int(d.get("windows", 1)) for d in docs),
            "throttled": any(bool(d.get("throttled")) for d in docs),
            "throttled_windows": sum(int(d.get("throttled_windows", int(bool(d.get("throttled"))))) for d in docs),
            "throttle_reasons": sorted({str(r) for d in docs for r in d.get("throttle_reasons") or ()}),
            "sm_clock_min_mhz": extreme(min, "sm_clock_min_mhz"), "sm_clock_max_mhz": extreme(max, "sm_clock_max_mhz"),
            "temperature_max_c": extreme(max, "temperature_max_c")}


def merge_marks(marks: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Several sets of marks (each a mapping with any of :data:`MARKS`) as one: window counts summed, the
    worst loads, every other process and throttle reason; a kind none of them carries is left out."""
    out: dict[str, Any] = {}
    merges = {"host": _merge_host, "tenants": summarize_tenants, "power": _merge_power}
    for key, fn in merges.items():
        docs = [m[key] for m in marks if isinstance(m.get(key), Mapping)]
        if docs:
            out[key] = fn(docs)
    return out


def inherit(*sources: Any) -> dict[str, Any]:
    """``{INHERITED: marks}``: what the observers saw while the measurements a derived figure was computed
    from were taken — to be put into that figure's ``info``. A source is a metric's ``info`` (its own marks
    and those it inherited), a :class:`Capture`, or a device (every window of the current test). A figure
    that inherits ``contended`` or ``throttled`` reads so (:func:`measured_verdict`), even when it is a
    deterministic figure such as a cache size on the footprint grid: its inputs were timings.
    Empty when no source carries a mark."""
    marks: list[Mapping[str, Any]] = []
    for src in sources:
        if isinstance(src, Capture):
            marks.append(src.marks())
        elif isinstance(src, Mapping):
            marks.append(src)
            if isinstance(src.get(INHERITED), Mapping):
                marks.append(src[INHERITED])
        elif src is not None:
            marks.append(Capture(src, from_start=True).marks())
    merged = merge_marks(marks)
    return {INHERITED: merged} if merged else {}


def pool_marks(infos: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The marks of one metric over several runs (``gpuperf compare`` pooling a side's runs): each kind of
    :data:`MARKS` and :data:`INHERITED` merged over the runs, so a side whose any run was shared or
    throttled says so whichever run came last."""
    out = merge_marks(list(infos))
    inherited = merge_marks([i[INHERITED] for i in infos if isinstance(i.get(INHERITED), Mapping)])
    if inherited:
        out[INHERITED] = inherited
    return out


def seen(infos: list[Mapping[str, Any]], key: str) -> list[Mapping[str, Any]]:
    """Every ``key`` summary (one of :data:`MARKS`) of some metrics' ``info``: their own and what they
    inherited — what a line naming the other processes or the throttle reasons reads."""
    out: list[Mapping[str, Any]] = []
    for info in infos:
        for doc in (info, info.get(INHERITED)):
            if isinstance(doc, Mapping) and isinstance(doc.get(key), Mapping):
                out.append(doc[key])
    return out


#: the verdicts a measurement that was not the code's own replaces: nothing else was gated
_GATED = Gate.OBSERVABLE


def _marks(info: Mapping[str, Any] | None, deterministic: bool) -> list[Mapping[str, Any]]:
    """The marks a metric's verdict reads: its inherited ones always; the windows of its test only when it
    is not deterministic — a ulp error, a count or an exact figure is the same bits whoever shared the
    machine, so the test's windows say nothing of it (a deterministic figure computed from timings carries
    its inputs' marks as :data:`INHERITED` instead)."""
    info = info or {}
    out = [] if deterministic else [info]
    if isinstance(info.get(INHERITED), Mapping):
        out.append(info[INHERITED])
    return out


def throttled_metric(info: Mapping[str, Any] | None, deterministic: bool = False) -> bool:
    """Whether a metric's ``info["power"]`` (or what it inherited) says the card slowed itself down while
    it was measured (a thermal, power-cap or hardware slowdown: ``devices.nvml.SLOWDOWN_REASONS``)."""
    return any(isinstance(m.get("power"), Mapping) and bool(m["power"].get("throttled"))
               for m in _marks(info, deterministic))


def contended_metric(info: Mapping[str, Any] | None, deterministic: bool = False) -> bool:
    """Whether a metric's ``info["host"]`` (or what it inherited) says one of its measurement windows stayed
    contended after re-measuring (on a CPU device the measured "device" then shared its cores with another
    tenant)."""
    return any(isinstance(m.get("host"), Mapping) and bool(m["host"].get("contended"))
               for m in _marks(info, deterministic))


def busy_note(info: Mapping[str, Any] | None) -> str:
    """Why a figure measured on a contended host may be out of reach, for the message of a failure that its
    value caused (an impossible value): the host marks of its windows, and the mend; "" on a quiet host."""
    if not contended_metric(info):
        return ""
    host = (info or {}).get("host") or {}
    return (f"; measured while other work held this host's CPUs ({host.get('contended', '?')} of "
            f"{host.get('windows', '?')} windows contended after re-measuring, hypervisor steal up to "
            f"{host.get('steal_cores_max', 0):g} cores, other processes up to {host.get('foreign_cores_max', 0):g}): "
            "run it again on a quiet host")


def shared_metric(info: Mapping[str, Any] | None, deterministic: bool = False) -> bool:
    """Whether a metric's ``info["tenants"]`` (or what it inherited) says one of its measurement windows
    still had another process on the card after re-measuring (the device's time was shared, whatever kind
    it is)."""
    return any(isinstance(m.get("tenants"), Mapping) and bool(m["tenants"].get("contended"))
               for m in _marks(info, deterministic))


def throttled_verdict(verdict: str, info: Mapping[str, Any] | None, deterministic: bool = False) -> str:
    """``throttled`` in place of a gated verdict when the card slowed itself down during the metric's
    measurement: the figure is the throttle's, not the code's, so it neither fails nor passes the gate.
    ``new``, ``incomparable`` and ``ungated`` stay what they are (nothing was gated)."""
    return Gate.THROTTLED if throttled_metric(info, deterministic) and verdict in _GATED else verdict


def contended_verdict(verdict: str, info: Mapping[str, Any] | None, is_cpu: bool, deterministic: bool = False) -> str:
    """``contended`` in place of a gated verdict of a metric measured, even after re-measuring, while
    another process ran on the card (any device: ``info["tenants"]``) or while other work held the host's
    cores (a CPU device: ``info["host"]``): the figure is the neighbour's as much as the code's, so it
    neither fails nor passes the gate — the run says so (summary line, and the run fails when more than
    :data:`CONTENDED_RUN_LIMIT` of its metrics are contended). A GPU's figures are device-timed, so a busy
    host alone leaves their verdict as it is. A deterministic figure reads only what it inherited."""
    busy = shared_metric(info, deterministic) or (is_cpu and contended_metric(info, deterministic))
    return Gate.CONTENDED if busy and verdict in _GATED else verdict


def measured_verdict(verdict: str, info: Mapping[str, Any] | None, is_cpu: bool, deterministic: bool = False) -> str:
    """A gated verdict, unless what the observers saw makes the figure not the code's own: ``contended``
    when another process shared the card (it also explains a throttle: its work heats the card and draws
    its power), else ``throttled`` (the card slowed itself down), else ``contended`` (a CPU device's host
    was busy). ``deterministic``: the figure's noise model (``baselines.noise``); such a figure is judged on
    its value whatever the machine did, unless it inherited a mark from the timings it was computed from."""
    if shared_metric(info, deterministic):
        return contended_verdict(verdict, info, is_cpu, deterministic)
    return contended_verdict(throttled_verdict(verdict, info, deterministic), info, is_cpu, deterministic)


# ---- what sharing can explain --------------------------------------------------------------------------
#: how many times the most that sharing (or a throttle) could explain a contended (throttled) figure's
#: change must be before the run names it "would have regressed: run again alone" (:func:`would_regress`).
#: The explained factor (:func:`explained_slowdown`) counts only the time others took; sharing also costs
#: caches and memory bandwidth — a chase whose lines another process evicts from L2 reads DRAM's latency,
#: 2–3× its L2 figure — so only a change three times beyond the time share is named
FAR_BEYOND = 3.0
#: the least share of a CPU host's cores the measured work is taken to have kept when other work and the
#: hypervisor used (nearly) all of them: a window that left it less explains any change, and names none
MIN_SHARE = 0.1


def explained_slowdown(info: Mapping[str, Any] | None, is_cpu: bool, cores: int,
                       deterministic: bool = False) -> float:
    """The largest slowdown (a factor ≥ 1) that what the observers saw while a figure (or the figures it was
    computed from) was measured can explain:

    * a CPU device's host (``host``, a contended window): other processes used F and the hypervisor S of its
      ``cores`` C cores at the worst window, leaving the measured work at least C − F − S of them (at least
      :data:`MIN_SHARE` × C): at most C / (C − F − S);
    * another process on the card (``tenants``): each of the N others takes at most an equal time slice:
      at most 1 + N;
    * a throttle (``power``): the SM clock fell from its highest to its lowest reading: at most that ratio.

    The factors multiply where several apply; 1.0 where nothing was seen."""
    factor = 1.0
    marks = _marks(info, deterministic)
    hosts = [m["host"] for m in marks if isinstance(m.get("host"), Mapping) and m["host"].get("contended")]
    if is_cpu and hosts and cores > 0:
        used = max(float(h.get("foreign_cores_max", 0.0)) + float(h.get("steal_cores_max", 0.0)) for h in hosts)
        factor *= cores / max(cores - used, MIN_SHARE * cores)
    shared = [m["tenants"] for m in marks if isinstance(m.get("tenants"), Mapping) and m["tenants"].get("contended")]
    if shared:
        others = {int(p["pid"]) for t in shared for p in t.get("processes") or () if "pid" in p}
        factor *= 1 + max(1, len(others))
    slow = [m["power"] for m in marks if isinstance(m.get("power"), Mapping) and m["power"].get("throttled")]
    if slow:
        lo = [float(p["sm_clock_min_mhz"]) for p in slow if isinstance(p.get("sm_clock_min_mhz"), (int, float))]
        hi = [float(p["sm_clock_max_mhz"]) for p in slow if isinstance(p.get("sm_clock_max_mhz"), (int, float))]
        if lo and hi and min(lo) > 0:
            factor *= max(1.0, max(hi) / min(lo))
    return factor


def worse_factor(measured: float, expected: float, better: str,
                 interval: tuple[float, float] | None = None) -> float | None:
    """How many times worse ``measured`` is than ``expected`` in the metric's direction (≤ 1: not worse);
    with ``interval`` (the confidence interval of measured/expected from both sides' samples) its end
    nearest to no change, so a few samples cannot name a change their spread does not show. None where the
    figure has no direction to be worse in (a bound, a non-positive figure)."""
    if not (measured > 0 and expected > 0):
        return None
    lo, hi = interval if interval is not None and interval[0] > 0 else (measured / expected, measured / expected)
    if better == "lower":
        return lo
    if better == "higher":
        return 1.0 / hi
    if better == "exact":
        return max(lo, 1.0 / hi)
    return None


def would_regress(factor: float | None, info: Mapping[str, Any] | None, is_cpu: bool, cores: int,
                  deterministic: bool = False) -> dict[str, Any] | None:
    """For a figure that reads ``contended``/``throttled`` and is ``factor`` times worse than its baseline
    (:func:`worse_factor`): when that is more than :data:`FAR_BEYOND` times what the observers can explain
    (:func:`explained_slowdown`), what the run names under "would have regressed: run again alone" —
    ``{"factor", "explained", "limit"}``; else None (the change may be the neighbour's)."""
    if factor is None:
        return None
    explained = explained_slowdown(info, is_cpu, cores, deterministic)
    limit = FAR_BEYOND * explained
    if factor <= limit:
        return None
    return {"factor": round(factor, 4), "explained": round(explained, 4), "limit": round(limit, 4)}
