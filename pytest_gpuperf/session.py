"""Run-wide state: which devices were asked for, their open backends, baselines, recorded metrics.

The plugin module holds one :class:`GpuPerfSession` on ``config.stash`` and calls it from hooks; all
policy (verdicts, updates, where files go) lives here and in the modules it calls, so it can be
tested without pytest's machinery.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .verdictwords import Gate
from . import baselines as bl
from .devices import Device, DeviceInfo, Inventory, discover, open_device, resolve
from .baselines import catalog, classes, lookup, validity
from .errors import GpuPerfError, ImpossibleValueError
from .gatecheck import plants
from .options import JSON_DATE, fill_json, numbered
from .paths import safe_name
from .report import results, sensitivity
from .report.results import Metric
from .report.run_outcome import GateFacts
from . import device_runs, metric_verdict
from .device_runs import DeviceRun
from .timing import observers, suite_profiles
from .timing.measure import MeasureConfig
from .timing.stats import MAD_TO_SIGMA, Stats
from .util.atomic import unclaimed
from .util.interrupt_latch import hold, release
from .util.locks import file_lock
from .util.provenance import environment, git_commit, now_iso
from .util.redaction import redact, redact_argv
from .util.source_digest import combined


@dataclass(frozen=True)
class Options:
    device: str = "0"
    baseline_dir: str | None = None  # --gpuperf-baseline-dir; None: ./baselines under the rootdir
    require_baseline: bool = False  # --gpuperf-require-baseline: a device without one fails the run
    show_all: bool = False  # --gpuperf-summary=all: every row in the summary, not only those that are not 'pass'
    update_baselines: bool = False
    json_path: str | None = None
    history_path: str | None = None
    timeout_s: float = 10.0
    tolerance_k: float = 6.0
    floor: tuple[float, float] | None = None  # --gpuperf-floor GPU CPU; None: per metric class (baselines.classes)
    measure_budget_s: float = 2.0
    samples: bool = True  # keep raw samples in results (--gpuperf-no-samples drops them)
    plants: tuple[str, ...] = ()  # --gpuperf-plant: planted regressions of the gate check (gatecheck.plants)
    compare_paths: tuple[str, ...] = ()  # --gpuperf-compare (repeatable): gate against these runs, not baselines
    when_busy: str = "stop"  # --gpuperf-when-busy: stop the run once another process holds the card throughout
    profile: str = suite_profiles.DEFAULT  # --gpuperf-profile: which tests of the suites run (timing.suite_profiles)


def _attempt(errors: list[str], what: str, step: Callable[[], None]) -> None:
    """Run one end-of-run write; a failure becomes a line in ``errors`` instead of skipping the rest."""
    try:
        step()
    except (GpuPerfError, OSError) as exc:  # OSError: a full disk, a lock that timed out (filelock.Timeout)
        text = str(exc)
        errors.append(text if text.startswith(what) else f"{what}: {text}")


def canonical_test(nodeid: str, path: str | Path | None = None) -> str:
    """A shipped suite's test id as ``suites/<file>::<test>`` wherever the package lies: pytest names a
    file by its path from the rootdir or from the argument that collected it (``pytest_gpuperf/suites/…``
    in a checkout, ``../…/site-packages/pytest_gpuperf/suites/…`` when files are named, plain
    ``test_memory.py::…`` under ``--pyargs pytest_gpuperf.suites``), and a baseline — and every seed
    derived from the id — must match in all of them. ``path``: the test file (``item.path``), which
    decides for sure; without it the id's own path is read. A user's own tests keep their ids."""
    _, sep, rest = nodeid.partition("::")
    if path is not None:
        rel = _in_suites(path)
        return nodeid if rel is None else "suites/" + rel + sep + rest
    parts = nodeid.partition("::")[0].replace("\\", "/").split("/")
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] == "suites" and i > 0 and parts[i - 1] == "pytest_gpuperf":
            return "/".join(["suites"] + parts[i + 1:]) + sep + rest
    return nodeid


def _in_suites(path: str | Path) -> str | None:
    """The file's path within the shipped suites (``test_memory.py``), or None for a file outside them."""
    from .paths import SUITES

    try:
        return Path(path).resolve().relative_to(SUITES).as_posix()
    except ValueError:
        return None


