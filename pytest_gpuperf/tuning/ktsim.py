"""Kernel Tuner's strategies on our measurements (kernel_tuner ≥ 1.0, simulation mode).

Kernel Tuner can replay a search from a cache file instead of running kernels
(``tune_kernel(..., simulation_mode=True, cache=...)``). We write that cache from the evaluator's
table — the same device, kernel, problem and timing path every other strategy uses — so its
strategies pay for exactly the configurations they visit, under ``max_fevals`` = our budget. The
configuration each strategy returns is then re-timed with the others (quality), and its cost is the
sum of our measured compile+timing seconds over the configurations it visited.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import json
import os
import random
import tempfile
import warnings
from typing import Any, Iterator

import numpy as np

from ..util import memo
from .evaluate import Config, Evaluator


#: the distributions whose versions key a kept replay: Kernel Tuner's strategies and the optimizers they call
REPLAY_DISTRIBUTIONS = ("kernel_tuner", "numpy", "scipy")
#: the extra of pytest-gpuperf that installs Kernel Tuner (the tuning suite's race, ``api.tune``'s parameters)
EXTRA = "tune"


def missing() -> str | None:
    """Why Kernel Tuner cannot be used in this environment (with the extra that installs it), or None."""
    try:
        import kernel_tuner  # noqa: F401
    except ImportError as exc:
        return f"Kernel Tuner is not installed ({exc}): pip install 'pytest-gpuperf[{EXTRA}]'"
    return None


def _params(ev: Evaluator, space: list[Config]) -> tuple[dict[str, list[int]], list[str]]:
    if ev.bench.dims == 1:
        return {"WGX": sorted({c.local[0] for c in space})}, ["WGX"]
    return ({"WGX": sorted({c.local[0] for c in space}), "WGY": sorted({c.local[1] for c in space})},
            ["WGX", "WGY"])


def cache_doc(ev: Evaluator, space: list[Config]) -> tuple[dict[str, Any], dict[str, list[int]]]:
    """Kernel Tuner's cache document holding our measured time (ms) of every legal configuration, and the
    tuning parameters it spans."""
    tune_params, keys = _params(ev, space)
    entries: dict[str, Any] = {}
    legal = {c.local for c in space}
    for combo in itertools.product(*(tune_params[k] for k in keys)):
        key = ",".join(str(v) for v in combo)
        rec: dict[str, Any] = dict(zip(keys, combo))
        if combo in legal:
            p = ev.measure(Config(tuple(combo)))
            ms = p.time_s * 1e3
            rec.update({"time": ms, "times": [ms], "compile_time": 0.0, "verification_time": 0.0,
                        "benchmark_time": p.cost_s * 1e3, "strategy_time": 0.0, "framework_time": 0.0,
                        "timestamp": "0"})
        else:
            rec.update({"time": "InvalidConfig", "compile_time": 0.0, "verification_time": 0.0,
                        "benchmark_time": 0.0, "strategy_time": 0.0, "framework_time": 0.0, "timestamp": "0"})
        entries[key] = rec
    doc = {"device_name": ev.device.info.name, "kernel_name": ev.bench.kernel, "problem_size": [1, 1, 1],
           "tune_params_keys": keys, "tune_params": tune_params, "objective": "time", "cache": entries}
    return doc, tune_params


def restrictions(ev: Evaluator, space: list[Config]) -> list[str]:
    """Kernel Tuner restrictions that rebuild exactly our legal 2-D space from the per-axis values
    (x·y a multiple of the warp width, within the work-group limit); checked against ``space``."""
    if ev.bench.dims == 1:
        return []
    tune_params, _ = _params(ev, space)
    top = max(c.local[0] * c.local[1] for c in space)
    rule = f"(WGX * WGY) % {ev.warp} == 0 and WGX * WGY <= {top}"
    rebuilt = {(x, y) for x, y in itertools.product(tune_params["WGX"], tune_params["WGY"])
               if (x * y) % ev.warp == 0 and x * y <= top}
    if rebuilt != {c.local for c in space}:
        raise ValueError(f"{ev.bench.name}: Kernel Tuner's restriction {rule!r} does not reproduce the legal space "
                         f"({len(rebuilt)} vs {len(space)} shapes)")
    return [rule]


def strategy_options(strategy: str, budget: int, space_size: int) -> dict[str, Any]:
    """Kernel Tuner's ``strategy_options`` for ``strategy`` at ``budget`` evaluations on a space of
    ``space_size`` legal configurations: a population (``popsize``) no larger than the space. Kernel
    Tuner's defaults (firefly 20, PSO 50, genetic 26) exceed the small 1-D spaces of a CPU device (16):
    it then warns "Too many samples requested", and firefly goes on to index a population of 16 as one of
    20 and fails. The default is read from the strategy's own option table, so an upgrade keeps it."""
    import importlib

    options: dict[str, Any] = {"max_fevals": int(budget)}
    table = getattr(importlib.import_module(f"kernel_tuner.strategies.{strategy}"), "_options", {})
    default = table.get("popsize", (None, None))[1]
    if isinstance(default, int) and default > space_size:
        options["popsize"] = int(space_size)
    return options


