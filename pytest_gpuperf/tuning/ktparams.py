"""Any kernel parameter tuned by Kernel Tuner itself (``kernel_tuner.tune_kernel``) on the product's device.

The work-group-size tuner of this package (:mod:`.tuner`) searches one thing, the work-group shape, over
its own space. A user's kernel has more to tune — a tile size, an unroll factor — and ``__local``
arrays sized by the work-group; Kernel Tuner does all of that: every parameter becomes a compile-time
``#define`` (the work-group size too, as ``block_size_x``/``_y``/``_z``, so ``__local float
tile[block_size_x + 2]`` compiles), ``restrictions`` prune the product of their values, its strategies
search it, ``answer``/``verify`` check every configuration's output against a reference, and its cache
file keeps what was measured so a second call benchmarks nothing again. This module adapts a device of
this project to it (``Device.kernel_tuner_target``: OpenCL platform and device, or CuPy on CUDA), puts the
cache file in the project's tuning cache folder, adds Lim's static occupancy pruning as a restriction
where the device has an SM model, and returns the best configuration as a gpuperf metric.

Kernel Tuner times with its own loop (``iterations`` runs per configuration), not with
:mod:`pytest_gpuperf.timing.measure`; the whole call is one observed window (:func:`..timing.measure.observed`),
so a run on a busy host says so in the metric's ``info``.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import io
import itertools
import json
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..devices.architectures import SMLimits
from ..devices.backend_registry import backend
from ..devices.base import Device
from ..devices.dialect import portable
from ..devices.occupancy import cuda_occupancy
from ..devices.resources import resources_of
from ..errors import KernelCompileError
from ..timing import observers
from ..timing.measure import observed
from ..timing.stats import Stats
from ..util.atomic import atomic_write_text
from .fixtures import cache_dir
from .ktsim import missing
from .space import enumerate_space, limits_for
from .tuner import sm_model

#: Kernel Tuner's names of the work-group size per dimension (compile-time defines of every configuration)
BLOCK_NAMES = ("block_size_x", "block_size_y", "block_size_z")
#: the folder under the tuning cache folder (:func:`.fixtures.cache_dir`) that holds Kernel Tuner's cache files
KT_FOLDER = "kernel_tuner"
#: a restriction in Kernel Tuner's ``(function, [parameter names])`` form
Restriction = tuple[Callable[..., bool], list[str]]
#: pruning this package adds to any Kernel Tuner strategy as a restriction
PRUNINGS = ("lim_static",)


class ParamsTuningError(ValueError):
    """A tuning call Kernel Tuner cannot run as asked (missing extra, a refused output, a bad parameter)."""


def require_kernel_tuner() -> Any:
    """``kernel_tuner.tune_kernel``, or an error naming the extra that installs it."""
    reason = missing()
    if reason:
        raise ParamsTuningError(f"tuning kernel parameters needs Kernel Tuner. {reason}")
    from kernel_tuner import tune_kernel
    return tune_kernel


def strategies() -> tuple[str, ...]:
    """Kernel Tuner's strategy names (``strategy=``)."""
    require_kernel_tuner()
    from kernel_tuner.interface import strategy_map
    return tuple(strategy_map)


@dataclass(frozen=True)
class ParamsTuned:
    """What Kernel Tuner chose: the best configuration, its time over Kernel Tuner's runs, and the search."""

    best: dict[str, Any]  # every tuned parameter's value, the work-group size included
    time_s: float  # the best configuration's mean time (Kernel Tuner's objective "time")
    times_s: tuple[float, ...]  # its individual runs
    evaluations: int  # configurations benchmarked by this call (not read from the cache file)
    visited: int  # configurations the strategy asked for (benchmarked or from the cache file)
    space: int  # configurations left after the restrictions
    strategy: str
    checked: bool  # every benchmarked configuration's output passed ``answer``/``verify``
    cache: Path | None  # Kernel Tuner's cache file
    pruning: dict[str, Any] = field(default_factory=dict)  # what ``prune`` left out, and why
    host: dict[str, Any] = field(default_factory=dict)  # the observed window's marks (observers.inherit)
    # every option that changes the figure, the kernel's text excepted: a change of the code is what the
    # gate judges (the cache file's name holds the text's digest: another text is measured afresh)
    identity: dict[str, Any] = field(default_factory=dict)

    @property
    def local(self) -> tuple[int, ...]:
        """The best work-group shape (``block_size_*`` of :attr:`best`)."""
        return tuple(int(self.best[n]) for n in BLOCK_NAMES if n in self.best)

    def records(self, name: str) -> list[dict[str, Any]]:
        """The best configuration as ``gpuperf_record`` keyword arguments: ``<name>.best_us`` (lower is
        better; its samples are Kernel Tuner's runs of the best configuration), judged like any timing."""
        stats = Stats.of(t * 1e6 for t in self.times_s)
        info = {"best": {k: _plain(v) for k, v in self.best.items()}, "strategy": self.strategy,
                "evaluations": self.evaluations, "visited": self.visited, "space": self.space,
                "checked": self.checked, "timer": "Kernel Tuner", **({"pruning": self.pruning} if self.pruning else {}),
                **self.host}
        return [dict(name=f"{name}.best_us", value=stats.median, unit="us", better="lower", stats=stats,
                     identity=self.identity, info=info)]


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _digest(doc: Any) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()[:20]


