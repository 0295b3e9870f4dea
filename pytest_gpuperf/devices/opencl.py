"""OpenCL backend through PyOpenCL: NVIDIA's OpenCL on the GPU, PoCL on the CPU.

Devices are numbered flat over every platform, GPUs and accelerators before CPUs (``opencl:0`` is the GPU on a
host that has NVIDIA's OpenCL beside PoCL, whatever order the ICD loader lists the platforms in). Timing uses the queue's profiling events, so host scheduling noise stays out: the timed work
is held until all of it is queued (:meth:`OpenCLDevice.timed`), so a multi-launch span holds no host enqueue
gaps — behind a user event on a CPU device, behind a blocking kernel on a GPU (:mod:`.queue_hold`), the
counterpart of the CUDA backend's.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..errors import BackendUnavailableError, GpuPerfError, KernelCompileError, KernelLaunchError
from .base import Buffer, Device, DeviceInfo, Kernel, KernelArg, Size, check_ndrange, slugify
from .dialect import OPENCL, prelude_lines
from .queue_hold import HOLDS, SPIN_NAME, SPIN_SOURCE, KernelHold, Region
from .backend_registry import Backend, register
from .resources import Resources, log_registers, ptxas_registers

#: PyOpenCL, loaded at the first device listed or opened (:func:`_load`)
cl: Any = None
_IMPORT_ERROR = ""


def _load() -> None:
    """Import PyOpenCL once; where it cannot be imported, keep why (the backend's "unavailable" reason)."""
    global cl, _IMPORT_ERROR
    if cl is not None or _IMPORT_ERROR:
        return
    try:  # pragma: no cover - import guard
        import pyopencl
    except Exception as exc:  # noqa: BLE001 - any import failure makes the backend unavailable
        _IMPORT_ERROR = f"pyopencl cannot be imported ({exc}); pip install pyopencl"
    else:
        cl = pyopencl


@contextlib.contextmanager
def compiler_output_kept() -> Iterator[None]:
    """Builds inside it keep their compiler output in the program's build log (:meth:`OpenCLDevice.build_log`)
    rather than raising PyOpenCL's ``CompilerWarning`` for each (NVIDIA's compiler writes output for most
    kernels: hundreds of warnings a run, none of which the user can act on); ``PYOPENCL_COMPILER_OUTPUT=1``
    shows them as PyOpenCL does."""
    with warnings.catch_warnings():
        _load()
        if cl is not None and not os.environ.get("PYOPENCL_COMPILER_OUTPUT"):
            warnings.simplefilter("ignore", cl.CompilerWarning)
        yield


def _all_cl_devices() -> list[tuple[Any, Any]]:
    _load()
    if cl is None:
        raise BackendUnavailableError("opencl", _IMPORT_ERROR)
    try:
        platforms = cl.get_platforms()
    except cl.Error as exc:  # no ICD at all
        raise BackendUnavailableError(
            "opencl", f"no OpenCL platform found ({exc}); install PoCL (apt-get install pocl-opencl-icd) "
            "or register a vendor ICD (see README)") from exc
    found = []
    for platform in platforms:
        try:
            found += [(platform, d) for d in platform.get_devices()]
        except cl.Error:
            continue  # a platform with no devices is not an error
    return gpus_first(found)


def gpus_first(found: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """``(platform, device)`` pairs with every device that is not a CPU before the CPUs, each group in the
    platforms' order. The ICD loader lists platforms in the order it reads its vendor files, which differs between
    hosts: on a host with NVIDIA's OpenCL and PoCL, ``opencl:0`` is the GPU whichever file it read first."""
    return sorted(found, key=lambda pair: bool(int(pair[1].type) & int(cl.device_type.CPU)))


def _info(index: int, platform: Any, dev: Any) -> DeviceInfo:
    name = dev.name.strip()
    is_pocl = "portable computing language" in platform.name.lower() or "pocl" in platform.name.lower()
    key = slugify(("pocl " if is_pocl else "") + name)
    ext = dev.extensions
    warp = 0
    if "cl_nv_device_attribute_query" in ext:
        warp = int(dev.get_info(0x4003))  # CL_DEVICE_WARP_SIZE_NV
    elif "cl_khr_subgroups" in ext or dev.version.startswith("OpenCL 3"):
        try:
            sizes = dev.get_info(cl.device_info.SUB_GROUP_SIZES_INTEL)  # type: ignore[attr-defined]
            warp = int(max(sizes))
        except Exception:  # noqa: BLE001 - optional query
            warp = 0
    if not warp:
        try:
            warp = int(dev.preferred_work_group_size_multiple)  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001
            warp = 1
    extra: dict[str, Any] = {"extensions": ext.split(), "max_work_item_sizes": list(dev.max_work_item_sizes),
                             "timer_resolution_ns": int(dev.profiling_timer_resolution)}
    cc = ""
    if "cl_nv_device_attribute_query" in ext:
        cc = f"{dev.get_info(0x4000)}.{dev.get_info(0x4001)}"  # COMPUTE_CAPABILITY_MAJOR/MINOR_NV
        extra["registers_per_block"] = int(dev.get_info(0x4002))
        pci = _nv_pci_bus_id(dev)
        if pci:
            extra["pci_bus_id"] = pci  # the card's identity across CUDA and OpenCL (fleet.identity)
    return DeviceInfo(
        backend="opencl", index=index, name=name, vendor=dev.vendor.strip(), key=key,
        platform=f"{platform.name} {platform.version}".strip(),
        driver_version=dev.driver_version.strip(), runtime_version=platform.version.strip(),
        toolkit_version=platform.version.strip(), compute_capability=cc, opencl_version=dev.version.strip(),
        compute_units=int(dev.max_compute_units), max_work_group_size=int(dev.max_work_group_size),
        warp_size=warp, clock_mhz=float(dev.max_clock_frequency), current_clock_mhz=0.0,
        memory_bytes=int(dev.global_mem_size), local_memory_bytes=int(dev.local_mem_size),
        l2_bytes=int(dev.global_mem_cache_size),
        fp64=bool(dev.double_fp_config) or "cl_khr_fp64" in ext, fp16="cl_khr_fp16" in ext,
        clock_counter=False, is_cpu=bool(dev.type & cl.device_type.CPU), extra=extra,
    )


def _nv_pci_bus_id(dev: Any) -> str | None:
    """``DDDD:BB:SS.0`` from cl_nv_device_attribute_query (CL_DEVICE_PCI_BUS_ID_NV 0x4008,
    CL_DEVICE_PCI_SLOT_ID_NV 0x4009, CL_DEVICE_PCI_DOMAIN_ID_NV 0x400A where the driver has it), so the
    OpenCL view of a card is known to be the same GPU as its CUDA view; None where the query fails."""
    try:
        bus, slot = int(dev.get_info(0x4008)), int(dev.get_info(0x4009))
    except Exception:  # noqa: BLE001 - optional query (older drivers)
        return None
    try:
        domain = int(dev.get_info(0x400A))
    except Exception:  # noqa: BLE001 - newer drivers only
        domain = 0
    return f"{domain:04x}:{bus:02x}:{slot:02x}.0"


def list_devices() -> list[DeviceInfo]:
    """Identity of every OpenCL device, flat-indexed; raises BackendUnavailableError if none can be listed."""
    return [_info(i, p, d) for i, (p, d) in enumerate(_all_cl_devices())]


class OpenCLDevice(Device):
    """A PyOpenCL context and profiling-enabled in-order queue on one device."""

    def __init__(self, index: int) -> None:
        super().__init__()
        pairs = _all_cl_devices()
        if not 0 <= index < len(pairs):
            from ..errors import DeviceNotFoundError
            raise DeviceNotFoundError(f"opencl:{index} does not exist ({len(pairs)} OpenCL devices)")
        platform, self.cl_device = pairs[index]
        self.info = _info(index, platform, self.cl_device)
        self.context = cl.Context([self.cl_device])
        self.queue = cl.CommandQueue(self.context, properties=cl.command_queue_properties.PROFILING_ENABLE)
        self._gate: Any = None  # user event the timed region's commands wait for (see timed)
        #: how :meth:`timed` holds a region (:data:`.queue_hold.HOLDS`): a user event on a CPU device, a blocking
        #: kernel on a GPU, whose driver may stamp held commands' starts as it releases them (:mod:`.queue_hold`)
        self.hold = "event" if self.info.is_cpu else "kernel"
        self._spin = KernelHold(self._compile_spin, self._enqueue_spin, lambda ev: self._wait(ev, self.timeout_s))
        self._spin_sink: Any = None

    queue_attr = "queue"

    def _new_queue(self) -> Any:
        return cl.CommandQueue(self.context, properties=cl.command_queue_properties.PROFILING_ENABLE)

    def kernel_tuner_target(self) -> dict[str, Any]:
        """Kernel Tuner numbers OpenCL devices per platform (``cl.get_platforms()[platform].get_devices()``),
        this project flat over all platforms: the same device under Kernel Tuner's two indices."""
        platforms = cl.get_platforms()
        for p, platform in enumerate(platforms):
            try:
                devices = platform.get_devices()
            except cl.Error:
                continue
            for d, dev in enumerate(devices):
                if dev == self.cl_device:
                    return {"lang": "OpenCL", "platform": p, "device": d}
        raise RuntimeError(f"{self.info.spec} ({self.info.name}) is no longer among the OpenCL platforms' devices")

    def _compile(self, source: str, name: str, options: tuple[str, ...]) -> Kernel:
        try:
            with compiler_output_kept():
                program = cl.Program(self.context, source).build(options=list(options))
        except cl.Error as exc:  # RuntimeError (build failure) or LogicError (bad options)
            raise KernelCompileError(name, "opencl", options, str(exc), prelude_lines(source, "opencl")) from exc
        try:
            handle = getattr(program, name)
        except (AttributeError, cl.Error) as exc:
            raise KernelCompileError(name, "opencl", options, f"no kernel named {name!r} in the program") from exc
        return Kernel(name, source, options, handle, program, self, self._attributes(handle))

    def _entry_point(self, built: Kernel, name: str) -> Kernel:
        try:
            handle = getattr(built.program, name)
        except (AttributeError, cl.Error) as exc:
            raise KernelCompileError(name, "opencl", built.options, f"no kernel named {name!r} in the program") from exc
        return Kernel(name, built.source, built.options, handle, built.program, self, self._attributes(handle))

    def _attributes(self, handle: Any) -> dict[str, int]:
        """Resource usage the driver reports for one kernel of a built program."""
        wg = cl.kernel_work_group_info
        return {
            "max_threads_per_block": int(handle.get_work_group_info(wg.WORK_GROUP_SIZE, self.cl_device)),
            "local_bytes": int(handle.get_work_group_info(wg.LOCAL_MEM_SIZE, self.cl_device)),
            "private_bytes": int(handle.get_work_group_info(wg.PRIVATE_MEM_SIZE, self.cl_device)),
            "preferred_multiple": int(handle.get_work_group_info(
                wg.PREFERRED_WORK_GROUP_SIZE_MULTIPLE, self.cl_device)),
        }

    # ---- what a compiled kernel uses -------------------------------------------------------------
    def build_log(self, kernel: Kernel) -> str:
        try:
            return str(kernel.program.get_build_info(self.cl_device, cl.program_build_info.LOG))
        except Exception:  # noqa: BLE001 - the log is evidence, not a requirement
            return ""

    def kernel_ptx(self, kernel: Kernel) -> str:
        """NVIDIA's OpenCL returns the program's PTX as its binary; '' on other platforms."""
        try:
            binaries = kernel.program.get_info(cl.program_info.BINARIES)
            text = bytes(binaries[0]).decode("ascii", "replace")
        except Exception:  # noqa: BLE001
            return ""
        return text if ".entry" in text else ""

    def driver_registers(self, kernel: Kernel) -> int | None:
        """Registers per thread as NVIDIA's OpenCL compiler reports them in its build log when built with
        ``-cl-nv-verbose`` (``cl_nv_compiler_options``) — the fallback where ``ptxas -v`` gives no count
        (without either, the occupancy calculator runs without the register limit)."""
        if not self.info.nv_compiler_options:
            return None
        opts = tuple(kernel.options or ())
        try:
            with self.unnoted():  # the same kernel rebuilt for its log: no kernel of its own
                verbose = kernel if "-cl-nv-verbose" in opts else self.compile(
                    kernel.source, kernel.name, opts + ("-cl-nv-verbose",))
        except Exception:  # noqa: BLE001 - resource usage is best effort; 0 = unknown
            return None
        return log_registers(self.build_log(verbose))

    def kernel_resources(self, kernel: Kernel) -> Resources:
        """Local bytes from CL_KERNEL_LOCAL_MEM_SIZE; registers (NVIDIA only) from ``ptxas -v`` on the
        program's PTX, else from the driver's verbose build log, else unknown (0)."""
        shared = int(kernel.attributes.get("local_bytes", 0))
        info = self.info
        if info.compute_capability:
            arch = "sm_" + info.compute_capability.replace(".", "")
            bound = next((int(o.split("=", 1)[1]) for o in kernel.options or ()
                          if o.startswith("-cl-nv-maxrregcount=")), 0)
            regs = ptxas_registers(self.kernel_ptx(kernel), arch, bound)
            if regs is not None:
                return Resources(regs, shared, "ptxas -v on the OpenCL program's PTX")
            regs = self.driver_registers(kernel)
            if regs is not None:
                return Resources(regs, shared, "NVIDIA OpenCL build log (-cl-nv-verbose)")
        return Resources(0, shared, "CL_KERNEL_LOCAL_MEM_SIZE (registers unknown)")

    def to_device(self, array: np.ndarray) -> Buffer:
        array = np.ascontiguousarray(array)
        mf = cl.mem_flags
        handle = cl.Buffer(self.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=array)
        return Buffer(handle, array.nbytes, self)

    def empty(self, nbytes: int) -> Buffer:
        size = max(int(nbytes), 1)
        handle = cl.Buffer(self.context, cl.mem_flags.READ_WRITE, size=size)
        if self.info.is_cpu:
            self._commit(handle, size)
        return Buffer(handle, int(nbytes), self)

    def _commit(self, handle: Any, size: int) -> None:
        """Touch every page of a new buffer on a CPU device before anything times it.

        A CPU device's memory is host memory the OS maps on first touch, so whichever timed copy or
        kernel first writes a page pays its fault. Measured on PoCL: a 1 MiB copy into a fresh buffer
        ran at 1.0–2.9 GB/s against 8–15 GB/s once its pages existed, and the copy suite's 32-pair
        rotation timed 29 of its 200 samples on fresh pages; on a fresh CI VM, where each first touch
        is also a fault in the hypervisor, the same test read 1.1 GB/s and failed the gate. GPU
        allocations are committed by the driver, so only CPU devices pay this fill."""
        self._release_gate()  # a fill behind a held gate would wait forever
        event = cl.enqueue_fill_buffer(self.queue, handle, np.uint8(0), 0, size)
        self._wait(event, self.timeout_s)

    def to_host(self, buf: Buffer, dtype: Any, count: int | None = None) -> np.ndarray:
        dtype = np.dtype(dtype)
        count = buf.nbytes // dtype.itemsize if count is None else count
        out = np.empty(count, dtype=dtype)
        self.check_usable()
        self._release_gate()  # a read behind a held gate would wait forever
        # Not a blocking read: behind a hung kernel (launched without waiting, then read back, as the
        # accuracy kernels do) it would block forever in C, past the watchdog and Ctrl-C. The copy is
        # queued, then polled under the watchdog like every other wait.
        try:
            event = cl.enqueue_copy(self.queue, out, buf.handle, is_blocking=False)
        except cl.Error as exc:
            raise KernelLaunchError(f"reading back a buffer failed on {self.info.spec}: {exc} "
                                    "(an earlier kernel probably faulted)") from exc
        self.queue.flush()
        try:
            self._wait(event, self.timeout_s)
        except GpuPerfError:
            # PyOpenCL's event of a non-blocking copy waits for the copy when it is collected (it guards
            # the host array): behind a hung kernel that is forever. Keep it alive instead; the process
            # leaves with os._exit after its summary (Device.blocks_exit).
            self.stranded.append((event, out))
            raise
        return out

    def copy(self, dst: Buffer, src: Buffer, nbytes: int | None = None) -> Any:
        self.check_usable()
        n = min(dst.nbytes, src.nbytes) if nbytes is None else int(nbytes)
        return cl.enqueue_copy(self.queue, dst.handle, src.handle, byte_count=n, wait_for=self._wait_for())

    def launch(self, kernel: Kernel, global_size: Size, local_size: Size | None, args: Sequence[KernelArg],
               offset: Size | None = None) -> Any:
        self.check_usable()
        check_ndrange(tuple(global_size), None if local_size is None else tuple(local_size),
                      self.info.max_work_group_size)
        raw = [a.handle if isinstance(a, Buffer) else a for a in args]
        try:
            kernel.handle.set_args(*raw)
            return cl.enqueue_nd_range_kernel(self.queue, kernel.handle, tuple(int(g) for g in global_size),
                                              None if local_size is None else tuple(int(l) for l in local_size),
                                              global_work_offset=None if offset is None else tuple(offset),
                                              wait_for=self._wait_for())
        except cl.Error as exc:
            raise KernelLaunchError(f"launch of {kernel.name!r} global={tuple(global_size)} "
                                    f"local={local_size} rejected by {self.info.spec}: {exc}") from exc

    def timed(self, enqueue: Callable[[], Any]) -> Any:
        """Run ``enqueue`` with every command it issues held until ``enqueue`` returns (:attr:`hold`): behind a
        user event set complete afterwards, or behind a blocking kernel that outlasts the enqueue. Without a hold,
        a span of several launches (a 24-pass pairwise sum) times PyOpenCL's tens of µs per enqueue as well,
        several times the device time and more under host load. Blocking calls inside ``enqueue`` release a
        user event first."""
        self.check_usable()
        spin = self._spin.begin() if self.hold == "kernel" else None
        self._gate = cl.UserEvent(self.context) if self.hold == "event" else None
        try:
            events = enqueue()
        finally:
            self._release_gate()
        if events is None:
            raise KernelLaunchError("OpenCL timing needs the enqueue callable to return its event(s)")
        region = Region(events if isinstance(events, (list, tuple)) else [events])
        if spin is not None:
            self.queue.flush()
            region.spin, region.host_ns = spin, self._spin.end()
        return region

    @contextlib.contextmanager
    def holding(self, mode: str) -> Iterator[None]:
        """:meth:`timed` holds its regions the named way inside the block (:data:`.queue_hold.HOLDS`), then as
        before, even after an error. What an event's start reads under each hold is what the event-gate study
        compares (``probes.event_gate``)."""
        if mode not in HOLDS:
            raise ValueError(f"unknown hold {mode!r}: one of {', '.join(HOLDS)}")
        before, self.hold = self.hold, mode
        try:
            yield
        finally:
            self.hold = before

    def hold_counts(self) -> dict[str, Any]:
        """The blocking kernel's regions so far, how many it held too briefly, and its calibration."""
        return {"regions": self._spin.regions, "underheld": self._spin.underheld,
                "ns_per_iteration": self._spin.ns_per_iteration}

    def _compile_spin(self) -> Kernel:
        with self.unnoted():  # the timing path's own kernel, not one a figure measures
            kernel = self.compile(SPIN_SOURCE, SPIN_NAME)
        self._spin_sink = self.to_device(np.zeros(1, np.uint32))  # the word the spin's loop may write
        return kernel

    def _enqueue_spin(self, kernel: Kernel, iterations: int) -> Any:
        kernel.handle.set_args(self._spin_sink.handle, np.uint32(min(iterations, 2**32 - 1)))
        event = cl.enqueue_nd_range_kernel(self.queue, kernel.handle, (1,), (1,))
        self.queue.flush()
        return event

    def _wait_for(self) -> list[Any] | None:
        return None if self._gate is None else [self._gate]

    def _release_gate(self) -> None:
        gate, self._gate = self._gate, None
        if gate is not None:
            gate.set_status(cl.command_execution_status.COMPLETE)

    def elapsed(self, handle: Any, timeout_s: float) -> float:
        self.check_usable()
        events = list(handle)
        self.queue.flush()
        self._wait(events[-1], timeout_s)
        try:
            span = (events[-1].profile.end - events[0].profile.start) * 1e-9
            spin = getattr(handle, "spin", None)
            if spin is not None:
                self._spin.check(spin, handle.host_ns)
            return span
        except cl.Error as exc:
            raise KernelLaunchError(f"profiling info unavailable on {self.info.spec}: {exc}") from exc

    def synchronize(self, timeout_s: float | None = None) -> None:
        """A marker behind everything queued, polled under the watchdog (``--gpuperf-timeout`` unless the
        caller names a limit); never ``queue.finish()``, which blocks in C behind a hung kernel."""
        self.check_usable()
        self._release_gate()
        marker = cl.enqueue_marker(self.queue)
        self.queue.flush()  # polling a status is only guaranteed to progress once the queue is flushed
        self._wait(marker, self.limit(timeout_s))

    def _wait(self, event: Any, timeout_s: float) -> None:
        """Poll the event under the watchdog (:meth:`Device.watch`); a negative status (a faulting
        command) abandons the device — every command queued behind it fails too — and is a
        KernelLaunchError."""
        spec = self.info.spec

        def done() -> bool:
            status = event.command_execution_status
            if status < 0:
                message = f"command failed on {spec} with OpenCL status {status} (kernel fault?)"
                self.abandon(message)
                raise KernelLaunchError(message)
            return status == cl.command_execution_status.COMPLETE

        self.watch(done, timeout_s)


BACKEND = register(Backend(
    name="opencl", label="OpenCL", dialect=OPENCL, list_devices=list_devices, open=OpenCLDevice,
    timer_resolution_s=1e-9,  # where CL_DEVICE_PROFILING_TIMER_RESOLUTION is not reported
    build_output_kept=compiler_output_kept,
))
