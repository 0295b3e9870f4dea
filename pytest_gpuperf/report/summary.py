"""The terminal summary of a session as a list of lines (text, markup), not as writes.

Why lines: under pytest-xdist a worker's terminal goes nowhere; the worker hands its lines to the
controller (``fleet.workers``), which prints every worker's devices in one summary. Without xdist the
plugin prints the same lines itself, so both paths show the same text.

Per device the table lists the rows that are not ``pass`` (nor ``new`` or ``ungated``), then the counts;
``--gpuperf-summary=all`` (ini ``gpuperf_summary``) lists every row. Every line that fails the run
(ABANDONED, NO BASELINE when required, HOST TOO BUSY, GPU TOO BUSY, CARD THROTTLED, MISSING, an
end-of-run error) is also a GitHub annotation under Actions: the lines and the annotations are made in
one place (:class:`Alarms`), so none of them can go without the other. Figures a run could not judge but that
changed far beyond what the sharing explains are named in a ``WOULD HAVE REGRESSED:`` line
(``timing.observers.would_regress``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..verdictwords import Gate
from .. import exits
from ..timing import observers
from ..util.listing import few
from ..util.provenance import git_commit
from . import sensitivity, terminal

Line = tuple[str, dict[str, bool]]
#: ``--gpuperf-summary`` values: the rows that are not ``pass`` (default), or every row
SUMMARY_CHOICES = ("failures", "all")
FAIL = {"red": True, "bold": True}


@dataclass
class Alarms:
    """The summary's lines that fail the run, each with the title of its GitHub annotation."""

    lines: list[Line] = field(default_factory=list)
    found: list[tuple[str, str, str]] = field(default_factory=list)  # (level, title, text)

    def fail(self, title: str, text: str, line: str | None = None) -> Line:
        """A red line (``line``, default ``title: text``) and an ``::error`` annotation titled ``title``."""
        self.found.append(("error", title, text))
        return (line if line is not None else f"{title}: {text}"), FAIL


def session_lines(state: Any, finish_error: str | None = None) -> list[Line]:
    """Abandoned devices, then per device that recorded anything: the upgrade gate, missing metrics,
    the table and the tally; GitHub annotations when under Actions; the end-of-run error; files."""
    out: list[Line] = []
    alarms = Alarms()
    for spec, why in state.abandoned().items():
        out.append(alarms.fail(f"gpuperf ABANDONED {spec}", why))
    for run in state.runs.values():
        if not run.metrics and not state.missing.get(run.info.spec):
            continue
        info = run.info
        out.append((f"=SEP=gpuperf {info.spec} {info.name} [{info.key}]", {}))
        current = {"driver": info.driver_version, "runtime": info.runtime_version, "toolkit": info.toolkit_version}
        if state.reference is not None:
            out.append((f"gated against {state.against} ({state.reference.describe()}), not the baseline",
                        {"bold": True}))
        for line in terminal.provenance_changes(current, run.provenance()):
            out.append((f"UPGRADE GATE: {line}", {"yellow": True, "bold": True}))
        if state.has_no_baseline(run):
            out += [(line, FAIL) for line in no_baseline_lines(state, run)]
        elif state.reference is None and not state.options.update_baselines:
            out.append((f"gated against {run.source.describe()}", {}))
        for name in state.missing.get(info.spec, []):  # annotated with the regressions (report.github)
            out.append((f"MISSING: {name} is in the {state.against} but its test no longer records it", {"red": True}))
        retired = state.retired.get(info.spec, [])
        if retired:
            out.append((f"RETIRED: {len(retired)} baseline entries name metrics this plugin no longer records "
                        f"({few(retired)}): not gated, not missing; "
                        f"`gpuperf baseline migrate` drops them", {"yellow": True}))
        shown = [m for m in run.metrics.values() if state.options.show_all or m.verdict not in QUIET]
        table = terminal.rows(shown)
        header = ("metric", "reference" if state.reference is not None else "baseline", "measured", "delta", "verdict")
        if table:
            for line in terminal.format_table(table, header):
                out.append((line, {"red": line.rstrip().endswith("regressed")}))
        hidden = len(run.metrics) - len(shown)
        if hidden:
            out.append((f"({hidden} {'row' if hidden == 1 else 'rows'} {' or '.join(QUIET)} not listed; "
                        "--gpuperf-summary=all lists every row)", {}))
        tally = ", ".join(f"{n} {v}" for v, n in sorted(terminal.counts(run.metrics.values()).items()))
        out.append((f"gpuperf {info.spec}: {tally}", {}))
        power = sensitivity.line(info.spec, list(run.metrics.values()))
        if power:
            out.append((power, {}))
        if info.is_cpu:  # timing.observers: still contended after its re-measurements (a deterministic figure is judged)
            busy = sorted(m.name for m in run.metrics.values() if m.verdict == Gate.CONTENDED
                          and observers.contended_metric(m.info) and not observers.shared_metric(m.info))
        else:
            busy = sorted(m.name for m in run.metrics.values() if (m.info.get("host") or {}).get("contended"))
        if busy:
            judged = "not gated (verdict 'contended')" if info.is_cpu else "device-timed, so still gated"
            out.append((f"HOST BUSY: {len(busy)} metric(s) of {info.spec} were measured while other work used this "
                        f"host's CPUs even after re-measuring (info['host']; {judged}): {few(busy, 5)}",
                        {"yellow": True}))
        out += [(line, {"yellow": True}) for line in observed_lines(run)]
    if state.options.require_baseline:
        for run in state.unbaselined():
            head, make = no_baseline_lines(state, run)
            out.append(alarms.fail(f"gpuperf: NO BASELINE for {run.info.key}", f"{head}. {make.strip()}",
                                   f"FAIL ({exits.REASONS[exits.NO_BASELINE]}, exit {exits.NO_BASELINE}): {run.info.key} "
                                   f"has no baseline and --gpuperf-require-baseline is set; make one with "
                                   f"{init_command(state, run)}"))
    for status, line in run_level_failures(state):
        out.append(alarms.fail(f"gpuperf: {exits.REASONS[status]}", line, f"{exits.REASONS[status]} (exit {status}): {line}"))
    if finish_error:
        out.append(alarms.fail("gpuperf error", finish_error))
    out += [(line, {}) for line in _github(state, alarms)]
    for path in state.files_written:
        out.append((f"gpuperf wrote {path}", {}))
    if (state.files_written or state.options.history_path) and not git_commit(str(state.rootdir)):
        out.append((f"gpuperf: these records name no commit: {state.rootdir} is not a git checkout; set GPUPERF_COMMIT "
                    "to the commit its code is (history and compare attribute every change to one)", {"yellow": True}))
    return out


