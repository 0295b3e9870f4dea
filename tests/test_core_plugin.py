"""The plugin end to end, through pytester, on the real OpenCL device of this machine."""

from __future__ import annotations

import json

import pytest

from pytest_gpuperf import RESULTS_SCHEMA, exits
from pytest_gpuperf.baselines import baseline_file
from pytest_gpuperf.devices import discover
from suite_support import WORK_HEAD
from suite_support import baseline_folder

INV = discover()
pytestmark = pytest.mark.skipif(not any(d.backend == "opencl" for d in INV.devices),
                                reason="no OpenCL device (install pocl-opencl-icd)")
DEV = "--gpuperf-device=opencl:0"
FAST = "--gpuperf-budget=0.2"

WORK = WORK_HEAD + '''
def test_work(gpu_device, gpu_kernel, gpu_measure, gpuperf_record):
    n = int(os.environ.get("WORK_ITERS", "100000"))
    k = gpu_kernel.compile(SRC, "work")
    buf = gpu_kernel.to_device(np.ones(64, np.float32))
    m = gpu_measure(k, (64,), (64,), [buf, np.int32(n)])
    ms = m.stats.scaled(1e3)
    gpuperf_record("kernel.work.ms", ms.median, "ms", better="lower", stats=ms)
    if os.environ.get("RECORD_EXTRA"):
        gpuperf_record("kernel.extra.count", 3, "items", better="exact")
'''


def run(pytester, *args):
    return pytester.runpytest(DEV, FAST, f"--gpuperf-baseline-dir={baseline_folder(pytester.path, 'bl')}", *args)


def test_list_devices(pytester):
    result = pytester.runpytest("--gpuperf-list-devices")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["gpuperf devices:", "*opencl:0*"])


def test_unknown_device_is_a_usage_error_listing_devices(pytester):
    pytester.makepyfile("def test_x(gpu_device): pass")
    result = pytester.runpytest("--gpuperf-device=cuda:7")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*'cuda:7' names no device*", "*opencl:0*"])


def test_host_only_tests_never_touch_devices(pytester):
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest("--gpuperf-device=cuda:7")
    result.assert_outcomes(passed=1)


def test_results_json_follows_schema(pytester):
    pytester.makepyfile(WORK)
    out = pytester.path / "r" / "{key}-{backend}.json"
    result = run(pytester, f"--gpuperf-json={out}", "--gpuperf-summary=all")
    result.assert_outcomes(passed=1)
    files = list((pytester.path / "r").glob("*-opencl.json"))
    assert len(files) == 1
    doc = json.loads(files[0].read_text())
    assert doc["schema"] == RESULTS_SCHEMA
    assert {"key", "name", "driver_version", "compute_units", "spec"} <= set(doc["device"])
    assert {"python", "packages", "driver", "toolkit"} <= set(doc["environment"])
    (metric,) = doc["metrics"]
    assert set(metric) >= {"test", "name", "value", "unit", "better", "stats", "baseline", "verdict"}
    assert metric["test"] == "test_results_json_follows_schema.py::test_work"
    assert metric["verdict"] == "new" and metric["baseline"] is None
    assert set(metric["stats"]) == {"median", "mad", "min", "max", "n", "samples"}
    assert len(metric["stats"]["samples"]) == metric["stats"]["n"]  # raw repeats kept for the significance test
    result.stdout.fnmatch_lines(["*gpuperf opencl:0*", "*kernel.work.ms*new*"])


@pytest.mark.quiet_host
def test_update_then_gate_then_planted_slowdown(pytester, monkeypatch):
    pytester.makepyfile(WORK)
    # a 60 % CPU floor: a planted 2x slowdown (+100 %) must fail through it, unchanged code must pass
    run(pytester, "--gpuperf-update-baselines", "--gpuperf-floor", "0.05", "0.6").assert_outcomes(passed=1)
    files = list((pytester.path / "bl").glob("*.json"))
    assert len(files) == 1
    entry = baseline_file.load(files[0].parent, files[0].stem).metrics("opencl")["kernel.work.ms"]
    assert entry["better"] == "lower" and entry["tolerance"]["k"] == 6.0 and "commit" in entry["provenance"]
    assert baseline_file.recorded_class(json.loads(files[0].read_text())) == "cpu"  # PoCL: a CPU device

    run(pytester).assert_outcomes(passed=1)  # unchanged code passes its own baseline

    monkeypatch.setenv("WORK_ITERS", "200000")  # a planted 2x slowdown
    result = run(pytester)
    if result.ret == exits.HOST_TOO_BUSY:  # never a pass: a host too busy to judge it says so (timing.observers)
        result.stdout.fnmatch_lines(["*kernel.work.ms*contended*", "*HOST TOO BUSY TO GATE (exit 9): opencl:0: 1 of 1*"])
        pytest.skip("other work held this host's cores even after re-measuring: the planted 2x slowdown read "
                    "'contended' (HOST TOO BUSY TO GATE, exit 9), not judged; run on a quieter host")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*performance regression against baseline:*",
                                 "*kernel.work.ms: REGRESSED — expected * ms ± * (lower is better), measured * ms, delta +*%, ratio * p=*"])
    monkeypatch.setenv("WORK_ITERS", "100000")
    run(pytester).assert_outcomes(passed=1)


