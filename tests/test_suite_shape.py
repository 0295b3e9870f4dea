"""The shipped suites only parametrize, call and record: every test function is at most 25 lines (its
docstring aside), nests no function, and no suite writes a tolerance as a dict literal or keeps a
``TOL_*`` constant — tolerances are policy and live in ``baselines/catalog.py``; procedures live in the
library, where they are typed, documented and tested on their own.

Checked on the source (AST), so a suite that grows a protocol again fails here before review."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SUITES = Path(__file__).resolve().parents[1] / "pytest_gpuperf" / "suites"
MAX_LINES = 25
TOLERANCE_KEYS = {"abs", "rel"}


def _tests(tree: ast.Module) -> list[ast.FunctionDef]:
    return [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]


def _length(fn: ast.FunctionDef) -> int:
    """Lines of the function from ``def`` to its last line, without decorators and its docstring."""
    n = fn.end_lineno - fn.lineno + 1
    first = fn.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        n -= first.end_lineno - first.lineno + 1
    return n


def _suites() -> list[Path]:
    return sorted(p for p in SUITES.glob("test_*.py"))


def shape_problems(source: str) -> list[str]:
    """What makes a suite's source more than parametrize, call and record."""
    tree = ast.parse(source)
    problems = []
    for fn in _tests(tree):
        if _length(fn) > MAX_LINES:
            problems.append(f"{fn.name}: {_length(fn)} lines (at most {MAX_LINES}): move the procedure into the library")
        nested = [n for n in ast.walk(fn) if n is not fn and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if nested:
            problems.append(f"{fn.name}: nests {', '.join(n.name for n in nested)}: a library function instead")
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value in TOLERANCE_KEYS
                                              for k in node.keys):
            problems.append(f"line {node.lineno}: a tolerance dict literal: add the family to baselines/catalog.py")
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if any(n.startswith("TOL") or n.endswith("_TOL") for n in names):
                problems.append(f"line {node.lineno}: a tolerance constant {names}: the catalog holds tolerances")
    return problems


@pytest.mark.parametrize("path", _suites(), ids=lambda p: p.name)
def test_suite_only_parametrizes_calls_and_records(path: Path) -> None:
    problems = shape_problems(path.read_text(encoding="utf-8"))
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)


def test_the_check_sees_a_long_test_a_nested_helper_and_an_inline_tolerance() -> None:
    src = ("ACC_TOL = 0.5\n\ndef test_x(rec):\n    def helper():\n        pass\n" + "    a = 1\n" * 30
           + "    rec('m', 1, 's', tolerance={'rel': 0.1})\n")
    found = shape_problems(src)
    assert len(found) == 4 and "34 lines" in found[0] and "nests helper" in found[1], found
    assert "tolerance dict" in " ".join(found) and "tolerance constant" in " ".join(found)
    assert shape_problems("def test_y(rec):\n    rec('m', 1, 's')\n") == []