def observed_lines(run: Any) -> list[str]:
    """What the NVML observers saw under a device's metrics, even where it did not fail the run: metrics
    measured while other processes ran on the card (naming them), and metrics measured while the card
    slowed itself down (naming the reasons)."""
    from ..devices.nvml import SLOWDOWN_REASONS

    out: list[str] = []
    spec = run.info.spec
    # a figure still judged (a deterministic one beside shared windows) is not listed
    marked = [m for m in run.metrics.values() if m.verdict not in (Gate.PASS, Gate.REGRESSED, Gate.IMPROVED)]
    shared = sorted((m for m in marked if observers.shared_metric(m.info)), key=lambda m: m.name)
    if shared:
        procs = observers.summarize_tenants(observers.seen([m.info for m in shared], "tenants"))["processes"]
        out.append(f"GPU SHARED: {len(shared)} metric(s) of {spec} were measured while other processes ran on the "
                   f"card even after re-measuring (info['tenants'], or the figures they were computed from; not "
                   f"gated, verdict 'contended'): {observers.describe_processes(procs)}; {_names(shared)}")
    slow = sorted((m for m in marked if observers.throttled_metric(m.info) and not observers.shared_metric(m.info)),
                  key=lambda m: m.name)
    if slow:
        reasons = sorted({r for p in observers.seen([m.info for m in slow], "power")
                          for r in (p.get("throttle_reasons") or ()) if r in SLOWDOWN_REASONS})
        out.append(f"CARD THROTTLED: {len(slow)} metric(s) of {spec} were measured while the card slowed itself "
                   f"down (info['power']; not gated, verdict 'throttled'): {', '.join(reasons) or 'no reason recorded'}"
                   f"; {_names(slow)}")
    beyond = sorted((m for m in run.metrics.values() if m.info.get("would_regress")), key=lambda m: m.name)
    if beyond:
        out.append(f"WOULD HAVE REGRESSED: {len(beyond)} metric(s) of {spec} read 'contended' or 'throttled' but changed "
                   f"more than {observers.FAR_BEYOND:g}x what sharing or a throttle could explain (info['would_regress']): "
                   + ", ".join(f"{m.name} x{m.info['would_regress']['factor']:.3g} (explained x"
                               f"{m.info['would_regress']['explained']:.3g})" for m in beyond[:5])
                   + (f" and {len(beyond) - 5} more" if len(beyond) > 5 else "") + ": run again alone")
    return out


def _names(metrics: list[Any], limit: int = 5) -> str:
    return few((m.name for m in metrics), limit)


