"""A table over saved gate checks (``gatecheck.json`` of ``gpuperf baseline gatecheck``): per check, its card, the
commit it ran, the card's UUID, how many of its A/A runs were clean, and which planted families it caught in every
try — what a reader needs to see which checks prove a gate's power and its false-alarm rate.

Options: ``families=N`` (default 8) and ``aa=N`` (default 3): a row whose check caught at least N families in every
try and has at least that many A/A runs, every one clean, is marked as meeting both.
"""

from __future__ import annotations

from typing import Any, Mapping

from .registry import Inputs
from .runfile import EvidenceError, Run


def _families(doc: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The planted kinds caught in every try, and those missed in some try, in the order first planted."""
    tries: dict[str, list[int]] = {}
    for plant in doc.get("planted") or []:
        kind = str(plant.get("kind") or "")
        got = tries.setdefault(kind, [0, 0])
        got[0] += int(plant.get("detected") or 0)
        got[1] += int(plant.get("tries") or 0)
    caught = [k for k, (d, t) in tries.items() if t and d == t]
    return caught, [k for k in tries if k not in caught]


def _clean(doc: Mapping[str, Any]) -> tuple[int, int]:
    """(clean A/A runs, A/A runs): a run is clean when it exited 0."""
    runs = [a for a in doc.get("aa") or [] if isinstance(a, Mapping)]
    return sum(1 for a in runs if a.get("exit") == 0), len(runs)


def _row(run: Run, need_families: int, need_aa: int) -> str:
    doc = run.doc
    if doc.get("schema") != "pytest-gpuperf-gatecheck/1":
        raise EvidenceError(f"{run.path}: not a gate-check file (schema {doc.get('schema')!r})")
    device = doc.get("device") or {}
    uuid = str((device.get("extra") or {}).get("uuid") or "")
    clean, runs = _clean(doc)
    caught, missed = _families(doc)
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
