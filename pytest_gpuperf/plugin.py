"""pytest wiring: options, device parametrization, fixtures, the regression gate, reports.

Read top to bottom it is the story of a run: options are added, the device choice is checked,
tests are parametrized over devices, each test's metrics are compared with the baseline as soon
as the test body returns, and at the end baselines/results are written and summarised.
"""

from __future__ import annotations

import copy
import os
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from .devices import Device
from .errors import DeviceNotFoundError, GpuPerfError
from . import options as checks
from .gatecheck import plants
from .helpers import KernelHelper, Measurer, Recorder
from .fleet import pinning
from .fleet.workers import KEY as _WORKER_KEY, Gathered, documents_of, payload, report as sibling_report
from .report import civerdict, progress, skip_reasons, summary
from .report.run_outcome import RunOutcome, interrupted_line
from .schemas.results_doc import ResultsDocument
from .session import GpuPerfSession, Options, is_shipped, strip_device_id, test_id
from .timing import suite_profiles
from .util.interrupt_latch import Latch

session_key = pytest.StashKey[GpuPerfSession]()
_latch = pytest.StashKey[Latch]()

#: Each concern package may ship a ``fixtures`` module (its fixtures, options and markers); pytest
#: registers those as sub-plugins of this one, so this module stays the only place wired to pytest. The
#: studies wing's (``studies.fixtures``) is named here, never imported: pytest loads it by name, so the gate
#: imports nothing of the studies.
pytest_plugins = [*(f"pytest_gpuperf.{area}.fixtures" for area in ("probes", "accuracy", "tuning")),
                  "pytest_gpuperf.studies.fixtures"]


# ---- options ------------------------------------------------------------------------------------
def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gpuperf", "GPU benchmarks and regression gate (pytest-gpuperf)")
    group.addoption("--gpuperf-device", default="0", metavar="SPEC",
                    help="device(s) to benchmark: 0 (first, CUDA preferred), cuda:N, opencl:N, all, or a "
                         "comma-separated list (default: 0)")
    group.addoption("--gpuperf-list-devices", action="store_true", help="list the devices found and exit")
    group.addoption("--gpuperf-baseline-dir", default=None, metavar="DIR",
                    help="your directory of <device-key>.json baseline files (default: ./baselines under the "
                         "rootdir; a device without a file there is gated against the reviewed baseline shipped "
                         "with the plugin, if any). A directory given here must exist (unless updating)")
    group.addoption("--gpuperf-require-baseline", action="store_true", default=None,
                    help="fail the run (NO BASELINE) when a device has no baseline of its own or shipped; "
                         "ini: gpuperf_require_baseline")
    group.addoption("--gpuperf-summary", default=None, choices=summary.SUMMARY_CHOICES,
                    help="end-of-run table: 'failures' lists the rows that are not 'pass', then the counts "
                         "(default); 'all' lists every metric. ini: gpuperf_summary")
    group.addoption("--gpuperf-update-baselines", action="store_true",
                    help="write measured values into the baseline files (atomically) instead of gating")
    group.addoption("--gpuperf-json", default=None, metavar="PATH",
                    help="write results JSON; {key}, {backend}, {index}, {device}, {commit} and {date} are filled in "
                         "per device, {n} by the first number whose file does not exist (a file another run "
                         "wrote there while this one ran is kept: this run writes NAME-2.json)")
    group.addoption("--gpuperf-history", default=None, metavar="URL",
                    help="record every run in a history store (trend tracking): path.db (SQLite), "
                         "postgresql://... or path.jsonl (legacy); see 'gpuperf history'")
    group.addoption("--gpuperf-timeout", type=float, default=10.0, metavar="SECONDS",
                    help="watchdog for a single device measurement (default: 10)")
    group.addoption("--gpuperf-tolerance-k", type=float, default=6.0, metavar="K",
                    help="new baselines accept K × robust sigma of the measured noise (default: 6)")
    group.addoption("--gpuperf-floor", type=float, nargs=2, default=None, metavar=("GPU", "CPU"),
                    help="narrowest relative band new baselines get on GPUs and on CPU devices, for every metric "
                         "class (default: per class, pytest_gpuperf/baselines/classes.py)")
    group.addoption("--gpuperf-no-samples", action="store_true",
                    help="leave the raw timing samples out of the results JSON (they are kept by default: "
                         "compare and the significance test read them)")
    group.addoption("--gpuperf-plant", action="append", default=[], metavar="KIND=ARG",
                    help="gate check only: plant a known regression (memory=F, compute=F, throughput=F, launch=F, "
                         "chase=F, summation=F, power=F, tuner=F, model=F, ulp=FUNCTION, missing=METRIC); see "
                         "pytest_gpuperf/gatecheck/plants.py")
    group.addoption("--gpuperf-compare", action="append", default=[], metavar="OTHER.json",
                    help="gate this run against another run's results JSON instead of the baseline: the verdicts "
                         "of 'gpuperf compare OTHER.json THIS.json' (a significant worse metric fails its test); "
                         "repeat it to pool several runs of the reference")
    group.addoption("--gpuperf-budget", type=float, default=2.0, metavar="SECONDS",
                    help="time budget per statistical measurement once the minimum repeats ran (default: 2)")
    group.addoption("--gpuperf-when-busy", choices=("stop", "finish"), default=None,
                    help="another process holding the card through several tests in a row: stop the run there "
                         "(default; it fails as GPU TOO BUSY TO GATE either way) or finish every test; "
                         "ini: gpuperf_when_busy")
    group.addoption("--gpuperf-fail-on-outlier", action="store_true",
                    help="several cards of one model: fail the run when the sibling check finds a card "
                         "significantly worse than its siblings (default: report it only)")
    group.addoption("--gpuperf-profile", default=None, choices=suite_profiles.NAMES,
                    help="which tests of the shipped suites run: 'quick' the headline figures (the rest is "
                         "deselected; metrics keep their names, so it gates against a full baseline), 'full' every "
                         "test but the long seed-protocol studies (default), 'study' full and the studies. "
                         "ini: gpuperf_profile; pytest_gpuperf/timing/suite_profiles.py")
    progress.add_option(group)
    parser.addini("gpuperf_profile", "default for --gpuperf-profile (quick, full or study)",
                  default=suite_profiles.DEFAULT)
    parser.addini("gpuperf_device", "default for --gpuperf-device", default=None)
    parser.addini("gpuperf_baseline_dir", "default for --gpuperf-baseline-dir", default=None)
    parser.addini("gpuperf_when_busy", "default for --gpuperf-when-busy (stop or finish)", default="stop")
    parser.addini("gpuperf_require_baseline", "default for --gpuperf-require-baseline", type="bool", default=False)
    parser.addini("gpuperf_summary", "default for --gpuperf-summary (failures or all)", default="failures")


