"""A device whose compiler cannot build a one-line kernel fails once, with the compiler's words, not once per test.

Seen with Ubuntu 22.04's PoCL 1.8 on an AMD EPYC host: its LLVM does not know the CPU, every build says
"unknown target CPU 'generic'", and a default run failed 244 tests with the same build error. The session now
builds one kernel when it opens a device (:meth:`Device.build_check`). These cases use the real PoCL device and
its real compiler. Where a refusal is needed: a kernel the compiler rejects handed to the check, or — for a whole
session, as on that host — PoCL told to pass every build a flag its compiler does not know
(``POCL_EXTRA_BUILD_FLAGS``), with an empty kernel cache, so every build fails for real.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_gpuperf.devices import discover, open_device
from pytest_gpuperf import schemas
from pytest_gpuperf.util import jsonio
from suite_support import baseline_folder, finish_within

OPENCL = [d for d in discover().devices if d.backend == "opencl"]
pytestmark = pytest.mark.skipif(not OPENCL, reason="no OpenCL device (install pocl-opencl-icd)")

#: a kernel the compiler refuses: it names a variable nothing declares
REFUSED = "__kernel void gpuperf_build_check(__global float* a) { a[0] = no_such_variable; }\n"


def test_a_working_device_builds_the_check_kernel_and_notes_nothing():
    device = open_device(OPENCL[0])
    try:
        assert device.build_check() is None
        assert not device.source_digests  # the check's kernel is no figure's source
    finally:
        device.close()


def test_a_refused_build_names_the_device_and_quotes_its_compiler():
    device = open_device(OPENCL[0])
    try:
        why = device.build_check(REFUSED)
    finally:
        device.close()
    assert why is not None and why.startswith(f"{OPENCL[0].spec} ({OPENCL[0].name};")
    assert "cannot build a one-line kernel" in why and "--gpuperf-device" in why
    assert "Its compiler says: use of undeclared identifier 'no_such_variable'." in why  # its error line, no wrapper


USER_TESTS = textwrap.dedent('''
    import numpy as np

    def test_one(gpu_device, gpu_kernel):
        gpu_kernel.to_host(gpu_kernel.to_device(np.zeros(4, np.float32)), np.float32)

    def test_two(gpu_device):
        pass

    def test_three(gpu_device):
        pass
''')
#: PoCL adds this to every build's options; its compiler refuses it, as that host's LLVM refused its CPU (and
#: PyOpenCL keeps no binary of an earlier build to hand it instead)
BROKEN_BUILD = {"POCL_EXTRA_BUILD_FLAGS": "-fno-such-flag", "PYOPENCL_NO_CACHE": "1"}


def test_a_compiler_that_refuses_every_build_is_quoted_without_the_binding_s_wrapper(tmp_path: Path):
    code = ("from pytest_gpuperf.devices import discover, open_device\n"
            "d = open_device([x for x in discover().devices if x.backend == 'opencl'][0])\n"
            "print(d.build_check())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, **BROKEN_BUILD, "POCL_CACHE_DIR": str(tmp_path / "pocl")})
    assert out.returncode == 0, out.stderr
    assert "Its compiler says: Invalid build option: -fno-such-flag." in out.stdout, out.stdout
    assert "clBuildProgram failed" not in out.stdout and "(options:" not in out.stdout


def test_a_session_on_a_device_that_cannot_build_fails_once_and_skips_the_rest(tmp_path: Path):
    (tmp_path / "test_user.py").write_text(USER_TESTS)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", f"--rootdir={tmp_path}",
         f"--gpuperf-device={OPENCL[0].spec}", f"--gpuperf-baseline-dir={baseline_folder(tmp_path)}",
         f"--gpuperf-json={tmp_path / 'r.json'}",
         str(tmp_path / "test_user.py")],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        env={**os.environ, **BROKEN_BUILD, "POCL_CACHE_DIR": str(tmp_path / "pocl")})
    out = finish_within(proc, 120)
    assert proc.returncode != 0, out
    assert "1 error" in out and "2 skipped" in out, out  # the first test's device fixture fails, the rest skip
    assert out.count("cannot build a one-line kernel") >= 2, out  # the failure, then the skips' reason
    assert "Invalid build option: -fno-such-flag" in out, out
    # its results file is written though nothing was measured, saying why the device was given up
    doc = jsonio.read_json(tmp_path / "r.json")
    assert doc["metrics"] == [] and "cannot build a one-line kernel" in doc["run"]["abandoned"]
    assert schemas.problems(doc, doc["schema"]) == []
