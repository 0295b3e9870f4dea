"""The one small interface every backend implements (in the spirit of Kernel Tuner's backends).

A kernel is a source string plus a name and compile options; a launch is an NDRange
(``global_size`` work-items split into work-groups of ``local_size``), OpenCL-style, on both
backends. Every operation that puts work on the device returns an opaque *handle* that
:meth:`Device.elapsed` turns into device-measured seconds, so timing never relies on host clocks.
"""

from __future__ import annotations

import abc
import contextlib
import re
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, TypeVar

import numpy as np

from ..util.source_digest import kernel_digest
from .dialect import Dialect, dialect

if TYPE_CHECKING:
    from .nvml import PowerSensor
    from .backend_registry import Backend
    from .resources import Resources

Size = tuple[int, ...]
T = TypeVar("T")

#: watchdog of a device opened outside a pytest session (a script, the project's own tests); in a session
#: every device gets ``--gpuperf-timeout`` instead (:attr:`Device.timeout_s`)
DEFAULT_TIMEOUT_S = 60.0
#: how long the end of an interrupted run lets work already in flight finish (a normal kernel takes far
#: less) before it leaves the device without waiting: long enough to release an idle device normally,
#: short enough that Ctrl-C still ends the run at once
INTERRUPT_GRACE_S = 1.0


def slugify(text: str, sep: str = "-", empty: str = "unknown-device") -> str:
    """Stable lower-case slug: every run of characters other than ``a-z0-9`` becomes one ``sep``.

    Names baseline files (``NVIDIA H100 80GB HBM3`` → ``nvidia-h100-80gb-hbm3``; ``empty`` where nothing is
    left) and, with ``sep="_"``, turns a free-text name into a metric name part (``Dense linear algebra`` →
    ``dense_linear_algebra``)."""
    return re.sub(r"[^a-z0-9]+", sep, text.lower()).strip(sep) or empty


