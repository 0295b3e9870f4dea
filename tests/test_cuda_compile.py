"""The CUDA side of kernels no GPU has run yet compiles (NVRTC, no GPU needed): the precision
templates, LU/refinement, VPREC and quantization kernels (``scripts/cuda_compile_check.py``). CI installs
NVRTC into a folder of its own and names it in ``GPUPERF_NVRTC_DIR``; the check runs in a subprocess so
no other test sees that library."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from nvrtc_support import nvrtc_env

ROOT = Path(__file__).resolve().parents[1]


def test_not_yet_run_cuda_kernels_compile_with_nvrtc():
    env = nvrtc_env()
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "cuda_compile_check.py")], capture_output=True,
                         text=True, env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert " 0 failed" in out.stdout, out.stdout
