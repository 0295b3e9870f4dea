"""A kernel that never finishes, on the real PoCL device, in a real pytest subprocess (issue 12).

Before the fix the test failed after the watchdog, every later test on the device failed with the
same message, and then the process never exited: ``OpenCLDevice.close()`` called ``queue.finish()``
behind the endless kernel, in C, where not even SIGINT reached it. Each case runs pytest in a
subprocess under a hard timeout, so a regression shows up as a failed test, not a hung CI job. The
watchdog is 1 s (each case waits it out once); the two-device case keeps 2 s, as the other device's
tests run beside the spinning kernel in PoCL's shared thread pool.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pytest_gpuperf.devices import discover
from suite_support import baseline_folder, finish_within

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not any(d.backend == "opencl" for d in discover().devices),
                                reason="no OpenCL device (install pocl-opencl-icd)")

#: one work-item spinning on a flag nobody sets: the kernel runs until the process dies
HUNG = textwrap.dedent('''
    import os
    from pathlib import Path
    import numpy as np

    SPIN = """__kernel void spin(__global volatile int *flag) { while (flag[0] == 0) { flag[1] += 1; } }"""

    def test_a_hung_kernel(gpu_device, gpu_kernel, gpu_measure):
        k = gpu_kernel.compile(SPIN, "spin")
        if gpu_device.info.index != int(os.environ.get("HUNG_INDEX", "0")):  # another device: a kernel that ends
            gpu_kernel.launch(k, (1,), (1,), [gpu_kernel.to_device(np.ones(4, np.int32))])
            return
        buf = gpu_kernel.to_device(np.zeros(4, np.int32))
        Path(os.environ["HUNG_STARTED"]).write_text("launched")
        gpu_measure(k, (1,), (1,), [buf], warmup=1, min_repeats=1)

    def test_a2_read_back_behind_a_hung_kernel(gpu_device, gpu_kernel):
        """Launched without waiting, then read back (the pattern of a check): the read must not block."""
        if os.environ.get("HUNG_READBACK") != "1":
            return
        k = gpu_kernel.compile(SPIN, "spin")
        buf = gpu_kernel.to_device(np.zeros(4, np.int32))
        gpu_kernel.launch(k, (1,), (1,), [buf], wait=False)
        Path(os.environ["HUNG_STARTED"]).write_text("launched")
        gpu_kernel.to_host(buf, np.int32)

    def test_b_later_on_the_same_device(gpu_device, gpu_kernel):
        gpu_kernel.to_host(gpu_kernel.to_device(np.zeros(4, np.int32)), np.int32)

    def test_c_host_only():
        pass
''')


#: a hung kernel queued without waiting; then a wait that names no limit (``QUEUED=sync``), or nothing:
#: the test returns and passes (``QUEUED=return``) — the hang is found when the session closes the device
QUEUED = textwrap.dedent('''
    import os
    import numpy as np

    SPIN = """__kernel void spin(__global volatile int *flag) { while (flag[0] == 0) { flag[1] += 1; } }"""

    def test_queue_a_hung_kernel(gpu_device, gpu_kernel):
        k = gpu_kernel.compile(SPIN, "spin")
        gpu_kernel.launch(k, (1,), (1,), [gpu_kernel.to_device(np.zeros(4, np.int32))], wait=False)
        if os.environ["QUEUED"] == "sync":
            gpu_device.synchronize()  # no limit named: --gpuperf-timeout, not a fixed minute

    def test_host_only():
        pass
''')


def _start(tmp_path: Path, *args: str, device: str = "opencl:0", project: str = HUNG,
           **env_extra: str) -> tuple[subprocess.Popen, Path]:
    (tmp_path / "test_hung.py").write_text(project)
    started = tmp_path / "started"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "HUNG_STARTED": str(started), **env_extra}
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--gpuperf-device={device}",
           f"--gpuperf-baseline-dir={baseline_folder(tmp_path, 'bl')}", "-rs", *args, "test_hung.py"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    return proc, started


def test_hung_kernel_fails_within_the_timeout_and_the_session_ends_with_a_summary(tmp_path):
    proc, _ = _start(tmp_path, "-q", "--gpuperf-timeout=1")
    t0 = time.monotonic()
    out = finish_within(proc, limit_s=90)
    elapsed = time.monotonic() - t0
    assert proc.returncode == 1, out
    assert "did not finish within 1 s" in out  # the failure details are printed, even with -q
    assert "opencl:0 abandoned earlier in this run" in out  # the later device test skips with the reason
    assert "gpuperf ABANDONED opencl:0" in out
    assert "1 failed, 1 passed, 2 skipped" in out  # the summary line, and the host-only test still ran
    assert elapsed < 60, f"took {elapsed:.0f} s"


def test_ctrl_c_during_a_hung_kernel_ends_the_session(tmp_path):
    proc, started = _start(tmp_path, "--gpuperf-timeout=300")
    deadline = time.monotonic() + 60
    while not started.exists():
        assert proc.poll() is None, proc.communicate()[0]
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail("the hung test never started")
        time.sleep(0.1)
    time.sleep(1.5)  # inside the watchdog's poll, far from its 300 s limit
    proc.send_signal(signal.SIGINT)
    out = finish_within(proc, limit_s=30)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    assert "KeyboardInterrupt" in out
    # the user stopped it: no hang is reported (nobody knows whether the kernel would have ended)
    assert "ABANDONED" not in out and "did not finish" not in out, out
    assert "gpuperf INTERRUPTED: Ctrl-C stopped the run" in out
    assert "opencl:0 still had work running and was not waited for" in out


def test_the_other_devices_go_on_after_one_hangs(tmp_path):
    """Two PoCL devices (``POCL_DEVICES="pthread pthread"``): the hang abandons opencl:0 only; every test
    on opencl:1 runs and passes."""
    proc, _ = _start(tmp_path, "-q", "--gpuperf-timeout=2", device="opencl:0,opencl:1",
                     POCL_DEVICES="pthread pthread")
    out = finish_within(proc, limit_s=120)
    assert proc.returncode == 1, out
    assert "1 failed, 4 passed, 2 skipped" in out, out
    assert "gpuperf ABANDONED opencl:0" in out and "ABANDONED opencl:1" not in out


def test_cuda_sticky_errors_are_told_from_rejected_launches():
    """The CUDA path cannot run here (no CUDA GPU); its one decision that needs no device is checked:
    which CUDA error codes poison the context (700 illegal address, 719 launch failure) and which
    merely reject one launch (9 invalid configuration, 1 invalid value)."""
    from pytest_gpuperf.devices.cuda import sticky

    class CudaError(Exception):
        def __init__(self, status: int) -> None:
            super().__init__(f"status {status}")
            self.status = status

    assert sticky(CudaError(700)) and sticky(CudaError(719)) and sticky(CudaError(710))
    assert not sticky(CudaError(9)) and not sticky(CudaError(1)) and not sticky(RuntimeError("no status"))


def test_read_back_behind_a_hung_kernel_fails_within_the_timeout(tmp_path):
    """A read-back queued behind a hung kernel was a blocking read in C: past the watchdog and Ctrl-C.
    It is now polled under ``--gpuperf-timeout`` like every other wait, and the session ends."""
    proc, _ = _start(tmp_path, "-q", "--gpuperf-timeout=1", "-k", "a2 or c_host", HUNG_READBACK="1")
    t0 = time.monotonic()
    out = finish_within(proc, limit_s=90)
    assert proc.returncode == 1, out
    assert "did not finish within 1 s" in out and "gpuperf ABANDONED opencl:0" in out
    assert "1 failed, 1 passed" in out
    assert time.monotonic() - t0 < 60



def test_a_run_stuck_after_abandoning_a_device_dumps_its_stacks_and_exits(tmp_path):
    """A run that abandoned a device leaves with ``os._exit`` once it has reported; should anything before that
    wait on the hung work for good (here the session's close, made to sleep forever after closing), faulthandler
    writes every thread's stack after ``plugin.EXIT_GRACE_S`` (1 s here) and ends the process with status 1."""
    (tmp_path / "stuck_close.py").write_text(textwrap.dedent("""
        import time

        import pytest_gpuperf.plugin as plugin
        from pytest_gpuperf.session import GpuPerfSession

        plugin.EXIT_GRACE_S = 1.0
        _close = GpuPerfSession.close


        def close_and_wait_forever(self, *args, **kwargs):
            _close(self, *args, **kwargs)
            time.sleep(3600)  # as a close waiting in C on work that never ends


        GpuPerfSession.close = close_and_wait_forever
    """))
    proc, _ = _start(tmp_path, "-q", "--gpuperf-timeout=1", "-p", "stuck_close", "-k", "a2 or c_host",
                     HUNG_READBACK="1")
    t0 = time.monotonic()
    out = finish_within(proc, limit_s=90)
    assert proc.returncode == 1, out
    # faulthandler's dump names where the process waited
    assert "Timeout (0:00:01)!" in out and "close_and_wait_forever" in out, out
    assert time.monotonic() - t0 < 60


def test_a_wait_without_a_limit_honours_the_timeout(tmp_path):
    """``Device.synchronize()`` with no argument behind a hung kernel: abandoned after
    ``--gpuperf-timeout=1``, not after the fixed 60 s it used to wait whatever the option said."""
    proc, _ = _start(tmp_path, "-q", "--gpuperf-timeout=1", project=QUEUED, QUEUED="sync")
    t0 = time.monotonic()
    out = finish_within(proc, limit_s=90)
    elapsed = time.monotonic() - t0
    assert proc.returncode == 1, out
    assert "did not finish within 1 s" in out and "gpuperf ABANDONED opencl:0" in out
    assert "1 failed, 1 passed" in out, out
    assert elapsed < 30, f"took {elapsed:.0f} s"


def test_a_hung_kernel_left_queued_by_a_passing_test_fails_the_run(tmp_path):
    """The test queues a hung kernel and returns, so it passes; the session finds the hang when it closes
    the device (within ``--gpuperf-timeout``), abandons it, and the run fails with lines that say why."""
    proc, _ = _start(tmp_path, "-q", "--gpuperf-timeout=1", project=QUEUED, QUEUED="return")
    t0 = time.monotonic()
    out = finish_within(proc, limit_s=90)
    elapsed = time.monotonic() - t0
    assert proc.returncode == 1, out
    assert "2 passed" in out, out
    assert ("gpuperf ABANDONED opencl:0: at the end of the run, work a test had queued without waiting for "
            "it was still running: device work on opencl:0 did not finish within 1 s") in out
    assert "opencl:0 abandoned (gpuperf ABANDONED above): the run fails although its tests passed" in out
    assert elapsed < 30, f"took {elapsed:.0f} s"


def test_cuda_waits_are_polled_under_the_device_timeout(monkeypatch):
    """The CUDA backend cannot run here (no CUDA GPU); its waits are checked against a stand-in for CuPy
    whose work never finishes and whose blocking waits fail the test if called: ``synchronize()`` with no
    argument, an upload and a read-back each end with the watchdog's error within the device's timeout
    (the session's ``--gpuperf-timeout``), never in ``stream.synchronize()`` or a blocking copy."""
    from contextlib import nullcontext
    from types import SimpleNamespace

    from pytest_gpuperf.devices import cuda
    from pytest_gpuperf.devices.base import Buffer, Device, DeviceInfo
    from pytest_gpuperf.errors import ProbeTimeoutError

    def blocking(*_: object, **__: object) -> None:
        raise AssertionError("a blocking CUDA wait was called")

    class Event:
        done = False  # the work before it never finishes (a hung kernel)

        def record(self, stream: object = None) -> None:
            pass

        synchronize = blocking

    class Stream(nullcontext):
        synchronize = blocking

    def empty(nbytes: int, dtype: object = None) -> SimpleNamespace:  # an allocation whose async copy queues
        return SimpleNamespace(nbytes=nbytes, data=SimpleNamespace(copy_from_host_async=lambda *_: None))

    fake = SimpleNamespace(cuda=SimpleNamespace(Event=Event), asnumpy=blocking, empty=empty, uint8=None)
    monkeypatch.setattr(cuda, "cupy", fake)

    def device() -> cuda.CudaDevice:
        dev = cuda.CudaDevice.__new__(cuda.CudaDevice)
        Device.__init__(dev)
        dev.info = DeviceInfo(backend="cuda", index=0, name="stand-in", vendor="none", key="stand-in")
        dev._dev, dev.stream = nullcontext(), Stream()
        dev.timeout_s = 0.3  # what the session sets from --gpuperf-timeout
        return dev

    import numpy as np

    for call in (lambda d: d.synchronize(), lambda d: d.to_device(np.zeros(4, np.int32)),
                 lambda d: d.to_host(Buffer(None, 16, d), np.int32)):
        dev = device()
        t0 = time.monotonic()
        with pytest.raises(ProbeTimeoutError, match="did not finish within 0.3 s"):
            call(dev)
        assert time.monotonic() - t0 < 5
        assert dev.abandoned is not None
