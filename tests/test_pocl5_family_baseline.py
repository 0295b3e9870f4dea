"""The shipped CPU family baseline of PoCL 5.0 (Ubuntu 24.04's runtime, LLVM 16): it validates, it holds only
the deterministic figures a family file may share, and its key is the one a PoCL 5.0 device asks for, read from
the device description a real PoCL 5.0 run recorded (no OpenCL device needed: the description is saved)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pytest_gpuperf.baselines import baseline_file, lookup, noise
from pytest_gpuperf.devices.base import DeviceInfo
from pytest_gpuperf.paths import REVIEWED_BASELINES
from pytest_gpuperf.util import jsonio

ROOT = Path(__file__).resolve().parents[1]
FAMILY = "pocl-5-0-debian-llvm-16-0-6-cpu"
#: a complete default run of the suites on PoCL 5.0 (one of those the family file was made from)
RUN = ROOT / "results" / "pocl-cpu-skylake-avx512-amd-epyc" / "pocl5-1-opencl.json.xz"


def _device(path: Path) -> DeviceInfo:
    """The DeviceInfo a results file's ``device`` section describes (its recorded fields, nothing added)."""
    recorded = jsonio.read_json(path)["device"]
    fields = {f.name for f in dataclasses.fields(DeviceInfo)}
    return DeviceInfo(**{k: v for k, v in recorded.items() if k in fields})


def test_the_pocl5_device_asks_for_the_shipped_family_file():
    info = _device(RUN)
    assert "PoCL 5.0" in info.runtime_version and info.is_cpu
    assert info.family_key == FAMILY
    # the other PoCL's family stays apart: its figures come from another math library and compiler
    assert info.family_key != "pocl-3-1-debian-llvm-15-0-6-cpu"
    src = lookup.resolve(Path("/nonexistent-user-dir"), info.key, info.backend, info.family_key)
    assert src.origin == "family" and src.family_count > 200


def test_the_pocl5_family_file_validates_and_holds_only_deterministic_entries():
    path = baseline_file.path_for(REVIEWED_BASELINES, FAMILY)
    data = baseline_file.load_file(path).data  # raises, listing every problem, on a malformed file
    assert data["device"]["key"] == FAMILY and baseline_file.recorded_class(data) == "cpu"
    metrics = data["backends"]["opencl"]["metrics"]
    assert len(metrics) > 200
    timed = [n for n, e in metrics.items() if not noise.is_deterministic(e, n)]
    assert not timed, f"timing figures in a family file: {timed[:5]}"
    assert "PoCL 5.0" in data["backends"]["opencl"]["provenance"]["runtime"]
