"""The studies wing's pytest options and fixtures (a sub-plugin the plugin loads by name): ``sampled_kernel``
(Dao, thesis ch. 2) and the kernel-class suite's ``--gpuperf-ncu-timeout``."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import pytest

from ..devices.base import Device, Kernel, KernelArg
from ..gatecheck import plants
from ..helpers import Measurer
from ..timing.measure import MeasureConfig
from .sampled.sampling import CacheFlush, SampledRun, SamplePlan, sample, saturation_point


class SampledKernel:
    """Run a kernel's first work-groups at two saturation points and predict the full run.

    ``sampled_kernel(kernel, local_size, args, n_groups, multiple=1, full=True)`` measures the first
    ``2·m·P_sat·units`` and ``3·m·P_sat·units`` work-groups (``m = multiple``, both integer multiples of
    the saturation point, thesis §2.5.1 / Fig. 2.15; ``geometry="wide"``: 2 and 5m − 2 waves), and — when ``full`` — the whole ``n_groups`` run
    for evaluation, each from a cold last-level cache. The kernel must index its work from the global id so the sampled groups do
    exactly the work they do in the full run (a shorter NDRange; no guard in the kernel).
    """

    def __init__(self, device: Device, measurer: Measurer, plant: float = 0.0) -> None:
        self.device = device
        self.measurer = measurer
        self.plant = plant  # the gate check's ``model`` plant (:func:`.sampling.planted_p2`)
        self._flush: CacheFlush | None = None

    @property
    def flush(self) -> CacheFlush:
        """Allocated on first use: two buffers of twice the last-level cache."""
        if self._flush is None:
            floor = (8 << 20) if self.device.info.is_cpu else (64 << 20)
            self._flush = CacheFlush(self.device, floor)
        return self._flush

    def plan(self, kernel: Kernel, local_size: int, n_groups: int, multiple: int = 1,
             geometry: str = "thesis") -> SamplePlan:
        sat = saturation_point(self.device.info, kernel.attributes, local_size)
        return SamplePlan(sat, n_groups, local_size, multiple, geometry)

    def __call__(self, kernel: Kernel, local_size: int, args: Sequence[KernelArg], n_groups: int,
                 multiple: int = 1, full: bool = True, cold: bool = True,
                 flush: Callable[[], None] | None = None, geometry: str = "thesis", **overrides: Any) -> SampledRun:
        """``overrides``: MeasureConfig fields for these runs (e.g. a smaller budget on CPU devices);
        ``cold``: flush the last-level cache before every timed run (default; see :class:`CacheFlush`);
        ``flush``: a caller's own untimed pre-run instead of the copy (e.g. :func:`steady_state_flush`);
        ``geometry``: where the two samples sit (:data:`.sampling.GEOMETRIES`)."""
        plan = self.plan(kernel, local_size, n_groups, multiple, geometry)
        config = MeasureConfig(**{**self.measurer.config.__dict__, **overrides})
        pre = (flush or self.flush) if cold else None
        return sample(self.device, kernel, plan, args, config, full=full, flush=pre, plant=self.plant)


def pytest_addoption(parser: pytest.Parser) -> None:
    from ..counters.ncu import DEFAULT_TIMEOUT_S

    group = parser.getgroup("gpuperf")
    group.addoption("--gpuperf-ncu-timeout", type=float, default=None, metavar="S",
                    help="kernel-class suite: wall-clock limit of the Nsight Compute profile (ncu replays every "
                         "kernel once per counter pass); a slower profile fails with its last output "
                         f"(ini gpuperf_ncu_timeout; default {DEFAULT_TIMEOUT_S:g} s)")
    parser.addini("gpuperf_ncu_timeout", "default of --gpuperf-ncu-timeout (seconds)", default="")


def ncu_timeout_s(config: pytest.Config) -> float:
    """The Nsight Compute profile's timeout: the option, then the ini key, then the module default; a
    non-positive value is a usage error before any test runs (it would fail every profile)."""
    from ..counters.ncu import DEFAULT_TIMEOUT_S
    value = config.getoption("--gpuperf-ncu-timeout")
    if value is None:
        raw = str(config.getini("gpuperf_ncu_timeout") or "").strip()
        try:
            value = float(raw) if raw else DEFAULT_TIMEOUT_S
        except ValueError:
            raise pytest.UsageError(f"gpuperf_ncu_timeout = {raw!r}: give a number of seconds") from None
    if not value > 0:
        raise pytest.UsageError(f"--gpuperf-ncu-timeout={value:g}: give a positive number of seconds")
    return float(value)


def pytest_configure(config: pytest.Config) -> None:
    ncu_timeout_s(config)  # validated at start-up, like every gpuperf option


@pytest.fixture(scope="session")
def gpuperf_ncu_timeout(pytestconfig: pytest.Config) -> float:
    """Seconds the kernel-class suite's Nsight Compute profile may take (``--gpuperf-ncu-timeout``)."""
    return ncu_timeout_s(pytestconfig)


@pytest.fixture
def sampled_kernel(gpu_device: Device, gpu_measure: Measurer, gpuperf_plant: dict[str, str]) -> SampledKernel:
    """Sampled-kernel runner bound to the test's device and the session's timing configuration (and the gate
    check's ``model`` plant, ``--gpuperf-plant model=F``)."""
    return SampledKernel(gpu_device, gpu_measure, plants.fraction(gpuperf_plant, "model"))
