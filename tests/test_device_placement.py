"""Where the measuring process sits beside the device: read from this host's own sysfs (whatever NUMA layout
it has) and from a sysfs tree laid out as a two-socket GPU host's, for the device's node and local CPUs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_gpuperf.devices.placement import _cpulist, cpu_node, device_placement, sysfs_pci_address


def test_pci_addresses_read_as_sysfs_names_them():
    assert sysfs_pci_address("00000000:1B:00.0") == "0000:1b:00.0"
    assert sysfs_pci_address("0000:C1:00.0") == "0000:c1:00.0"
    with pytest.raises(ValueError, match="not a PCI address"):
        sysfs_pci_address("GPU-1234")


def test_cpu_lists_expand():
    assert _cpulist("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert _cpulist("\n") == []


def test_this_host_placement_names_the_cpus_the_process_may_use():
    got = device_placement(None)
    assert got["cpus_allowed"] == len(os.sched_getaffinity(0)) > 0
    assert "device_numa_node" not in got  # no PCI address: nothing said about a device


def _two_socket_host(root: Path, cpus_per_node: int) -> None:
    for node in (0, 1):
        for k in range(cpus_per_node):
            cpu = node * cpus_per_node + k
            (root / "devices/system/cpu" / f"cpu{cpu}" / f"node{node}").mkdir(parents=True)
    dev = root / "bus/pci/devices/0000:1b:00.0"
    dev.mkdir(parents=True)
    (dev / "numa_node").write_text("1\n")
    (dev / "local_cpulist").write_text(f"{cpus_per_node}-{2 * cpus_per_node - 1}\n")


def test_a_device_on_the_other_socket_is_named(tmp_path):
    allowed = sorted(os.sched_getaffinity(0))
    per_node = max(allowed) + 1  # every CPU this process may use sits on node 0 of the laid-out host
    _two_socket_host(tmp_path, per_node)
    got = device_placement("00000000:1B:00.0", root=tmp_path)
    assert got["numa_nodes_allowed"] == [0] and got["numa_node_running"] == 0
    assert got["device_numa_node"] == 1 and got["device_local_cpus"] == per_node
    assert got["bound_to_device_cpus"] is False
    assert cpu_node(per_node, tmp_path) == 1