def run_level_failures(state: Any) -> list[tuple[int, str]]:
    """(exit status, line) of every device the run could not gate because the card was shared or
    throttled, or a CPU device's host busy, through more than a tenth of its metrics
    (``GpuPerfSession.gpu_too_busy`` / ``too_throttled`` / ``too_contended``)."""
    return ([(exits.GPU_TOO_BUSY, line) for line in state.gpu_too_busy()]
            + [(exits.THROTTLED, line) for line in state.too_throttled()]
            + [(exits.HOST_TOO_BUSY, line) for line in state.too_contended()])


#: verdicts the summary does not list row by row (their count is in the tally); ``--gpuperf-summary=all`` lists them.
#: ``ungated``: recorded, deliberately not judged (a figure whose runs disagree, a derived figure against a
#: baseline of fewer than three runs or of one run under ``--gpuperf-compare``): hundreds of rows that hold no news
#: ``loose``: judged inside a band wider than its gate can call tight; the DETECTION POWER line counts them
QUIET = (Gate.PASS, Gate.NEW, Gate.UNGATED, Gate.LOOSE)


def gated_count(run: Any) -> int:
    """Metrics of a device that were judged against something (a baseline entry, a family entry, a
    documented bound): every verdict but ``new``."""
    return sum(1 for m in run.metrics.values() if m.verdict != Gate.NEW)


def init_command(state: Any, run: Any) -> str:
    """The command that makes a first baseline for ``run``'s device from three runs of the tests this run ran:
    the shipped suites (init's default), or the files of your own it ran, named after ``--`` (init then runs
    only those; ``suites/`` added where shipped tests ran beside them)."""
    import shlex

    files = sorted({str(t).split("::", 1)[0] for t in getattr(run, "tests", {}) or {}})
    own = [f for f in files if f != "suites" and not f.startswith("suites/")]
    named = own + (["suites/"] if own and len(own) < len(files) else [])
    return (f"gpuperf baseline init --runs 3 --device {run.info.spec} --dir {_shown_path(state.baseline_dir)}"
            + (f" -- {shlex.join(named)}" if named else ""))


def _shown_path(path: Any) -> str:
    import os

    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return rel if not rel.startswith("..") else str(path)


def no_baseline_lines(state: Any, run: Any) -> list[str]:
    """The loud opening of a device that has no baseline: what was gated, and how to make one."""
    info, n, m = run.info, len(run.metrics), gated_count(run)
    what = "documented bounds"
    if run.source.family_count:
        what = (f"documented bounds or the {run.source.family_count} deterministic entries of family "
                f"{run.source.family_key}")
    own = run.source.own_file()
    where = (f"{own} holds none of them" if own else
             f"no {info.key}.json in {_shown_path(state.baseline_dir)} nor among the reviewed baselines shipped with "
             "pytest-gpuperf")
    head = f"NO BASELINE for {info.key}: {n} recorded, {m} of them gated by {what}; {where}"
    return [head, f"  make one (review, then commit it): {init_command(state, run)}"]


def _github(state: Any, alarms: Alarms) -> list[str]:
    """Under GitHub Actions: an ``::error`` for every line that failed the run (:class:`Alarms`), a warning
    for a device without a baseline when none is required, the regressions (and incomparable and missing
    metrics) (report.github does the work; the step summary is written by the plugin, :func:`step_sections`)."""
    from . import github

    if not github.enabled():
        return []
    lines = [github.command(github.Finding(level, title, text)) for level, title, text in alarms.found]
    if not state.options.require_baseline:
        for run in state.unbaselined():
            head, make = no_baseline_lines(state, run)
            lines.append(github.command(github.Finding("warning", f"gpuperf: NO BASELINE for {run.info.key}",
                                                       f"{head}. {make.strip()}")))
    for run in state.runs.values():
        missing = state.missing.get(run.info.spec, [])
        if not run.metrics and not missing:
            continue
        lines += github.commands(github.findings_from_metrics(run.metrics.values(), missing, run.info.spec))
    return lines


def step_sections(state: Any) -> list[str]:
    """Each device's section of the GitHub step summary (``github.summary_table``); the plugin writes them
    once, under the run's headline (``report.civerdict``), when the exit status is known."""
    from . import github

    out = []
    for run in state.runs.values():
        missing = state.missing.get(run.info.spec, [])
        if run.metrics or missing:
            out.append(github.summary_table(run.metrics.values(), missing, run.info.spec, state.against))
    return out


def write(tr: Any, lines: list[Line]) -> None:
    """Print lines on pytest's terminal reporter (``=SEP=`` lines become separators)."""
    for text, markup in lines:
        if text.startswith("=SEP="):
            tr.write_sep("=", text[len("=SEP="):])
        else:
            tr.write_line(text, **markup)
