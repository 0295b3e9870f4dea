"""CUDA backend through CuPy: NVRTC compiles CUDA C to a cubin for the device's own architecture,
the CUDA driver loads it, and CUDA events time it.

We drive NVRTC ourselves (rather than ``cupy.RawModule``) so the exact PTX and cubin are kept on
the :class:`Kernel` — the probe suite disassembles the cubin to prove which instructions ran and
the static PTX model parses the PTX.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..errors import (BackendUnavailableError, KernelCompileError, KernelLaunchError, ProbeTimeoutError,
                      ProbeVerificationError)
from . import cubin_cache, elf, recompile, sass
from .nvml import card_identity
from .base import Buffer, Device, DeviceInfo, Kernel, KernelArg, Size, check_ndrange, slugify
from .dialect import CUDA, prelude_lines
from .backend_registry import Backend, register
from .resources import Resources

#: CuPy and its NVRTC and runtime modules, loaded at the first device listed or opened (:func:`_require`)
cupy: Any = None
nvrtc: Any = None
runtime: Any = None
_IMPORT_ERROR = ""


def _load() -> None:
    """Import CuPy once; where it cannot be imported, keep why (the backend's "unavailable" reason)."""
    global cupy, nvrtc, runtime, _IMPORT_ERROR
    if cupy is not None or _IMPORT_ERROR:
        return
    try:  # pragma: no cover - depends on the machine
        import cupy as cupy_module
        from cupy.cuda import nvrtc as nvrtc_module, runtime as runtime_module
    except Exception as exc:  # noqa: BLE001 - ImportError, or CUDA libraries missing
        from ..util.provenance import install_hint

        _IMPORT_ERROR = f"CuPy cannot be imported ({type(exc).__name__}: {exc}); {install_hint('cuda')}"
    else:
        cupy, nvrtc, runtime = cupy_module, nvrtc_module, runtime_module


# cudaDeviceAttr values (stable across CUDA releases; cudaDeviceProp lost clockRate in CUDA 13).
_ATTR = {
    "max_threads_per_block": 1, "max_shared_per_block": 8, "regs_per_block": 12, "warp_size": 10,
    "clock_khz": 13, "sm_count": 16, "mem_clock_khz": 36, "bus_width": 37, "l2_bytes": 38,
    "max_threads_per_sm": 39, "cc_major": 75, "cc_minor": 76, "max_shared_per_sm": 81,
    "regs_per_sm": 82, "max_blocks_per_sm": 106, "max_shared_per_block_optin": 97,
}


# Holds the stream until the host has enqueued the timed work (or ``limit_ns`` passes), so the start
# event and the work run back to back on the device. Without it, the start event fires as soon as the
# host records it and the host's own launch cost (tens of µs from Python) lands inside the interval —
# the same reason NVIDIA's nvbench enqueues a "blocking kernel" before its timed region.
_BLOCKER = r"""
extern "C" __global__ void gpuperf_block_stream(volatile int* flag, unsigned long long limit_ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        if (*flag) return;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < limit_ns);
}
"""
_BLOCK_LIMIT_NS = 200_000_000  # 0.2 s: ends the hold even if the timed callable synchronises itself

# CUfunction_attribute values: resource usage of a compiled kernel.
_FUNC_ATTR = {"max_threads_per_block": 0, "shared_size_bytes": 1, "const_size_bytes": 2, "local_size_bytes": 3,
              "num_regs": 4, "ptx_version": 5, "binary_version": 6}


#: CUDA error codes after which the context is unusable for the rest of the process ("sticky"): the
#: driver and runtime APIs share these numbers (cudaErrorIllegalAddress = CUDA_ERROR_ILLEGAL_ADDRESS = 700).
#: 702 launch timeout, 710 device-side assert, 714 hardware stack error, 715 illegal instruction,
#: 716 misaligned address, 717 invalid address space, 718 invalid PC, 719 launch failure.
STICKY_ERRORS = frozenset({700, 702, 710, 714, 715, 716, 717, 718, 719})


def sticky(exc: BaseException) -> bool:
    """Whether a CuPy CUDA error (``CUDADriverError``/``CUDARuntimeError``, both carry ``.status``) left
    the context unusable; such an error can surface at any later call, not only at the faulting kernel's
    wait. Written from the CUDA documentation, not run here (no CUDA GPU on the development machine)."""
    return getattr(exc, "status", None) in STICKY_ERRORS


def _require() -> None:
    _load()
    if cupy is None:
        raise BackendUnavailableError("cuda", _IMPORT_ERROR)


def device_count() -> int:
    _require()
    try:
        return int(runtime.getDeviceCount())
    except Exception as exc:  # noqa: BLE001 - CUDARuntimeError when there is no driver/GPU
        raise BackendUnavailableError("cuda", f"no usable CUDA driver or GPU ({exc})") from exc


def _version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def _nvml_identity(index: int) -> dict[str, Any]:
    """Driver string and clocks from NVML; empty when nvidia-ml-py or NVML is missing (then we fall back)."""
    try:
        import pynvml
        pynvml.nvmlInit()
        try:
            pci = runtime.deviceGetPCIBusId(index)
            h = pynvml.nvmlDeviceGetHandleByPciBusId(pci.encode() if isinstance(pci, str) else pci)
            return {
                "driver": pynvml.nvmlSystemGetDriverVersion(),
                "sm_clock_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                "max_sm_clock_mhz": pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM),
                "mem_clock_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM),
                "power_limit_w": pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0,
                "pci_bus_id": pci,
                **card_identity(pynvml, h),  # UUID, serial, VBIOS, clocks, ECC: the card in a fleet
            }
        finally:
            pynvml.nvmlShutdown()
    except Exception as exc:  # noqa: BLE001 - NVML is optional
        return {"nvml_error": str(exc)}


def _info(index: int) -> DeviceInfo:
    a = {k: int(runtime.deviceGetAttribute(v, index)) for k, v in _ATTR.items()}
    props = runtime.getDeviceProperties(index)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    nv = _nvml_identity(index)
    driver = nv.get("driver") or _version(runtime.driverGetVersion())
    extra = {k: a[k] for k in ("max_shared_per_block", "max_shared_per_block_optin", "regs_per_block",
                               "max_threads_per_sm", "max_shared_per_sm", "regs_per_sm", "max_blocks_per_sm",
                               "mem_clock_khz", "bus_width")}
    extra.update({k: v for k, v in nv.items() if k != "driver"})
    if "pci_bus_id" not in extra:  # without NVML: the runtime knows the card's PCI address too (fleet.identity)
        try:
            pci = runtime.deviceGetPCIBusId(index)
            extra["pci_bus_id"] = pci.decode() if isinstance(pci, bytes) else str(pci)
        except Exception:  # noqa: BLE001 - identity is optional
            pass
    extra["nvrtc_version"] = ".".join(map(str, nvrtc.getVersion()))
    extra["cupy_version"] = cupy.__version__
    return DeviceInfo(
        backend="cuda", index=index, name=name, vendor="NVIDIA", key=slugify(name), platform="CUDA",
        driver_version=str(driver), runtime_version=_version(runtime.runtimeGetVersion()),
        toolkit_version=extra["nvrtc_version"], compute_capability=f"{a['cc_major']}.{a['cc_minor']}",
        compute_units=a["sm_count"], max_work_group_size=a["max_threads_per_block"], warp_size=a["warp_size"],
        clock_mhz=a["clock_khz"] / 1000.0, current_clock_mhz=float(nv.get("sm_clock_mhz", 0.0)),
        memory_bytes=int(props["totalGlobalMem"]), local_memory_bytes=a["max_shared_per_block"],
        l2_bytes=a["l2_bytes"], fp64=True, fp16=(a["cc_major"], a["cc_minor"]) >= (5, 3),
        clock_counter=True, is_cpu=False, extra=extra,
    )


def list_devices() -> list[DeviceInfo]:
    return [_info(i) for i in range(device_count())]


def _include_options() -> list[str]:
    """NVRTC needs the toolkit headers for cuda_fp16.h and friends; CuPy knows where they are."""
    opts = []
    try:
        path = cupy.cuda.get_cuda_path()
        if path and os.path.isdir(os.path.join(path, "include")):
            opts.append(f"-I{os.path.join(path, 'include')}")
    except Exception:  # noqa: BLE001
        pass
    try:
        from cupy._environment import get_nvrtc_include_dirs  # type: ignore[attr-defined]
        opts += [f"-I{d}" for d in get_nvrtc_include_dirs()]
    except Exception:  # noqa: BLE001
        pass
    try:
        import nvidia.cuda_runtime  # type: ignore[import-not-found]
        for base in nvidia.cuda_runtime.__path__:
            inc = os.path.join(base, "include")
            if os.path.isdir(inc):
                opts.append(f"-I{inc}")
    except Exception:  # noqa: BLE001
        pass
    return opts


class CudaDevice(Device):
    """One CUDA device with its own non-blocking stream."""

    def __init__(self, index: int) -> None:
        super().__init__()
        n = device_count()
        if not 0 <= index < n:
            from ..errors import DeviceNotFoundError
            raise DeviceNotFoundError(f"cuda:{index} does not exist ({n} CUDA devices)")
        self.info = _info(index)
        self._dev = cupy.cuda.Device(index)
        self._dev.use()
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.arch = self.info.compute_capability.replace(".", "")
        self._includes = _include_options()
        self._flag_mem: Any = None  # pinned host word the blocking kernel polls (mapped: UVA)
        self._flag: np.ndarray | None = None

    queue_attr = "stream"

    def _new_queue(self) -> Any:
        with self._dev:
            return cupy.cuda.Stream(non_blocking=True)

    def kernel_tuner_target(self) -> dict[str, Any]:
        """Kernel Tuner's CuPy backend (this project's CUDA runtime; ``lang="CUDA"`` would need PyCUDA) on
        the same CUDA ordinal."""
        return {"lang": "cupy", "device": self.info.index}

    @property
    def blocks_exit(self) -> bool:
        """An abandoned CUDA device always does — hung, faulted, or left with work running at Ctrl-C
        (:attr:`interrupted`): tearing down a context behind a hung kernel (CuPy's pools freeing memory at
        interpreter exit; cudaFree synchronises the device) could block the exit for good.
        (Written from the CUDA documentation; the development machine has no CUDA GPU to run it. PoCL was
        measured to release an abandoned context without waiting, so OpenCL adds no such case.)"""
        return super().blocks_exit or self.abandoned is not None

    # ---- compilation ---------------------------------------------------------------------------
    def nvrtc_options(self, options: Sequence[str], target: str = "cubin") -> list[str]:
        """The full NVRTC option list a kernel built with ``options`` is compiled with for ``target``
        ("cubin": the device's real architecture; "ptx": its virtual one) — also what a recompilation of
        the same source must pass to get the same machine code (:mod:`.recompile`, :meth:`sass_functions`)."""
        return recompile.nvrtc_options(str(self.arch), options, target, self._includes)

    def nvrtc(self, source: str, name: str, options: Sequence[str], target: str) -> tuple[bytes, str]:
        """Compile with NVRTC for ``target`` ("cubin" or "ptx"); returns (binary or PTX bytes, log). A text
        compiled before on this host with the same options and NVRTC is replayed (:mod:`.cubin_cache`)."""
        opts = self.nvrtc_options(options, target)
        binary, log, _ = cubin_cache.compiled(source, name, opts, target,
                                              str(self.info.extra.get("nvrtc_version", "")),
                                              lambda: self._nvrtc(source, name, opts, options, target))
        return binary, log

    def _nvrtc(self, source: str, name: str, opts: list[str], options: Sequence[str], target: str
               ) -> tuple[bytes, str]:
        """One NVRTC compile of ``source`` with the full option list ``opts`` (``options``: the caller's, which
        an error names)."""
        prog = nvrtc.createProgram(source, f"{name}.cu", [], [])
        try:
            try:
                nvrtc.compileProgram(prog, opts)
            except nvrtc.NVRTCError as exc:
                log = nvrtc.getProgramLog(prog)
                raise KernelCompileError(name, "cuda", tuple(options), f"{exc}\n{log}",
                                         prelude_lines(source, "cuda")) from exc
            log = nvrtc.getProgramLog(prog)
            out = nvrtc.getCUBIN(prog) if target == "cubin" else nvrtc.getPTX(prog)
            out = out if isinstance(out, bytes) else out.encode()
            if target == "cubin":  # CuPy returns cubin[:size-1]; restore NVRTC's exact file
                out = elf.repaired(out) or out
            return out, log
        finally:
            nvrtc.destroyProgram(prog)

    def _compile(self, source: str, name: str, options: tuple[str, ...]) -> Kernel:
        cubin, log = self.nvrtc(source, name, options, "cubin")
        module = cupy.cuda.function.Module()
        with self._dev:
            module.load(cubin)
            try:
                func = module.get_function(name)
            except Exception as exc:  # noqa: BLE001 - CUDADriverError: named symbol not found
                raise KernelCompileError(name, "cuda", options,
                                         f"no kernel named {name!r} (declare it extern \"C\" __global__): {exc}"
                                         ) from exc
        program = {"module": module, "cubin": cubin, "log": log, "ptx": None}
        return Kernel(name, source, options, func, program, self, self._attributes(func))

    def _entry_point(self, built: Kernel, name: str) -> Kernel:
        try:
            func = built.program["module"].get_function(name)
        except Exception as exc:  # noqa: BLE001 - CUDADriverError: named symbol not found
            raise KernelCompileError(name, "cuda", built.options,
                                     f"no kernel named {name!r} (declare it extern \"C\" __global__): {exc}"
                                     ) from exc
        return Kernel(name, built.source, built.options, func, built.program, self, self._attributes(func))

    @staticmethod
    def _attributes(func: Any) -> dict[str, int]:
        """Resource usage of one loaded function (cuFuncGetAttribute)."""
        return {k: int(cupy.cuda.driver.funcGetAttribute(v, func.ptr)) for k, v in _FUNC_ATTR.items()}

    def ptx(self, kernel: Kernel) -> str:
        """PTX of a compiled kernel (compiled once more for the virtual architecture, then cached)."""
        if kernel.program.get("ptx") is None:
            kernel.program["ptx"] = self.nvrtc(kernel.source, kernel.name, kernel.options, "ptx")[0].decode()
        return kernel.program["ptx"]

    def sass_functions(self, kernel: Kernel) -> dict[str, list[sass.Instr]]:
        """Parsed SASS of the cubin ``kernel`` came from (cached on the program dict its entry points share).

        If cuobjdump rejects that cubin, the source is compiled again through the same libnvrtc and the
        fresh cubin is disassembled — accepted only when its kernels' machine code is byte-identical to
        the loaded cubin's (:mod:`.recompile`)."""
        program = kernel.program
        if "sass_parsed" not in program:
            cubin = program["cubin"]  # already complete: nvrtc() restores the byte CuPy's getCUBIN drops
            try:
                text = sass.disassemble(cubin)
                program["sass_origin"] = "cubin that ran"
            except ProbeVerificationError as first:
                opts = self.nvrtc_options(kernel.options, "cubin")
                fresh, lib = recompile.compile_cubin(kernel.source, opts)
                try:
                    text = sass.disassemble(fresh)
                except ProbeVerificationError as second:
                    raise ProbeVerificationError(
                        f"{first}; the loaded cubin: {len(cubin)} bytes, "
                        f"{elf.header_problem(cubin) or 'complete ELF'}; "
                        f"a fresh NVRTC cubin ({lib}) failed too: {second}") from second
                parsed = sass.parse(text)
                sizes = recompile.check_identical(cubin, fresh, list(parsed))
                program["sass_origin"] = (f"recompiled with {lib}; code identical to the cubin that ran "
                                          f"({sum(sizes.values())} bytes); cuobjdump on the loaded cubin: {first}")[:600]
            else:
                parsed = sass.parse(text)
            program["sass_text"] = text
            program["sass_parsed"] = parsed
        return program["sass_parsed"]

    def sass_origin(self, kernel: Kernel) -> str | None:
        return kernel.program.get("sass_origin")

    def kernel_ptx(self, kernel: Kernel) -> str:
        try:
            return self.ptx(kernel)
        except Exception:  # noqa: BLE001 - PTX is optional evidence
            return ""

    def build_log(self, kernel: Kernel) -> str:
        return str(kernel.program.get("log") or "")

    def kernel_resources(self, kernel: Kernel) -> Resources:
        attrs = kernel.attributes
        return Resources(int(attrs.get("num_regs", 0)), int(attrs.get("shared_size_bytes", 0)), "cuFuncGetAttribute")

    def release_pooled_memory(self) -> None:
        """CuPy's device pool and its pinned host pool: an upload from NumPy stages through pinned memory
        that the pool keeps, and pinned memory is mapped into the device's address space, so Nsight
        Compute's kernel replay saves and restores it too (gigabytes after one large upload)."""
        for pool in (cupy.get_default_memory_pool, cupy.get_default_pinned_memory_pool):
            try:
                pool().free_all_blocks()
            except Exception:  # noqa: BLE001 - nothing to release
                pass

    # ---- memory ----------------------------------------------------------------------------------
    # All memory work goes through our own stream: a non-blocking stream does not order itself after the
    # legacy default stream, so an upload issued there could still be in flight when our kernels run.
    def to_device(self, array: np.ndarray) -> Buffer:
        """Upload on the device's stream and wait for it, each wait under the watchdog (:meth:`synchronize`;
        ``stream.synchronize()`` behind a hung kernel would block in C for good). The copy is made from the
        array's own (pageable) memory, not through CuPy's pinned staging pool, which would keep a pinned
        copy of the largest upload mapped into the device's address space (where Nsight Compute's replay
        saves and restores it). A pageable copy larger than the driver's staging buffer waits in C for its
        own earlier chunks, which would queue behind whatever a test left running: so the stream is drained
        first, and the copy then waits for nothing but itself."""
        self.synchronize()
        host = np.ascontiguousarray(array)
        with self._dev, self.stream:
            arr = cupy.empty(host.nbytes, dtype=cupy.uint8)
            if host.nbytes:
                arr.data.copy_from_host_async(ctypes.c_void_p(host.ctypes.data), host.nbytes, self.stream)
        self.synchronize()
        return Buffer(arr, arr.nbytes, self)

    def empty(self, nbytes: int) -> Buffer:
        with self._dev, self.stream:
            return Buffer(cupy.empty(max(int(nbytes), 1), dtype=cupy.uint8), int(nbytes), self)

    def to_host(self, buf: Buffer, dtype: Any, count: int | None = None) -> np.ndarray:
        """Wait for the stream under the watchdog first (:meth:`synchronize`), then copy: CuPy's copy to
        host memory waits for the stream in C, which behind a hung kernel (launched without waiting, then
        read back, as the accuracy kernels do) never returns and ignores Ctrl-C. Once the stream is idle
        the copy waits for nothing but itself."""
        dtype = np.dtype(dtype)
        count = buf.nbytes // dtype.itemsize if count is None else count
        self.synchronize()  # check_usable, then polled: a hang is a ProbeTimeoutError, a fault abandons
        try:
            with self._dev, self.stream:
                out = cupy.asnumpy(buf.handle[: count * dtype.itemsize], stream=self.stream)
            return out.view(dtype)
        except Exception as exc:  # noqa: BLE001 - CUDARuntimeError after a fault
            if sticky(exc):
                self.abandon(f"a sticky CUDA error surfaced at a read-back: {exc}")
            raise KernelLaunchError(f"reading back a buffer failed on {self.info.spec}: {exc} "
                                    "(an earlier kernel probably faulted; the CUDA context is now unusable)") from exc

    def copy(self, dst: Buffer, src: Buffer, nbytes: int | None = None) -> Any:
        self.check_usable()
        n = min(dst.nbytes, src.nbytes) if nbytes is None else int(nbytes)
        runtime.memcpyAsync(dst.handle.data.ptr, src.handle.data.ptr, n,
                            runtime.memcpyDeviceToDevice, self.stream.ptr)
        return None

    # ---- execution ---------------------------------------------------------------------------------
    def launch(self, kernel: Kernel, global_size: Size, local_size: Size | None, args: Sequence[KernelArg],
               offset: Size | None = None) -> Any:
        if offset is not None and any(offset):
            raise KernelLaunchError("CUDA has no global work offset; pass the offset as a kernel argument")
        self.check_usable()
        if local_size is None:
            local_size = tuple([min(256, int(global_size[0]))] + [1] * (len(global_size) - 1))
            global_size = tuple(-(-int(g) // int(l)) * int(l) for g, l in zip(global_size, local_size))
        check_ndrange(tuple(global_size), tuple(local_size), self.info.max_work_group_size)
        grid = tuple(int(g) // int(l) for g, l in zip(global_size, local_size))
        raw = [a.handle if isinstance(a, Buffer) else a for a in args]
        try:
            kernel.handle(grid, tuple(int(l) for l in local_size), tuple(raw), stream=self.stream)
        except Exception as exc:  # noqa: BLE001 - CUDADriverError: invalid configuration etc.
            if sticky(exc):  # an earlier kernel's fault reported at this launch: the context is gone
                self.abandon(f"a sticky CUDA error surfaced at the launch of {kernel.name!r}: {exc}")
            raise KernelLaunchError(f"launch of {kernel.name!r} grid={grid} block={local_size} rejected by "
                                    f"{self.info.spec}: {exc}") from exc
        return None

    supports_graphs = True

    def capture(self, enqueue: Callable[[], Any], what: str) -> Callable[[], Any]:
        """Capture on the device's stream (relaxed capture mode: the watchdog's and the observers' threads make
        no CUDA calls, but a global-mode capture would fail on any that did), upload the graph, and return a
        callable that launches it on the stream."""
        self.check_usable()
        self.synchronize()
        mode = getattr(runtime, "streamCaptureModeRelaxed", 2)
        self.stream.begin_capture(mode)
        try:
            enqueue()
        except BaseException:
            try:
                self.stream.end_capture()  # leave capture mode; the work's own error is the one to report
            except Exception:  # noqa: BLE001 - an invalidated capture
                pass
            raise
        try:
            graph = self.stream.end_capture()
        except Exception as exc:  # noqa: BLE001 - CUDARuntimeError: the capture was invalidated
            raise KernelLaunchError(f"capturing {what} into a CUDA graph failed on {self.info.spec}: {exc}") from exc
        upload = getattr(graph, "upload", None)
        if upload is not None:
            upload(self.stream)
        stream = self.stream
        return lambda: graph.launch(stream)

    def timed(self, enqueue: Callable[[], Any]) -> Any:
        """Record events around ``enqueue`` behind a blocking kernel released once all is enqueued."""
        self.check_usable()
        with self.unnoted():  # the timing path's own kernel, not one a figure measures
            blocker = self.compile(_BLOCKER, "gpuperf_block_stream")
        if self._flag is None:
            self._flag_mem = cupy.cuda.alloc_pinned_memory(4)
            self._flag = np.frombuffer(self._flag_mem, dtype=np.int32, count=1)
        self._flag[0] = 0
        blocker.handle((1,), (1,), (np.uint64(self._flag_mem.ptr), np.uint64(_BLOCK_LIMIT_NS)), stream=self.stream)
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record(self.stream)
        try:
            enqueue()
        finally:
            end.record(self.stream)
            self._flag[0] = 1
        return (start, end)

    def elapsed(self, handle: Any, timeout_s: float) -> float:
        self.check_usable()
        start, end = handle
        self._wait(end, timeout_s)
        return cupy.cuda.get_elapsed_time(start, end) * 1e-3

    def synchronize(self, timeout_s: float | None = None) -> None:
        """An event behind everything on the stream, polled under the watchdog (``--gpuperf-timeout``
        unless the caller names a limit); never ``stream.synchronize()``, which blocks in C."""
        self.check_usable()
        ev = cupy.cuda.Event()
        ev.record(self.stream)
        self._wait(ev, self.limit(timeout_s))

    def _wait(self, event: Any, timeout_s: float) -> None:
        """Poll the event under the watchdog (:meth:`Device.watch`, which abandons the device on a hang).
        A fault surfacing at the wait (illegal address, launch failure) is sticky: the CUDA context is
        unusable for the rest of the process, so the device is abandoned too and later tests on it skip
        while the session goes on with the other devices. (Written with care, not run: this machine has no
        CUDA GPU; the OpenCL path is the one the tests exercise.)"""
        try:
            self.watch(lambda: event.done, timeout_s)
            event.synchronize()
        except ProbeTimeoutError:
            raise
        except Exception as exc:  # noqa: BLE001 - CUDARuntimeError: illegal address, etc.
            message = f"kernel fault on {self.info.spec}: {exc}. The CUDA context is now unusable"
            self.abandon(message)
            raise KernelLaunchError(message + "; later tests on this device are skipped.") from exc


UUID_BYTES = 16


def whole_uuid(props: dict[str, Any]) -> dict[str, Any]:
    """``props`` (CuPy's ``getDeviceProperties``) with its ``uuid`` 16 bytes long. CuPy reads the card's
    16-byte UUID as a C string, so it ends at the UUID's first zero byte: on a card whose UUID holds one,
    Kernel Tuner's CuPy backend (which builds ``uuid.UUID`` from it) fails before it tunes anything. The
    bytes after the cut are unknown there, so they read zero; Kernel Tuner only records the UUID."""
    raw = props.get("uuid")
    if not isinstance(raw, (bytes, bytearray)) or len(raw) >= UUID_BYTES:
        return props
    return {**props, "uuid": bytes(raw).ljust(UUID_BYTES, b"\0")}


@contextlib.contextmanager
def uuid_read_whole() -> Iterator[None]:
    """Inside, CuPy's ``runtime.getDeviceProperties`` answers with :func:`whole_uuid`'s properties (for
    Kernel Tuner's CuPy backend); outside, CuPy's own function again."""
    _load()
    api = runtime
    if api is None:  # no CuPy: nothing a library could read through it
        yield
        return
    own = api.getDeviceProperties
    api.getDeviceProperties = lambda device: whole_uuid(own(device))
    try:
        yield
    finally:
        api.getDeviceProperties = own


BACKEND = register(Backend(
    name="cuda", label="CUDA", dialect=CUDA, list_devices=list_devices, open=CudaDevice,
    timer_resolution_s=0.5e-6,  # cudaEventElapsedTime's documented resolution (about 0.5 µs)
    has_sass=True, has_ncu=True, gpus_only=True, l2_bytes_reliable=True, work_item_caps=(1024, 1024),
    library_calls_mended=uuid_read_whole,
))
