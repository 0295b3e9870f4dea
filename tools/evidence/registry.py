"""Table names → generators. Each doc area has one module of generators (``probe_tables``,
``accuracy_tables``, ``model_tables`` (the model studies' in ``model_study_tables``), ``tuning_tables``, ``precision_tables``, ``power_tables``; precision's
tables over many unchanged runs in ``precision_aa_tables``; the saved gate checks' in ``gate_tables``); each exposes ``TABLES``, a name → function mapping. A generator takes the block's :class:`Inputs` and returns
the table's Markdown lines; it never reads a file its marker does not name."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from .markers import Block
from .runfile import EvidenceError, Run

MODULES = ("probe_tables", "accuracy_tables", "model_tables", "model_study_tables", "tuning_tables", "precision_tables",
           "precision_aa_tables", "power_tables", "run_tables", "gate_tables")


@dataclass(frozen=True)
class Inputs:
    """What a generator gets: the block, its runs by role, its options and the repository root."""

    block: Block
    roles: Mapping[str, list[Run]]
    root: Path

    def runs(self, role: str = "sources") -> list[Run]:
        if role not in self.roles:
            have = ", ".join(self.roles) or "none"
            raise EvidenceError(f"{self.block.where}: the table needs {role}=results/… in its marker (roles given: {have})")
        return self.roles[role]

    def maybe(self, role: str) -> list[Run]:
        return self.roles.get(role, [])

    def run(self, role: str = "sources") -> Run:
        runs = self.runs(role)
        if len(runs) != 1:
            raise EvidenceError(f"{self.block.where}: {role}= must name exactly one results file, got {len(runs)}")
        return runs[0]

    def option(self, key: str, default: str | None = None) -> str:
        value = self.block.options.get(key, default)
        if value is None:
            raise EvidenceError(f"{self.block.where}: the table needs the option {key}=… in its marker")
        return value


Generator = Callable[[Inputs], list[str]]


def tables() -> dict[str, Generator]:
    """Every table name the docs may use."""
    out: dict[str, Generator] = {}
    for mod in MODULES:
        for name, fn in importlib.import_module(f"{__package__}.{mod}").TABLES.items():
            if name in out:
                raise RuntimeError(f"table name {name!r} is defined twice (second in {mod})")
            out[name] = fn
    return out