# ---- configuration --------------------------------------------------------------------------------
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpuperf(requires=[...]): skip unless the device has every feature "
                                       "listed (fp64, fp16, cuda, opencl, clock, gpu, cpu)")
    opt = config.getoption
    device = opt("--gpuperf-device")
    if device == "0" and config.getini("gpuperf_device"):
        device = config.getini("gpuperf_device")
    try:
        plant_table = plants.parse(opt("--gpuperf-plant"))
        floor = checks.floors(opt("--gpuperf-floor"), config.args)
        timeout_s = checks.positive("--gpuperf-timeout", opt("--gpuperf-timeout"))
        budget_s = checks.positive("--gpuperf-budget", opt("--gpuperf-budget"))
        tolerance_k = checks.non_negative("--gpuperf-tolerance-k", opt("--gpuperf-tolerance-k"))
        for name in ("--gpuperf-accuracy-budget", "--gpuperf-tuning-budget"):
            if opt(name, None) is not None:
                checks.non_negative(name, opt(name), "number of seconds")
        if opt("--gpuperf-accuracy-scale", None) is not None:
            checks.positive("--gpuperf-accuracy-scale", opt("--gpuperf-accuracy-scale"))
        if opt("--gpuperf-json"):
            checks.json_template(opt("--gpuperf-json"))
        when_busy = opt("--gpuperf-when-busy") or checks.choice("gpuperf_when_busy", config.getini("gpuperf_when_busy"),
                                                                ("stop", "finish"))
        suite_profile = opt("--gpuperf-profile") or checks.choice("gpuperf_profile", config.getini("gpuperf_profile"),
                                                                  suite_profiles.NAMES)
    except ValueError as exc:  # OptionError, and plants' own ValueError
        raise pytest.UsageError(str(exc)) from None
    baseline_dir = opt("--gpuperf-baseline-dir") or config.getini("gpuperf_baseline_dir") or None
    shown = opt("--gpuperf-summary") or config.getini("gpuperf_summary")
    if shown not in summary.SUMMARY_CHOICES:
        raise pytest.UsageError(f"gpuperf_summary = {shown!r} in the ini file: choose one of "
                                f"{', '.join(summary.SUMMARY_CHOICES)}")
    require = opt("--gpuperf-require-baseline")
    options = Options(device=device, baseline_dir=baseline_dir,
                      require_baseline=bool(config.getini("gpuperf_require_baseline") if require is None else require),
                      show_all=shown == "all",
                      update_baselines=opt("--gpuperf-update-baselines"), json_path=opt("--gpuperf-json"),
                      history_path=opt("--gpuperf-history"), timeout_s=timeout_s,
                      tolerance_k=tolerance_k, measure_budget_s=budget_s, floor=floor,
                      samples=not opt("--gpuperf-no-samples"),
                      plants=tuple(f"{k}={v}" for k, v in plant_table.items())
                      + tuple(v for v in opt("--gpuperf-plant") if "@" in v),  # device-scoped plants kept as given
                      compare_paths=tuple(opt("--gpuperf-compare") or ()),
                      when_busy=when_busy, profile=suite_profile)
    if options.update_baselines and suite_profiles.get(options.profile).tests is not None:
        raise pytest.UsageError(f"--gpuperf-profile={options.profile} measures part of the suites; a baseline is made "
                                f"by a full run (its means over a part of the kernels would replace the full ones): "
                                f"drop --gpuperf-profile or use --gpuperf-profile={suite_profiles.DEFAULT}")
    if options.compare_paths and options.update_baselines:
        raise pytest.UsageError("--gpuperf-compare gates against another run; it cannot be combined with "
                                "--gpuperf-update-baselines")
    state = GpuPerfSession(options, Path(str(config.rootpath)))
    latch = Latch()
    latch.install()
    config.stash[_latch] = latch
    config.pluginmanager.register(InterruptReport(config), "gpuperf-interrupt-report")
    state.distributed = pinning.is_worker(config)  # other xdist workers own the other GPUs
    pinning.check_dist(config)
    try:
        if options.update_baselines:
            checks.writable_dir("--gpuperf-baseline-dir", state.baseline_dir)
        elif baseline_dir is not None:  # named, so it must be there: never an empty baseline by a typo
            checks.readable_dir("--gpuperf-baseline-dir", state.baseline_dir)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    try:
        state.load_reference()
    except GpuPerfError as exc:
        raise pytest.UsageError(f"--gpuperf-compare: {exc}") from None
    config.stash[session_key] = state
    if options.history_path:
        _check_history(options.history_path)
    # the controller of xdist workers runs no test, and a worker's terminal is not the user's
    progress.start(config, shown=not (pinning.is_worker(config) or pinning.is_controller(config)))
    if getattr(config.option, "xmlpath", None) and not pinning.is_worker(config):
        config.pluginmanager.register(_JunitNames(config), "gpuperf-junit-names")


