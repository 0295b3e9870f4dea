"""The interrupt latch (:mod:`pytest_gpuperf.util.interrupt_latch`) in a process of its own, with real signals."""

from __future__ import annotations

import subprocess
import sys

CHILD = """
import os, signal, time
from pytest_gpuperf.util.interrupt_latch import ECHO_S, Latch
latch = Latch()
latch.install()
try:
    os.kill(os.getpid(), signal.{stop})
    time.sleep(5)
except KeyboardInterrupt:
    print("stopped by", latch.what, flush=True)
latch.uninstall()
{after}
print("ended on its own", flush=True)
"""


def _child(stop: str, after: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CHILD.format(stop=stop, after=after)], capture_output=True,
                          text=True, timeout=60)


def test_the_same_stop_told_again_after_the_session_does_not_kill_the_process():
    """A batch system's SIGTERM stops the run; the job script forwards it, and on a loaded host the copy may land
    after the latch was taken down (the session's end), later than the echo window: it must not kill the process
    in its last steps (its status would read as killed, not interrupted)."""
    p = _child("SIGTERM", "time.sleep(ECHO_S + 0.5); os.kill(os.getpid(), signal.SIGTERM); time.sleep(0.5)")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["stopped by SIGTERM", "ended on its own"]


def test_a_sigterm_after_a_ctrl_c_is_a_new_stop():
    """Only a SIGTERM stop is kept: after a Ctrl-C, a later SIGTERM is a new request and acts as before."""
    p = _child("SIGINT", "os.kill(os.getpid(), signal.SIGTERM); time.sleep(2)")
    assert p.returncode == -15 and p.stdout.splitlines() == ["stopped by Ctrl-C"], (p.returncode, p.stdout, p.stderr)
