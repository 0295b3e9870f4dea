"""Resource usage of a compiled kernel, computed once per build. Reading it is device knowledge
(:meth:`pytest_gpuperf.devices.Device.kernel_resources`, :mod:`pytest_gpuperf.devices.resources`); this
module keeps the per-kernel cache the tuner relies on and the names the tuning modules import.
"""

from __future__ import annotations

from typing import Any

from ..devices.resources import Resources, log_registers, ptxas_registers

__all__ = ["Resources", "build_log", "driver_registers", "kernel_ptx", "log_registers", "ptxas_registers",
           "resources"]


def build_log(kernel: Any) -> str:
    """The build log of a compiled kernel ('' where there is none)."""
    return kernel.device.build_log(kernel)


def kernel_ptx(kernel: Any) -> str:
    """The PTX of a compiled kernel ('' where the device has none): :meth:`Device.kernel_ptx`."""
    return kernel.device.kernel_ptx(kernel)


def driver_registers(kernel: Any) -> int | None:
    """Registers per work-item from the driver's verbose build log (:meth:`Device.driver_registers`)."""
    return kernel.device.driver_registers(kernel)


def resources(kernel: Any) -> Resources:
    """Registers and shared/local memory of a compiled kernel, from the best source the backend offers.

    Computed once per compiled kernel and kept on it: :meth:`Device.compile` hands every configuration
    with the same source and options the same kernel, so ``ptxas -v`` / the ``-cl-nv-verbose`` build
    run once per build, not once per work-group size."""
    found = getattr(kernel, "_gpuperf_resources", None)
    if found is None:
        found = _resources(kernel)
        kernel._gpuperf_resources = found
    return found


def _resources(kernel: Any) -> Resources:
    return kernel.device.kernel_resources(kernel)