def cache_path(cache: str | Path | bool | None, device: Device, kernel: str, source: str,
               identity: Mapping[str, Any]) -> Path | None:
    """Kernel Tuner's cache file: ``True`` names one per (kernel, device, driver, source, parameters, problem)
    under the tuning cache folder; a relative name lies in that folder; an absolute path is kept; None/False:
    no cache."""
    if cache is None or cache is False:
        return None
    folder = cache_dir() / KT_FOLDER
    if cache is True:
        path = folder / f"{kernel}-{cache_key(device, source, identity)}.json"
    else:
        path = Path(cache)
        path = path if path.is_absolute() else folder / path
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def cache_key(device: Device, source: str, identity: Mapping[str, Any]) -> str:
    """What a cache file's results depend on: the kernel text, the device, its driver, the parameters and problem."""
    return _digest({**identity, "source": _digest(source), "device": device.info.key, "backend": device.info.backend,
                    "driver": device.info.driver_version})


def _claim(path: Path, key: str) -> None:
    """A cache file named by the user holds the results of one kernel text, device and set of parameters: its
    sidecar (``<name>.key``) records which. A file made for another — the kernel edited, the parameters changed —
    is moved aside (``<name>.stale``) and said so, and the tune measures afresh, rather than read its old times as
    this kernel's."""
    side = path.with_name(path.name + ".key")
    had = side.read_text().strip() if side.exists() else None
    if path.exists() and had != key:
        stale = path.with_name(path.name + ".stale")
        path.replace(stale)
        print(f"gpuperf: {path} was made for another kernel text, device or parameters"
              + ("" if had is not None else " (or by an earlier version that did not record which)")
              + f": moved to {stale.name}, and tuned afresh", file=sys.stderr)
    atomic_write_text(side, key + "\n")


def _cached_keys(path: Path | None) -> set[str]:
    """The configurations a Kernel Tuner cache file holds (it may be unterminated: Kernel Tuner appends)."""
    if path is None or not path.exists():
        return set()
    text = path.read_text().rstrip()
    for candidate in (text, text.rstrip(",") + "}}"):
        try:
            return set(json.loads(candidate).get("cache", {}))
        except json.JSONDecodeError:
            continue
    raise ParamsTuningError(f"{path} is not a Kernel Tuner cache file; remove it")


def keep_failed_sources(said: str) -> list[Path]:
    """Kernel Tuner leaves the source of a configuration that failed in ``temp_*`` files of the working
    directory (and says so on stdout); they are moved to ``failed/`` beside its cache files, out of the
    user's tree, and their new paths returned for the error message."""
    m = re.search(r"see source files: (.*)", said)
    if not m:
        return []
    folder = cache_dir() / KT_FOLDER / "failed"
    folder.mkdir(parents=True, exist_ok=True)
    kept = []
    for name in m.group(1).split():
        src = Path(name)
        if src.is_file():
            kept.append(Path(shutil.move(str(src), folder / src.name)))
    return kept


def work_group_values(device: Device, dims: int) -> dict[str, list[int]]:
    """The legal work-group sizes of this package's space (multiples of the warp width within the device's
    limits; CPU devices up to 128 work-items as in the tuning suite), per axis, for a call that does not
    tune ``block_size_*`` itself."""
    from .tuner import space_cap

    shapes = enumerate_space(dims, limits_for(device.info, dims, cap=space_cap(device)))
    return {BLOCK_NAMES[i]: sorted({s[i] for s in shapes}) for i in range(dims)}


