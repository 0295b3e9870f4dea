"""One child process of a command that runs others (``gpuperf baseline init``'s and ``gatecheck``'s pytest runs),
stopped the way the child itself handles a stop: a Ctrl-C or SIGTERM of the parent is passed on as SIGINT and
waited for, so the child ends as interrupted and writes what finished. A batch system's TERM may reach the
parent alone, and a child killed outright loses its results."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import IO, Any, Callable, Sequence

#: seconds a child is given to end as interrupted, once the stop is passed on, before it is killed
STOP_WAIT_S = 60.0


def run_child(cmd: Sequence[str], out: IO[Any], cwd: str | Path, *, env: dict[str, str] | None = None,
              timeout_s: float | None = None, checkpoint: Callable[[], None] = lambda: None) -> int | None:
    """``cmd``'s exit status, its output to ``out``; None where it ran past ``timeout_s`` and was killed.
    ``checkpoint`` is called first: it raises ``KeyboardInterrupt`` where a stop came and was swallowed since
    (:meth:`pytest_gpuperf.util.interrupt_latch.Latch.check`), so no child starts after one. A stop while the child
    runs (``KeyboardInterrupt``) is passed on to it as SIGINT, waited for (:data:`STOP_WAIT_S`), then raised again."""
    checkpoint()
    proc = subprocess.Popen(list(cmd), stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env)
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:  # what it wrote before stays
        proc.kill()
        proc.wait()
        return None
    except KeyboardInterrupt:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # where it had the same Ctrl-C, its latch takes this one as the echo
            try:
                proc.wait(timeout=STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        raise
