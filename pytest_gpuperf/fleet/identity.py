"""Which devices are one physical GPU.

A card can appear twice in one host's inventory: as ``cuda:N`` and as ``opencl:M`` (NVIDIA's OpenCL).
Two pytest-xdist workers holding those two views would time on one card at the same time, so pinning
works on *physical* identities: the PCI address where the backend reports one (CUDA: the runtime's
``cudaDeviceGetPCIBusId``; NVIDIA OpenCL: ``CL_DEVICE_PCI_BUS_ID_NV``/``SLOT_ID_NV``/``DOMAIN_ID_NV``),
else the backend and index (PoCL's CPU devices, other vendors: each device its own unit).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from ..devices.base import DeviceInfo


def normalize_pci(bus_id: str) -> str | None:
    """``0000:3B:00.0`` / ``00000000:3b:00.0`` / ``3b:00`` → ``0000:3b:00`` (domain:bus:device, lower-case
    hex, the function dropped): CUDA and NVIDIA OpenCL spell the address differently; None when it is
    not a PCI address."""
    m = re.fullmatch(r"\s*(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})(?:\.[0-7])?\s*", str(bus_id))
    if not m:
        return None
    domain, bus, dev = m.group(1) or "0", m.group(2), m.group(3)
    return f"{int(domain, 16):04x}:{int(bus, 16):02x}:{int(dev, 16):02x}"


def physical_id(device: DeviceInfo | Mapping[str, Any]) -> str:
    """``pci:0000:3b:00`` where the backend reports the card's PCI address, else ``opencl:1``: the unit
    that one worker owns. Accepts a :class:`DeviceInfo` or a results file's ``device`` section."""
    if isinstance(device, DeviceInfo):
        extra, backend, index = device.extra, device.backend, device.index
    else:
        extra, backend, index = device.get("extra") or {}, device.get("backend"), device.get("index")
    pci = normalize_pci(extra.get("pci_bus_id", "")) if extra.get("pci_bus_id") else None
    return f"pci:{pci}" if pci else f"{backend}:{index}"


def groups(devices: Iterable[DeviceInfo]) -> dict[str, list[DeviceInfo]]:
    """Physical id → the device views of that GPU, in inventory order."""
    out: dict[str, list[DeviceInfo]] = {}
    for d in devices:
        out.setdefault(physical_id(d), []).append(d)
    return out
