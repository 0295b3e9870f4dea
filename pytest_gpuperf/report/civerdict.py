"""One verdict of a run for every CI output: the exit status, the JUnit file and the GitHub step summary.

A CI job is read three ways — its exit status, a JUnit report (test reporters, the PR's checks) and the step
summary on the run's page — and all three must say the same thing. The reasons a run failed are collected
here once (:func:`reasons`), from the same session state the exit status is set from, and each output is
made from them:

- JUnit: a regression already fails the test that recorded the metric (the test a reader clicks on to see
  the message, as pytest's own assertions do); the run-level verdict gets a synthetic test case
  ``gpuperf.gate`` (:data:`GATE_CLASSNAME`, :data:`GATE_NAME`), failing exactly when the run fails
  for any gpuperf reason — regressions, missing metrics, NO BASELINE, HOST/GPU TOO BUSY, THROTTLED, an
  abandoned device, a failed write — or exits non-zero with no failed test to show for it. pytest-benchmark's
  ``--benchmark-compare-fail`` fails only the session, so its JUnit shows no failure: that is the gap this
  case closes. A run that passed has a passing ``gpuperf.gate``.
- The step summary opens with :func:`headline` (why the job failed, or that it passed), lists the
  regressions first, and counts the rows that hold no news (contended, ungated, ...) instead of listing them.
- JUnit class names of the shipped suites are their module names (:func:`suite_classname`), not the path
  to the installed package (``.venv.lib.python3.11.site-packages.…``).

Under pytest-xdist each worker sends its reasons and summary sections (:func:`Reason.to_json`); the
controller, which knows the final exit status and owns the JUnit file, writes both outputs once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from ..verdictwords import Gate
from .. import exits

GATE_CLASSNAME = "gpuperf"
GATE_NAME = "gate"
#: regressed metrics named one by one in the headline; the rest are counted
HEADLINE_NAMES = 3


@dataclass(frozen=True)
class Reason:
    """One reason a run failed: ``kind`` is ``REGRESSED``, ``MISSING``, ``ABANDONED``, ``ERROR`` or an
    :data:`exits.REASONS` text; ``text`` one line; ``names`` the metrics it concerns, ``tests`` the tests that
    recorded them, ``device`` the device spec they were recorded on."""

    kind: str
    text: str
    names: tuple[str, ...] = field(default=())
    tests: tuple[str, ...] = field(default=())
    device: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "names": list(self.names), "tests": list(self.tests),
                "device": self.device}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> "Reason":
        return cls(str(doc["kind"]), str(doc["text"]), tuple(doc.get("names", ())), tuple(doc.get("tests", ())),
                   str(doc.get("device", "")))


def _delta(m: Any) -> str:
    d = (m.baseline or {}).get("delta_rel")
    return "" if d is None else f" ({d:+.1%})"


def reasons(state: Any, finish_error: str | None = None) -> list[Reason]:
    """Every gpuperf reason the run fails, regressions first; the same conditions ``plugin.pytest_sessionfinish``
    sets the exit status from (``summary.run_level_failures``, missing metrics, abandoned devices, a failed
    write, a required baseline)."""
    from .summary import run_level_failures

    out: list[Reason] = []
    judging = not state.options.update_baselines
    for run in state.runs.values():
        bad = sorted((m for m in run.metrics.values() if m.verdict == Gate.REGRESSED), key=lambda m: m.name)
        if bad and judging:
            named = ", ".join(f"{m.name}{_delta(m)}" for m in bad)
            out.append(Reason("REGRESSED", f"{run.info.spec}: {len(bad)} metric(s) regressed against "
                                           f"{state.against}: {named}",
                              tuple(m.name for m in bad), tuple(sorted({m.test for m in bad})), run.info.spec))
    for spec, names in state.missing.items():
        if names and judging:
            out.append(Reason("MISSING", f"{spec}: {len(names)} metric(s) in the {state.against} that their tests "
                                         f"no longer record: {', '.join(names)}", tuple(names), (), spec))
    if state.options.require_baseline:
        for run in state.unbaselined():
            out.append(Reason(exits.REASONS[exits.NO_BASELINE],
                              f"{run.info.key} has no baseline and --gpuperf-require-baseline is set"))
    for status, line in run_level_failures(state):
        out.append(Reason(exits.REASONS[status], line))
    for spec, why in state.abandoned().items():
        out.append(Reason("ABANDONED", f"{spec}: {why}"))
    if finish_error:
        out.append(Reason("ERROR", finish_error))
    return out


#: what pytest's own exit statuses mean, for a run that ended with one and no gpuperf reason
PYTEST_STATUS = {
    2: "the run was interrupted (Ctrl-C, a signal or an error during collection; see the lines above)",
    3: "pytest hit an internal error (see the traceback above)",
    4: "pytest refused the command line (see the usage error above)",
    5: "no test was collected: the tests named, -k or -m selected none (gpuperf run --collect-only -q lists them)",
}


def verdict_word(status: int) -> str:
    """``PASSED`` for 0, the reason of a gpuperf status (``exits``), else ``FAILED``."""
    if status == 0:
        return "PASSED"
    return exits.REASONS.get(int(status), "INTERRUPTED" if int(status) == 2 else "FAILED")


def _short(r: Reason, word: str) -> str:
    if r.kind == "REGRESSED":
        shown = ", ".join(r.names[:HEADLINE_NAMES]) + (f" and {len(r.names) - HEADLINE_NAMES} more"
                                                       if len(r.names) > HEADLINE_NAMES else "")
        return f"{len(r.names)} metric(s) REGRESSED on {r.device}: {shown}"
    if r.kind == "MISSING":
        return (f"{len(r.names)} metric(s) MISSING on {r.device}: {', '.join(r.names[:HEADLINE_NAMES])}"
                + (" ..." if len(r.names) > HEADLINE_NAMES else ""))
    return r.text if r.kind == word else f"{r.kind}: {r.text}"  # the status already names its own reason


def other_failed_tests(failed_tests: int, found: Iterable[Reason]) -> int:
    """Failed tests that no regression explains (a test that raised, a fixture that failed)."""
    regressed = {t for r in found if r.kind == "REGRESSED" for t in r.tests}
    return max(0, int(failed_tests) - len(regressed))


def headline(status: int, found: list[Reason], failed_tests: int = 0, gated: str = "") -> str:
    """The first line of every CI output: ``gpuperf PASSED (exit 0): ...`` or ``gpuperf FAILED (exit 1):
    <why>``; a gpuperf status names its reason (``gpuperf HOST TOO BUSY TO GATE (exit 9): ...``).
    ``gated``: what was judged, for a passing run (``12 metrics on opencl:0``)."""
    parts = [_short(r, verdict_word(status)) for r in found]
    others = other_failed_tests(failed_tests, found)
    if others:
        parts.append(f"{others} test(s) failed")
    if not parts:
        parts.append("no metric regressed" + (f" ({gated})" if gated else "") if status == 0
                     else PYTEST_STATUS.get(int(status), "pytest ended the run with this status (see its log)"))
    return f"gpuperf {verdict_word(status)} (exit {int(status)}): " + "; ".join(parts)


def gate_failure(status: int, found: list[Reason], failed_tests: int = 0) -> tuple[str, str, str] | None:
    """The ``gpuperf.gate`` JUnit case's failure as (type, message, text), or None when it passes: it fails
    on any gpuperf reason, and on a non-zero exit that no failed test shows. The type is the verdict as one
    token (``gpuperf.HOST_TOO_BUSY_TO_GATE``), the message the headline, the text every reason."""
    if not found and (status == 0 or failed_tests):
        return None
    text = "\n".join(f"{r.kind}: {r.text}" for r in found) or f"exit status {int(status)}"
    return "gpuperf." + verdict_word(status).replace(" ", "_"), headline(status, found, failed_tests), text


def scope(recorded: dict[str, list[str]]) -> str:
    """What a passing run judged, per device: ``opencl:0: 3 pass, 1 new`` (``new``: no baseline entry, not
    gated), or ``no metric recorded``."""
    parts = []
    for spec, verdicts in recorded.items():
        tally: dict[str, int] = {}
        for v in verdicts:
            tally[v] = tally.get(v, 0) + 1
        parts.append(f"{spec}: " + ", ".join(f"{n} {v}" for v, n in sorted(tally.items())))
    return "; ".join(parts) or "no metric recorded"


def suite_classname(location_path: str, nodeid: str) -> str | None:
    """The JUnit class name of a shipped suite's test: its module (``pytest_gpuperf.suites.test_memory``, a
    test class appended), wherever the package is installed; None for any other test (pytest's name stays).
    ``location_path``: the report's file path relative to the rootdir (``report.location[0]``), which
    holds the package folders even where the node id does not (``--pyargs pytest_gpuperf.suites``)."""
    parts = location_path.replace("\\", "/").split("/")
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == "suites" and parts[i - 1] == "pytest_gpuperf":
            module = ".".join(["pytest_gpuperf", "suites", *parts[i + 1:]])
            module = module[:-3] if module.endswith(".py") else module
            inner = nodeid.partition("[")[0].split("::")[1:-1]  # test classes between file and function
            return ".".join([module, *inner])
    return None
