"""One verdict in every CI output (``report.civerdict``): a GitHub Actions-shaped run (``GITHUB_ACTIONS``,
``GITHUB_STEP_SUMMARY``, ``--junitxml``) on the real OpenCL device (PoCL) — with a planted regression, and
without — says the same thing in its exit status, its JUnit file and its step summary's first line. The
suite file lies where an installed package's would (``.venv/lib/python3.11/site-packages/pytest_gpuperf/
suites/``): its JUnit class name is the module's, not that path. On a loaded host the unplanted run may
exit 9 (HOST TOO BUSY TO GATE): then all three say that."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from pytest_gpuperf import exits
from pytest_gpuperf.report import civerdict, github
from pytest_gpuperf.report.results import Metric
from suite_support import WORK_HEAD, baseline_folder

SUITE = WORK_HEAD + '''
def test_work(gpu_device, gpu_kernel, gpu_measure, gpuperf_record):
    k = gpu_kernel.compile(SRC, "work")
    buf = gpu_kernel.to_device(np.ones(64, np.float32))
    m = gpu_measure(k, (64,), (64,), [buf, np.int32(2000 * int(os.environ.get("WORK", "1")))])
    ms = m.stats.scaled(1e3)
    gpuperf_record("kernel.work.ms", ms.median, "ms", better="lower", stats=ms)


def test_accuracy(gpu_device, gpuperf_record):
    gpuperf_record("accuracy.work.max_ulp", float(os.environ.get("ULP", "1")), "ulp", better="lower")
'''
SITE = ".venv/lib/python3.11/site-packages/pytest_gpuperf/suites"


def _pocl() -> bool:
    from pytest_gpuperf.devices import discover

    return any(d.backend == "opencl" for d in discover().devices)


needs_opencl = pytest.mark.skipif(not _pocl(), reason="no OpenCL device (install pocl-opencl-icd)")


def _outputs(pytester, monkeypatch, tag: str, **env):
    """Run the suite GitHub Actions-shaped; (exit status, JUnit root, step summary text, terminal text)."""
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    summary, xml = pytester.path / f"summary-{tag}.md", pytester.path / f"junit-{tag}.xml"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = pytester.runpytest(f"{SITE}/test_tiny.py", "--gpuperf-device=opencl:0", "--gpuperf-budget=0.2",
                                "-p", "no:cacheprovider", f"--gpuperf-baseline-dir={pytester.path / 'bl'}",
                                f"--junitxml={xml}")
    return result.ret, ET.parse(xml).getroot(), summary.read_text(), result.stdout.str()


def _agree(ret: int, root, text: str, out: str) -> dict:
    """The three outputs say one verdict; returns the gate's JUnit case."""
    suite = root.find("testsuite")
    bad = int(suite.get("failures")) + int(suite.get("errors"))
    assert (bad > 0) == (ret != 0), (ret, ET.tostring(root, encoding="unicode"))
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    gate = cases[(civerdict.GATE_CLASSNAME, civerdict.GATE_NAME)]
    head = f"gpuperf {civerdict.verdict_word(ret)} (exit {int(ret)})"
    first = text.splitlines()[0]
    assert first.startswith(f"**{head}"), text
    assert any(ln.startswith(head) for ln in out.splitlines()), out  # the terminal ends with it too
    failure = gate.find("failure")
    if ret == 0:
        assert failure is None and "no metric regressed" in first
    else:
        assert failure is not None and failure.get("message").startswith(head), ET.tostring(gate, encoding="unicode")
        assert failure.get("type") == "gpuperf." + civerdict.verdict_word(ret).replace(" ", "_")
    # the suite's class name is its module's, wherever the package lies
    names = {cls for cls, _ in cases if cls != civerdict.GATE_CLASSNAME}
    assert names == {"pytest_gpuperf.suites.test_tiny"}, names
    return {"gate": gate, "cases": cases}


@needs_opencl
def test_exit_status_junit_and_step_summary_say_one_verdict(pytester, monkeypatch):
    (pytester.path / SITE).mkdir(parents=True)
    (pytester.path / SITE / "test_tiny.py").write_text(SUITE)
    baseline_folder(pytester.path, "bl")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    made = pytester.runpytest(f"{SITE}/test_tiny.py", "--gpuperf-device=opencl:0", "--gpuperf-budget=0.2",
                              "-p", "no:cacheprovider", f"--gpuperf-baseline-dir={pytester.path / 'bl'}",
                              "--gpuperf-update-baselines")
    assert made.ret == 0, made.stdout.str()

    # planted: three times the ulp (deterministic: judged on a busy host too) and 20x the kernel's work
    ret, root, text, out = _outputs(pytester, monkeypatch, "planted", ULP="3", WORK="20")
    assert ret == pytest.ExitCode.TESTS_FAILED, out  # what the run judged failed: 1, even on a busy host
    seen = _agree(ret, root, text, out)
    accuracy = seen["cases"][("pytest_gpuperf.suites.test_tiny", "test_accuracy[opencl:0]")]
    assert "accuracy.work.max_ulp" in accuracy.find("failure").get("message")  # the test that recorded it
    assert "accuracy.work.max_ulp" in seen["gate"].find("failure").get("message")
    lines = text.splitlines()
    assert "REGRESSED" in lines[0] and "accuracy.work.max_ulp" in lines[0], text
    assert lines[2].startswith("- **REGRESSED**: opencl:0:"), text  # regressions first
    rows = [ln for ln in lines if ln.startswith("| `")]
    assert rows[0].startswith("| `accuracy.work.max_ulp` | 1 | 3 ulp | +200.0% | **regressed** |"), text

    # unplanted: passes, or on a loaded host says HOST TOO BUSY TO GATE in all three
    ret, root, text, out = _outputs(pytester, monkeypatch, "plain", ULP="1", WORK="1")
    assert ret in (pytest.ExitCode.OK, exits.HOST_TOO_BUSY), out
    seen = _agree(ret, root, text, out)
    if ret == exits.HOST_TOO_BUSY:
        assert "HOST TOO BUSY TO GATE: opencl:0:" in seen["gate"].find("failure").text
        assert "- **HOST TOO BUSY TO GATE**" in text and "contended" in text
    else:
        assert "REGRESSED" not in text


