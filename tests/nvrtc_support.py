"""The NVRTC of ``GPUPERF_NVRTC_DIR`` for the tests that compile CUDA text without a GPU (.ci/run installs
it into a folder of its own, so no other test loads that library)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def nvrtc_env() -> dict[str, str]:
    """The environment of a subprocess that imports the project with NVRTC on its path; skips the test
    with the way to install it where it is missing."""
    folder = os.environ.get("GPUPERF_NVRTC_DIR")
    if not folder or not list(Path(folder).glob("nvidia/*/lib/libnvrtc.so*")):
        pytest.skip("NVRTC is not installed for this check: pip install --target DIR 'nvidia-cuda-nvrtc==13.0.*' "
                    "and set GPUPERF_NVRTC_DIR=DIR (.ci/run does)")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([folder, str(ROOT), os.environ.get("PYTHONPATH", "")])}