def test_missing_metric_fails_the_session(pytester, monkeypatch):
    pytester.makepyfile(WORK)
    monkeypatch.setenv("RECORD_EXTRA", "1")
    run(pytester, "--gpuperf-update-baselines").assert_outcomes(passed=1)
    monkeypatch.delenv("RECORD_EXTRA")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*MISSING: kernel.extra.count*"])


def test_malformed_baseline_fails_loudly(pytester):
    pytester.makepyfile(WORK)
    run(pytester, "--gpuperf-update-baselines").assert_outcomes(passed=1)
    (path,) = (pytester.path / "bl").glob("*.json")
    path.write_text(path.read_text().replace('"better":"lower"', '"better":"faster"'))
    before = path.read_text()
    assert '"better":"faster"' in before  # the file's compact lines took the bad value
    result = run(pytester, "--gpuperf-update-baselines")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # before any test runs (issue 12): no run is wasted
    result.stderr.fnmatch_lines([f"*malformed baseline file {path}*better must be one of*"])
    assert path.read_text() == before  # never overwritten while malformed


def test_requires_marker_skips_with_reason(pytester):
    pytester.makepyfile("""
        import pytest
        @pytest.mark.gpuperf(requires=["cuda"])
        def test_cuda_only(gpu_device): pass
        @pytest.mark.gpuperf(requires=["opencl"])
        def test_opencl(gpu_device): pass
    """)
    result = pytester.runpytest(DEV, "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*lacks cuda*"])


def test_documented_bound_gates_without_a_baseline_file(pytester):
    pytester.makepyfile("""
        def test_ulp(gpu_device, gpuperf_record):
            gpuperf_record("accuracy.demo.max_ulp", 3.0, "ulp", better="bound", bound=2.0,
                           tolerance={}, info={"citation": "spec table 1"})
    """)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*accuracy.demo.max_ulp: REGRESSED — expected 2 ulp*measured 3 ulp*"])


def test_duplicate_metric_name_is_an_error(pytester):
    pytester.makepyfile("""
        def test_twice(gpu_device, gpuperf_record):
            gpuperf_record("a.b", 1, "x")
            gpuperf_record("a.b", 2, "x")
    """)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*metric 'a.b' recorded twice by test_duplicate_metric_name_is_an_error.py::test_twice "
                                 "on *: give each record its own name*"])
    assert "During handling of the above exception" not in result.stdout.str()  # said once, not with its context


@pytest.mark.parametrize("tolerance, unit, says", [
    ("5%", "us", "tolerance='5%' is not a mapping of rel, abs, k, spread, step to numbers"),
    ({"relative": 0.05}, "us", "tolerance key(s) relative unknown: use rel, abs, k, spread, step"),
    ({"rel": -1}, "us", "must be finite numbers of at least 0"),
    (None, "microseconds", "unit 'microseconds': write 'us'"),
])
def test_a_tolerance_or_unit_the_gate_cannot_read_is_refused_where_it_is_recorded(pytester, tolerance, unit, says):
    """Not later, at the baseline's write, about a file the user never wrote: the record names what is wrong."""
    pytester.makepyfile(f"""
        def test_one(gpu_device, gpuperf_record):
            gpuperf_record("a.time_us", -3.0 if {unit!r} != "us" else 3.0, {unit!r}, tolerance={tolerance!r})
    """)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    assert says in result.stdout.str()


