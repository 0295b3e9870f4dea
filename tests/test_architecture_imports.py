"""The package imports in one direction: no module-level import circle between modules of pytest_gpuperf
(a circle makes import order matter and hides which layer owns what)."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PKG = Path(__file__).resolve().parents[1] / "pytest_gpuperf"


def _module(path: Path) -> tuple[str, str]:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        name = ".".join(parts[:-1])
        return name, name
    name = ".".join(parts)
    return name, name.rsplit(".", 1)[0]


def _target(base: str, name: str) -> str:
    """``base.name`` where that is a module or package of its own, else ``base``."""
    sub = f"{base}.{name}"
    path = PKG.parent / sub.replace(".", "/")
    return sub if path.with_suffix(".py").exists() or path.is_dir() else base


def import_graph() -> nx.DiGraph:
    """Edges of the imports that run when a module is imported (module level, and inside a top-level
    ``try``); imports inside functions run later and cannot form an import-time circle."""
    graph = nx.DiGraph()
    for path in PKG.rglob("*.py"):
        mod, pkg = _module(path)
        graph.add_node(mod)
        body = ast.parse(path.read_text(encoding="utf-8")).body
        stmts = [n for n in body if isinstance(n, (ast.Import, ast.ImportFrom))]
        stmts += [m for n in body if isinstance(n, ast.Try) for m in n.body if isinstance(m, (ast.Import, ast.ImportFrom))]
        for node in stmts:
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = pkg.split(".")
                    base = ".".join(parts[:len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
                elif node.module and node.module.startswith("pytest_gpuperf"):
                    base = node.module
                else:
                    continue
                for alias in node.names:
                    graph.add_edge(mod, _target(base, alias.name))
            else:
                for alias in node.names:
                    if alias.name.startswith("pytest_gpuperf"):
                        graph.add_edge(mod, alias.name)
    return graph


def test_no_module_level_import_circle():
    graph = import_graph()
    assert graph.number_of_nodes() > 100  # the walk saw the package
    circles = [c for c in nx.simple_cycles(graph) if len(c) > 1]
    assert not circles, "import circles: " + "; ".join(" -> ".join(c + [c[0]]) for c in circles[:10])


def test_the_graph_sees_a_circle_when_there_is_one(tmp_path):
    """The detector itself: two modules importing each other at module level are reported."""
    global PKG
    pkg = tmp_path / "pytest_gpuperf"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "x.py").write_text("from .y import f\n")
    (pkg / "a" / "y.py").write_text("from . import x\ndef f(): pass\n")
    old, PKG = PKG, pkg
    try:
        circles = [c for c in nx.simple_cycles(import_graph()) if len(c) > 1]
    finally:
        PKG = old
    assert any(set(c) == {"pytest_gpuperf.a.x", "pytest_gpuperf.a.y"} for c in circles), circles
