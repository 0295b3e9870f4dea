"""Device discovery and the ``--gpuperf-device`` grammar.

``0`` (first device, CUDA preferred) · ``cuda:N`` · ``opencl:N`` (flat over all OpenCL platforms, GPUs before CPUs) ·
``all`` (every device found) · a comma-separated list of those.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import BackendUnavailableError, DeviceNotFoundError
from .base import Buffer, Device, DeviceInfo, Kernel, check_ndrange, ndrange, slugify
from .backend_registry import backend, backends, names

__all__ = ["Buffer", "Device", "DeviceInfo", "Kernel", "Inventory", "discover", "open_device", "resolve",
           "check_ndrange", "ndrange", "slugify"]

#: the backends' names, in the order ``0`` prefers their devices (:mod:`.backend_registry`)
BACKENDS = names()


@dataclass
class Inventory:
    """Every device this machine offers, plus why a backend offers none."""

    devices: list[DeviceInfo]
    unavailable: dict[str, str]

    def describe(self) -> str:
        lines = [f"  {d.spec:<10} {d.name}  [{d.key}]  driver {d.driver_version}" for d in self.devices]
        lines += [f"  {b:<10} unavailable: {why}" for b, why in self.unavailable.items()]
        lines += [f"  {'opencl':<10} {hint}" for hint in self.hints()]
        return "\n".join(lines) if lines else "  (none)"

    def hints(self) -> list[str]:
        """What a user likely expected but cannot use: CUDA sees an NVIDIA GPU that no OpenCL platform of
        this Python offers (``opencl:N`` would then name another device, PoCL's CPU for instance)."""
        if "opencl" in self.unavailable:
            return []
        nvidia_cl = {d.name for d in self.devices if d.backend == "opencl" and d.vendor.upper().startswith("NVIDIA")}
        unseen = sorted({d.name for d in self.devices if d.backend == "cuda"} - nvidia_cl)
        if not unseen:
            return []
        return [f"no OpenCL platform offers {', '.join(unseen)}: this Python's OpenCL loader may read ICD files "
                "only, not OCL_ICD_FILENAMES; register NVIDIA's with "
                "`echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd`, or in a folder named by OCL_ICD_VENDORS"]


def discover() -> Inventory:
    """List devices of every backend; a backend that cannot be used records its reason instead."""
    found: list[DeviceInfo] = []
    unavailable: dict[str, str] = {}
    for b in backends():
        try:
            devs = b.list_devices()
        except BackendUnavailableError as exc:
            unavailable[b.name] = exc.reason
            continue
        if not devs:
            unavailable[b.name] = "the backend works but reports no devices"
        found += devs
    return Inventory(found, unavailable)


def resolve(spec: str, inventory: Inventory) -> list[DeviceInfo]:
    """Turn a ``--gpuperf-device`` value into device identities, or raise with the list of real ones."""
    chosen: list[DeviceInfo] = []
    for part in [p.strip() for p in str(spec).split(",") if p.strip()]:
        chosen += _resolve_one(part.lower(), inventory)
    if not chosen:
        raise DeviceNotFoundError(_unknown(spec, inventory))
    unique = {d.spec: d for d in chosen}
    return list(unique.values())


def _resolve_one(part: str, inv: Inventory) -> list[DeviceInfo]:
    if part == "all":
        return list(inv.devices)
    if part.isdigit():
        n = int(part)
        ordered = sorted(inv.devices, key=lambda d: BACKENDS.index(d.backend))  # stable: each backend's order
        if n < len(ordered):
            return [ordered[n]]
        raise DeviceNotFoundError(_unknown(part, inv))
    backend, sep, idx = part.partition(":")
    if sep and backend in BACKENDS and idx.isdigit():
        for d in inv.devices:
            if d.backend == backend and d.index == int(idx):
                return [d]
    raise DeviceNotFoundError(_unknown(part, inv))


def _unknown(value: str, inv: Inventory) -> str:
    forms = ", ".join(f"{n}:N" for n in BACKENDS)
    return (f"--gpuperf-device={value!r} names no device on this machine. Use 0, {forms} or all. "
            f"Devices found:\n{inv.describe()}")


def open_device(info: DeviceInfo) -> Device:
    """Create the backend object (context, queue/stream) for one discovered device."""
    if info.backend not in BACKENDS:
        raise DeviceNotFoundError(f"unknown backend {info.backend!r}")
    return backend(info.backend).open(info.index)