@dataclass(frozen=True)
class DeviceInfo:
    """Identity of a device: what a baseline was measured on and what a reviewer needs to compare."""

    backend: str  # "cuda" | "opencl"
    index: int  # index within the backend (flat over all OpenCL platforms, GPUs before CPUs)
    name: str
    vendor: str
    key: str  # slug naming the baseline file
    platform: str = ""
    driver_version: str = ""
    runtime_version: str = ""
    toolkit_version: str = ""
    compute_capability: str = ""  # "9.0" on CUDA; "" on OpenCL
    opencl_version: str = ""  # "OpenCL 3.0 CUDA" on OpenCL; "" on CUDA
    compute_units: int = 0
    max_work_group_size: int = 0
    warp_size: int = 0  # warp / preferred sub-group width
    clock_mhz: float = 0.0  # maximum (boost) core clock the device reports
    current_clock_mhz: float = 0.0  # clock read at discovery, where the driver exposes it
    memory_bytes: int = 0
    local_memory_bytes: int = 0
    l2_bytes: int = 0
    fp64: bool = False
    fp16: bool = False
    clock_counter: bool = False  # device-side cycle counter usable from kernels
    is_cpu: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def spec(self) -> str:
        """The ``--gpuperf-device`` spelling of this device, e.g. ``cuda:0``."""
        return f"{self.backend}:{self.index}"

    @property
    def family_key(self) -> str:
        """The baseline key every CPU model of one OpenCL CPU runtime and compiler shares (``pocl-3-1-debian-
        llvm-15-0-6``): deterministic figures depend on the runtime's math library and its compiler, not on
        which CPU model runs them, so they gate on any host of that family. Empty for GPUs."""
        if not self.is_cpu:
            return ""
        llvm = re.search(r"LLVM\s+([0-9][0-9.]*)", self.runtime_version or "")
        runtime = "pocl" if self.key.startswith("pocl-") else self.vendor
        return slugify(f"{runtime} {self.driver_version} " + (f"llvm {llvm.group(1)}" if llvm else "") + " cpu")

    @property
    def features(self) -> set[str]:
        """Names usable in ``@pytest.mark.gpuperf(requires=[...])``."""
        feats = {self.backend}
        if self.fp64:
            feats.add("fp64")
        if self.fp16:
            feats.add("fp16")
        if self.clock_counter:
            feats.add("clock")
        feats.add("cpu" if self.is_cpu else "gpu")
        return feats

    @property
    def backend_record(self) -> "Backend":
        """The backend record of this device (:mod:`.backend_registry`): what every device of its backend shares."""
        from .backend_registry import backend  # noqa: PLC0415 - the backend modules import this one

        return backend(self.backend)

    @property
    def dialect(self) -> Dialect:
        """The kernel language this device compiles (:mod:`.dialect`): what generated kernel text asks
        instead of branching on the backend."""
        return dialect(self.backend)

    @property
    def has_sass(self) -> bool:
        """Whether a compiled kernel is a cubin whose SASS ``cuobjdump`` can disassemble, so the probes
        can prove from the machine code which instructions a timed loop ran (CUDA: NVRTC cubins; NVIDIA's
        OpenCL hands back PTX only)."""
        return self.backend_record.has_sass

    @property
    def has_ncu(self) -> bool:
        """Whether Nsight Compute can profile this device's kernels (hardware counters): CUDA devices only."""
        return self.backend_record.has_ncu

    @property
    def nv_compiler_options(self) -> bool:
        """Whether the OpenCL compiler takes NVIDIA's options (``cl_nv_compiler_options``:
        ``-cl-nv-maxrregcount``, ``-cl-nv-verbose``)."""
        return "cl_nv_compiler_options" in (self.extra.get("extensions") or [])

    @property
    def l2_bytes_reliable(self) -> bool:
        """Whether :attr:`l2_bytes` is the real last-level cache: CUDA reads cudaDevAttrL2CacheSize; OpenCL's
        CL_DEVICE_GLOBAL_MEM_CACHE_SIZE is what the driver chooses to say (NVIDIA's reports 4 MiB for the
        H100's 50 MiB L2)."""
        return self.backend_record.l2_bytes_reliable

    @property
    def work_item_limits(self) -> tuple[int, ...]:
        """Largest work-group extent per dimension: OpenCL's CL_DEVICE_MAX_WORK_ITEM_SIZES where reported,
        else (max work-group size, 1024, 64); CUDA caps the first two at its maxThreadsDim of 1024."""
        dims = [int(d) for d in self.extra.get("max_work_item_sizes") or [self.max_work_group_size, 1024, 64]]
        caps = self.backend_record.work_item_caps
        return tuple([min(d, c) for d, c in zip(dims, caps)] + dims[len(caps):])

    @property
    def peak_bandwidth_gbs(self) -> float | None:
        """Theoretical DRAM bandwidth (GB/s) from the memory clock and bus width the driver reports
        (double data rate: 2 transfers per clock), or None where the backend does not say. Source:
        cudaDevAttrMemoryClockRate × cudaDevAttrGlobalMemoryBusWidth — 3,352 GB/s on the H100 SXM,
        NVIDIA's datasheet figure. A measured bandwidth above it is impossible."""
        khz, bits = self.extra.get("mem_clock_khz"), self.extra.get("bus_width")
        if not khz or not bits:
            return None
        return 2.0 * float(khz) * 1e3 * float(bits) / 8.0 / 1e9

    @property
    def timer_resolution_s(self) -> float:
        """Resolution of the device's event timer: OpenCL reports it
        (CL_DEVICE_PROFILING_TIMER_RESOLUTION); CUDA documents about 0.5 µs for cudaEventElapsedTime.
        A timed span below it is no measurement."""
        if "timer_resolution_ns" in self.extra:
            return float(self.extra["timer_resolution_ns"]) * 1e-9
        return self.backend_record.timer_resolution_s

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["spec"] = self.spec
        data["family_key"] = self.family_key
        data["peak_bandwidth_gbs"] = self.peak_bandwidth_gbs
        data["timer_resolution_s"] = self.timer_resolution_s
        return data


def timer_resolution(device: dict[str, Any]) -> float:
    """:attr:`DeviceInfo.timer_resolution_s` of a results file's ``device`` section (older files lack
    the key: the same rule from backend and ``extra``)."""
    if "timer_resolution_s" in device:
        return float(device["timer_resolution_s"])
    extra = device.get("extra") or {}
    if "timer_resolution_ns" in extra:
        return float(extra["timer_resolution_ns"]) * 1e-9
    from .backend_registry import backend, names  # noqa: PLC0415 - the backend modules import this one

    name = str(device.get("backend"))
    return backend(name).timer_resolution_s if name in names() else 1e-9  # no backend: claim no coarser tick