def _junit(config: pytest.Config) -> Any:
    """pytest's JUnit writer of this run (``--junitxml``), or None: where the gate's test case and the suites'
    class names go (pytest offers no public handle on it; ``record_xml_attribute`` cannot reach it from an
    xdist worker)."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pragma: no cover - a pytest without it
        return None
    return config.stash.get(xml_key, None)


class _JunitNames:
    """JUnit class names of the shipped suites are their module names (``report.civerdict.suite_classname``),
    wherever the package is installed; set before pytest's writer opens the test case (it keeps attributes
    set earlier)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        name = civerdict.suite_classname(str(report.location[0]), report.nodeid)
        xml = _junit(self.config)
        if name is not None and xml is not None:
            xml.node_reporter(report).add_attribute("classname", name)


def _check_history(value: str) -> None:
    """A history target that cannot be written fails before any test runs, in one line."""
    from .history.backends import check
    from .history.target import HistoryTargetError

    try:
        check(value)
    except HistoryTargetError as exc:
        raise pytest.UsageError(f"--gpuperf-history: {exc}") from None


def pytest_cmdline_main(config: pytest.Config) -> int | None:
    if config.getoption("--gpuperf-list-devices"):
        config._do_configure()  # noqa: SLF001 - we need our stash before the normal main loop
        state = config.stash[session_key]
        print("gpuperf devices:\n" + state.inventory.describe())
        config._ensure_unconfigure()  # noqa: SLF001
        return 0
    return None


