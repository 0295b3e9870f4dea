"""A device whose compiler cannot build a one-line kernel fails once, with the compiler's words, not once per test.

Seen with Ubuntu 22.04's PoCL 1.8 on an AMD EPYC host: its LLVM does not know the CPU, every build says
"unknown target CPU 'generic'", and a default run failed 244 tests with the same build error. The session now
builds one kernel when it opens a device (:meth:`Device.build_check`). These cases use the real PoCL device and
its real compiler; where a refusal is needed, the kernel handed to the check is one the compiler rejects.
"""

from __future__ import annotations

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
#: the subprocess hands the session's check the refused kernel (the check's own argument), nothing else changes
CONFTEST = textwrap.dedent(f'''
    from pytest_gpuperf.devices import base

    _check = base.Device.build_check
    base.Device.build_check = lambda self, source={REFUSED!r}: _check(self, source)
''')


def test_a_session_on_a_device_that_cannot_build_fails_once_and_skips_the_rest(tmp_path: Path):
    (tmp_path / "test_user.py").write_text(USER_TESTS)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", f"--rootdir={tmp_path}",
         f"--gpuperf-device={OPENCL[0].spec}", f"--gpuperf-baseline-dir={baseline_folder(tmp_path)}",
         f"--gpuperf-json={tmp_path / 'r.json'}",
         str(tmp_path / "test_user.py")],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    out = finish_within(proc, 120)
    assert proc.returncode != 0, out
    assert "1 error" in out and "2 skipped" in out, out  # the first test's device fixture fails, the rest skip
    assert out.count("cannot build a one-line kernel") >= 2, out  # the failure, then the skips' reason
    assert "no_such_variable" in out, out
    # its results file is written though nothing was measured, saying why the device was given up
    doc = jsonio.read_json(tmp_path / "r.json")
    assert doc["metrics"] == [] and "cannot build a one-line kernel" in doc["run"]["abandoned"]
    assert schemas.problems(doc, doc["schema"]) == []
