"""A card whose UUID holds a zero byte: CuPy cuts its UUID there, and Kernel Tuner's CuPy backend must still run."""

from __future__ import annotations

import uuid

import pytest

from pytest_gpuperf.devices import backend_registry, cuda

# a UUID with a zero byte (the fourth), as an H100's read ``GPU-8face100-…``: CuPy returns its first 3 bytes
WHOLE = uuid.UUID("8face100-b047-ae36-218e-bf7a95e31c23").bytes


def test_a_uuid_cut_at_its_zero_byte_is_made_whole_for_uuid_UUID() -> None:
    cut = WHOLE[:WHOLE.index(0)]
    assert len(cut) == 3
    with pytest.raises(ValueError, match="16-char"):  # what Kernel Tuner's CuPy backend runs into
        uuid.UUID(bytes=cut)
    props = cuda.whole_uuid({"uuid": cut, "name": b"NVIDIA H100 80GB HBM3"})
    made = uuid.UUID(bytes=props["uuid"])
    assert props["uuid"][:4] == WHOLE[:4] and len(props["uuid"]) == 16
    assert str(made).startswith("8face100-")
    assert props["name"] == b"NVIDIA H100 80GB HBM3"


def test_a_whole_uuid_and_other_properties_are_left_as_they_are() -> None:
    props = {"uuid": WHOLE, "totalGlobalMem": 1}
    assert cuda.whole_uuid(props) is props
    assert cuda.whole_uuid({"name": b"x"}) == {"name": b"x"}


def test_kernel_tuner_runs_on_cuda_inside_the_mend_and_opencl_needs_none() -> None:
    assert backend_registry.backend("cuda").library_calls_mended is cuda.uuid_read_whole
    with backend_registry.backend("opencl").library_calls_mended():
        pass


def test_the_mend_answers_through_cupy_and_restores_it() -> None:
    runtime = pytest.importorskip("cupy.cuda.runtime", reason="CuPy is not installed on this machine")
    own = runtime.getDeviceProperties
    with cuda.uuid_read_whole():
        assert runtime.getDeviceProperties is not own
        if runtime.getDeviceCount() > 0:
            assert len(runtime.getDeviceProperties(0)["uuid"]) == 16
    assert runtime.getDeviceProperties is own