def pytest_report_header(config: pytest.Config) -> list[str]:
    """A note before the tests where an OpenCL device is asked for and the GPU that CUDA sees is not among the
    OpenCL platforms (``opencl:N`` then names another device): the listing's hint, with its fix."""
    state = config.stash.get(session_key, None)
    if state is None or not any(w in str(state.options.device) for w in ("opencl", "all")):
        return []
    return [f"gpuperf note: {hint}" for hint in state.inventory.hints()]


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect what the suite profile leaves out (reported as deselected); then fail fast on an unknown
    device before any test runs, but only when some test needs a device."""
    chosen = suite_profiles.get(config.stash[session_key].options.profile)
    profile_ids = {id(item): _profile_id(item) for item in items}
    dropped = [item for item in items if not chosen.selects(profile_ids[id(item)])]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        gone = set(map(id, dropped))
        items[:] = [item for item in items if id(item) not in gone]
    if any("gpu_device" in getattr(item, "fixturenames", ()) for item in items):
        devices = {d.spec: d for d in _selected(config)}
        tests = []
        for item in items:
            d = devices.get(getattr(getattr(item, "callspec", None), "params", {}).get("gpu_device"))
            if d is not None:
                tests.append((item.nodeid, d.key, d.backend, profile_ids[id(item)].split("[", 1)[0]))
        progress.prime(config, tests)
        try:  # a malformed baseline is reported once, before any test, not once per test
            config.stash[session_key].load_baselines()
        except GpuPerfError as exc:
            raise pytest.UsageError(str(exc)) from None


def _profile_id(item: pytest.Item) -> str:
    """The test id a suite profile names: canonical, without the device parameter."""
    spec = getattr(getattr(item, "callspec", None), "params", {}).get("gpu_device")
    return strip_device_id(test_id(item), spec) if spec is not None else test_id(item)


def _selected(config: pytest.Config) -> list:
    try:
        return config.stash[session_key].selected()
    except DeviceNotFoundError as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "gpu_device" in metafunc.fixturenames:
        try:
            specs = [d.spec for d in metafunc.config.stash[session_key].selected()]
        except DeviceNotFoundError:
            specs = []  # reported as a usage error once collection ends (pytest_collection_modifyitems)
        metafunc.parametrize("gpu_device", specs, ids=specs, indirect=True)


# ---- pytest-xdist: one worker per physical GPU (fleet.pinning) ------------------------------------------
@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: one worker per physical GPU that ``--gpuperf-device`` selects."""
    return pinning.auto_workers(config)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Every test of one physical GPU goes to one worker (fleet.pinning.DeviceScheduling)."""
    try:
        selected = config.stash[session_key].selected()
    except DeviceNotFoundError:
        return None  # the workers report the usage error
    return pinning.make_scheduler(config, log, selected)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """The controller gathers each worker's summary lines and results documents (fleet.workers)."""
    node.config.stash.setdefault(_gathered, Gathered()).add(getattr(node, "workeroutput", None))


_gathered = pytest.StashKey[Gathered]()


# ---- fixtures -----------------------------------------------------------------------------------------
@pytest.fixture
def gpu_device(request: pytest.FixtureRequest) -> Device:
    """The device under test (open once per session), after the ``gpuperf(requires=...)`` check."""
    state = request.config.stash[session_key]
    spec = request.param
    info = state.run_for(spec).info
    marker = request.node.get_closest_marker("gpuperf")
    if marker is not None:
        missing = sorted(set(marker.kwargs.get("requires", ())) - info.features)
        if missing:
            pytest.skip(f"{info.spec} ({info.name}) lacks {', '.join(missing)}")
    try:
        device = state.device(spec)
    except GpuPerfError as exc:
        refused = str(exc)
    else:
        refused = ""
    if refused:
        pytest.fail(refused, pytrace=False)
    if device.abandoned is not None:  # a hung or faulted kernel earlier: its queue is never waited on again
        pytest.skip(f"{spec} abandoned earlier in this run: {device.abandoned}")
    return device


@pytest.fixture
def gpu_kernel(gpu_device: Device, request: pytest.FixtureRequest) -> KernelHelper:
    """Compile-and-launch helper bound to the test's device (compiles are cached per session)."""
    return KernelHelper(gpu_device, request.config.stash[session_key].options.timeout_s)


@pytest.fixture
def gpu_measure(gpu_device: Device, request: pytest.FixtureRequest) -> Measurer:
    """Statistical device-event timing of a launch or of any enqueued work."""
    state = request.config.stash[session_key]
    return Measurer(gpu_device, state.measure_config())


@pytest.fixture
def gpuperf_baseline_dir(request: pytest.FixtureRequest) -> Path:
    """The baseline folder of this run (``--gpuperf-baseline-dir``), for tests that read other suites'
    baselines (the PTX model takes its instruction latencies from the probes' entries)."""
    return request.config.stash[session_key].baseline_dir


