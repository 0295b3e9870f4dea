"""A Ctrl-C that third-party code swallows still ends the run, and a SIGTERM ends it the same way.

Python raises ``KeyboardInterrupt`` wherever the main thread happens to be when SIGINT arrives. Code the
suites call may catch it: Kernel Tuner, for one, wraps its host queries (``lshw``, ``nvidia-smi``
subprocesses) in a bare ``except:``, so a Ctrl-C or a batch system's signal that lands there is lost and
the run goes on to the end. The latch wraps the SIGINT handler: it remembers that the signal came and
then lets the previous handler act as before; :meth:`Latch.check` raises ``KeyboardInterrupt`` again at the
next safe point (the end of a test) when the first one was swallowed.

SIGTERM — what a batch system sends at a time limit, to every process of the job, before its SIGKILL —
would end the process at once, with no results and no history line. The latch handles it as SIGINT:
the run ends as interrupted and writes what finished. One stop is often told twice at once (Slurm
signals the whole job and ``run.sh`` forwards it to pytest): a signal within :data:`ECHO_S` of the
previous one is that same stop, remembered and not raised again, so it cannot land in the handling of
the first one.
"""

from __future__ import annotations

import signal
import threading
import time
from types import FrameType
from typing import Any

#: the signals that end a run as interrupted
SIGNALS = (signal.SIGINT, signal.SIGTERM)

#: seconds within which a second signal is the same stop told twice (a job signalled, then forwarded)
ECHO_S = 2.0


def hold(held: list[int]) -> dict[int, Any]:
    """Until :func:`release`, every signal of :data:`SIGNALS` is appended to ``held`` instead of acting
    (a write that must complete first); returns the handlers to put back. Main thread only."""
    previous = {sig: signal.getsignal(sig) for sig in SIGNALS}
    for sig in SIGNALS:
        signal.signal(sig, lambda signum, frame: held.append(signum))
    return previous


def release(previous: dict[int, Any]) -> None:
    """Put back the handlers :func:`hold` replaced."""
    for sig, handler in previous.items():
        fallback = signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL
        signal.signal(sig, handler if handler is not None else fallback)


class Latch:
    """Remembers a SIGINT or SIGTERM for the rest of the session (see the module text)."""

    def __init__(self) -> None:
        self.fired = False
        #: the signal that stopped the run, as a user would name it ("Ctrl-C", "SIGTERM")
        self.what = "Ctrl-C"
        self._previous: Any = None
        self._previous_term: Any = None
        self._installed = False
        self._last = float("-inf")

    def install(self) -> bool:
        """Wrap the current SIGINT handler and handle SIGTERM as SIGINT; False where signals cannot be
        handled (not the main thread)."""
        if threading.current_thread() is not threading.main_thread():
            return False
        self._previous = signal.getsignal(signal.SIGINT)
        self._previous_term = signal.getsignal(signal.SIGTERM)
        signal.signal(signal.SIGINT, self._handle)
        signal.signal(signal.SIGTERM, self._handle)
        self._installed = True
        return True

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        now = time.monotonic()
        echo = self.fired and now - self._last < ECHO_S
        if not self.fired:
            self.what = "SIGTERM" if signum == signal.SIGTERM else "Ctrl-C"
        self.fired = True
        self._last = now
        if echo:
            return
        previous = self._previous
        if callable(previous):
            previous(signal.SIGINT, frame)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt

    def reassert(self) -> None:
        """Install our handlers again where Python still holds them as the SIGINT and SIGTERM handlers: native code
        can replace them underneath Python, which does not notice (``signal.getsignal`` answers from its own record).
        LLVM inside PoCL does, when the OpenCL devices are first listed; its handler resets the signal to the default
        action as it is delivered (``SA_RESETHAND``) until it has put the previous one back, so a second SIGTERM at
        that moment (the job's, with ``run.sh`` forwarding its own) kills the process with nothing written. Called at
        each test's start and after each of its phases; one ``sigaction`` a signal, main thread only."""
        if not self._installed or threading.current_thread() is not threading.main_thread():
            return
        for sig in SIGNALS:
            if signal.getsignal(sig) == self._handle:
                signal.signal(sig, self._handle)

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` if a SIGINT came (the one that came was swallowed somewhere)."""
        if self.fired:
            raise KeyboardInterrupt

    def uninstall(self) -> None:
        """Put the previous handlers back, where ours are still the ones installed. After a SIGTERM, SIGTERM stays
        ignored: the stop it told is under way and what finished is written, and the same stop told again later
        (``run.sh`` forwards the job's signal; on a loaded host it may land after the session's end) would
        otherwise kill the process in its last steps and turn its interrupted status into a kill by signal."""
        if self._installed and signal.getsignal(signal.SIGINT) == self._handle:
            signal.signal(signal.SIGINT, self._previous if self._previous is not None else signal.default_int_handler)
        if self._installed and signal.getsignal(signal.SIGTERM) == self._handle:
            after = signal.SIG_IGN if self.fired and self.what == "SIGTERM" else self._previous_term
            signal.signal(signal.SIGTERM, after if after is not None else signal.SIG_DFL)
        self._installed = False
