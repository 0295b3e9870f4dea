"""The device listing names what a user likely expected but cannot use: an NVIDIA GPU that CUDA sees and
no OpenCL platform offers (on the H200 host of the saved runs, ``opencl:0`` was then PoCL on the host's
CPU). Built from the device sections of those saved runs."""

from __future__ import annotations

from pathlib import Path

from pytest_gpuperf.devices import Inventory
from pytest_gpuperf.devices.base import DeviceInfo
from pytest_gpuperf.util import jsonio

RESULTS = Path(__file__).resolve().parents[1] / "results"


def _device(path: str) -> DeviceInfo:
    """The ``device`` section of a saved results file, as the inventory holds it."""
    section = jsonio.read_json(RESULTS / path)["device"]  # whole, where it is stored as a delta
    fields = DeviceInfo.__dataclass_fields__
    return DeviceInfo(**{k: v for k, v in section.items() if k in fields})


CUDA = "nvidia-h200/gatecheck-adcb4e6/aa-1.json.xz"
NVIDIA_CL = "nvidia-h200/nvocl-5-opencl.json.xz"
POCL = "pocl-cpu-skylake-avx512-intel-r-xeon-r-processor/ocl-1-opencl.json.xz"


def test_a_gpu_cuda_sees_and_no_opencl_platform_offers_is_named_with_the_fix():
    listing = Inventory([_device(CUDA), _device(POCL)], {}).describe()
    assert "no OpenCL platform offers NVIDIA H200" in listing
    assert "/etc/OpenCL/vendors/nvidia.icd" in listing and "OCL_ICD_VENDORS" in listing


def test_no_hint_when_nvidia_opencl_offers_it_or_opencl_is_unavailable():
    assert Inventory([_device(CUDA), _device(POCL), _device(NVIDIA_CL)], {}).hints() == []
    assert Inventory([_device(CUDA)], {"opencl": "pyopencl is not installed"}).hints() == []
    assert Inventory([_device(POCL)], {"cuda": "no CuPy"}).hints() == []