@pytest.fixture
def gpuperf_plant(request: pytest.FixtureRequest) -> dict[str, str]:
    """The planted regressions of this run (``--gpuperf-plant``; empty outside the gate check)."""
    spec = getattr(getattr(request.node, "callspec", None), "params", {}).get("gpu_device")
    return plants.parse(list(request.config.stash[session_key].options.plants), device=spec)


@pytest.fixture
def gpuperf_test_id(request: pytest.FixtureRequest) -> str:
    """This test's id as its baseline entries name it: ``suites/<file>::<test>[params]`` wherever the suites
    are installed, without the device (``[cuda:0-sin]`` and ``[cuda:1-sin]`` are one test), so a seed
    derived from it is the same on every card and in every run."""
    spec = getattr(getattr(request.node, "callspec", None), "params", {}).get("gpu_device", "")
    return strip_device_id(test_id(request.node), spec)


@pytest.fixture
def gpuperf_part(request: pytest.FixtureRequest) -> suite_profiles.Part | None:
    """What the run's suite profile measures of this test when it runs only part of it (the kernels, and
    the metrics it then records); None when the test runs whole."""
    state = request.config.stash[session_key]
    return suite_profiles.get(state.options.profile).part(_profile_id(request.node))


@pytest.fixture
def gpuperf_recorded(gpu_device: Device, request: pytest.FixtureRequest) -> dict[str, float]:
    """The values this session has recorded so far on the test's device (metric name → value): a later
    test can build on an earlier one's measurement of the same card in the same session (the PTX model's
    issue variant takes the throughput probes' rates) instead of reading files that may describe
    another run. A snapshot: empty when nothing ran before."""
    state = request.config.stash[session_key]
    return {name: m.value for name, m in state.run_for(gpu_device.info.spec).metrics.items()}


@pytest.fixture
def gpuperf_recorded_info(gpu_device: Device, request: pytest.FixtureRequest) -> dict[str, dict[str, Any]]:
    """The ``info`` of each metric this session has recorded so far on the test's device (metric name → a
    copy): what ``gpuperf_recorded``'s values were measured with, for a later test that aggregates them
    (the tuning means read each kernel's host-time ratio and timed points). A snapshot."""
    state = request.config.stash[session_key]
    return {name: copy.deepcopy(m.info) for name, m in state.run_for(gpu_device.info.spec).metrics.items()}


@pytest.fixture
def gpuperf_record(gpu_device: Device, request: pytest.FixtureRequest) -> Recorder:
    """Record a metric of the current test; it is compared with the baseline when the test returns."""
    state = request.config.stash[session_key]
    nodeid, spec = test_id(request.node), gpu_device.info.spec
    shipped = is_shipped(request.node)
    note = progress.noting(request.config)

    def record(**kw: Any):
        note(str(kw.get("name", "")))
        try:
            return state.record(nodeid, spec, shipped=shipped, **kw)
        except GpuPerfError as exc:
            refused = str(exc)
        pytest.fail(refused, pytrace=False)  # outside the handler: one line, not the error and its context twice

    return Recorder(record)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[object]:
    """A Ctrl-C that code under test swallowed ends the run after the test it landed in; the latch's handlers are
    put back first where native code replaced them (:mod:`.util.interrupt_latch`, :meth:`Latch.reassert`)."""
    latch = item.config.stash.get(_latch, None)
    if latch is not None:
        latch.reassert()
    result = yield
    if latch is not None:
        latch.check()
    return result


