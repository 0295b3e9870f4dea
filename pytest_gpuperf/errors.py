"""Error types. Each message names the problem *and* the fix, because the person reading it
is usually a CI owner looking at a red job, not the author of the suite."""

from __future__ import annotations


class GpuPerfError(Exception):
    """Base class of every error the plugin raises on purpose."""


class DeviceNotFoundError(GpuPerfError):
    """A ``--gpuperf-device`` value names no device that exists on this machine."""


class BackendUnavailableError(GpuPerfError):
    """A backend (CUDA or OpenCL) cannot be used here; ``reason`` says why."""

    def __init__(self, backend: str, reason: str) -> None:
        super().__init__(f"{backend} backend unavailable: {reason}")
        self.backend = backend
        self.reason = reason


class KernelCompileError(GpuPerfError):
    """The device compiler rejected a kernel; the compiler log is carried verbatim."""

    def __init__(self, name: str, backend: str, options: tuple[str, ...], log: str, prelude_lines: int = 0) -> None:
        opts = " ".join(options) or "(none)"
        where = (f" Its line numbers count the {prelude_lines} lines of the language prelude put before your kernel: "
                 f"the compiler's line L is your line L − {prelude_lines}.") if prelude_lines else ""
        super().__init__(
            f"kernel {name!r} failed to compile for {backend} with options {opts}:\n{log.strip()}\n"
            f"Fix the kernel source or options; the log above is the compiler's own.{where}"
        )
        self.log = log


class KernelLaunchError(GpuPerfError):
    """A launch was rejected (bad sizes, bad arguments) or the kernel faulted while running."""


class ProbeVerificationError(GpuPerfError):
    """The compiled code does not contain the instruction chain the probe claims to time (or its machine
    code cannot be read, so the claim cannot be proven)."""


class ProbeTimeoutError(GpuPerfError):
    """A measurement did not finish within the watchdog limit (a hang or a far too large problem)."""


class DeviceAbandonedError(GpuPerfError):
    """The device was given up on earlier in this run (a kernel hung past the watchdog or faulted with a
    sticky error): its queue/stream still holds that work, so nothing more is put on it and nothing waits
    for it — waiting would block the process forever and Ctrl-C with it."""


class BaselineFileError(GpuPerfError):
    """A baseline file is unreadable or does not follow the schema."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(
            f"malformed baseline file {path}: {problem}. Fix the file by hand, or move it aside "
            "and regenerate it with --gpuperf-update-baselines; it is never overwritten while malformed."
        )
        self.path = path
        self.problem = problem
        self.problems: list[str] = [problem]  # every problem, when the file has several


class ImpossibleValueError(GpuPerfError):
    """A measured value that cannot be physical (negative latency, bandwidth above peak, a timed span
    below the timer's resolution): an error in the measurement, never a verdict."""


class UnsupportedDevice(GpuPerfError):
    """A model needs device knowledge this project does not have (an SM table entry for a compute
    capability, an SM model for a non-NVIDIA GPU). Raised instead of silently borrowing another
    device's numbers; ``reason`` names what is missing and where to add it."""

    def __init__(self, device: str, reason: str) -> None:
        super().__init__(f"unsupported device {device}: {reason}")
        self.device = device
        self.reason = reason