@contextlib.contextmanager
def quiet_third_party() -> Iterator[None]:
    """Silence, for the Kernel Tuner replay only, the third-party warnings that say nothing to a user of
    this project (thousands per tuning suite run, burying the project's own):

    * Kernel Tuner's "Kernel (1) and host argument (0) lists do not match in size": simulation mode
      replays our cache against a dummy kernel that takes no arguments, on purpose;
    * the ``disp`` option Kernel Tuner's basinhopping hands its local solver, L-BFGS-B
      (``strategies.common.setup_method_options`` sets it for every method but TNC; no strategy option
      leaves it out): SciPy 1.15–1.17 deprecate it for L-BFGS-B ("The `disp` and `iprint` options"),
      later SciPy no longer takes it ("Unknown solver options: disp", once per local minimisation).
      Only ``disp`` is filtered: any other option a solver does not know still warns;
    * NumPy overflow ``RuntimeWarning``s inside SciPy's optimizers' finite differences over the
      simulated (discrete, flat-stepped) space.

    Each filter names the message or the module; every other warning, the project's own included,
    stays visible."""
    from scipy.optimize import OptimizeWarning  # here: SciPy's optimizers cost a second of every plugin start

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Kernel \(\d+\) and host argument \(\d+\) lists do not match",
                                category=UserWarning)
        warnings.filterwarnings("ignore", message=r"scipy\.optimize: The `disp` and `iprint` options",
                                category=DeprecationWarning)
        warnings.filterwarnings("ignore", message=r"Unknown solver options: disp$", category=OptimizeWarning)
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"scipy\.optimize\.")
        yield


def run_strategy(ev: Evaluator, space: list[Config], strategy: str, budget: int,
                 seed: int) -> tuple[Config, list[Config]]:
    """(best config, visited configs) of Kernel Tuner's ``strategy`` at ``budget`` evaluations.

    The replay is a pure function of the table, the strategy, its options and seed and the libraries' versions,
    so it is kept across runs (:func:`~pytest_gpuperf.util.memo.remember`): a later run over the same measured
    table (a warm cache, a reviewed reference) reads the configurations the strategy visited instead of
    replaying it; any other time in the table is another key."""
    reason = missing()
    if reason:
        raise RuntimeError(reason)
    doc, tune_params = cache_doc(ev, space)
    keys = list(tune_params)
    restrict = restrictions(ev, space)
    options = strategy_options(strategy, budget, len(space))

    def replay() -> list[list[int]]:
        from kernel_tuner import tune_kernel

        with tempfile.TemporaryDirectory(prefix="kt-") as tmp:
            cache_path = os.path.join(tmp, "cache.json")
            with open(cache_path, "w") as fh:
                json.dump(doc, fh)
            np.random.seed(seed)
            random.seed(seed)
            with contextlib.redirect_stdout(io.StringIO()), quiet_third_party():
                results, _env = tune_kernel(
                    ev.bench.kernel, "__kernel void " + ev.bench.kernel + "() {}", (1, 1, 1), [], tune_params,
                    lang="OpenCL", cache=cache_path, simulation_mode=True, strategy=strategy,
                    strategy_options=options, restrictions=restrict or None, quiet=True,
                    block_size_names=["WGX", "WGY"] if len(keys) == 2 else ["WGX"])
        seen: list[list[int]] = []
        for r in results:
            if isinstance(r.get("time"), (int, float)):
                local = [int(r[k]) for k in keys]
                if local not in seen:
                    seen.append(local)
        return seen

    table = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()
    fields = {"table": table, "strategy": strategy, "options": options, "seed": int(seed), "restrictions": restrict,
              "versions": memo.versions(REPLAY_DISTRIBUTIONS)}
    found, _how = memo.remember("kt-replay", fields, replay)
    visited = [Config(tuple(local)) for local in found]
    if not visited:
        raise RuntimeError(f"Kernel Tuner's {strategy} evaluated no valid configuration for {ev.bench.name}")
    best = min(visited, key=lambda c: ev.measure(c).time_s)
    return best, visited
