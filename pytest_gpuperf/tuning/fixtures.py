"""Fixture ``tuned_workgroup(kernel, problem)``: the work-group size the thesis' tuner picks for a
benchmark kernel on the test's device, cached across runs.

The cache key is (kernel source hash, compile options, device key + backend + driver, problem sizes,
strategy): any change in any of them retunes. Entries live in one JSON file per key under
the folder of the tuning suite's references (:func:`cache_dir`: ``$GPUPERF_TUNING_CACHE``, or
``tuning`` under the user's cache directory — one folder to keep between CI jobs) and are written atomically
(:func:`pytest_gpuperf.util.atomic.atomic_write_json`) so concurrent or interrupted runs never leave a
torn entry. Each entry names its schema (``pytest-gpuperf-tuning/1``,
``pytest_gpuperf/schemas/tuning-cache-1.json``); an entry of another version, or one that does not
follow the schema, is refused with a warning that says why, and the kernel is tuned again.
Long tunings show their progress (configurations timed, time left) on the session's live status line
(:mod:`pytest_gpuperf.report.progress`), which pytest's capture does not swallow.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .. import TUNING_CACHE_SCHEMA
from ..devices.base import Device
from ..devices.dialect import portable
from ..paths import TUNING_FOLDER
from ..schemas.keyed_store import KeyedStore
from ..util.clock import add_budget_option, mark_session_start, session_elapsed
from ..util.memo import cache_folder, reference_folder
from .pareto import BUDGET_S
from .kernels import Benchmark, by_name
from .tuner import tune


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gpuperf")
    group.addoption("--gpuperf-retune", action="store_true", default=False,
                    help="ignore cached work-group tuning results (tuned_workgroup's picks, the tuning suite's "
                         "exhaustive references) and tune again; the kernel-class suite's stored Nsight Compute "
                         "profile is not used either (counters.ncu_reference)")
    add_budget_option(group, "--gpuperf-tuning-budget", "tuning suite: skip kernels",
                      " (ini gpuperf_tuning_budget; default 0 = no budget)")
    group.addoption("--gpuperf-tuning-probe-limit", action="store_true", default=None,
                    help="tuning: where the driver reports a kernel maximum below the device's, launch the "
                         "device maximum once and, if its output matches NumPy, tune up to it "
                         "(ini gpuperf_tuning_probe_limit)")
    group.addoption("--gpuperf-energy-pareto", action="store_true", default=None,
                    help="power suite: also search every tuning kernel's space for its (time, energy) "
                         "Pareto front — every configuration timed, energies (a 2-s span each) fastest first "
                         "until an idle-power bound or --gpuperf-pareto-budget ends it; off by default "
                         "(ini gpuperf_energy_pareto)")
    group.addoption("--gpuperf-pareto-budget", type=float, default=None, metavar="S",
                    help=f"power suite: wall seconds per kernel of a Pareto search (default {BUDGET_S:g}; e.g. 80 measures a "
                         "32-configuration space in full); past it the front is the N fastest configurations' "
                         "(ini gpuperf_pareto_budget)")
    parser.addini("gpuperf_energy_pareto", "default of --gpuperf-energy-pareto", type="bool", default=False)
    parser.addini("gpuperf_pareto_budget", "default of --gpuperf-pareto-budget (seconds)", default=f"{BUDGET_S:g}")
    parser.addini("gpuperf_tuning_budget", "default of --gpuperf-tuning-budget (seconds; 0 = none)", default="0")
    parser.addini("gpuperf_tuning_probe_limit", "default of --gpuperf-tuning-probe-limit", type="bool", default=False)


def pytest_configure(config: pytest.Config) -> None:
    tuning_options(config)  # validated at start-up, like every gpuperf option


def pytest_sessionstart(session: pytest.Session) -> None:
    """The tuning budget counts from the session's start, not from when the suite module was imported."""
    mark_session_start(session.config)


@dataclass(frozen=True)
class TuningOptions:
    """The tuning options of this run, resolved from the command line, then the ini file."""

    budget_s: float  # 0 = none
    probe_limit: bool
    energy_pareto: bool = False  # the power suite's (time, energy) fronts (tuning.pareto.pareto_search)
    pareto_budget_s: float = BUDGET_S  # wall seconds per kernel of one of those searches
    retune: bool = False  # --gpuperf-retune: stored exhaustive references are not replayed (tuning.reference)


def tuning_options(config: pytest.Config) -> TuningOptions:
    budget = config.getoption("--gpuperf-tuning-budget")
    probe = config.getoption("--gpuperf-tuning-probe-limit")
    pareto = config.getoption("--gpuperf-energy-pareto")
    pareto_budget = config.getoption("--gpuperf-pareto-budget")
    pareto_budget = float(pareto_budget if pareto_budget is not None else config.getini("gpuperf_pareto_budget"))
    if pareto_budget <= 0:
        raise pytest.UsageError(f"--gpuperf-pareto-budget={pareto_budget:g}: give a positive number of seconds "
                                "(a Pareto search needs at least one energy; e.g. 45)")
    return TuningOptions(float(budget if budget is not None else config.getini("gpuperf_tuning_budget") or 0),
                         bool(probe if probe is not None else config.getini("gpuperf_tuning_probe_limit")),
                         bool(pareto if pareto is not None else config.getini("gpuperf_energy_pareto")),
                         pareto_budget, bool(config.getoption("--gpuperf-retune")))


def budget_spent(config: pytest.Config) -> float | None:
    """``--gpuperf-tuning-budget`` once the session has run longer than it, else None: the suites skip what
    would start later (with the reason), so a time-boxed GPU session still writes its results."""
    budget = tuning_options(config).budget_s
    return budget if budget and session_elapsed(config) > budget else None