def is_shipped(node: Any) -> bool:
    """Whether a pytest item is a test of the shipped suites (its file lies in the installed package)."""
    path = getattr(node, "path", None)
    return path is not None and _in_suites(path) is not None


def test_id(node: Any) -> str:
    """The canonical id of a pytest item (:func:`canonical_test` with its file). A file of the user's outside the
    rootdir (``gpuperf run ../test_x.py``: the rootdir is the folder it runs in) gets an id with no file part from
    pytest (``::test_x``); its path from the rootdir is put there, so the id names the file a later run (``gpuperf
    baseline init -- ../test_x.py``) collects and two such files' tests stay apart."""
    nodeid, path = node.nodeid, getattr(node, "path", None)
    root = getattr(getattr(node, "config", None), "rootpath", None)
    if nodeid.startswith("::") and path is not None and root is not None and _in_suites(path) is None:
        nodeid = Path(os.path.relpath(path, root)).as_posix() + nodeid
    return canonical_test(nodeid, path)


def _subset_aggregate(entry: Mapping[str, Any], recorded: Any) -> bool:
    """Whether a baseline entry is an aggregate over a set (identity ``kernels``) that this run's selection
    explains away: its test recorded other aggregates over another set (a ``-k`` subset), on which this
    one had no input (a strategy without a result on any selected kernel). Such an absence is the
    selection's, not a metric that disappeared; the per-kernel metrics still count as missing."""
    kernels = (entry.get("identity") or {}).get("kernels")
    if kernels is None:
        return False
    return any(m.test == entry.get("test") and "kernels" in m.identity and m.identity["kernels"] != kernels
               for m in recorded)


def strip_device_id(nodeid: str, spec: str) -> str:
    """``t.py::f[opencl:0-1MiB]`` → ``t.py::f[1MiB]``: baselines must not depend on the device index
    (nor on where the suites are installed: :func:`canonical_test`)."""
    nodeid = canonical_test(nodeid)
    m = re.match(r"^(.*)\[(.*)\]$", nodeid)
    if not m:
        return nodeid
    parts = [p for p in m.group(2).split("-") if p != spec]
    joined = "-".join(parts)
    return f"{m.group(1)}[{joined}]" if joined else m.group(1)


def results_path(template: str, info: DeviceInfo, several: bool, commit: str = "", date: str = "") -> str:
    """``--gpuperf-json``'s path for one device: ``{key}``/``{backend}``/``{index}``/``{device}``/``{commit}``/
    ``{date}`` filled in (``{n}`` is left for the write: :func:`.options.numbered`); a plain path gets
    ``-<key>-<backend>`` when several devices write results."""
    key = safe_name(info.key)
    if "{" in template:
        return fill_json(template, key, info.backend, info.index, commit, date)
    if several:
        p = Path(template)
        return str(p.with_name(f"{p.stem}-{key}-{info.backend}{p.suffix}"))
    return template


