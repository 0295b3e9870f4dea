"""How an OpenCL device keeps a timed region's commands from starting before the host has enqueued them all.

A span of several commands (200 back-to-back launches, a 24-pass sum) must time the device, not the host's
enqueue calls between them. Two ways to hold the queue:

* ``event`` — every command waits on a user event the host completes once it has enqueued them all. Exact on
  a CPU device (PoCL), where the runtime starts the held commands at once. A GPU driver may instead submit held
  commands one by one once the event resolves, and stamp each start at submission: the span then times the
  driver's release of its list.
* ``kernel`` — a blocking kernel first: one work-item spins for a while, and the host enqueues the region
  behind it on the in-order queue, so the driver pushes each command to the device as it is enqueued and the
  device runs them back to back once the spin ends — NVIDIA's nvbench does the same with its blocking kernel.
  OpenCL C reads no clock, so the spin counts iterations of a dependent chain: its time per iteration is
  measured once per device (:meth:`KernelHold.calibrate`), and each hold lasts twice the host's enqueue time
  of the region before it plus :data:`MIN_HOLD_NS`, at most :data:`MAX_HOLD_NS`. A region whose enqueue
  outlasted its hold is counted (:attr:`KernelHold.underheld`): it may have timed host gaps.
* ``none`` — no hold: each command starts when the host enqueues it.
"""

from __future__ import annotations

import time
from typing import Any, Callable

#: the ways to hold a region (see the module's docstring)
HOLDS = ("event", "kernel", "none")

#: the shortest hold, and what every hold adds to twice the host's last enqueue time
MIN_HOLD_NS = 20_000
#: the longest hold (the CUDA backend's blocking kernel gives up after the same 0.2 s)
MAX_HOLD_NS = 200_000_000
#: the first region's hold, before any enqueue time has been measured
FIRST_HOLD_NS = 1_000_000

SPIN_NAME = "gpuperf_hold_queue"
SPIN_SOURCE = f"""
__kernel void {SPIN_NAME}(__global uint* sink, uint n) {{
    uint x = (uint)get_global_id(0) + 1u;
    for (uint i = 0u; i < n; ++i) x = (x ^ (x >> 7)) * 0x9E3779B1u + i;
    if (x == 0u) sink[0] = x;
}}
"""
#: the two spin lengths the calibration times (their difference gives the time per iteration)
CALIBRATION_ITERATIONS = (1 << 12, 1 << 17)


class KernelHold:
    """The ``kernel`` hold of one OpenCL device: compile the spin, calibrate it, and hold each region.

    ``enqueue_spin(kernel, n)`` enqueues the spin of ``n`` iterations on the device's current queue and flushes
    it, returning its event; ``wait(event)`` waits for one under the device's watchdog."""

    def __init__(self, compile_spin: Callable[[], Any], enqueue_spin: Callable[[Any, int], Any],
                 wait: Callable[[Any], None]) -> None:
        self._compile_spin = compile_spin
        self._enqueue_spin = enqueue_spin
        self._wait = wait
        self._kernel: Any = None
        self.ns_per_iteration: float | None = None
        self.next_ns = FIRST_HOLD_NS
        self.regions = 0
        self.underheld = 0
        self._started = 0

    def calibrate(self) -> float:
        """Nanoseconds per spin iteration: the two spin lengths of :data:`CALIBRATION_ITERATIONS`, each timed
        twice by its own event (the first pair warms up), their difference per iteration."""
        if self._kernel is None:
            self._kernel = self._compile_spin()
        lo, hi = CALIBRATION_ITERATIONS
        spans = {}
        for _ in range(2):
            for n in (lo, hi):
                event = self._enqueue_spin(self._kernel, n)
                self._wait(event)
                spans[n] = event.profile.end - event.profile.start
        self.ns_per_iteration = max((spans[hi] - spans[lo]) / (hi - lo), 1e-3)
        return self.ns_per_iteration

    def begin(self) -> Any:
        """Enqueue this region's spin (its length planned from the last region's enqueue time); returns its
        event. The host's clock for the region starts now."""
        if self.ns_per_iteration is None:
            self.calibrate()
        iterations = int(min(self.next_ns, MAX_HOLD_NS) / self.ns_per_iteration) + 1
        event = self._enqueue_spin(self._kernel, iterations)
        self._started = time.perf_counter_ns()
        return event

    def end(self) -> int:
        """The region is enqueued (and flushed): plan the next hold from its enqueue time; returns that time (ns)."""
        host_ns = time.perf_counter_ns() - self._started
        self.next_ns = min(2 * host_ns + MIN_HOLD_NS, MAX_HOLD_NS)
        self.regions += 1
        return host_ns

    def check(self, spin: Any, host_ns: int) -> bool:
        """Whether the spin outlasted the region's enqueue (else counted in :attr:`underheld`); called once the
        region has finished, when the spin's own events are readable."""
        held = (spin.profile.end - spin.profile.start) >= host_ns
        if not held:
            self.underheld += 1
        return held


class Region(list):
    """A timed region's events (first to last), with the hold that kept them: its spin event and the host's
    enqueue time, when the ``kernel`` hold was used."""

    spin: Any = None
    host_ns: int = 0