def pareto_budget(config: pytest.Config) -> float:
    """One kernel's (time, energy) search budget: ``--gpuperf-pareto-budget``, never past what is left of the
    session's ``--gpuperf-tuning-budget``, so the last search of a time-boxed call ends truncated but recorded."""
    options = tuning_options(config)
    budget, session = options.pareto_budget_s, options.budget_s
    if session:
        budget = min(budget, max(session - session_elapsed(config), 1.0))
    return budget


def pick_fields(bench: Benchmark, device: Device, sizes: dict[str, int], strategy: str) -> dict[str, Any]:
    """Everything that shapes ``tuned_workgroup``'s pick of ``bench`` on ``device`` (its key's parts)."""
    info = device.info
    return {"source": hashlib.sha256(bench.source.encode()).hexdigest(), "kernel": bench.kernel,
            "options": list(bench.extra_options), "device": info.key, "backend": info.backend,
            "driver": info.driver_version, "problem": sorted(sizes.items()), "strategy": strategy}


def pick_key(fields: dict[str, Any]) -> str:
    """The cache key of a pick made of :func:`pick_fields`' result."""
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:24]


def cache_key(bench: Benchmark, device: Device, sizes: dict[str, int], strategy: str) -> str:
    """The cache key of ``tuned_workgroup``'s pick of ``bench`` on ``device``."""
    return pick_key(pick_fields(bench, device, sizes, strategy))


class StaleTuningEntry(UserWarning):
    """A tuning cache entry was not used (another schema version, or malformed): the kernel is retuned."""


class TuningCache(KeyedStore):
    """The tuning suite's store (:class:`~..schemas.keyed_store.KeyedStore` of
    :data:`~pytest_gpuperf.TUNING_CACHE_SCHEMA`): a refused entry warns :class:`StaleTuningEntry`."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, TUNING_CACHE_SCHEMA, "tuning cache entry", StaleTuningEntry,
                         "the kernel is tuned again and the entry rewritten.", shipped=reference_folder(FOLDER))


#: the folder of the references and of ``tuned_workgroup``'s picks under the user's cache directory
FOLDER = TUNING_FOLDER


def cache_dir() -> Path:
    """``$GPUPERF_TUNING_CACHE`` where set, else ``tuning`` under the package's cache directory
    (:func:`~..util.memo.cache_root`: ``$GPUPERF_CACHE``, or ``<user cache dir>/pytest-gpuperf``). The tuning
    suite's exhaustive references (:mod:`.reference`) are stored here too (their keys differ from the picks')."""
    return cache_folder(FOLDER, "GPUPERF_TUNING_CACHE")


class TunedWorkgroup:
    """Callable behind the fixture; ``last_from_cache`` tells whether the last answer was cached."""

    def __init__(self, device: Device, cache: TuningCache, retune: bool, status: Any = None) -> None:
        self.device = device
        self.cache = cache
        self.retune = retune
        self.status = status  # the live status line (report.progress.LiveStatus), None where it is off
        self.last_from_cache = False
        self.last_entry: dict[str, Any] = {}

    def __call__(self, kernel: Benchmark | str, problem: dict[str, int] | None = None,
                 strategy: str = "dao") -> tuple[int, ...]:
        """The chosen work-group shape (for a workload-transformed pick, the hardware shape (WARP, C)
        of the transformed kernel; ``last_entry['variant']`` says which)."""
        bench = by_name(kernel) if isinstance(kernel, str) else kernel
        # the pick depends on the kernel's text whether it was tuned now or read from the cache (the tuner's
        # evaluator notes the same digest): a warm cache leaves the test's source digest as a cold one
        self.device.note_source(portable(bench.source, self.device.info.backend), bench.extra_options)
        sizes = dict(problem or bench.sizes(self.device))
        fields = pick_fields(bench, self.device, sizes, strategy)
        key = pick_key(fields)
        found = None if self.retune else self.cache.find(key)
        entry = None if found is None else found[0]
        self.last_from_cache = entry is not None
        if entry is None:
            bar = None if self.status is None else self.status.task(f"tuning {bench.name}", "configurations")
            try:
                best, out, ctx = tune(self.device, bench, sizes, strategy, progress=bar)
            finally:
                if bar is not None:
                    bar.close()
            entry = {"local": list(best.local), "variant": best.variant, "kernel": bench.name,
                     "device": self.device.info.key, "problem": sizes, "strategy": strategy,
                     "time_us": ctx.ev.measure(best).time_s * 1e6, "evaluations": len(out.ledger.visited),
                     "space": len(ctx.space), "key_fields": fields}
            try:
                self.cache.put(key, entry)
            except OSError as exc:  # a read-only or full cache folder costs a re-tune next time, never the test
                entry = {**entry, "not_stored": f"{type(exc).__name__}: {exc}"}
                warnings.warn(f"tuned_workgroup: the pick for {bench.name} was not stored in {self.cache.root} "
                              f"({type(exc).__name__}: {exc}); the next run tunes it again", StaleTuningEntry,
                              stacklevel=2)
        self.last_entry = entry
        return tuple(int(v) for v in entry["local"])


@pytest.fixture
def tuned_workgroup(gpu_device: Device, request: pytest.FixtureRequest) -> TunedWorkgroup:
    """``tuned_workgroup(kernel, problem)`` → work-group shape chosen by the thesis' tuner (cached)."""
    cfg = request.config
    from ..report import progress

    return TunedWorkgroup(gpu_device, TuningCache(cache_dir()), bool(cfg.getoption("--gpuperf-retune")),
                          progress.of(cfg))
