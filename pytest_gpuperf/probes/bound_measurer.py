"""``gpu_measure`` bound to one probe's repeat settings (a :mod:`~pytest_gpuperf.timing.profiles` profile).

The probes hand one measurer down to helpers that time single launches, alternating pairs and
rotating argument sets; binding the profile once keeps every one of those calls on the same settings,
while a call may still override a setting of its own (a sweep's repeats, a rotation of arguments).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping


class BoundMeasurer:
    """``measurer`` (the test's ``gpu_measure``) with ``cfg`` applied to every call; a call's own keyword
    arguments win over ``cfg``."""

    def __init__(self, measurer: Any, cfg: Mapping[str, Any]) -> None:
        self.measurer, self.cfg = measurer, dict(cfg)

    def __call__(self, *args: Any, **overrides: Any) -> Any:
        return self.measurer(*args, **{**self.cfg, **overrides})

    def pair(self, run_a: Callable[[], Any], run_b: Callable[[], Any], **overrides: Any) -> Any:
        """Alternating A/B launches (``timing.measure_pair``): the differenced figures' measurement."""
        return self.measurer.pair(run_a, run_b, **{**self.cfg, **overrides})

    def enqueue(self, run_once: Callable[[], Any], **overrides: Any) -> Any:
        """Any enqueued device work (several launches, copies) timed as one span (``gpu_measure.enqueue``)."""
        return self.measurer.enqueue(run_once, **{**self.cfg, **overrides})
