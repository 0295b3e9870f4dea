"""Which tests share a worker (issue 19): the scheduling scope of a test is its device's physical GPU.

The identities are plain DeviceInfo records (what discovery returns), so the CUDA/OpenCL case of one card
— which this machine cannot produce — is checked on the rule itself; the PoCL runs in
``test_fleet_xdist.py`` check the same rule on real workers.
"""

from __future__ import annotations

from pytest_gpuperf.devices import DeviceInfo
from pytest_gpuperf.fleet.identity import groups
from pytest_gpuperf.fleet.pinning import scope_of, scopes, split_scope


def _info(backend: str, index: int, pci: str | None = None) -> DeviceInfo:
    return DeviceInfo(backend=backend, index=index, name="NVIDIA H100 80GB HBM3", vendor="NVIDIA",
                      key="nvidia-h100-80gb-hbm3", extra={"pci_bus_id": pci} if pci else {})


def test_cuda_and_opencl_views_of_one_card_share_a_scope_and_cards_do_not():
    devices = [_info("cuda", 0, "00000000:1B:00.0"), _info("cuda", 1, "00000000:2C:00.0"),
               _info("opencl", 0, "0000:1b:00.0"), _info("opencl", 1, "0000:2c:00.0")]
    sc = scopes(devices)
    assert sc["cuda:0"] == sc["opencl:0"] != sc["cuda:1"] == sc["opencl:1"]
    assert len(groups(devices)) == 2  # -n auto: two workers for two cards, not four


def test_devices_without_a_pci_address_are_each_their_own_gpu():
    sc = scopes([_info("opencl", 0), _info("opencl", 1)])
    assert sc == {"opencl:0": "gpu:opencl:0", "opencl:1": "gpu:opencl:1"}


def test_scope_of_reads_the_device_out_of_any_position_of_the_parametrization():
    sc = {"opencl:0": "gpu:A", "opencl:1": "gpu:B"}
    assert scope_of("t.py::f[opencl:1]", sc) == "gpu:B"
    assert scope_of("t.py::f[opencl:0-1MiB]", sc) == "gpu:A"
    assert scope_of("t.py::C::f[64-opencl:1-fp32]", sc) == "gpu:B"
    assert scope_of("t.py::f[opencl:10]", sc) is None  # another device, not a prefix match
    assert scope_of("t.py::host_only", sc) is None


def test_under_loadgroup_a_group_is_one_scope_and_a_device_test_stays_on_its_gpu():
    """``--dist loadgroup``: the tests of an ``xdist_group`` share a scope (one worker runs them, as xdist's own
    scheduler does), a device test keeps its GPU's scope whatever group it is in, and other tests their own
    ids; without loadgroup an '@' names no group."""
    sc = {"opencl:0": "gpu:A", "opencl:1": "gpu:B"}
    assert split_scope("a.py::f@dash", sc, by_group=True) == split_scope("b.py::g[x]@dash", sc, by_group=True) == "dash"
    assert split_scope("a.py::f[opencl:1]@dash", sc, by_group=True) == "gpu:B"
    assert split_scope("a.py::f[opencl:0-1MiB]", sc, by_group=True) == "gpu:A"
    assert split_scope("a.py::f[user@host]", sc, by_group=True) == "a.py::f[user@host]"  # '@' in a parameter
    assert split_scope("a.py::f", sc, by_group=True) == "a.py::f"
    assert split_scope("a.py::f@dash", sc) == "a.py::f@dash"
    assert split_scope("a.py::f[opencl:1]", sc) == "gpu:B"