class GpuPerfSession:
    def __init__(self, options: Options, rootdir: Path) -> None:
        self.options = options
        self.rootdir = rootdir
        self._inventory: Inventory | None = None
        self._selected: list[DeviceInfo] | None = None
        self.runs: dict[str, DeviceRun] = {}
        #: per device, the tests that passed on it (a test's metrics missing from it count only there: a worker of
        #: pytest-xdist that ran a test on one device never reads another's baseline entries as missing)
        self.passed_tests: dict[str, set[str]] = {}
        self.started = now_iso()
        #: when the run started, to tell a results file another run wrote meanwhile from an earlier run's
        self.started_ns = time.time_ns()
        #: this session's run id (``run.id``): one run recorded live and imported from its results file is one
        self.run_id = uuid.uuid4().hex
        #: ``--gpuperf-json`` path → the file written (``-2``… where another run wrote that path meanwhile)
        self.written_as: dict[str, str] = {}
        self.files_written: list[str] = []
        self.missing: dict[str, list[str]] = {}
        self.retired: dict[str, list[str]] = {}  # baseline entries of metrics the suites no longer record
        self.interrupted = False  # a signal ended the test loop (set by :meth:`finish`)
        self.in_progress: dict[str, str] = {}  # per device, the test set up and not yet torn down
        self.reference = None  # compare.load.Side: --gpuperf-compare's run, loaded by load_reference()
        #: an xdist worker: other workers own the other devices (results paths: :meth:`json_paths`)
        self.distributed = False

    @property
    def against(self) -> str:
        """What this run is gated against, for messages: ``baseline`` or ``run A.json[, A2.json]``."""
        return "run " + ", ".join(self.options.compare_paths) if self.reference is not None else "baseline"

    def load_reference(self) -> None:
        """Read ``--gpuperf-compare``'s results files: several runs of one device pool into one reference
        as in ``gpuperf compare`` (raises compare.load.CompareInputError)."""
        if self.options.compare_paths:
            from .compare.gate import load_reference

            self.reference = load_reference(list(self.options.compare_paths))

    # ---- devices -----------------------------------------------------------------------------
    @property
    def inventory(self) -> Inventory:
        if self._inventory is None:
            self._inventory = discover()
        return self._inventory

    def selected(self) -> list[DeviceInfo]:
        """Devices named by ``--gpuperf-device`` (raises DeviceNotFoundError listing real ones)."""
        if self._selected is None:
            self._selected = resolve(self.options.device, self.inventory)
        return self._selected

    def run_for(self, spec: str) -> DeviceRun:
        run = self.runs.get(spec)
        if run is None:
            info = next(d for d in self.selected() if d.spec == spec)
            run = DeviceRun(info, lookup.resolve(self.baseline_dir, info.key, info.backend, info.family_key),
                            reference=self.reference)
            self.runs[spec] = run
        return run

    def load_baselines(self) -> None:
        """Load (and validate) the baseline file of every selected device now, before the first test:
        a malformed file is then one error for the run instead of the same message and traceback
        repeated for every test (399 lines for one truncated file before)."""
        for info in self.selected():
            self.run_for(info.spec)

    def device(self, spec: str) -> Device:
        run = self.run_for(spec)
        if run.device is None:
            device = open_device(run.info)
            device.readback_timeout_s = self.options.timeout_s
            run.device = device
            why = device.build_check()
            if why:  # the test that opened it fails with the reason; every later one skips, naming it
                device.abandon(why)
                raise GpuPerfError(why)
        return run.device

    @property
    def baseline_dir(self) -> Path:
        """The user's baseline folder: ``--gpuperf-baseline-dir`` (relative to the rootdir), default
        ``<rootdir>/baselines``."""
        path = Path(self.options.baseline_dir or "baselines")
        return path if path.is_absolute() else self.rootdir / path

    def unbaselined(self) -> list[DeviceRun]:
        """Devices that recorded metrics but have no baseline of their own (nor a reviewed one), or whose
        baseline holds none of the metrics recorded (a user's own suite on a device whose reviewed baseline
        covers the shipped suites): their run gates only documented bounds and, on CPU devices, their family's
        deterministic figures."""
        return [r for r in self.runs.values() if self.has_no_baseline(r)]

    def has_no_baseline(self, run: DeviceRun) -> bool:
        """:meth:`unbaselined`'s rule for one device (a run gated against another run, or one that
        writes baselines, is never without one)."""
        return (self.reference is None and not self.options.update_baselines and bool(run.metrics)
                and (run.source.origin in ("none", "family") or not run.metrics.keys() & run.expected.keys()))

    def measure_config(self) -> MeasureConfig:
        return MeasureConfig(timeout_s=self.options.timeout_s, budget_s=self.options.measure_budget_s)

    # ---- metrics -----------------------------------------------------------------------------
    def record(self, nodeid: str, spec: str, name: str, value: float, unit: str, better: str,
               stats: Stats | None = None, tolerance: Mapping[str, float] | None = None,
               bound: float | None = None, info: Mapping[str, Any] | None = None,
               identity: Mapping[str, Any] | None = None, valid: tuple[float, float] | None = None,
               shipped: bool = False) -> Metric | None:
        """Record one metric of a test on a device and compare it with the baseline.

        ``identity``: the options that shaped the value (sample count, seed, sweep mode); a baseline
        made with other ones gives ``incomparable``. ``valid``: the metric's physical range; a value
        outside it (or a NaN, a negative time, a bandwidth above peak, a raw sample no measurement can take:
        :func:`~pytest_gpuperf.baselines.validity.figure_problem`) raises :class:`ImpossibleValueError`.
        ``shipped``: a test of the shipped suites; its metric's tolerance, where it names none, is its
        family's in :mod:`~pytest_gpuperf.baselines.catalog`, whose unit and direction it must also have."""
        run = self.run_for(spec)
        try:
            tolerance = self._validated(run, nodeid, spec, name, float(value), unit, better, tolerance, valid,
                                        shipped, identity, None if stats is None else stats.samples, info)
        except ImpossibleValueError as exc:  # said with what the host was doing while it was measured
            seen = {} if run.device is None else observers.Capture(run.device, from_start=True).marks()
            raise ImpossibleValueError(f"{exc}{observers.busy_note(seen)}") from None
        planted = plants.parse(list(self.options.plants), device=spec)
        if plants.drops(planted, name):
            return None  # the gate check's planted "metric disappears": its test no longer records it
        metric = self._annotated(run, Metric(strip_device_id(nodeid, spec), name, float(value), unit, better, stats,
                                             None, "new", dict(info or {}),
                                             None if tolerance is None else dict(tolerance), dict(identity or {}),
                                             self._source_digest(run, planted)),
                                 bound)
        metric_verdict.judge(run, metric, bound)  # the one judgement, against run.reference or its baseline
        run.metrics[name] = metric
        return metric

    @staticmethod
    def _source_digest(run: DeviceRun, planted: Mapping[str, str]) -> str | None:
        """The digest of the kernels the current test compiled before recording a figure
        (:attr:`Device.source_digests`), or None: it compiled none, or the gate check planted a regression
        (its plants change kernels on purpose, and must still be judged against the baseline)."""
        if run.device is None or planted:
            return None
        return combined(run.device.source_digests)

    def _validated(self, run: DeviceRun, nodeid: str, spec: str, name: str, value: float, unit: str, better: str,
                   tolerance: Mapping[str, float] | None, valid: tuple[float, float] | None,
                   shipped: bool, identity: Mapping[str, Any] | None = None, samples: Sequence[float] | None = None,
                   info: Mapping[str, Any] | None = None) -> Mapping[str, float] | None:
        """Refuse a metric the gate cannot take (a bad direction or name, a shipped suite's metric without its
        family's identity keys, a second record of one name, an impossible value or raw sample:
        :mod:`~pytest_gpuperf.baselines.validity`); the tolerance it is recorded with (a shipped suite's
        family's where it names none)."""
        if better not in bl.DIRECTIONS:
            raise GpuPerfError(f"metric {name!r}: better={better!r} is not one of {bl.DIRECTIONS}")
        if not re.fullmatch(r"[A-Za-z0-9_.\-\[\]=:+]+", name):
            raise GpuPerfError(f"metric name {name!r} may hold only letters, digits and _ . - [ ] = : +")
        said = validity.tolerance_problem(tolerance) or validity.unit_problem(unit)
        if said is not None:
            raise GpuPerfError(f"metric {name!r}: {said}")
        if shipped:
            try:
                tolerance = catalog.policy(name, unit, better, tolerance, run.info.is_cpu)
            except ValueError as exc:
                raise GpuPerfError(str(exc)) from None
            lacking = catalog.missing_identity(name, identity)
            if lacking:
                raise GpuPerfError(f"metric {name!r} is recorded without the identity key(s) {', '.join(lacking)} "
                                   f"its family {catalog.family(name).pattern!r} carries (baselines/catalog.py): pass "
                                   "the options that shape its value as identity=, or runs made differently compare")
        if name in run.metrics:
            first = run.metrics[name].test
            if first == strip_device_id(nodeid, spec):
                raise GpuPerfError(f"metric {name!r} recorded twice by {first} on {spec}: give each record its own name")
            raise GpuPerfError(f"metric {name!r} recorded twice on {spec} (by {first} and {nodeid}): give each test "
                               "its own name (a parametrized test: put its parameter in the name)")
        problem = validity.figure_problem(name, value, unit, samples, info,
                                          peak_bandwidth_gbs=run.info.peak_bandwidth_gbs, valid=valid)
        if problem is not None:
            raise ImpossibleValueError(problem)
        return tolerance

    @staticmethod
    def _annotated(run: DeviceRun, metric: Metric, bound: float | None) -> Metric:
        """The metric with what the observers saw while it was measured (:func:`.metric_verdict.annotated`)."""
        return metric_verdict.annotated(run, metric, bound)

    @staticmethod
    def deterministic(metric: Metric) -> bool:
        """Whether the metric follows the ``deterministic`` noise model (:func:`.metric_verdict.deterministic`)."""
        return metric_verdict.deterministic(metric)

    def gate_facts(self) -> GateFacts:
        """What the run's exit status depends on at its end (:class:`~.report.run_outcome.RunOutcome`)."""
        return GateFacts(judging=not self.options.update_baselines, missing=any(self.missing.values()),
                         host_busy=self.too_contended(), throttled=self.too_throttled(), gpu_busy=self.gpu_too_busy(),
                         no_baseline=([r.info.spec for r in self.unbaselined()] if self.options.require_baseline
                                      else []))

    def too_contended(self) -> list[str]:
        """One line per CPU device whose host was too busy to gate it (:func:`.device_runs.host_too_busy`;
        empty when the run only writes baselines)."""
        return [] if self.options.update_baselines else device_runs.host_too_busy(self.runs.values())

    def note_test(self, nodeid: str, spec: str, when: str, duration: float, outcome: str) -> None:
        """Add one phase of a test to its duration (results ``tests``: what each test costs, so the suite's
        own cost has a trend); the outcome is the call's, or a failing setup's/teardown's."""
        key = strip_device_id(nodeid, spec)
        doc = self.run_for(spec).tests.setdefault(key, {"duration_s": 0.0, "outcome": ""})
        doc["duration_s"] = round(doc["duration_s"] + max(0.0, float(duration)), 4)
        if when == "call" or outcome == "failed" or not doc["outcome"]:
            doc["outcome"] = outcome
        if when == "setup":
            self.in_progress[spec] = key
        elif when == "teardown":
            self.in_progress.pop(spec, None)

    def busy_stop(self, nodeid: str, spec: str) -> str | None:
        """After a test: why the run should stop now on a card another process holds, or None
        (:func:`.device_runs.busy_stop`; only with ``--gpuperf-when-busy=stop``, never when writing baselines)."""
        if self.options.when_busy != "stop" or self.options.update_baselines or spec not in self.runs:
            return None
        return device_runs.busy_stop(self.runs[spec], strip_device_id(nodeid, spec), spec)

    def gpu_too_busy(self) -> list[str]:
        """One line per device whose card another process shared too often to gate it
        (:func:`.device_runs.gpu_too_busy`; empty when the run only writes baselines)."""
        return [] if self.options.update_baselines else device_runs.gpu_too_busy(self.runs.values())

    def too_throttled(self) -> list[str]:
        """One line per device whose card throttled too often to gate it (:func:`.device_runs.too_throttled`;
        empty when the run only writes baselines)."""
        return [] if self.options.update_baselines else device_runs.too_throttled(self.runs.values())

    def begin_test(self) -> None:
        """Forget the previous test's host-load, power and tenant readings and the kernels it compiled (each
        test's metrics carry their own)."""
        for run in self.runs.values():
            if run.device is not None:
                run.device.observations.clear()
                run.device.power_observations.clear()
                run.device.tenant_observations.clear()
                run.device.source_digests.clear()

    def failures(self, nodeid: str) -> list[str]:
        """One-line messages of the metrics this test regressed (empty when updating baselines)."""
        if self.options.update_baselines:
            return []
        lines = []
        for run in self.runs.values():
            test = strip_device_id(nodeid, run.info.spec)
            lines += [m.info["line"] for m in run.metrics.values() if m.test == test and m.verdict == Gate.REGRESSED]
        return lines

    def metrics_of(self, nodeid: str) -> list[tuple[str, Metric]]:
        """(device spec, metric) of every metric the test ``nodeid`` recorded, on every device."""
        out = []
        for run in self.runs.values():
            test = strip_device_id(nodeid, run.info.spec)
            out += [(run.info.spec, m) for m in run.metrics.values() if m.test == test]
        return out

    def mark_passed(self, nodeid: str, spec: str) -> None:
        self.passed_tests.setdefault(spec, set()).add(strip_device_id(nodeid, spec))

    def mark_expected_failure(self, nodeid: str, spec: str, reason: str) -> None:
        """A test marked xfail (a known finding, e.g. a library function past its documented bound)
        failed as expected: its out-of-band metrics are ``known``, not ``regressed`` — the summary then
        tells a reader that the run's one red row is the documented finding, not news."""
        test = strip_device_id(nodeid, spec)
        for metric in self.run_for(spec).metrics.values():
            if metric.test == test and metric.verdict == Gate.REGRESSED:
                metric.verdict = Gate.KNOWN
                metric.info["xfail"] = reason

    # ---- end of session ------------------------------------------------------------------------
    def finish(self, argv: list[str], interrupted: bool = False) -> None:
        """Find missing metrics, update baselines if asked, write results and history.

        Each of the three writes is attempted even when another failed (a baseline that cannot be
        written must not cost the run its results file, nor the results file its history line); their
        errors are raised together afterwards as one :class:`GpuPerfError`.

        ``interrupted``: Ctrl-C or SIGTERM ended the test loop; both records say so (``run.interrupted``), so a
        reader knows the run holds only the tests that finished. A Ctrl-C or SIGTERM that arrives during these
        writes is held until they are done — each file is whole, and the results and history of one run
        agree — and then reported through :attr:`signal_during_writes` (the plugin ends the run as
        interrupted); every test had finished by then, so the records keep ``interrupted`` as it was."""
        import threading

        self.signal_during_writes = False
        self.interrupted = bool(interrupted)
        if interrupted:  # the test a signal stopped: its setup's outcome is not the test's
            for spec, key in self.in_progress.items():
                self.runs[spec].tests[key]["outcome"] = "interrupted"
        errors: list[str] = []
        meta = self._run_meta(argv, interrupted)  # once: the results and the history line carry one run
        held: list[int] = []
        previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():  # signal handlers: main thread only
            previous = hold(held)  # SIGINT and SIGTERM alike
        chosen = suite_profiles.get(self.options.profile)
        try:
            for spec, run in self.runs.items():
                recorded = set(run.metrics)
                # a part of a test the suite profile leaves out (its other kernels) is not missing
                gone = [name for name, e in run.expected.items()
                        if e.get("test") in self.passed_tests.get(spec, set()) and name not in recorded
                        and not _subset_aggregate(e, run.metrics.values()) and chosen.measures(str(e.get("test")), name)]
                self.retired[spec] = sorted(n for n in gone if catalog.retired(n))  # the suites moved them
                self.missing[spec] = sorted(n for n in gone if not catalog.retired(n))
                if self.options.update_baselines and run.metrics:
                    _attempt(errors, f"baseline not updated for {spec}", lambda run=run: self._update_baseline(run))
            if self.options.json_path:
                _attempt(errors, "results not written", lambda: self._write_results(argv, meta))
            if self.options.history_path:
                _attempt(errors, "history not written", lambda: self._record_history(argv, meta))
        finally:
            release(previous)
            self.signal_during_writes = bool(held)
        if errors:
            raise GpuPerfError("; ".join(errors))

    def _write_results(self, argv: list[str], meta: dict[str, Any] | None = None) -> None:
        """One results document per device (``--gpuperf-json``); an OS error names the path, in one line.
        ``meta``: the run section (:meth:`_run_meta`), shared with the history line."""
        meta = self._run_meta(argv) if meta is None else meta
        for path, run in self.json_paths().items():
            stopped = {"stopped": run.stopped_busy} if run.stopped_busy else {}
            lost = self.abandoned().get(run.info.spec)
            if lost:  # a hung or faulted kernel, or a compiler that cannot build for the device
                stopped["abandoned"] = lost
            beyond = sorted(m.name for m in run.metrics.values() if m.info.get("would_regress"))
            if beyond:  # contended/throttled, but changed far beyond what that explains (timing.observers.would_regress)
                stopped["would_regress"] = beyond
            doc = results.document(run.info, environment(self.rootdir), {**meta, **stopped},
                                   sorted(run.metrics.values(), key=lambda m: m.name), self.options.samples)
            doc["missing"] = self.missing.get(run.info.spec, [])
            doc["detection"] = sensitivity.tally(run.metrics.values())
            doc["tests"] = [{"test": t, **run.tests[t]} for t in sorted(run.tests)]
            try:
                with file_lock(path.replace("{n}", "n")):  # another run writing this path now waits, then takes -2
                    chosen = numbered(path)
                    target = str(unclaimed(chosen, self.started_ns))
                    results.write(target, doc)
            except OSError as exc:
                raise GpuPerfError(f"{path}: {exc.strerror or exc}") from exc
            self.written_as[path] = target
            self.files_written.append(target if target == chosen else
                                      f"{target} (another run wrote {chosen} while this one ran)")

    def _record_history(self, argv: list[str], meta: dict[str, Any] | None = None) -> None:
        """One history run per device that recorded metrics, each in one transaction.
        ``meta``: the run section (:meth:`_run_meta`), shared with the results file."""
        from .history.backends import record_runs
        from .history.target import HistoryTargetError
        from .history.records import from_session

        meta = self._run_meta(argv) if meta is None else meta
        shaping = {k: v for k, v in asdict(self.options).items() if not k.endswith(("_path", "_dir"))}
        runs = [from_session(run.info, environment(self.rootdir), meta, run.metrics.values(), shaping,
                             [{"test": t, **run.tests[t]} for t in sorted(run.tests)])
                for run in self.runs.values() if run.metrics]
        try:
            record_runs(self.options.history_path or "", runs)
        except HistoryTargetError:
            raise
        except Exception as exc:  # noqa: BLE001 - sqlite3/psycopg/OS errors: name the target and the fix
            raise GpuPerfError(f"history not written to {redact(self.options.history_path or '')}: "
                               f"{type(exc).__name__}: {redact(str(exc))}; the results JSON is unaffected — fix the target and import it with "
                               f"'gpuperf history import'") from exc
        self.files_written.append(redact(str(self.options.history_path)))  # printed: never a password

    def provenance(self, info: DeviceInfo) -> dict[str, Any]:
        return {"driver": info.driver_version, "runtime": info.runtime_version, "toolkit": info.toolkit_version,
                "device_name": info.name, "date": now_iso(), "commit": git_commit(str(self.rootdir))}

    def _update_baseline(self, run: DeviceRun) -> None:
        """Write the run's metrics into its baseline file (``--gpuperf-update-baselines``); refused, naming them,
        where a figure holds a value no measurement can take (:func:`.baselines.validity.metric_problem`, the
        rule of every builder of an entry; :meth:`record` already refuses such a figure, this keeps the rule
        whatever reached the run's metrics)."""
        impossible = [why for m in run.metrics.values()
                      if (why := validity.metric_problem(m.to_json(), run.info.peak_bandwidth_gbs))]
        if impossible:
            raise ImpossibleValueError(f"{len(impossible)} figure(s) hold impossible values and a baseline entry is "
                                       f"never made from one, so none was written: {'; '.join(impossible[:5])}"
                                       + (f"; and {len(impossible) - 5} more" if len(impossible) > 5 else ""))
        prov = self.provenance(run.info)
        entries = {m.name: bl.make_entry(value=m.value, worst=m.value, unit=m.unit, better=m.better, test=m.test,
                                         info=m.info, tolerance=m.tolerance,
                                         spread=MAD_TO_SIGMA * m.stats.mad if m.stats is not None else 0.0,
                                         k=self.options.tolerance_k,
                                         floor_rel=classes.floor(m.unit, run.info.is_cpu, self.options.floor,
                                                                 classes.is_host_timed(m.info), spread_known=False),
                                         provenance=prov, samples=None if m.stats is None else m.stats.samples,
                                         identity=m.identity, source_digest=m.source_digest,
                                         resolution=classes.resolution_floor(m.unit, run.info.timer_resolution_s, m.info))
                   for m in run.metrics.values()}
        device = {"key": run.info.key, "name": run.info.name, "class": bl.device_class(run.info.is_cpu)}
        bl.update(bl.BaselineFile(run.source.write_path), run.info.backend, device, prov, entries)
        self.files_written.append(str(run.source.write_path))

    def json_paths(self) -> dict[str, DeviceRun]:
        """Results path → the run written there (``--gpuperf-json``; empty without it).

        Two cards of one model share a device key, so ``{key}`` alone (or the ``-key-backend`` suffix)
        would give both one path and the second would overwrite the first; such paths get the backend
        and index appended (``r-pocl-x-opencl1.json``). Under pytest-xdist (:attr:`distributed`) each
        worker knows only its own runs, so the decision is made over every *selected* device — the same
        answer on every worker — and two workers never write one file."""
        template = self.options.json_path or ""
        if not template:
            return {}
        # a run a signal ended before it measured anything still leaves its file, marked interrupted: a batch job
        # killed in its first test is told apart from one that never started; so does a device given up on
        runs = [r for r in self.runs.values() if r.metrics or self.missing.get(r.info.spec)
                or (self.interrupted and r.device is not None) or r.info.spec in self.abandoned()]
        devices = self.selected() if self.distributed else [r.info for r in runs]
        several = len(devices) > 1
        started = datetime.fromisoformat(self.started).astimezone(timezone.utc)  # the run.started of the file
        commit, date = git_commit(str(self.rootdir)), started.strftime(JSON_DATE)
        paths = {info.spec: results_path(template, info, several, commit, date) for info in devices}
        taken: dict[str, int] = {}
        for path in paths.values():
            taken[path] = taken.get(path, 0) + 1
        out = {}
        for run in runs:
            path = paths[run.info.spec]
            if taken[path] > 1:  # two cards of one model: the index keeps their files apart
                p, tag = Path(path), f"-{run.info.backend}"
                stem = p.stem[: -len(tag)] if p.stem.endswith(tag) else p.stem  # r-key-opencl → r-key-opencl1
                path = str(p.with_name(f"{stem}{tag}{run.info.index}{p.suffix}"))
            out[path] = run
        return out

    def _run_meta(self, argv: list[str], interrupted: bool = False) -> dict[str, Any]:
        """The ``run`` section of the results and of the history record; ``interrupted``: Ctrl-C ended the
        run before every test ran, so the records hold only what finished."""
        return {"id": self.run_id, "started": self.started, "finished": now_iso(), "argv": redact_argv(argv), "profile": self.options.profile,
                "update_baselines": self.options.update_baselines, "interrupted": bool(interrupted)}

    def blocks_exit(self) -> bool:
        """Whether any device would wait on hung work when finalised at exit (``Device.blocks_exit``)."""
        return any(run.device is not None and run.device.blocks_exit for run in self.runs.values())

    def abandoned(self) -> dict[str, str]:
        """Devices given up on during the run (spec → why): a hung kernel or a fault, whenever it was found
        — in a test, or at the end of the run behind a test that returned without waiting. Any of them
        fails the run. A device left because Ctrl-C ended the run while it worked is not one of them
        (``Device.interrupted``: nobody knows whether its work would have ended)."""
        return {spec: run.device.abandoned for spec, run in self.runs.items()
                if run.device is not None and run.device.abandoned is not None and not run.device.interrupted}

    def close(self, interrupted: bool = False) -> None:
        """Release every device, waiting at most the watchdog for each one's queued work; a device whose
        work does not finish is abandoned, never waited on, so the process always exits. After Ctrl-C
        (``interrupted``) a device gets only a short grace for the work in flight and is then left
        without a wait, marked interrupted, not hung (``Device.close``). A Ctrl-C during the waits stops
        waiting on every device the same way."""
        for run in self.runs.values():
            if run.device is None:
                continue
            try:
                run.device.close(self.options.timeout_s, interrupted=interrupted)
            except KeyboardInterrupt:
                run.device.abandon(f"the run was interrupted while waiting for the work queued on {run.info.spec}; "
                                   "it was not waited for", interrupted=True)
                interrupted = True
