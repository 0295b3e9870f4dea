"""The objects fixtures hand to tests: small, bound to one device and one test."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .devices.base import Buffer, Device, Kernel, KernelArg, Size
from .report.results import Metric
from .timing.measure import MeasureConfig, Measurement, measure, measure_kernel, measure_pair
from .timing.stats import Stats


class KernelHelper:
    """``gpu_kernel``: compile (cached) and launch kernels on the test's device."""

    def __init__(self, device: Device, timeout_s: float) -> None:
        self.device = device
        self.timeout_s = timeout_s

    def compile(self, source: str, name: str, options: Sequence[str] = ()) -> Kernel:
        return self.device.compile(source, name, options)

    def launch(self, kernel: Kernel, global_size: Size, local_size: Size | None, args: Sequence[KernelArg],
               wait: bool = True) -> None:
        """Launch and (by default) wait under the watchdog, so faults surface at this call."""
        handle = self.device.timed(lambda: self.device.launch(kernel, global_size, local_size, args))
        if wait:
            self.device.elapsed(handle, self.timeout_s)

    def to_device(self, array: np.ndarray) -> Buffer:
        return self.device.to_device(array)

    def empty(self, nbytes: int) -> Buffer:
        return self.device.empty(nbytes)

    def to_host(self, buf: Buffer, dtype: Any, count: int | None = None) -> np.ndarray:
        return self.device.to_host(buf, dtype, count)


class Measurer:
    """``gpu_measure``: the statistical timing path with the session's watchdog and budget."""

    def __init__(self, device: Device, config: MeasureConfig) -> None:
        self.device = device
        self.config = config

    def _config(self, overrides: Mapping[str, Any]) -> MeasureConfig:
        return MeasureConfig(**{**self.config.__dict__, **overrides}) if overrides else self.config

    def __call__(self, kernel: Kernel, global_size: Size, local_size: Size | None,
                 args: Sequence[KernelArg] | None = None, *, rotate: Sequence[Sequence[KernelArg]] | None = None,
                 **overrides: Any) -> Measurement:
        """Time a launch; ``rotate`` gives several argument tuples to cycle through (cold-cache timing)."""
        sets = list(rotate) if rotate else [list(args or [])]
        return measure_kernel(self.device, kernel, global_size, local_size, sets, self._config(overrides))

    def enqueue(self, run_once: Callable[[], Any], **overrides: Any) -> Measurement:
        """Time arbitrary device work (a copy, several launches) that ``run_once`` enqueues."""
        return measure(self.device, run_once, self._config(overrides))

    def pair(self, run_a: Callable[[], Any], run_b: Callable[[], Any], **overrides: Any
             ) -> tuple[Measurement, Measurement]:
        """Time two enqueues alternately (A, B, A, …) for a differenced figure (:func:`measure_pair`)."""
        return measure_pair(self.device, run_a, run_b, self._config(overrides))


class Recorder:
    """``gpuperf_record(name, value, unit, better=..., stats=...)``: record a metric of this test."""

    def __init__(self, record: Callable[..., Metric]) -> None:
        self._record = record

    def __call__(self, name: str, value: float, unit: str, better: str = "lower", stats: Stats | None = None,
                 tolerance: Mapping[str, float] | None = None, bound: float | None = None,
                 info: Mapping[str, Any] | None = None, identity: Mapping[str, Any] | None = None,
                 valid: tuple[float, float] | None = None) -> Metric | None:
        """``identity``: the options that shaped the value (sample count, seed, mode) — a baseline made
        with others reads ``incomparable``; ``valid``: the physical range (outside it is an error)."""
        return self._record(name=name, value=value, unit=unit, better=better, stats=stats, tolerance=tolerance,
                            bound=bound, info=info, identity=identity, valid=valid)
