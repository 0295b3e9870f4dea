"""The run's outcome: its exit status and why, decided in one place from what the session found.

A run starts from pytest's own status (0 every test passed, 1 a test failed, 2 interrupted, ...). gpuperf then
settles its reasons in a fixed order, each one able to override the ones before it:

1. the end-of-run writes failed (a baseline, the results, the history): 1;
2. a baseline metric a passed test no longer records: 1;
3. a CPU device's host busy with other work through more than a tenth of its metrics:
   :data:`~pytest_gpuperf.exits.HOST_TOO_BUSY` — only where nothing else failed (what the run could judge
   is a finding whatever the load);
4. a card that throttled through more than a tenth of its metrics: :data:`~pytest_gpuperf.exits.THROTTLED`;
5. a card shared with another process through more than a tenth: :data:`~pytest_gpuperf.exits.GPU_TOO_BUSY`
   (another process on the card can make it throttle, so the shared card's status wins over the throttle's);
6. ``--gpuperf-require-baseline`` and a device without one: :data:`~pytest_gpuperf.exits.NO_BASELINE`;
7. a device abandoned after a hang or a fault: 1 where the run would otherwise pass;
8. Ctrl-C (or a batch system's SIGTERM) before every test ran, or during the end-of-run writes: 2.

Under pytest-xdist the controller runs no test: a worker's failure makes 1 and a worker's own gpuperf status
(in the same precedence: :data:`WORKER_PRECEDENCE`) wins over it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from .. import exits

#: pytest's statuses this module sets (``pytest.ExitCode``: OK, TESTS_FAILED, INTERRUPTED)
OK = 0
TESTS_FAILED = 1
INTERRUPTED = 2
#: a worker's own statuses, the one that wins first (as a single session settles them: a missing baseline
#: over a shared card over a throttled one over a busy host)
WORKER_PRECEDENCE = (exits.NO_BASELINE, exits.GPU_TOO_BUSY, exits.THROTTLED, exits.HOST_TOO_BUSY)


def interrupted_line(what: str, during_writes: bool, kept: bool, left: Sequence[str] = ()) -> str:
    """The one line an interrupted run prints ahead of pytest's summary. ``what``: the signal (Ctrl-C, a batch
    system's SIGTERM); ``during_writes``: it arrived during the end-of-run writes (every test had finished);
    ``kept``: the run writes results or history (they hold the tests that finished); ``left``: devices that
    still had work running (not a hang: nobody knows whether the work would have ended)."""
    if during_writes:
        text = (f"gpuperf INTERRUPTED: {what} arrived during the end-of-run writes; they were completed "
                "first (every test had finished)")
    else:
        text = f"gpuperf INTERRUPTED: {what} stopped the run before every test ran"
        if kept:
            text += "; the results and history hold the tests that finished, marked \"interrupted\""
    if left:
        text += f"; {', '.join(left)} still had work running and was not waited for"
    return text


@dataclass(frozen=True)
class GateFacts:
    """What the session found at the end of the run that its exit status depends on.

    ``judging``: the run judged its metrics (it did not only write baselines). ``missing``: a baseline
    metric a passed test no longer records. ``host_busy``, ``throttled``, ``gpu_busy``: one line per device
    the run could not gate (``GpuPerfSession.too_contended`` / ``too_throttled`` / ``gpu_too_busy``).
    ``no_baseline``: ``--gpuperf-require-baseline`` and the devices without one."""

    judging: bool = True
    missing: bool = False
    host_busy: Sequence[str] = ()
    throttled: Sequence[str] = ()
    gpu_busy: Sequence[str] = ()
    no_baseline: Sequence[str] = ()


@dataclass
class RunOutcome:
    """The run's exit status as gpuperf settles it, whether gpuperf failed it, and the errors to report."""

    status: int
    failed: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def error(self) -> str | None:
        """The errors of the end-of-run writes and abandoned devices, in one line (None when none)."""
        return "; ".join(self.errors) if self.errors else None

    def writes_failed(self, error: str) -> None:
        """The end-of-run writes raised (a ``GpuPerfError``): the run fails."""
        self.errors.append(error)
        self.status = TESTS_FAILED
        self.failed = True

    def settle(self, facts: GateFacts) -> None:
        """Steps 2–6 of the module's order: the metrics the run could not judge or no longer records."""
        if facts.missing and facts.judging:
            self.status = TESTS_FAILED
            self.failed = True
        if facts.host_busy and facts.judging:
            # the host's other work, not a regression — unless what the run could judge already failed
            if self.status == OK:
                self.status = exits.HOST_TOO_BUSY
            self.failed = True
        if facts.throttled:
            self.status = exits.THROTTLED
            self.failed = True
        if facts.gpu_busy:
            self.status = exits.GPU_TOO_BUSY
            self.failed = True
        if facts.no_baseline:
            self.status = exits.NO_BASELINE  # its own reason: nothing was gated, not a regression
            self.failed = True

    def abandoned(self, lost: Mapping[str, str] | Iterable[str]) -> None:
        """Devices abandoned after a hang or a fault, even behind tests that all passed: the run fails."""
        specs = list(lost)
        if not specs:
            return
        self.failed = True
        if self.status == OK:
            self.status = TESTS_FAILED
            self.errors.append(f"{', '.join(specs)} abandoned (gpuperf ABANDONED above): the run fails although "
                               "its tests passed")

    def interrupted(self) -> None:
        """Ctrl-C before every test ran or during the writes: the run ends as interrupted."""
        self.status = INTERRUPTED

    def workers(self, failed: bool, statuses: Iterable[int | None]) -> None:
        """The controller of a pytest-xdist run: a worker's failure makes 1, a worker's own gpuperf status
        (:data:`WORKER_PRECEDENCE`) wins over it."""
        if failed:
            self.status = TESTS_FAILED
        seen = set(statuses)
        own = next((code for code in WORKER_PRECEDENCE if code in seen), None)
        if own is not None:
            self.status = own
