"""Verdict words are named in one module (``pytest_gpuperf/verdictwords.py``) and nowhere else as literals.

What counts as writing a verdict word as a literal, in any module of the package but that one: a string
constant equal to a word of :data:`pytest_gpuperf.verdictwords.WORDS` used

* in a comparison (``==``, ``!=``, ``in``, ``not in``, also inside a tuple, list or set compared) whose
  other side names a verdict (a name, attribute, call or subscript whose source holds ``verdict``, or a
  loop variable of a ``for`` or a comprehension over such an expression: ``for v in m.verdicts``);
* as the value assigned to a target that names a verdict (``row.verdict = …``, ``verdict = …``, one
  element of a tuple assignment), as a ``verdict=`` keyword argument, as the value of a ``"verdict"``
  key in a dict literal, or returned by a function whose name holds ``verdict``;
* as the first argument of ``Comparison(…)`` (the gate's comparison carries its verdict first);
* as a key of a dict literal whose keys (two or more) are all verdict words (a table by verdict: an order,
  an exit status, a translation), or in a tuple, list or set of two or more constants that are all verdict
  words (a set of verdicts).

Docstrings, f-strings and messages (a word inside a longer string), dict keys and subscripts
(``info["throttled"]``, ``.get("contended")``: keys of the observers' readings) and files that are not
Python (templates, docs) do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

from pytest_gpuperf.verdictwords import WORDS

PKG = Path(__file__).resolve().parent.parent / "pytest_gpuperf"
DEFINING = PKG / "verdictwords.py"


def _word(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        and node.value in WORDS else None


def _words(node: ast.AST) -> list[ast.Constant]:
    """The verdict-word constants of ``node`` itself or, for a tuple/list/set/conditional, of its elements."""
    if _word(node) is not None:
        return [node]  # type: ignore[list-item]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e for e in node.elts if _word(e) is not None]  # type: ignore[misc]
    if isinstance(node, ast.IfExp):
        return _words(node.body) + _words(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [c for v in node.values for c in _words(v)]
    return []


def _names_verdict(node: ast.AST, loop_names: frozenset[str] = frozenset()) -> bool:
    """Whether ``node`` names a verdict: its source says so, or it is (an item of) a loop variable over one."""
    base = node.value if isinstance(node, ast.Subscript) else node
    if isinstance(base, ast.Name) and base.id in loop_names:
        return True
    return "verdict" in ast.unparse(node).lower()


def _loop_names(tree: ast.AST) -> frozenset[str]:
    """Names bound by a ``for`` or a comprehension over an expression that names a verdict."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.comprehension)) and "verdict" in ast.unparse(node.iter).lower():
            out |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    return frozenset(out)