class InterruptReport:
    """An interrupted run ends as interrupted even where the report of where the interrupt landed cannot be made.

    pytest's terminal renders that place with every frame's arguments (``getrepr(funcargs=True)``); an argument
    of the code under test whose ``repr`` raises ``KeyboardInterrupt`` (saferepr lets it through), or a frame whose
    source cannot be read, would escape pytest's interrupt handling and end the process with a crash (a
    traceback, and exit 1 or death by the signal) and records that do not say the run was cut short. The place is then rendered as Python prints a traceback,
    without arguments, and a line names what could not be shown."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(wrapper=True)
    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Iterator[None]:
        try:
            return (yield)
        except (Exception, KeyboardInterrupt) as exc:  # SystemExit is a request to leave: kept
            print(f"\ngpuperf: interrupted; where, with its arguments, could not be shown "
                  f"({type(exc).__name__}: {exc})", file=sys.stderr)
            reporter = self.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None and getattr(reporter, "_keyboardinterrupt_memo", False) is None:
                # the terminal ends an interrupted session by printing this report: it must exist
                reporter._keyboardinterrupt_memo = _plain_report(excinfo)
            return None


def _plain_report(excinfo: pytest.ExceptionInfo[BaseException]) -> Any:
    """``excinfo`` as Python's own traceback shows it (no argument reprs); where even that fails, a bare
    KeyboardInterrupt raised here."""
    try:
        return excinfo.getrepr(style="native")
    except (Exception, KeyboardInterrupt):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            return pytest.ExceptionInfo.from_current().getrepr(style="native")


# ---- the regression gate --------------------------------------------------------------------------------
@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """A test's observer windows start with its fixtures: a clock or calibration a fixture measures for the
    test is one of the figures its metrics are computed from (``timing.observers``)."""
    item.config.stash[session_key].begin_test()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    state = item.config.stash[session_key]
    result = yield
    _record_benchmark(item, state)
    if getattr(item.config.option, "xmlpath", None):  # --junitxml: one property per metric
        from .compare.gate import junit_property

        several = len(state.runs) > 1
        for spec, metric in state.metrics_of(test_id(item)):
            item.user_properties.append(junit_property(metric.name + (f"[{spec}]" if several else ""), metric, spec))
    lines = state.failures(test_id(item))
    if lines:
        pytest.fail(f"performance regression against {state.against}:\n" + "\n".join(lines), pytrace=False)
    return result


def _record_benchmark(item: pytest.Item, state: GpuPerfSession) -> None:
    """pytest-benchmark interop: its timing of the test lands in our results as ``benchmark.<test>``."""
    bench = getattr(item, "funcargs", {}).get("benchmark")
    meta = getattr(bench, "stats", None)
    data = getattr(getattr(meta, "stats", None), "data", None)
    if not data:
        return
    from .timing.stats import Stats

    spec = getattr(getattr(item, "callspec", None), "params", {}).get("gpu_device")
    if spec is None:
        selected = state.selected()
        spec = selected[0].spec
    stats = Stats.of(data)
    name = "benchmark." + item.name.replace(spec, "").replace("[-", "[").replace("-]", "]").replace("[]", "")
    state.record(test_id(item), spec, name, stats.median, "s", "lower", stats=stats,
                 info={"source": "pytest-benchmark", "host_timed": True})


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[pytest.TestReport]:
    """Remember which tests passed: a baseline metric of a passed test that was not recorded is 'missing'. After each
    phase, the latch's handlers are put back where a device opened or a kernel built in it replaced them."""
    latch = item.config.stash.get(_latch, None)
    if latch is not None:
        latch.reassert()
    report = yield
    spec = getattr(getattr(item, "callspec", None), "params", {}).get("gpu_device")
    if spec is not None:
        state = item.config.stash[session_key]
        state.note_test(test_id(item), spec, report.when, report.duration, report.outcome)
        stop = state.busy_stop(test_id(item), spec) if report.when == "call" else None
        if stop is not None:
            item.session.shouldstop = f"GPU TOO BUSY TO GATE: {stop}"
    if report.when == "call" and spec is not None:
        if report.passed:
            item.config.stash[session_key].mark_passed(test_id(item), spec)
        elif report.skipped and hasattr(report, "wasxfail"):
            item.config.stash[session_key].mark_expected_failure(test_id(item), spec, str(report.wasxfail))
    return report