def test_upgrade_gate_reports_driver_change(pytester):
    pytester.makepyfile(WORK)
    run(pytester, "--gpuperf-update-baselines").assert_outcomes(passed=1)
    (path,) = (pytester.path / "bl").glob("*.json")
    data = json.loads(path.read_text())
    data["backends"]["opencl"]["provenance"]["driver"] = "0.0-older"
    path.write_text(json.dumps(data))
    result = run(pytester)
    result.stdout.fnmatch_lines(["*UPGRADE GATE: driver changed: baseline measured with 0.0-older*"])


def test_pytest_benchmark_stats_land_in_results(pytester, monkeypatch):
    pytest.importorskip("pytest_benchmark")
    # a run of its own, not a worker of this one's pytest-xdist (where pytest-benchmark disables itself)
    for var in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(var, raising=False)
    pytester.makepyfile("""
        def test_host(gpu_device, benchmark):
            benchmark(sum, range(1000))
    """)
    out = pytester.path / "r.json"
    result = run(pytester, f"--gpuperf-json={out}", "--benchmark-disable-gc")
    result.assert_outcomes(passed=1)
    names = [m["name"] for m in json.loads(out.read_text())["metrics"]]
    assert names == ["benchmark.test_host"]


def test_known_finding_is_reported_as_known_not_regressed(pytester, monkeypatch):
    """A test that records a value past its documented bound and then xfails (a known finding of this
    implementation) leaves the run green and its metric verdict ``known``; the same value without the
    xfail fails the test as a regression."""
    pytester.makepyfile('''
import os, pytest
def test_bound(gpu_device, gpuperf_record):
    gpuperf_record("accuracy.fake.max_ulp", 24620.0, "ulp", better="bound", bound=16.0)
    if os.environ.get("KNOWN"):
        pytest.xfail("known finding: this implementation exceeds the bound")
''')
    out = pytester.path / "r.json"
    monkeypatch.setenv("KNOWN", "1")
    run(pytester, f"--gpuperf-json={out}").assert_outcomes(xfailed=1)
    monkeypatch.delenv("KNOWN")
    (metric,) = json.loads(out.read_text())["metrics"]
    assert metric["verdict"] == "known" and "known finding" in metric["info"]["xfail"]
    run(pytester).assert_outcomes(failed=1)


def test_a_later_test_reads_what_an_earlier_one_recorded_on_the_device(pytester):
    """``gpuperf_recorded``: the session's values so far on the test's device (the PTX model's issue
    variant takes the throughput probes' rates from it)."""
    pytester.makepyfile('''
def test_a(gpu_device, gpuperf_record):
    gpuperf_record("probe.rate", 123.5, "ops/clk/SM", better="higher")

def test_b(gpu_device, gpuperf_recorded):
    assert gpuperf_recorded == {"probe.rate": 123.5}
''')
    run(pytester).assert_outcomes(passed=2)


def test_a_retired_metric_in_the_baseline_is_neither_missing_nor_a_failure(pytester):
    """A baseline made by an older plugin names a metric the suites no longer record (catalog.RETIRED):
    the run says so and passes; ``gpuperf baseline migrate`` drops the entry."""
    from pytest_gpuperf.baselines import catalog
    from pytest_gpuperf.cli import main as gpuperf

    pytester.makepyfile(WORK)
    run(pytester, "--gpuperf-update-baselines").assert_outcomes(passed=1)
    (path,) = (pytester.path / "bl").glob("*.json")
    data = baseline_file.load(path.parent, path.stem).data
    metrics = data["backends"]["opencl"]["metrics"]
    old = "model.svr.copy.error"
    assert catalog.retired(old) and not catalog.retired("model.svr.mean_error")
    metrics[old] = {**metrics["kernel.work.ms"], "value": 0.01, "unit": "ratio", "tolerance": {"abs": 0.02}}
    path.write_text(json.dumps(data))
    result = run(pytester)
    # nothing failed: 0, or on a host whose other work held the cores through the one timing, its own status
    busy = "HOST TOO BUSY TO GATE" in result.stdout.str()
    assert result.ret == (exits.HOST_TOO_BUSY if busy else pytest.ExitCode.OK), result.stdout.str()
    result.stdout.fnmatch_lines(["*RETIRED: 1 baseline entries name metrics this plugin no longer records*"])
    result.stdout.no_fnmatch_line("*MISSING*")
    assert gpuperf(["baseline", "migrate", str(path)]) == 0
    assert old not in baseline_file.load(path.parent, path.stem).metrics("opencl")