@dataclass
class Buffer:
    """Device memory. ``handle`` is a CuPy array or a ``pyopencl.Buffer``."""

    handle: Any
    nbytes: int
    device: "Device"


@dataclass
class Kernel:
    """A compiled kernel entry point; ``attributes`` holds resource usage where the backend reports it
    (registers, local/shared bytes, max threads) — the tuning and model suites read it."""

    name: str
    source: str
    options: tuple[str, ...]
    handle: Any
    program: Any
    device: "Device"
    attributes: dict[str, int] = field(default_factory=dict)


KernelArg = Any  # Buffer | numpy scalar (np.int32(...), np.float32(...))


#: the kernel :meth:`Device.build_check` builds: one store, nothing any backend could reject
BUILD_CHECK_NAME = "gpuperf_build_check"
BUILD_CHECK_SOURCE = f"__kernel void {BUILD_CHECK_NAME}(__global float* a) {{ a[get_global_id(0)] = 1.0f; }}\n"
#: how a binding wraps a compiler's words (PyOpenCL: the failed call, repeated, the device, the options), left
#: out of what the build check quotes where the compiler wrote no ``error:`` line
_WRAPPER = ("clBuildProgram failed", "Build on <", "(options:")


class Device(abc.ABC):
    """One device of one backend. Subclasses keep their context/queue/stream alive."""

    info: DeviceInfo

    def __init__(self) -> None:
        self._programs: dict[tuple[str, str, tuple[str, ...]], Kernel] = {}
        #: why this device was given up on (a hang or a sticky fault), or None while it is usable
        self.abandoned: str | None = None
        #: the device was left because the run was interrupted (Ctrl-C) while work still ran on it: not a
        #: hang nor a fault, so the session neither reports it as one nor fails the run for it
        self.interrupted: bool = False
        #: watchdog of every wait that names no limit of its own (:meth:`synchronize`, a read-back, which
        #: waits for whatever was queued before it); the session sets ``--gpuperf-timeout``
        self.timeout_s: float = DEFAULT_TIMEOUT_S
        #: backend objects that would wait on hung work when collected (kept alive until the process ends)
        self.stranded: list[Any] = []
        #: host-load readings of the measurement windows since the current test began
        #: (``timing.observers``; the session clears it per test and summarises it into ``info["host"]``)
        self.observations: list[dict[str, float]] = []
        #: per-device results measured once and reused for the device's life (λ0 of the tuner, the
        #: global-latency sweep), keyed by the area that owns them; cleared on close with the kernels
        self.measured: dict[str, Any] = {}
        #: power readings of the measurement windows since the current test began (the energy observer of
        #: ``timing.observers``; summarised into ``info["power"]``, a throttled window marks the metrics)
        self.power_observations: list[dict[str, Any]] = []
        #: the card's other processes around the measurement windows since the current test began (NVML,
        #: ``timing.observers.TenantWatch``; summarised into ``info["tenants"]``, a shared window is re-measured)
        self.tenant_observations: list[dict[str, Any]] = []
        #: digests of the kernel sources (with their build options) compiled or noted since the current test
        #: began (:meth:`note_source`; the session clears it per test, and a metric carries their combined
        #: digest as its ``source_digest``)
        self.source_digests: set[str] = set()
        self._source_scopes: list[set[str]] = []  # open :meth:`sources_during` computations, each collecting its kernels
        self._once_sources: dict[str, frozenset[str]] = {}  # the kernels each :meth:`once` result was made with
        self._unnoted = 0  # depth of :meth:`unnoted` blocks
        self._digests: dict[tuple[str, tuple[str, ...]], str] = {}  # each (source, options) hashed once
        self._power: tuple[Any, str] | None = None
        self._queues: list[Any] = []  # the device's own queue, then those :meth:`on_queue` made

    # ---- power -------------------------------------------------------------------------------
    def power_sensor(self) -> "tuple[PowerSensor | None, str]":
        """(the card's NVML power sensor, "NVML") or (None, why there is none), opened once per device.

        Found by the PCI bus id in :attr:`DeviceInfo.extra` (CUDA and NVIDIA's OpenCL both record it), so
        any NVIDIA device has one where NVML runs; a CPU device or another vendor's GPU has none, with the
        reason — the power suite skips with it."""
        if self._power is None:
            if self.info.is_cpu:
                self._power = (None, f"{self.info.name} is a CPU device: no board power sensor")
            else:
                from .nvml import open_sensor

                self._power = open_sensor(self.info.extra.get("pci_bus_id"))
        return self._power

    @property
    def readback_timeout_s(self) -> float:
        """The former name of :attr:`timeout_s` (read-backs were the first waits it limited)."""
        return self.timeout_s

    @readback_timeout_s.setter
    def readback_timeout_s(self, value: float) -> None:
        self.timeout_s = float(value)

    def limit(self, timeout_s: float | None) -> float:
        """The watchdog of one wait: ``timeout_s`` where the caller names one, else :attr:`timeout_s` —
        so a bare ``synchronize()`` honours ``--gpuperf-timeout`` instead of a fixed minute."""
        return self.timeout_s if timeout_s is None else float(timeout_s)

    # ---- abandonment -------------------------------------------------------------------------
    @property
    def blocks_exit(self) -> bool:
        """Whether finalising this device at interpreter exit could wait on hung work forever, so the
        process must leave with ``os._exit`` after reporting (``plugin.pytest_unconfigure``): objects
        stranded behind a hang (:attr:`stranded`). Backends add their own cases."""
        return bool(self.stranded)

    def abandon(self, reason: str, interrupted: bool = False) -> None:
        """Give up on the device: its queue still holds work that will never finish (or a fault that
        poisons every later command), so no later call may wait on it. The first reason is kept.
        ``interrupted``: given up only because Ctrl-C ended the run while work still ran (:attr:`interrupted`)."""
        if self.abandoned is None:
            self.abandoned = reason
            self.interrupted = interrupted

    def check_usable(self) -> None:
        """Raise :class:`DeviceAbandonedError` before any call that would enqueue onto, or block on, an
        abandoned device — a blocking read behind a hung kernel never returns and ignores Ctrl-C."""
        if self.abandoned is not None:
            from ..errors import DeviceAbandonedError

            raise DeviceAbandonedError(f"{self.info.spec} was abandoned earlier in this run: {self.abandoned}")

    def watch(self, done: Callable[[], bool], timeout_s: float) -> None:
        """:func:`poll_until` that abandons the device when the watchdog fires, so the rest of the
        session neither queues behind the hung work nor waits for it at close."""
        from ..errors import ProbeTimeoutError

        try:
            poll_until(done, timeout_s, self.info.spec)
        except ProbeTimeoutError as exc:
            self.abandon(str(exc))
            raise

    # ---- the kernel sources a test's figures depend on ----------------------------------------
    def note_source(self, source: str, options: Sequence[str] = ()) -> str:
        """Note that the current test's figures depend on ``source`` built with ``options`` (every
        :meth:`compile` notes its own; a kernel handed to a tool that compiles on its own, such as Kernel
        Tuner, is noted where it is handed over); returns its digest. Inside :meth:`unnoted` nothing is noted."""
        key = (source, tuple(options))
        digest = self._digests.get(key)
        if digest is None:  # a cached kernel is compiled (and noted) once per use: hashed once per device
            digest = self._digests[key] = kernel_digest(source, options)
        if not self._unnoted:
            self.source_digests.add(digest)
            for scope in self._source_scopes:
                scope.add(digest)
        return digest

    def build_check(self, source: str = BUILD_CHECK_SOURCE) -> str | None:
        """Why this device cannot build a one-line kernel (``source``, OpenCL C as :func:`.dialect.portable`
        takes it), in its compiler's own words, or None. The session asks once, when it opens the device:
        a runtime whose compiler cannot target the machine (a PoCL whose LLVM does not know the host CPU
        reads "unknown target CPU") then fails once, with the reason, rather than once per test."""
        from ..errors import KernelCompileError  # noqa: PLC0415 - the errors module imports nothing of ours

        try:
            with self.unnoted():  # not a kernel any figure measures
                self.compile(dialect(self.info.backend).prelude + source, BUILD_CHECK_NAME)
        except KernelCompileError as exc:
            hint = (" PoCL's LLVM does not know this CPU: a PoCL built with a newer LLVM (as Debian 13 or Ubuntu "
                    "24.04 ship) does." if "unknown target CPU" in exc.log else "")
            said = [re.sub(r"^\S+:\d+:\d+:\s*", "", line.rsplit("error: ", 1)[1].strip())  # less the temp file's place
                    for line in exc.log.splitlines() if "error: " in line]
            said = said or [ln.strip() for ln in exc.log.splitlines()  # no error lines: less the binding's wrapper
                            if ln.strip() and not ln.lstrip().startswith(_WRAPPER)]
            words = "; ".join(dict.fromkeys(said)) or " ".join(exc.log.split())  # its error lines, each once
            return (f"{self.info.spec} ({self.info.name}; {self.info.runtime_version or self.info.driver_version}) "
                    f"cannot build a one-line kernel, so none of its tests can run. Its compiler says: "
                    f"{words[:400]}.{hint} Use a runtime whose compiler builds for this machine, "
                    "or choose another device with --gpuperf-device.")
        return None

    @contextlib.contextmanager
    def unnoted(self) -> Iterator[None]:
        """Compiles that are not kernels of their own: the backend's helpers (a stream blocker, a verbose
        rebuild for the resource log) and the configurations of a kernel a tuner noted once by the text it
        generates them from (a tuning run's cache decides which configurations it compiles, never its figures'
        digest)."""
        self._unnoted += 1
        try:
            yield
        finally:
            self._unnoted -= 1

    def once(self, key: str, compute: Callable[[], T]) -> T:
        """``compute()`` once per opened device, kept in :attr:`measured` under ``key``; every later call (a
        later test) notes the kernels the first one compiled, so a figure computed from the result carries
        the same digest whichever test measured it (``-k`` selection and test order change nothing)."""
        if key not in self.measured:
            self.measured[key], self._once_sources[key] = self.sources_during(compute)
        else:
            self.replay_sources(self._once_sources.get(key, frozenset()))
        return self.measured[key]

    def replay_sources(self, digests: "set[str] | frozenset[str]") -> None:
        """Note kernels compiled earlier for a result this test reuses (digests from :meth:`sources_during`)."""
        if self._unnoted:
            return
        self.source_digests.update(digests)
        for scope in self._source_scopes:
            scope.update(digests)

    def sources_during(self, compute: Callable[[], T]) -> tuple[T, frozenset[str]]:
        """``compute()`` and the digests of the kernels it compiled or noted, for a cache of its own that
        hands the result to later tests (they :meth:`replay_sources` the digests)."""
        scope: set[str] = set()
        self._source_scopes.append(scope)
        try:
            value = compute()
        finally:
            self._source_scopes.pop()  # nested computations close in the order they opened
        return value, frozenset(scope)

    # ---- compilation -------------------------------------------------------------------------
    def compile(self, source: str, name: str, options: Sequence[str] = ()) -> Kernel:
        """Compile ``name`` from ``source``; cached per (source, name, options) on this device. The source and
        options are noted for the current test's figures (:meth:`note_source`), cached or not."""
        self.note_source(source, options)
        key = (source, name, tuple(options))
        kernel = self._programs.get(key)
        if kernel is None:
            kernel = self._compile(source, name, tuple(options))
            self._programs[key] = kernel
        return kernel

    @abc.abstractmethod
    def _compile(self, source: str, name: str, options: tuple[str, ...]) -> Kernel: ...

    def compile_many(self, source: str, names: Sequence[str], options: Sequence[str] = ()) -> dict[str, Kernel]:
        """Build ``source`` once and return a :class:`Kernel` for every name in ``names``: one compiler
        call (and one ``cuobjdump`` for the probes' SASS proof) instead of one per entry point. Every entry
        point lands in the same per-(source, name, options) cache as :meth:`compile`'s, so a later
        :meth:`compile` of one of them is that kernel, and :meth:`close` drops them all."""
        if not names:
            return {}
        opts = tuple(options)
        first = self.compile(source, names[0], opts)  # notes the source for every entry point
        out = {names[0]: first}
        for name in names[1:]:
            key = (source, name, opts)
            kernel = self._programs.get(key)
            if kernel is None:
                kernel = self._programs[key] = self._entry_point(first, name)
            out[name] = kernel
        return out

    def _entry_point(self, built: Kernel, name: str) -> Kernel:
        """Entry point ``name`` of the program ``built`` came from, taken from the built module/program
        (retrieved once: PyOpenCL warns when a kernel is retrieved again)."""
        return self._compile(built.source, name, built.options)

    def kernel_tuner_target(self) -> dict[str, Any]:
        """The arguments of ``kernel_tuner.tune_kernel`` that run a kernel on this device (``lang``,
        ``platform``, ``device``): Kernel Tuner opens its own context on the same hardware."""
        raise NotImplementedError(f"Kernel Tuner cannot run kernels on {self.info.spec} ({type(self).__name__})")

    # ---- what a compiled kernel uses -----------------------------------------------------------
    def kernel_ptx(self, kernel: Kernel) -> str:
        """PTX of a compiled kernel, '' where the device has none (PTX is optional evidence)."""
        return ""

    def build_log(self, kernel: Kernel) -> str:
        """The compiler's build log of a kernel's program, '' where there is none."""
        return ""

    def driver_registers(self, kernel: Kernel) -> int | None:
        """Registers per work-item as the driver's verbose build reports them; None where it cannot."""
        return None

    def kernel_resources(self, kernel: Kernel) -> "Resources":
        """Registers per work-item and shared/local bytes per work-group of a compiled kernel, from the
        best source the backend offers (:mod:`.resources`)."""
        from .resources import Resources

        return Resources(0, 0, "unknown (the backend reports no resource usage)")

    def sass_functions(self, kernel: Kernel) -> dict[str, list[Any]]:
        """Parsed machine code (SASS, :class:`.sass.Instr` lists) per function of the binary ``kernel`` came
        from, where :attr:`DeviceInfo.has_sass`; elsewhere a ProbeVerificationError naming the device."""
        from ..errors import ProbeVerificationError

        raise ProbeVerificationError(f"{self.info.spec} ({self.info.name}) yields no SASS to prove a probe from")

    def sass_origin(self, kernel: Kernel) -> str | None:
        """Which binary :meth:`sass_functions` disassembled for ``kernel`` ("cubin that ran", or a recompile
        proven identical to it); None before that or where there is no SASS."""
        return None

    def release_pooled_memory(self) -> None:
        """Return freed buffers a memory pool still holds to the driver (CUDA: CuPy's device pool and
        its pinned staging pool). Nsight Compute's kernel replay saves and restores all memory the
        context's kernels can reach between passes."""

    # ---- memory ------------------------------------------------------------------------------
    @abc.abstractmethod
    def to_device(self, array: np.ndarray) -> Buffer: ...

    @abc.abstractmethod
    def empty(self, nbytes: int) -> Buffer: ...

    @abc.abstractmethod
    def to_host(self, buf: Buffer, dtype: Any, count: int | None = None) -> np.ndarray: ...

    @abc.abstractmethod
    def copy(self, dst: Buffer, src: Buffer, nbytes: int | None = None) -> Any:
        """Device-to-device copy; returns a timing handle."""

    # ---- execution ---------------------------------------------------------------------------
    @abc.abstractmethod
    def launch(self, kernel: Kernel, global_size: Size, local_size: Size | None, args: Sequence[KernelArg],
               offset: Size | None = None) -> Any:
        """Enqueue one launch; returns a timing handle. ``offset`` is the global work offset (OpenCL)."""

    #: whether :meth:`launch_graph` captures launches into a device-side graph (CUDA graphs); OpenCL has none
    supports_graphs: bool = False

    def launch_graph(self, kernel: Kernel, count: int, global_size: Size, local_size: Size | None,
                     args: Sequence[KernelArg]) -> Callable[[], Any]:
        """``count`` launches of one configuration captured once into a device-side graph; returns a callable
        that enqueues the whole graph with one host call, so :meth:`timed` around it spans the device's own
        back-to-back launches (kernel-to-kernel time from commands already in device memory, free of the
        host's launch path and of where in host memory a stream's commands sit). Backends without graphs
        (:attr:`supports_graphs` false) raise a ProbeVerificationError naming the device."""
        if count < 1:
            raise ValueError(f"launch_graph needs at least one launch, got {count}")
        return self.launch_graph_of([(kernel, args)] * int(count), global_size, local_size)

    def launch_graph_of(self, launches: Sequence[tuple[Kernel, Sequence[KernelArg]]], global_size: Size,
                        local_size: Size | None) -> Callable[[], Any]:
        """:meth:`launch_graph` for a sequence of (kernel, arguments) launches of one geometry, captured in their
        order (a graph that mixes kernels: the launch plant spreads a few costlier launches among empty ones)."""
        if not launches:
            raise ValueError("launch_graph_of needs at least one launch")
        return self.capture(lambda: [self.launch(k, global_size, local_size, a) for k, a in launches],
                            f"{len(launches)} launches of {launches[0][0].name!r}")

    def capture(self, enqueue: Callable[[], Any], what: str) -> Callable[[], Any]:
        """The work ``enqueue`` puts on the device (launches, copies), captured once into a device-side graph;
        returns a callable that enqueues the whole graph with one host call (see :meth:`launch_graph`).
        ``what`` names the work in an error. Backends without graphs (:attr:`supports_graphs` false) raise a
        ProbeVerificationError naming the device."""
        from ..errors import ProbeVerificationError

        raise ProbeVerificationError(f"{self.info.spec} ({self.info.name}) has no device-side graphs to capture "
                                     f"{what} into")

    #: the attribute that holds the queue this backend enqueues everything on (a CUDA stream, an OpenCL command
    #: queue), which :meth:`on_queue` swaps
    queue_attr: str = ""

    def _new_queue(self) -> Any:
        """Another queue of the device's context, of the kind :attr:`queue_attr` holds (backends that have one)."""
        raise NotImplementedError

    @contextlib.contextmanager
    def on_queue(self, index: int) -> Iterator[None]:
        """Enqueue (and time, and wait for) the enclosed work on the device's queue ``index``: 0 is the queue
        everything else runs on, 1, 2, … further queues of the same context, made on first use and kept for the
        device's life — and on a GPU every launch of a process that made more queues runs slower, so work that
        makes them belongs in a process of its own (:func:`pytest_gpuperf.probes.launch_streams.isolated_record`)."""
        from ..errors import ProbeVerificationError

        if index < 0:
            raise ValueError(f"a queue index is 0 or more, got {index}")
        if not self.queue_attr:
            raise ProbeVerificationError(f"{self.info.spec} ({self.info.backend}) cannot enqueue on another queue")
        own = getattr(self, self.queue_attr)
        if not self._queues:
            self._queues.append(own)
        while len(self._queues) <= index:
            self._queues.append(self._new_queue())
        setattr(self, self.queue_attr, self._queues[index])
        try:
            yield
        finally:
            setattr(self, self.queue_attr, own)

    def launch_many(self, kernel: Kernel, count: int, global_size: Size, local_size: Size | None,
                    args: Sequence[KernelArg]) -> list[Any]:
        """Enqueue ``count`` back-to-back launches of one configuration; returns their timing handles, so
        :meth:`timed` around it spans all of them. Timing many launches between one pair of device events
        divides the event timer's tick among them (span / ``count`` per launch), the way launch-latency
        microbenchmarks (nvbench's batch mode) read a launch far finer than the timer resolves one."""
        if count < 1:
            raise ValueError(f"launch_many needs at least one launch, got {count}")
        return [self.launch(kernel, global_size, local_size, args) for _ in range(int(count))]

    def copy_many(self, pairs: Sequence[tuple[Buffer, Buffer]], nbytes: int | None = None) -> list[Any]:
        """Enqueue one device-to-device copy per (destination, source) pair, back to back; returns their
        timing handles, so :meth:`timed` around it spans all of them (span / len(pairs) per copy): copies of
        a few µs read far finer than the event timer resolves one."""
        if not pairs:
            raise ValueError("copy_many needs at least one (destination, source) pair")
        return [self.copy(dst, src, nbytes) for dst, src in pairs]

    @abc.abstractmethod
    def timed(self, enqueue: Callable[[], Any]) -> Any:
        """Run ``enqueue`` (which puts work on the device) between device timestamps; returns a handle."""

    @abc.abstractmethod
    def elapsed(self, handle: Any, timeout_s: float) -> float:
        """Wait (at most ``timeout_s``, else :class:`ProbeTimeoutError`) and return device seconds."""

    @abc.abstractmethod
    def synchronize(self, timeout_s: float | None = None) -> None:
        """Wait until everything queued so far has finished, polled under the watchdog (``timeout_s``, or
        :attr:`timeout_s` when None); a hang abandons the device and raises :class:`ProbeTimeoutError`."""

    def close(self, timeout_s: float | None = None, interrupted: bool = False) -> None:
        """Wait at most ``timeout_s`` (default :attr:`timeout_s`) for queued work, then release; never
        waits on an abandoned device (its hung work would block the process forever). The object must
        not be used afterwards.

        Work still queued here was left by a test that returned without waiting for it: if it does not
        finish the device is abandoned with a reason that says so, and the session fails the run.
        ``interrupted`` (Ctrl-C ended the run): wait at most :data:`INTERRUPT_GRACE_S`, enough for a
        normal kernel in flight; work still running then is not waited for and the device is marked
        :attr:`interrupted` — the user stopped it, it is no hang.

        The wait is :meth:`synchronize` under the watchdog, never the backend's blocking wait
        (``stream.synchronize()``, ``queue.finish()``): behind a hung kernel those block forever in C,
        beyond the reach of Ctrl-C."""
        self._programs.clear()  # every compiled kernel, entry points of compile_many included
        self.measured.clear()
        self._once_sources.clear()
        if self.abandoned is not None:
            return
        from ..errors import GpuPerfError, ProbeTimeoutError

        limit = self.limit(timeout_s)
        if interrupted:
            limit = min(limit, INTERRUPT_GRACE_S)
        try:
            for i in range(max(1, len(self._queues))):  # the own queue, then any other a study enqueued on
                with self.on_queue(i) if i else contextlib.nullcontext():
                    self.synchronize(limit)
        except ProbeTimeoutError as exc:
            self.abandoned = None  # the watchdog's reason is replaced by one that says when and why
            if interrupted:  # no hang wording: the user stopped the run, nobody knows whether the work would end
                self.abandon(f"the run was interrupted while work was still running on {self.info.spec}; "
                             "it was not waited for", interrupted=True)
            else:
                self.abandon(f"at the end of the run, work a test had queued without waiting for it was "
                             f"still running: {exc}")
        except GpuPerfError:
            pass  # synchronize() abandoned the device (a fault); the session reports why
        except Exception:  # noqa: BLE001 - a backend error at teardown changes nothing for the run
            pass

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.info.spec} {self.info.name!r} key={self.info.key}>"


