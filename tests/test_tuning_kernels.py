"""Every benchmark kernel, at several work-group shapes including padded ones, matches NumPy on
fresh random inputs (runs on the CI's PoCL device with the reduced problem sizes)."""

from __future__ import annotations

import pytest

from pytest_gpuperf.tuning.evaluate import Config, Evaluator
from pytest_gpuperf.tuning.kernels import BENCHMARKS
from pytest_gpuperf.tuning.tuner import tuning_config


@pytest.mark.parametrize("bench", BENCHMARKS, ids=[b.name for b in BENCHMARKS])
def test_kernel_matches_numpy(gpu_device, bench):
    ev = Evaluator(gpu_device, bench, bench.sizes(gpu_device), tuning_config(gpu_device))
    w = ev.warp
    shapes = [(w,), (3 * w,), (4 * w,)] if bench.dims == 1 else [(w, 1), (4, 2 * w // 4 if w >= 4 else 2), (16, 4)]
    for i, s in enumerate(shapes):
        if bench.dims == 2 and (s[0] * s[1]) % w:
            continue
        ev.verify(Config(s), seed=100 + i)


def test_wrong_output_is_caught(gpu_device):
    """The check is not vacuous: a kernel that writes the wrong value fails it."""
    bench = next(b for b in BENCHMARKS if b.name == "stencil2d")
    broken = type(bench)(**{**bench.__dict__, "source": bench.source.replace("0.5f *", "0.25f *")})
    ev = Evaluator(gpu_device, broken, broken.sizes(gpu_device), tuning_config(gpu_device))
    with pytest.raises(AssertionError, match="differs from NumPy"):
        ev.verify(Config((ev.warp, 2)), seed=5)
