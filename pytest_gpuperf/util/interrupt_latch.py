"""A Ctrl-C that third-party code swallows still ends the run.

Python raises ``KeyboardInterrupt`` wherever the main thread happens to be when SIGINT arrives. Code the
suites call may catch it: Kernel Tuner, for one, wraps its host queries (``lshw``, ``nvidia-smi``
subprocesses) in a bare ``except:``, so a Ctrl-C or a batch system's signal that lands there is lost and
the run goes on to the end. The latch wraps the SIGINT handler: it remembers that the signal came and
then lets the previous handler act as before; :meth:`Latch.check` raises ``KeyboardInterrupt`` again at the
next safe point (the end of a test) when the first one was swallowed.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any


class Latch:
    """Remembers a SIGINT for the rest of the session (see the module text)."""

    def __init__(self) -> None:
        self.fired = False
        self._previous: Any = None
        self._installed = False

    def install(self) -> bool:
        """Wrap the current SIGINT handler; False where signals cannot be handled (not the main thread)."""
        if threading.current_thread() is not threading.main_thread():
            return False
        self._previous = signal.getsignal(signal.SIGINT)
        signal.signal(signal.SIGINT, self._handle)
        self._installed = True
        return True

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.fired = True
        previous = self._previous
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` if a SIGINT came (the one that came was swallowed somewhere)."""
        if self.fired:
            raise KeyboardInterrupt

    def uninstall(self) -> None:
        """Put the previous handler back, where ours is still the one installed."""
        if self._installed and signal.getsignal(signal.SIGINT) == self._handle:
            signal.signal(signal.SIGINT, self._previous if self._previous is not None else signal.default_int_handler)
        self._installed = False