# ---- end of run ----------------------------------------------------------------------------------------
@pytest.hookimpl(tryfirst=True)  # before pytest's JUnit writer: the gate's test case goes into its file
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write baselines, results and history (each even if another failed), then release the devices —
    a device must be released (or abandoned, never waited on) whatever happened, so a failure before
    that still releases them in ``finally``. An xdist worker hands its share of the host report to the
    controller; the controller (or a run without xdist) makes the sibling check once.

    Ctrl-C (pytest's ``INTERRUPTED``, exit 2): the results and history hold the tests that finished and
    say ``interrupted``; a Ctrl-C during those writes is held until they are done and then ends the run
    the same way, never with a traceback. A device abandoned at any point — a hang or a fault, in a test
    or found at the end behind a test that returned — fails the run (exit 1) unless it was interrupted.
    A run that could not gate a device has its own status (``exits``): a card shared with another
    process (7) or throttled (8), a CPU device's host busy with other work (9, where nothing it judged
    failed) through more than a tenth of its metrics, no baseline (6)."""
    config = session.config
    state = config.stash[session_key]
    if state.blocks_exit():
        bound_the_exit()
    if pinning.is_controller(config):  # ran no test: the workers wrote everything
        gathered = config.stash.setdefault(_gathered, Gathered())
        _siblings(session, gathered.documents(), gathered.paths())
        outcome = RunOutcome(session.exitstatus)
        outcome.workers(gathered.failed, [gathered.status()])  # a worker's own reason (exits) survives
        session.exitstatus = outcome.status
        config.stash[_exit_status] = int(session.exitstatus)
        if gathered.payloads:
            found = [civerdict.Reason.from_json(r) for r in gathered.reasons()] + _outlier_reasons(config)
            _ci_outputs(session, found, gathered.sections(), gathered.recorded())
        return
    # pytest reports a run stopped by ``session.shouldstop`` as interrupted too: a stop on a busy card is not a Ctrl-C
    interrupted = exitstatus == pytest.ExitCode.INTERRUPTED and not any(r.stopped_busy for r in state.runs.values())
    closed = False
    outcome = RunOutcome(session.exitstatus)  # the exit status and why (report.run_outcome): decided there
    try:
        try:
            state.finish(list(config.invocation_params.args), interrupted=interrupted)
        except GpuPerfError as exc:
            outcome.writes_failed(str(exc))
        late = state.signal_during_writes  # Ctrl-C held until the writes were done: the run ends now
        outcome.settle(state.gate_facts())
        closed = True
        state.close(interrupted=interrupted or late)
        if state.blocks_exit():  # a hang found only now, when the device was closed
            bound_the_exit()
        outcome.abandoned(state.abandoned())  # a hang or fault anywhere, even behind tests that all passed
        if outcome.error is not None:
            config.stash[_finish_error] = outcome.error
        session.exitstatus = outcome.status
        failed = outcome.failed
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if interrupted or late:
            if reporter is not None:  # one line, ahead of pytest's own summary
                latch = config.stash.get(_latch, None)
                what = latch.what if latch is not None and latch.fired else "Ctrl-C"  # a batch system's SIGTERM too
                kept = bool(state.options.json_path or state.options.history_path)
                left = [s for s, run in state.runs.items() if run.device is not None and run.device.interrupted]
                reporter.write_line(interrupted_line(what, not interrupted, kept, left), yellow=True, bold=True)
            outcome.interrupted()
            session.exitstatus = outcome.status
        if pinning.is_worker(config):
            lines = summary.session_lines(state, config.stash.get(_finish_error, None))
            share = payload(state, lines, failed, int(session.exitstatus))
            share["reasons"] = [r.to_json() for r in civerdict.reasons(state, config.stash.get(_finish_error, None))]
            share["sections"] = summary.step_sections(state)
            config.workeroutput[_WORKER_KEY] = share  # type: ignore[attr-defined]
        elif sum(1 for run in state.runs.values() if run.metrics) > 1:  # siblings need two cards at least
            docs = payload(state, [], failed)
            _siblings(session, documents_of(docs), docs["paths"])
    finally:
        if not closed:
            state.close(interrupted=interrupted)
        config.stash[_exit_status] = int(session.exitstatus)
    if state.runs and not pinning.is_worker(config):  # a worker's share goes to the controller (above)
        found = civerdict.reasons(state, config.stash.get(_finish_error, None)) + _outlier_reasons(config)
        recorded = {run.info.spec: [m.verdict for m in run.metrics.values()] for run in state.runs.values() if run.metrics}
        _ci_outputs(session, found, summary.step_sections(state), recorded)


#: seconds a run holding an abandoned device may take, from the end of its tests, to write its results, report
#: and leave; past them every thread's stack goes to stderr and the process exits with status 1
EXIT_GRACE_S = 120.0


def bound_the_exit() -> None:
    """Bound the end of a run that holds a device stuck behind hung work (``Device.blocks_exit``). Such a run
    leaves with ``os._exit`` once it has reported (``pytest_unconfigure``); should anything before that wait on
    the hung work in C — where neither the watchdog nor a signal reaches it — Python's faulthandler writes every
    thread's stack to stderr after :data:`EXIT_GRACE_S` (where it waited: the cause, for a report) and ends
    the process with status 1, the status of a run that abandoned a device. Arming again moves the deadline."""
    import faulthandler

    faulthandler.dump_traceback_later(EXIT_GRACE_S, exit=True, file=sys.__stderr__)


_headline = pytest.StashKey[str]()


def _ci_outputs(session: pytest.Session, found: list[civerdict.Reason], sections: list[str],
                recorded: dict[str, list[str]]) -> None:
    """The run's one verdict (``report.civerdict``) in every CI output, now that the exit status is final:
    the ``gpuperf.gate`` JUnit case (``--junitxml``), the step summary under GitHub Actions, and the
    terminal's last gpuperf line. ``recorded``: the verdicts of each device's metrics."""
    from .report import github

    status, failed_tests = int(session.exitstatus), int(session.testsfailed)
    gated = civerdict.scope(recorded)
    line = civerdict.headline(status, found, failed_tests, gated)
    session.config.stash[_headline] = line
    writer = _junit(session.config)
    if writer is not None:
        import xml.etree.ElementTree as ET
        from _pytest.junitxml import bin_xml_escape

        case = writer.node_reporter(f"{civerdict.GATE_CLASSNAME}.{civerdict.GATE_NAME}")
        case.add_attribute("classname", civerdict.GATE_CLASSNAME)
        case.add_attribute("name", civerdict.GATE_NAME)
        failure = civerdict.gate_failure(status, found, failed_tests)
        if failure is None:
            writer.add_stats("passed")
        else:
            kind, message, text = failure
            node = ET.Element("failure", message=bin_xml_escape(message), type=kind)
            node.text = bin_xml_escape(text)
            case.append(node)  # counted among the file's failures
    if github.enabled():
        github.append_step_summary(github.step_summary(line, [(r.kind, r.text) for r in found], sections))


def _outlier_reasons(config: pytest.Config) -> list[civerdict.Reason]:
    """A sibling outlier under ``--gpuperf-fail-on-outlier`` fails the run (``_siblings``): one reason."""
    rep = config.stash.get(_siblings_report, None)
    if not rep or not rep.get("outliers") or not config.getoption("--gpuperf-fail-on-outlier"):
        return []
    return [civerdict.Reason("SIBLING OUTLIER", f"{len(rep['outliers'])} card(s) far from their siblings "
                                                "(gpuperf siblings below)")]


_siblings_report = pytest.StashKey[dict]()


def _siblings(session: pytest.Session, documents: list[ResultsDocument], paths: dict[str, str]) -> None:
    """The sibling check of every card that recorded metrics; ``--gpuperf-fail-on-outlier`` fails on one."""
    config = session.config
    if len(documents) < 2:
        return
    rep, written = sibling_report(documents, paths, config.stash[session_key].options.floor)
    if written:
        rep = dict(rep, written=written)
    config.stash[_siblings_report] = rep
    if rep["outliers"] and config.getoption("--gpuperf-fail-on-outlier"):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_exit_status = pytest.StashKey[int]()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """After everything is reported: a process holding a device whose finalisation could wait on hung work
    forever (``Device.blocks_exit``: an abandoned CUDA device, an OpenCL read-back left queued behind a hang)
    leaves with ``os._exit``."""
    latch = config.stash.get(_latch, None)
    if latch is not None:
        latch.uninstall()
    state = config.stash.get(session_key, None)
    if state is None or not state.blocks_exit():
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(config.stash.get(_exit_status, int(pytest.ExitCode.TESTS_FAILED)))


_finish_error = pytest.StashKey[str]()


def _skips_line(tr: Any, state: Any) -> None:
    """The session's skipped tests in one line grouped by what they need (report.skip_reasons)."""
    try:
        specs = [d.spec for d in state.selected()]
    except DeviceNotFoundError:
        specs = []
    skips = [(r.nodeid, skip_reasons.reason_of(r)) for r in tr.stats.get("skipped", ())]
    line = skip_reasons.summary_line(skips, specs)
    if line:
        tr.write_line(line, yellow=True)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(session_key, None)
    if state is None:
        return
    tr = terminalreporter
    if pinning.is_controller(config):
        summary.write(tr, config.stash.setdefault(_gathered, Gathered()).lines())
    elif state.runs:
        summary.write(tr, summary.session_lines(state, config.stash.get(_finish_error, None)))
    _skips_line(tr, state)
    line = None if config.option.collectonly else config.stash.get(_headline, None)  # a listing judges nothing
    if line is not None:  # the verdict the exit status, the JUnit file and the step summary carry
        tr.write_line(line, green=line.startswith("gpuperf PASSED"), red=not line.startswith("gpuperf PASSED"),
                      bold=True)
        tr.flush()  # in a log file at once: a batch wrapper reads it to tell a run in its last steps
    rep = config.stash.get(_siblings_report, None)
    if rep and rep["groups"]:
        from .fleet.siblings import summary_lines

        tr.write_sep("=", "gpuperf siblings (cards of one model in this host)")
        for text, bad in summary_lines(rep):
            tr.write_line(text, red=bad)
        if rep.get("written"):
            tr.write_line(f"gpuperf wrote {rep['written']}")