def occupancy_restriction(device: Device, source: str, kernel: str, tune_params: Mapping[str, Sequence[Any]],
                          options: Sequence[str], restrictions: Sequence[Any],
                          sm: SMLimits | None = None) -> tuple[Restriction | None, dict[str, Any]]:
    """Lim's static pruning (T*, no runs) as a Kernel Tuner restriction: every configuration is compiled here
    with its defines, its theoretical occupancy computed from the compiled kernel's registers and
    shared memory (Lim Eqs. 3.1–3.5, ``devices.occupancy``), and only those reaching the best occupancy are
    kept. The restriction is Kernel Tuner's ``(function, [parameter names])`` form. Devices without an SM model (CPUs, non-NVIDIA OpenCL) get no restriction, with the reason; ``sm``
    names the SM's limits instead of the device's (what another GPU would keep of these resources)."""
    sm = sm if sm is not None else sm_model(device)
    if sm is None:
        return None, {"lim_static": f"{device.info.name} has no SM occupancy model: nothing pruned"}
    names = list(tune_params)
    occ: dict[tuple[Any, ...], float] = {}
    for combo in itertools.product(*(tune_params[n] for n in names)):
        params = dict(zip(names, combo))
        if not all(_allowed(r, params) for r in restrictions):
            continue
        threads = int(np.prod([params.get(n, 1) for n in BLOCK_NAMES]))
        defines = [f"-D{k}={v}" for k, v in params.items()]
        try:
            with device.unnoted():  # a configuration of the kernel tune() notes as it hands it to Kernel Tuner
                k = device.compile(portable(source, device.info.backend), kernel, tuple(options) + tuple(defines))
        except KernelCompileError:
            continue  # Kernel Tuner will see it fail to compile and skip it as well
        r = resources_of(k)
        occ[combo] = cuda_occupancy(sm, threads, r.regs, r.shared).occupancy
    if not occ:
        return None, {"lim_static": "no configuration compiled: nothing pruned"}
    top = max(occ.values())
    kept = {c for c, o in occ.items() if o >= top - 1e-9}

    def restrict(**named: Any) -> bool:
        return tuple(named[n] for n in names) in kept

    return (restrict, names), {"space": len(occ), "after_static": len(kept), "occupancy": round(top, 4)}


def _allowed(restrict: Any, params: Mapping[str, Any]) -> bool:
    """Whether ``params`` meets one restriction, in any form Kernel Tuner takes (expression, callable by name,
    ``(callable, [names])``)."""
    if isinstance(restrict, tuple) and len(restrict) >= 2 and callable(restrict[0]):
        return bool(restrict[0](**{n: params[n] for n in restrict[1]}))
    if callable(restrict):
        return bool(restrict(**params))
    if isinstance(restrict, str):
        return bool(eval(restrict, {}, dict(params)))  # Kernel Tuner's own expression form
    return True