def _metric(name: str, verdict: str) -> Metric:
    return Metric("suites/t.py::f", name, 2.0, "ms", "lower", baseline={"value": 1.0, "delta_rel": 1.0},
                  verdict=verdict)


def test_step_summary_lists_news_and_counts_the_rest():
    """A run of 183 contended and ungated rows and two regressions: the table lists the two (first), and
    one line counts the others."""
    metrics = ([_metric(f"m.contended.{i}", "contended") for i in range(150)]
               + [_metric(f"m.ungated.{i}", "ungated") for i in range(33)]
               + [_metric("m.z.bad", "regressed"), _metric("m.a.odd", "incomparable"), _metric("m.b.bad", "regressed")])
    text = github.summary_table(metrics, ["m.gone"], "opencl:0", "baseline")
    rows = [ln for ln in text.splitlines() if ln.startswith("| `")]
    assert [r.split("`")[1] for r in rows] == ["m.b.bad", "m.z.bad", "m.gone", "m.a.odd"]
    assert "Not listed: 150 contended, 33 ungated" in text
    assert "186 metrics: 2 regressed, 150 contended, 1 incomparable, 33 ungated, 1 missing" in text
    assert "Would have regressed" not in text
    metrics[7].info["would_regress"] = {"factor": 19.0, "explained": 4.0}
    assert "**Would have regressed** (1, not judged" in github.summary_table(metrics, [], "opencl:0", "baseline")


def test_headline_and_gate_case_follow_the_status():
    found = [civerdict.Reason("REGRESSED", "opencl:0: 1 metric(s) regressed against baseline: a.b (+50.0%)",
                              ("a.b",), ("suites/t.py::f",), "opencl:0")]
    assert civerdict.headline(1, found, failed_tests=1).startswith("gpuperf FAILED (exit 1): 1 metric(s) REGRESSED "
                                                                   "on opencl:0: a.b")
    assert civerdict.gate_failure(0, [], 0) is None
    assert civerdict.gate_failure(1, [], 2) is None  # a plain failed test: JUnit shows it already
    kind, message, _ = civerdict.gate_failure(2, [], 0)  # an interrupted run: no failed test shows it
    assert kind == "gpuperf.INTERRUPTED" and message.startswith("gpuperf INTERRUPTED (exit 2)")
    line = civerdict.headline(exits.NO_BASELINE, [civerdict.Reason("NO BASELINE", "k has no baseline")])
    assert line == "gpuperf NO BASELINE (exit 6): k has no baseline"
    assert "1 test(s) failed" in civerdict.headline(1, [], failed_tests=1)
    passed = civerdict.headline(0, [], 0, civerdict.scope({"opencl:0": ["pass", "new", "pass"]}))
    assert passed == "gpuperf PASSED (exit 0): no metric regressed (opencl:0: 1 new, 2 pass)"
    assert civerdict.scope({}) == "no metric recorded"
    # pytest's own statuses say what they mean: a selection that matched nothing is no regression to look for
    assert civerdict.headline(5, []).startswith("gpuperf FAILED (exit 5): no test was collected: the tests named, -k")
    assert "usage error" in civerdict.headline(4, [])


@needs_opencl
def test_a_listing_of_the_tests_prints_no_verdict(pytester):
    pytester.makepyfile(SUITE)
    result = pytester.runpytest("--gpuperf-device=opencl:0", "--collect-only", "-q")
    assert result.ret == 0 and "gpuperf PASSED" not in result.stdout.str() and "collected" in result.stdout.str()
    result = pytester.runpytest("--gpuperf-device=opencl:0", "-k", "nothing_matches", "-p", "no:cacheprovider")
    assert result.ret == 5
    result.stdout.fnmatch_lines(["gpuperf FAILED (exit 5): no test was collected*"])


@pytest.mark.parametrize("location, nodeid, expected", [
    (".venv/lib/python3.11/site-packages/pytest_gpuperf/suites/test_memory.py",
     ".venv/lib/python3.11/site-packages/pytest_gpuperf/suites/test_memory.py::test_copy[opencl:0-1MiB]",
     "pytest_gpuperf.suites.test_memory"),
    ("../../usr/lib/python3/dist-packages/pytest_gpuperf/suites/test_latency.py", "test_latency.py::TestX::test_y",
     "pytest_gpuperf.suites.test_latency.TestX"),
    ("tests/test_mine.py", "tests/test_mine.py::test_a", None),
    ("suites/test_memory.py", "suites/test_memory.py::test_a", None),
])
def test_suite_classname(location, nodeid, expected):
    assert civerdict.suite_classname(location, nodeid) == expected
