"""Where the measuring process sits relative to the device: the NUMA node of the CPU it runs on, the CPUs
it may run on, and the device's own NUMA node and local CPUs (Linux sysfs).

On a multi-socket host a GPU hangs off one socket. A process on the other socket reaches the device's
stream commands, pinned buffers and doorbells across the sockets' link, which adds to every launch the
device fetches from host memory; HPC launchers bind each rank to its GPU's local CPUs for that reason.
Launch figures record this placement so a reading can be told apart by it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import psutil

SYSFS = Path("/sys")


def _cpulist(text: str) -> list[int]:
    """CPUs of a sysfs list such as ``0-15,32-47`` (empty for an empty list)."""
    out: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def sysfs_pci_address(pci_bus_id: str) -> str:
    """A PCI address as sysfs names it (``0000:1b:00.0``) from CUDA's or NVML's form (``00000000:1B:00.0``)."""
    domain, _, rest = pci_bus_id.strip().partition(":")
    if not rest:
        raise ValueError(f"{pci_bus_id!r} is not a PCI address of the form DOMAIN:BUS:DEVICE.FUNCTION")
    return f"{int(domain, 16):04x}:{rest.lower()}"


def cpu_node(cpu: int, root: Path = SYSFS) -> int | None:
    """The NUMA node of one CPU (None where sysfs shows no node, as on a single-node host without NUMA)."""
    nodes = sorted((root / "devices/system/cpu" / f"cpu{cpu}").glob("node[0-9]*"))
    return int(nodes[0].name[4:]) if nodes else None


def device_placement(pci_bus_id: str | None, root: Path = SYSFS) -> dict[str, Any]:
    """The process's CPUs and NUMA nodes beside the device's NUMA node and local CPUs; keys whose source is
    missing (no PCI address, no sysfs entry) are left out."""
    allowed = sorted(os.sched_getaffinity(0))
    nodes = sorted({n for n in (cpu_node(c, root) for c in allowed) if n is not None})
    out: dict[str, Any] = {"cpus_allowed": len(allowed), "numa_nodes_allowed": nodes}
    running = psutil.Process().cpu_num()
    node = cpu_node(running, root)
    if node is not None:
        out["numa_node_running"] = node
    if pci_bus_id:
        dev = root / "bus/pci/devices" / sysfs_pci_address(pci_bus_id)
        try:
            out["device_numa_node"] = int((dev / "numa_node").read_text())
            local = _cpulist((dev / "local_cpulist").read_text())
            out["device_local_cpus"] = len(local)
            out["bound_to_device_cpus"] = set(allowed) <= set(local)
        except (OSError, ValueError):
            pass
    return out
