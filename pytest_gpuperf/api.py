"""The public API for users' own kernels, outside pytest: a narrow door to three engines.

* :func:`tune` — the work-group size the thesis' tuner (Dao; ``tuning/``) picks for *your* kernel, or any
  kernel parameter (tile size, unroll factor, ``__local`` sizes) through Kernel Tuner (``tuning/ktparams.py``);
* :func:`predict` — your kernel's time from two short samples (Dao's sampled linear model;
  ``studies/sampled/sampling.py``), optionally against the full run;
* :func:`check_accuracy` — the ulp error of a device expression against MPFR (``accuracy/``).

Kernels are OpenCL C (on CUDA devices the language prelude, `devices.dialect.portable`, translates them, as for its own kernels);
arguments are NumPy arrays (copied to the device; read back after a launch) and NumPy scalars
(``np.int32(n)``). Devices are named as ``--gpuperf-device`` names them (``"0"``, ``"cuda:0"``,
``"opencl:1"``). Each call compiles, measures on the real device and returns plain dataclasses;
``examples/`` holds one short script per function.

The engines stay as they are: this module adapts arguments to them and never changes how they time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from .devices import discover, open_device, resolve
from .devices.base import Buffer, Device
from .timing.measure import MeasureConfig

if TYPE_CHECKING:
    from .tuning.ktparams import ParamsTuned

Arg = Any  # np.ndarray (a buffer) or a NumPy scalar
Check = Callable[[list[np.ndarray]], Any]  # gets the arrays after a launch; falsy (not None) or raising = wrong


def device(spec: str | Device = "0") -> Device:
    """Open a device by its ``--gpuperf-device`` name (an open :class:`Device` is returned as is)."""
    if isinstance(spec, Device):
        return spec
    return open_device(resolve(str(spec), discover())[0])


# ---------------------------------------------------------------------------------------------- tuning
@dataclass(frozen=True)
class Tuned:
    """What :func:`tune` chose: the work-group shape, its median time, and what the search cost."""

    local: tuple[int, ...]
    time_s: float
    evaluations: int  # configurations the strategy timed
    space: int  # legal configurations it chose from
    strategy: str
    checked: bool  # the chosen shape's output passed ``check`` on fresh launch


#: the byte a slack after each uploaded array is filled with, and the largest slack (an array's own size, at least
#: a page): writes past an array land there and are found, instead of in memory the process owns
CANARY = 0xA5
SLACK_MAX = 64 << 20


def _benchmark(name: str, source: str, args: Sequence[Arg], global_size: tuple[int, ...],
               check: Check | None, options: Sequence[str]) -> tuple[Any, Callable[[Device], None]]:
    """Your kernel as the tuning engine's :class:`~pytest_gpuperf.tuning.kernels.Benchmark`, and the check that no
    launch wrote past one of its arrays."""
    from .tuning.kernels import Benchmark, Prepared

    sizes = {f"n{i}": int(g) for i, g in enumerate(global_size)}
    guarded: list[tuple[Buffer, int, int]] = []  # (buffer, the array's bytes, the slack's bytes) of every upload

    def upload(dev: Device, a: np.ndarray) -> Buffer:
        """The array on the device with a slack after it holding :data:`CANARY`: the tuner pads the NDRange to
        each work-group shape, and a kernel that does not guard its index writes past the array — into the
        slack, where :func:`overrun` finds it, not into memory the process owns."""
        data = np.ascontiguousarray(a).view(np.uint8).ravel()
        slack = min(max(data.size, 4096), SLACK_MAX)
        buf = dev.to_device(np.concatenate([data, np.full(slack, CANARY, np.uint8)]))
        guarded.append((buf, data.size, slack))
        return buf

    def prepare(dev: Device, rng: np.random.Generator, s: dict[str, int]) -> Prepared:
        bufs = [upload(dev, a) if isinstance(a, np.ndarray) else a for a in args]
        outputs = {str(i): b for i, b in enumerate(bufs) if isinstance(b, Buffer)}
        return Prepared(lambda: list(bufs), outputs, {})

    def overrun(dev: Device) -> None:
        """Raise where a launch wrote past an array (a byte of a slack is no longer :data:`CANARY`)."""
        for buf, size, slack in guarded:
            tail = dev.to_host(buf, np.uint8, size + slack)[size:]
            if np.any(tail != CANARY):
                raise ValueError(f"{name} wrote past the end of one of its arrays when the tuner padded the NDRange "
                                 f"{tuple(global_size)} to a work-group shape that does not divide it: guard the "
                                 "kernel's index (if (get_global_id(0) < n) …), or give the tuner only shapes that "
                                 "divide the problem (tune_params={'block_size_x': [...]})")

    def run_check(dev: Device, p: Prepared, local: tuple[int, ...]) -> None:
        if check is None:
            return
        arrays = [dev.to_host(p.outputs[str(i)], a.dtype, a.size).reshape(a.shape)
                  for i, a in enumerate(args) if isinstance(a, np.ndarray)]
        verdict = check(arrays)  # None: the check asserts itself; otherwise its truth value decides
        if verdict is not None and not bool(verdict):
            raise AssertionError(f"check() refused the output at work-group {local}")

    bench = Benchmark(name=name, kernel=name, source=source, dims=len(global_size), category="user",
                      prepare=prepare, check=run_check, sizes_gpu=sizes, sizes_cpu=sizes,
                      extent=lambda s: tuple(s[f"n{i}"] for i in range(len(global_size))),
                      extra_options=tuple(options))
    return bench, overrun


def tune(source: str, kernel: str, args: Sequence[Arg], global_size: Sequence[int], *,
         check: Check | None = None, dev: str | Device = "0", strategy: str | None = None,
         options: Sequence[str] = (), tune_params: Mapping[str, Sequence[Any]] | None = None,
         restrictions: Sequence[Any] = (), answer: Sequence[Any] | None = None,
         verify: Callable[..., bool] | None = None, atol: float = 1e-6, cache: str | Path | bool | None = None,
         grid_div: Sequence[Sequence[str]] | None = None, prune: str | None = None,
         strategy_options: Mapping[str, Any] | None = None, iterations: int = 7) -> "Tuned | ParamsTuned":
    """Tune the work-group size of ``kernel`` over the NDRange ``global_size`` (padded per shape; guard
    your indices). ``strategy``: ``dao`` (the thesis' tuner, the default), ``exhaustive``, ``lim_static``,
    ``lim_rules``. With ``check``, the chosen shape is launched once more and its arrays handed to it.

    Any of ``tune_params``, ``restrictions``, ``answer``, ``verify``, ``cache``, ``grid_div``, ``prune`` or a
    Kernel Tuner strategy name (``brute_force``, ``random_sample``, ...) tunes through Kernel Tuner instead
    (:mod:`pytest_gpuperf.tuning.ktparams`) and returns a :class:`~pytest_gpuperf.tuning.ktparams.ParamsTuned`:
    every parameter, the work-group size (``block_size_x``/``_y``) included, is a compile-time define;
    ``answer`` (one entry per argument, None where not checked) or ``verify(answer, result, atol=)`` checks
    every configuration's output (a refused one raises); ``cache=True`` keeps Kernel Tuner's cache file in
    the tuning cache folder (a name: that file there), so a second call benchmarks nothing again;
    ``prune="lim_static"`` adds Lim's occupancy pruning as a restriction (NVIDIA devices). There the
    strategy defaults to ``brute_force``; ``exhaustive`` means ``brute_force`` and ``lim_static`` means
    ``brute_force`` with ``prune="lim_static"``."""
    from .tuning.evaluate import Config
    from .tuning.tuner import STRATEGIES, tune as engine_tune

    through_kt = (tune_params is not None or bool(restrictions) or answer is not None or verify is not None
                  or cache not in (None, False) or grid_div is not None or prune is not None
                  or (strategy is not None and strategy not in STRATEGIES))
    if through_kt:
        from .tuning import ktparams

        if check is not None:
            raise ValueError("check= is the work-group tuner's; with Kernel Tuner give answer= or verify=")
        if strategy in ("dao", "lim_rules"):
            raise ValueError(f"strategy {strategy!r} tunes the work-group size alone (its stages rewrite the "
                             "kernel's shape); with tune_params use a Kernel Tuner strategy, and prune='lim_static' "
                             "for the occupancy pruning")
        if strategy is not None and strategy not in STRATEGIES and strategy not in ktparams.strategies():
            raise ValueError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)} (work-group "
                             f"size), or of Kernel Tuner's: {', '.join(ktparams.strategies())}")
        kt_strategy = "brute_force" if strategy in (None, "exhaustive", "lim_static") else strategy
        prune = "lim_static" if strategy == "lim_static" else prune
        return ktparams.tune(device(dev), source, kernel, args, tuple(int(g) for g in global_size), tune_params,
                             restrictions=restrictions, answer=answer, verify=verify, atol=atol, strategy=kt_strategy,
                             strategy_options=strategy_options, prune=prune, cache=cache, grid_div=grid_div,
                             options=options, iterations=iterations)
    strategy = strategy or "dao"
    d = device(dev)
    bench, overrun = _benchmark(kernel, source, args, tuple(int(g) for g in global_size), check, options)
    best, out, ctx = engine_tune(d, bench, None, strategy)
    overrun(d)
    if check is not None:
        ctx.ev.verify(Config(best.local, best.variant), seed=0)
        overrun(d)
    return Tuned(tuple(int(v) for v in best.local), ctx.ev.measure(best).time_s, len(out.ledger.visited),
                 len(ctx.space), strategy, check is not None)


# ----------------------------------------------------------------------------------------- prediction
@dataclass(frozen=True)
class Predicted:
    """Dao's linear prediction from samples at 2 and 3 waves; ``measured_s`` when the full run was timed."""

    predicted_s: float
    p_sat: int  # work-groups one compute unit holds (what bounds it: ``limit``)
    limit: str
    sample_groups: tuple[int, int]
    n_groups: int
    measured_s: float | None = None

    @property
    def error_rel(self) -> float | None:
        """|predicted − measured| / measured, when measured."""
        return None if self.measured_s is None else abs(self.predicted_s - self.measured_s) / self.measured_s


def predict(source: str, kernel: str, args: Sequence[Arg], n_groups: int, local_size: int, *,
            dev: str | Device = "0", measure_full: bool = False, options: Sequence[str] = (),
            config: MeasureConfig | None = None) -> Predicted:
    """Predict the time of ``n_groups`` work-groups of ``local_size`` (1-D) from two sampled runs of the
    first groups, each from a cold last-level cache. The kernel must do each group's share of the work
    from its global id (a shorter NDRange runs the first groups); ``n_groups`` must exceed three waves."""
    from .studies.sampled.sampling import CacheFlush, SamplePlan, sample, saturation_point
    from .devices.dialect import portable

    d = device(dev)
    k = d.compile(portable(source, d.info.backend), kernel, tuple(options))
    bufs = [d.to_device(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a for a in args]
    plan = SamplePlan(saturation_point(d.info, k.attributes, int(local_size)), int(n_groups), int(local_size))
    run = sample(d, k, plan, bufs, config or MeasureConfig(), full=measure_full, flush=CacheFlush(d))
    return Predicted(run.predicted, plan.sat.p_sat, plan.sat.limit, (plan.p1, plan.p2), plan.n_groups,
                     run.measured if measure_full else None)


# ------------------------------------------------------------------------------------------- accuracy
@dataclass(frozen=True)
class Accuracy:
    """Error of a device expression against the MPFR value of ``reference`` over the given inputs."""

    max_ulp: float
    mean_ulp: float
    worst_input: tuple[float, ...]
    device_value: float
    n: int
    mismatches: dict[str, int]  # inf/nan/sign classes where the device disagrees with MPFR


def check_accuracy(expr: str, reference: str, inputs: Sequence[np.ndarray], *, fmt: str = "fp32",
                   dev: str | Device = "0", options: Sequence[str] = (), helpers: str = "") -> Accuracy:
    """Evaluate ``expr`` (a C expression over ``x0``, ``x1``, …, e.g. ``"native_exp(x0)"`` or a call of your
    own function) element-wise on the device and score it in ulps of the exact value of MPFR function
    ``reference`` (``"exp"``, ``"sin"``, ``"pow"``, …: :data:`pytest_gpuperf.accuracy.mpfr.MPFR_FUNCS`).
    ``helpers``: device source put before the evaluator — your own functions, which ``expr`` calls (OpenCL C
    on OpenCL devices; on CUDA, ``__device__`` functions)."""
    import inspect

    from .accuracy import check, expr_kernels, fp_formats, mpfr

    if reference not in mpfr.MPFR_FUNCS:
        raise ValueError(f"no MPFR reference {reference!r}; known: {', '.join(sorted(mpfr.MPFR_FUNCS))}")
    arity = len(inspect.signature(mpfr.MPFR_FUNCS[reference]).parameters)  # gmpy2's functions carry theirs
    if len(inputs) != arity:
        raise ValueError(f"{reference} takes {arity} input(s) (x0{', x1' if arity > 1 else ''}"
                         f"{', x2' if arity > 2 else ''}); {len(inputs)} were given")
    d = device(dev)
    if fmt == "fp16" and "fp16" not in d.info.features:
        raise ValueError(f"{d.info.spec} ({d.info.name}) has no binary16 arithmetic: check fp32 or fp64 there")
    f = fp_formats.get(fmt)
    cols = [np.asarray(a, dtype=f.dtype) for a in inputs]
    y = expr_kernels.evaluate(d, f, expr, cols, options, helpers=helpers)
    exact, sgn = mpfr.exact_pairs(reference, cols)
    s = check.score(y, cols, exact, f, reference, "ulp", sgn)
    return Accuracy(s.max, s.mean, tuple(float(c[s.argmax]) for c in cols), float(y[s.argmax]), s.n,
                    dict(s.mismatches))
