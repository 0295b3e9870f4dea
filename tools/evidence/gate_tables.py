"""A table over saved gate checks (``gatecheck.json`` of ``gpuperf baseline gatecheck``): per check, its card, the
commit it ran, the card's UUID, how many of its A/A runs were clean, and which planted families it caught in every
try (the check's own summary, :func:`pytest_gpuperf.gatecheck.run.detection`, of its latest commit's runs): which
checks prove a gate's power and its false-alarm rate.

Options: ``families=N`` (default 8) and ``aa=N`` (default 3): a row whose check caught at least N families in every
try and has at least that many A/A runs, every one clean, is marked as meeting both.
"""

from __future__ import annotations

from pytest_gpuperf.gatecheck.run import detection

from .registry import Inputs
from .runfile import EvidenceError, Run


def _row(run: Run, need_families: int, need_aa: int) -> str:
    doc = run.doc
    if doc.get("schema") != "pytest-gpuperf-gatecheck/1":
        raise EvidenceError(f"{run.path}: not a gate-check file (schema {doc.get('schema')!r})")
    device = doc.get("device") or {}
    uuid = str((device.get("extra") or {}).get("uuid") or "")
    found = detection(dict(doc))  # the gate check's own summary: its latest commit's A/A runs and planted tries
    clean, runs = found["aa"]["clean"], found["aa"]["runs"]
    caught = [k for k, f in found["families"].items() if f["tries"] and f["detected"] == f["tries"]]
    missed = [k for k in found["families"] if k not in caught]
    meets = "yes" if len(caught) >= need_families and clean == runs >= need_aa else "no"
    folder = run.path.split("/")[2] if run.path.count("/") >= 3 else run.path
    return (f"| {device.get('key', '–')} ({device.get('backend', '–')}) | `{folder}` | "
            f"{str(doc.get('commit') or '')[:7] or '–'} | {uuid[:12] + '…' if uuid else '–'} | {clean} of {runs} | "
            f"{len(caught)}: {', '.join(caught) or '–'} | {', '.join(missed) or '–'} | {meets} |")


def gate_checks(inp: Inputs) -> list[str]:
    """One row per gate check named: A/A runs clean, families caught in every try, and whether it meets both bars."""
    need_families, need_aa = int(inp.option("families", "8")), int(inp.option("aa", "3"))
    out = ["| card | gate check | commit | card UUID | A/A runs clean | families caught in every try | "
           "missed in some try | " + f"≥ {need_families} families, ≥ {need_aa} A/A runs all clean |",
           "| --- | --- | --- | --- | ---: | --- | --- | --- |"]
    out += [_row(run, need_families, need_aa) for run in inp.runs("checks")]
    return out


TABLES = {"gate-checks": gate_checks}