def violations(source: str, filename: str = "<source>") -> list[tuple[int, str, str]]:
    """(line, word, why) of every verdict word written as a literal in ``source`` (the rules above)."""
    tree = ast.parse(source, filename)
    loops = _loop_names(tree)
    found: dict[tuple[int, int], tuple[int, str, str]] = {}

    def hit(const: ast.AST, why: str) -> None:
        found.setdefault((const.lineno, const.col_offset), (const.lineno, str(const.value), why))  # type: ignore[attr-defined]

    class Visitor(ast.NodeVisitor):
        def __init__(self) -> None:
            self.functions: list[str] = []

        def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
            self.functions.append(node.name)
            self.generic_visit(node)
            self.functions.pop()

        visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

        def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
            return  # an f-string is a message

        def visit_Compare(self, node: ast.Compare) -> None:
            sides = [node.left, *node.comparators]
            if any(_names_verdict(s, loops) for s in sides if not _words(s)):
                for s in sides:
                    for c in _words(s):
                        hit(c, "compared with a verdict")
            self.generic_visit(node)

        def _assigned(self, targets: list[ast.AST], value: ast.AST | None) -> None:
            if value is None:
                return
            for t in targets:
                if isinstance(t, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                        and len(t.elts) == len(value.elts):
                    for te, ve in zip(t.elts, value.elts):
                        if _names_verdict(te):
                            for c in _words(ve):
                                hit(c, "assigned to a verdict")
                elif _names_verdict(t):
                    for c in _words(value):
                        hit(c, "assigned to a verdict")

        def visit_Assign(self, node: ast.Assign) -> None:
            self._assigned(list(node.targets), node.value)
            self.generic_visit(node)

        def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
            self._assigned([node.target], node.value)
            self.generic_visit(node)

        def visit_Return(self, node: ast.Return) -> None:
            if node.value is not None and any("verdict" in f.lower() for f in self.functions[-1:]):
                for c in _words(node.value):
                    hit(c, "returned as a verdict")
            self.generic_visit(node)

        def visit_Call(self, node: ast.Call) -> None:
            for kw in node.keywords:
                if kw.arg is not None and "verdict" in kw.arg.lower():
                    for c in _words(kw.value):
                        hit(c, "passed as a verdict")
            if ast.unparse(node.func).split(".")[-1] == "Comparison" and node.args:
                for c in _words(node.args[0]):
                    hit(c, "a Comparison's verdict")
            self.generic_visit(node)

        def visit_Dict(self, node: ast.Dict) -> None:
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and "verdict" in k.value.lower():
                    for c in _words(v):
                        hit(c, "the value of a verdict key")
            pairs = [(k, v) for k, v in zip(node.keys, node.values) if k is not None]
            if len(pairs) >= 2 and all(_word(k) is not None for k, _ in pairs):
                for k, v in pairs:
                    hit(k, "a table of verdict words")
                    if _word(v) is not None:
                        hit(v, "a table of verdict words")
            self.generic_visit(node)

        def _collection(self, node: ast.Tuple | ast.List | ast.Set) -> None:
            if len(node.elts) >= 2 and all(_word(e) is not None for e in node.elts):
                for e in node.elts:
                    hit(e, "a set of verdict words")
            self.generic_visit(node)

        visit_Tuple = visit_List = visit_Set = _collection  # type: ignore[assignment]

    Visitor().visit(tree)
    return sorted(found.values())


def package_violations() -> dict[str, list[tuple[int, str, str]]]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        if path == DEFINING:
            continue
        bad = violations(path.read_text(encoding="utf-8"), str(path))
        if bad:
            out[str(path.relative_to(PKG.parent))] = bad
    return out


def test_no_module_but_verdictwords_writes_a_verdict_word_as_a_literal():
    bad = package_violations()
    lines = [f"{path}:{line}: {word!r} {why}" for path, rows in bad.items() for line, word, why in rows]
    assert not lines, ("verdict words written as literals (name them through pytest_gpuperf.verdictwords):\n"
                       + "\n".join(lines))


PLANTED = '''
def judge(row, metric, verdict):
    """A docstring may say 'regressed' and "pass"."""
    if metric.verdict == "regressed":
        row.verdict = "worse"
    row.verdict, row.reason = "incomparable", "why"
    message = f"{metric.name}: pass"
    if verdict in ("contended", "throttled"):
        return {"verdict": "ok"}
    table = {"regressed": "worse", "pass": "same"}
    words = ("outlier", "same")
    cmp = Comparison("new", None)
    info["throttled"] = info.get("contended")
    row = Row(verdict="fail")
    order = {"regressed": 0, "improved": 1}
    return [v for v in metric.verdicts if v != "new"]

def throttled_verdict(v):
    return "throttled" if v else v
'''


def test_the_scan_catches_each_kind_of_planted_literal_and_nothing_else():
    found = violations(PLANTED)
    by_line = {}
    for line, word, why in found:
        by_line.setdefault(line, []).append((word, why))
    assert by_line == {
        4: [("regressed", "compared with a verdict")],
        5: [("worse", "assigned to a verdict")],
        6: [("incomparable", "assigned to a verdict")],
        8: [("contended", "compared with a verdict"), ("throttled", "compared with a verdict")],
        9: [("ok", "the value of a verdict key")],
        10: [("pass", "a table of verdict words"), ("regressed", "a table of verdict words"),
             ("same", "a table of verdict words"), ("worse", "a table of verdict words")],
        11: [("outlier", "a set of verdict words"), ("same", "a set of verdict words")],
        12: [("new", "a Comparison's verdict")],
        14: [("fail", "passed as a verdict")],
        15: [("improved", "a table of verdict words"), ("regressed", "a table of verdict words")],
        16: [("new", "compared with a verdict")],
        19: [("throttled", "returned as a verdict")],
    }


def test_the_same_code_through_the_words_module_is_clean():
    clean = PLANTED.replace('"regressed"', "Gate.REGRESSED").replace('"worse"', "Compare.WORSE") \
        .replace('"incomparable"', "Gate.INCOMPARABLE").replace('"contended"', "Gate.CONTENDED") \
        .replace('"throttled"', "Gate.THROTTLED").replace('"ok"', "FleetCard.OK").replace('"pass"', "Gate.PASS") \
        .replace('"same"', "Compare.SAME").replace('"outlier"', "Sibling.OUTLIER").replace('"new"', "Gate.NEW") \
        .replace('"fail"', "FleetCard.FAIL").replace('"improved"', "Gate.IMPROVED")
    assert violations(clean) == []