def tune(device: Device, source: str, kernel: str, args: Sequence[Any], problem_size: Sequence[int],
         tune_params: Mapping[str, Sequence[Any]] | None, *, restrictions: Sequence[Any] = (),
         answer: Sequence[Any] | None = None, verify: Callable[..., bool] | None = None, atol: float = 1e-6,
         strategy: str = "brute_force", strategy_options: Mapping[str, Any] | None = None,
         prune: str | None = None, cache: str | Path | bool | None = None,
         grid_div: Sequence[Sequence[str]] | None = None, options: Sequence[str] = (),
         iterations: int = 7) -> ParamsTuned:
    """Tune ``kernel`` (OpenCL C; on CUDA through the language prelude) over ``tune_params`` with Kernel
    Tuner's ``strategy`` on ``device``. ``problem_size``: the NDRange in work-items per dimension (the grid is
    ``problem_size / prod(grid_div[d])`` groups, default ``block_size_<d>``); parameters without
    ``block_size_*`` get this package's legal work-group sizes. ``prune="lim_static"`` adds Lim's occupancy
    restriction. Raises :class:`ParamsTuningError` when a configuration's output fails the check."""
    tune_kernel = require_kernel_tuner()
    if prune is not None and prune not in PRUNINGS:
        raise ParamsTuningError(f"unknown pruning {prune!r}; choose one of {', '.join(PRUNINGS)}")
    known = strategies()
    if strategy not in known:
        raise ParamsTuningError(f"unknown Kernel Tuner strategy {strategy!r}; choose one of {', '.join(known)}")
    dims = len(problem_size)
    params: dict[str, list[Any]] = {**work_group_values(device, dims), **{k: list(v) for k, v in (tune_params or {}).items()}}
    restricts = list(restrictions)
    pruning: dict[str, Any] = {}
    if prune == "lim_static":
        rule, pruning = occupancy_restriction(device, source, kernel, params, options, restricts)
        if rule is not None:
            restricts.append(rule)
    given = [_kt_form(r, list(params)) for r in restricts]
    identity = {"kernel": kernel, "options": list(options), "problem": list(problem_size),
                "tune_params": {k: [_plain(v) for v in vs] for k, vs in params.items()},
                "restrictions": [_restriction_key(r) for r in restrictions],
                "strategy": strategy, "prune": prune, "args": [_arg_key(a) for a in args]}
    path = cache_path(cache, device, kernel, source, identity)
    if path is not None and cache is not True:  # a name of the user's: its file must be this kernel's
        _claim(path, cache_key(device, source, identity))
    names = list(params)
    space = sum(1 for c in itertools.product(*params.values())
                if all(_allowed(r, dict(zip(names, c))) for r in restricts))
    if not space:
        raise ParamsTuningError(f"{kernel}: no configuration of {params} passes the restrictions "
                                f"{[_restriction_key(r) for r in restrictions]}: loosen them or widen the values")
    before = _cached_keys(path)
    divs = {f"grid_div_{'xyz'[d]}": list(grid_div[d]) for d in range(dims)} if grid_div else {}
    target = device.kernel_tuner_target()
    text = portable(source, device.info.backend)
    device.note_source(text, options)  # Kernel Tuner compiles it on its own: its figures depend on this text
    capture = observers.Capture(device)
    said = io.StringIO()

    def run() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        driver = backend(device.info.backend)
        with contextlib.redirect_stdout(said), driver.build_output_kept(), driver.library_calls_mended():  # output: in logs
            return tune_kernel(kernel, text, tuple(int(p) for p in problem_size), list(args), params,
                               restrictions=given or None, answer=list(answer) if answer is not None else None,
                               verify=verify, atol=atol, strategy=strategy, strategy_options=dict(strategy_options or {}),
                               cache=str(path) if path else None, compiler_options=list(options),
                               iterations=iterations, quiet=True, verbose=False, **divs, **target)

    try:
        results, _env = observed(device, run)
    except Exception as exc:
        kept = keep_failed_sources(said.getvalue())
        where = f" (its source as compiled: {', '.join(map(str, kept))})" if kept else ""
        if "verification failed" in str(exc):
            raise ParamsTuningError(f"{kernel}: Kernel Tuner's output check refused a configuration: {exc}{where}; "
                                    "fix the kernel for it or leave it out with a restriction") from exc
        if "max_fevals must be greater than zero" in str(exc):  # Kernel Tuner's words for an empty space
            raise ParamsTuningError(f"{kernel}: no configuration of {params} is left once the device's limits are "
                                    f"applied (at most {device.info.max_work_group_size} work-items per group on "
                                    f"{device.info.spec}): give values within them") from exc
        raise ParamsTuningError(f"{kernel}: Kernel Tuner failed: {type(exc).__name__}: {exc}{where}") from exc
    valid = [r for r in results if isinstance(r.get("time"), (int, float)) and np.isfinite(r["time"])]
    if not valid:
        raise ParamsTuningError(f"{kernel}: no configuration of {params} compiled and ran on {device.info.spec}")
    best = min(valid, key=lambda r: r["time"])
    after = _cached_keys(path)
    visited = {",".join(str(r[n]) for n in names) for r in results}
    evaluations = len(after - before) if path is not None else len(visited)
    times = tuple(float(t) / 1e3 for t in (best.get("times") or [best["time"]]))
    return ParamsTuned({n: _plain(best[n]) for n in names}, float(best["time"]) / 1e3, times, evaluations,
                       len(visited), space, strategy, answer is not None or verify is not None, path, pruning,
                       observers.inherit(capture), identity)


def _arg_key(a: Any) -> Any:
    """An argument as the identity names it: an array by dtype and shape, a scalar by value."""
    if isinstance(a, np.ndarray):
        return [str(a.dtype), list(a.shape)]
    return _plain(a)


def _restriction_key(r: Any) -> str:
    """A restriction as the identity names it: its expression, or its function's name."""
    if isinstance(r, str):
        return r
    f = r[0] if isinstance(r, tuple) else r
    return getattr(f, "__qualname__", repr(f))


def _kt_form(restrict: Any, order: list[str]) -> Any:
    """A restriction as Kernel Tuner 1.5 takes it whichever path reads it: ``(function, [names])`` and a
    function of keyword arguments (``f(**params)``) become a plain function that its constraint solver may call
    with the values in ``order`` (the tuned parameters' order) and its cache check by name; expressions and
    other forms pass unchanged."""
    if isinstance(restrict, tuple) and len(restrict) >= 2 and callable(restrict[0]):
        f, wanted = restrict[0], list(restrict[1])
    elif callable(restrict) and any(p.kind is p.VAR_KEYWORD for p in inspect.signature(restrict).parameters.values()):
        f, wanted = restrict, None
    else:
        return restrict

    def by_name(*values: Any, **named: Any) -> bool:
        if values:
            named = dict(zip(order, values))
        return bool(f(**({n: named[n] for n in wanted} if wanted is not None else named)))

    return by_name
