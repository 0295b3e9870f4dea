"""The terminal summary of a session as a list of lines (text, markup), not as writes.

Why lines: under pytest-xdist a worker's terminal goes nowhere; the worker hands its lines to the
controller (``fleet.workers``), which prints every worker's devices in one summary. Without xdist the
plugin prints the same lines itself, so both paths show the same text.
"""

from __future__ import annotations

from typing import Any

from . import terminal

Line = tuple[str, dict[str, bool]]


def session_lines(state: Any, finish_error: str | None = None) -> list[Line]:
    """Abandoned devices, then per device that recorded anything: the upgrade gate, missing metrics,
    the table and the tally; GitHub annotations when under Actions; the end-of-run error; files."""
    out: list[Line] = []
    for spec, why in state.abandoned().items():
        out.append((f"gpuperf ABANDONED {spec}: {why}", {"red": True, "bold": True}))
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
        for name in state.missing.get(info.spec, []):
            out.append((f"MISSING: {name} is in the {state.against} but its test no longer records it", {"red": True}))
        table = terminal.rows(run.metrics.values())
        header = ("metric", "reference" if state.reference is not None else "baseline", "measured", "delta", "verdict")
        for line in terminal.format_table(table, header):
            out.append((line, {"red": line.rstrip().endswith("regressed")}))
        tally = ", ".join(f"{n} {v}" for v, n in sorted(terminal.counts(run.metrics.values()).items()))
        out.append((f"gpuperf {info.spec}: {tally}", {}))
        busy = sorted(m.name for m in run.metrics.values() if (m.info.get("host") or {}).get("contended"))
        if busy:  # timing.observers: still contended after its re-measurements
            judged = "not gated (verdict 'contended')" if info.is_cpu else "device-timed, so still gated"
            out.append((f"HOST BUSY: {len(busy)} metric(s) of {info.spec} were measured while other work used this "
                        f"host's CPUs even after re-measuring (info['host']; {judged}): {', '.join(busy[:5])}"
                        f"{' …' if len(busy) > 5 else ''}", {"yellow": True}))
    for line in state.too_contended():
        out.append((f"HOST TOO BUSY TO GATE: {line}", {"red": True, "bold": True}))
    out += [(line, {}) for line in _github(state)]
    if finish_error:
        out.append((f"gpuperf error: {finish_error}", {"red": True}))
    for path in state.files_written:
        out.append((f"gpuperf wrote {path}", {}))
    return out


def _github(state: Any) -> list[str]:
    """Under GitHub Actions: annotation commands for regressions (and incomparable/missing metrics), and
    the table appended to the step summary (compare.github does the work)."""
    from ..compare import github

    if not github.enabled():
        return []
    lines: list[str] = []
    for run in state.runs.values():
        missing = state.missing.get(run.info.spec, [])
        if not run.metrics and not missing:
            continue
        lines += github.commands(github.findings_from_metrics(run.metrics.values(), missing, run.info.spec))
        github.append_step_summary(github.summary_table(run.metrics.values(), missing, run.info.spec, state.against))
    return lines


def write(tr: Any, lines: list[Line]) -> None:
    """Print lines on pytest's terminal reporter (``=SEP=`` lines become separators)."""
    for text, markup in lines:
        if text.startswith("=SEP="):
            tr.write_sep("=", text[len("=SEP="):])
        else:
            tr.write_line(text, **markup)