def poll_until(done: Callable[[], bool], timeout_s: float, spec: str) -> None:
    """Poll ``done`` with back-off (10 µs → 1 ms) instead of a blocking wait, so a hung kernel becomes a
    :class:`ProbeTimeoutError` that names the fix rather than a hung CI job. Both backends use it."""
    from ..errors import ProbeTimeoutError

    deadline = time.perf_counter() + timeout_s
    sleep = 1e-5
    while not done():
        if time.perf_counter() > deadline:
            raise ProbeTimeoutError(
                f"device work on {spec} did not finish within {timeout_s:g} s; the kernel hangs or the "
                "problem is too large. Raise --gpuperf-timeout or shrink the problem.")
        time.sleep(sleep)
        sleep = min(sleep * 2, 1e-3)


def check_ndrange(global_size: Size, local_size: Size | None, max_wg: int) -> None:
    """Validate an NDRange before it reaches the driver so the error names the sizes."""
    from ..errors import KernelLaunchError

    if not 1 <= len(global_size) <= 3 or any(int(g) <= 0 for g in global_size):
        raise KernelLaunchError(f"global size {global_size} must have 1-3 positive dimensions")
    if local_size is None:
        return
    if len(local_size) != len(global_size):
        raise KernelLaunchError(f"local size {local_size} and global size {global_size} differ in rank")
    if any(int(l) <= 0 for l in local_size):
        raise KernelLaunchError(f"local size {local_size} must be positive")
    if any(int(g) % int(l) for g, l in zip(global_size, local_size)):
        raise KernelLaunchError(
            f"global size {global_size} is not a multiple of local size {local_size}; "
            "pad it with pytest_gpuperf.devices.ndrange()")
    if int(np.prod(local_size)) > max_wg:
        raise KernelLaunchError(
            f"work-group of {int(np.prod(local_size))} items exceeds the device limit {max_wg}")


def ndrange(problem: Size, local: Size) -> Size:
    """Smallest global size ≥ ``problem`` that is a multiple of ``local`` per dimension (padded NDRange)."""
    return tuple(-(-int(p) // int(l)) * int(l) for p, l in zip(problem, local))
