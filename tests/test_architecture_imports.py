"""The package imports in one direction, by the layers CONTRIBUTING.md declares ("Layers"): every import
of pytest_gpuperf — at module level, inside functions, under ``TYPE_CHECKING`` — goes to the importer's
own layer or one below it, and there is no circle, neither between modules nor between packages. The
table's wing column splits the package in two: no module of the gate wing imports ``pytest_gpuperf.studies``,
and the only studies modules the gate names (to be loaded by name) are the declared ones.

Imports inside functions count: deferring an import hides a circle from the interpreter, not from a
reader, and the layer that owns a piece of code is the same wherever the import statement stands."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "pytest_gpuperf"


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    imported: str  # the module (or package) the statement names
    line: int
    deferred: bool  # inside a function


def _module(pkg: Path, path: Path) -> tuple[str, str]:
    """(dotted name of the module, dotted name of the package its relative imports start from)."""
    parts = path.relative_to(pkg.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        name = ".".join(parts[:-1])
        return name, name
    name = ".".join(parts)
    return name, name.rsplit(".", 1)[0]


def _target(pkg: Path, base: str, name: str) -> str:
    """``base.name`` where that is a module or package of its own, else ``base`` (a name defined in it)."""
    sub = f"{base}.{name}"
    path = pkg.parent / sub.replace(".", "/")
    return sub if path.with_suffix(".py").exists() or path.is_dir() else base


def _functions(tree: ast.AST) -> set[int]:
    """ids of the import statements that stand inside a function (run when it is called)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inside |= {id(n) for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))}
    return inside


def imports(pkg: Path = PKG) -> list[Import]:
    """Every import statement of the package that names one of its own modules, wherever it stands."""
    root = pkg.name
    out: list[Import] = []
    for path in sorted(pkg.rglob("*.py")):
        mod, here = _module(pkg, path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        deferred = _functions(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = here.split(".")
                    base = ".".join(parts[:len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
                elif node.module and (node.module == root or node.module.startswith(root + ".")):
                    base = node.module
                else:
                    continue
                names = [_target(pkg, base, alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name == root or a.name.startswith(root + ".")]
            else:
                continue
            out += [Import(mod, name, node.lineno, id(node) in deferred) for name in names if name != mod]
    return out


def unit(module: str) -> str:
    """The layer table's name of a module: its top-level package or module (``baselines``, ``session``),
    or the package itself for its ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def declared_layers(text: str) -> list[tuple[str, list[str]]]:
    """(layer, the names in it) for each row of CONTRIBUTING.md's layer table, bottom layer first."""
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    lines = section.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2:]:  # after the header and the separator, up to the table's end
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return [(cells[0], re.findall(r"`([^`]+)`", cells[1])) for cells in rows]


def declared_wings(text: str) -> dict[str, str]:
    """The wing (``gate``, ``studies`` or ``both``) of each name of CONTRIBUTING.md's layer table: its row's
    third cell."""
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    lines = section.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    out: dict[str, str] = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        out |= {name: cells[2] for name in re.findall(r"`([^`]+)`", cells[1])}
    return out


def layer_of(layers: list[tuple[str, list[str]]]) -> dict[str, int]:
    return {name: i for i, (_, names) in enumerate(layers) for name in names}


def units(pkg: Path = PKG) -> set[str]:
    """Every top-level package and module of the package (and the package itself)."""
    found = {pkg.name}
    for path in pkg.iterdir():
        if path.is_dir() and any(path.glob("*.py")):  # a namespace package (no __init__.py) too
            found.add(path.name)
        elif path.suffix == ".py" and path.stem != "__init__":
            found.add(path.stem)
    return found


def module_circles(found: list[Import]) -> list[list[str]]:
    graph = nx.DiGraph((i.importer, i.imported) for i in found)
    return [c for c in nx.simple_cycles(graph) if len(c) > 1]


def package_circles(found: list[Import]) -> list[list[str]]:
    graph = nx.DiGraph((unit(i.importer), unit(i.imported)) for i in found if unit(i.importer) != unit(i.imported))
    return list(nx.simple_cycles(graph))


def upward(found: list[Import], layers: list[tuple[str, list[str]]]) -> list[str]:
    """One line per import that reaches a layer above the importer's, naming both layers (a name the table
    lacks is the coverage test's finding, not this one's)."""
    level = layer_of(layers)
    out = [f"{i.importer}:{i.line} ({layers[level[unit(i.importer)]][0]} layer) imports {i.imported} "
           f"({layers[level[unit(i.imported)]][0]} layer){' inside a function' if i.deferred else ''}"
           for i in found if level.get(unit(i.imported), -1) > level.get(unit(i.importer), len(layers))]
    return list(dict.fromkeys(out))


#: the studies modules the gate wing names (and never imports), each with the one gate module that names it:
#: pytest loads the studies' fixtures by name, and ``gpuperf offline collect`` loads a power corpus's intake
NAMED_STUDIES = {"pytest_gpuperf.plugin": "pytest_gpuperf.studies.fixtures",
                 "pytest_gpuperf.offline.intake": "pytest_gpuperf.studies.static_power.corpus_intake"}
#: the studies wing's packages, as the layer table declares them
STUDIES = tuple(f"pytest_gpuperf.{n}" for n, w in declared_wings((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")).items()
                if w == "studies")


def gate_reaches_studies(found: list[Import], wings: dict[str, str]) -> list[str]:
    """One line per import of a gate-wing module that reaches the studies wing."""
    return [f"{i.importer}:{i.line} imports {i.imported}{' inside a function' if i.deferred else ''}"
            for i in found if wings.get(unit(i.importer)) == "gate" and wings.get(unit(i.imported)) == "studies"]


def studies_named(pkg: Path, wings: dict[str, str]) -> dict[str, set[str]]:
    """Per gate-wing module, the studies modules its code names in a string (``importlib``, ``pytest_plugins``,
    ``python -m``); docstrings aside."""
    out: dict[str, set[str]] = {}
    for path in sorted(pkg.rglob("*.py")):
        mod, _ = _module(pkg, path)
        if wings.get(unit(mod)) != "gate":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                named = re.findall(r"\b(?:" + "|".join(map(re.escape, STUDIES)) + r")(?:\.\w+)*", node.value)
                out.setdefault(mod, set()).update(named)
    return {mod: names for mod, names in out.items() if names}


def _shown(circles: list[list[str]]) -> str:
    return "; ".join(" -> ".join(c + [c[0]]) for c in circles[:10])


LAYERS = declared_layers((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"))
WINGS = declared_wings((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"))


# one xdist worker runs this module (scripts/run_tests.sh: --dist loadgroup): its tests share one walk of the
# package (``package_imports``), made once, not in each worker that runs one of them
pytestmark = pytest.mark.xdist_group("architecture-imports")


@pytest.fixture(scope="module")
def package_imports() -> list[Import]:
    """:func:`imports` of the package, walked once for the module's checks (a walk parses every module)."""
    return imports()


def test_every_package_and_module_has_exactly_one_layer():
    named = [n for _, names in LAYERS for n in names]
    assert len(LAYERS) >= 5 and len(named) == len(set(named)), named
    assert set(named) == units(), (f"not in CONTRIBUTING.md's layer table: {sorted(units() - set(named))}; "
                                   f"in it but not in the package: {sorted(set(named) - units())}")


def test_the_walk_sees_module_level_and_deferred_imports(package_imports):
    found = package_imports
    assert len({i.importer for i in found}) > 100  # the walk saw the package
    assert any(i.deferred for i in found) and any(not i.deferred for i in found)


def test_no_module_circle(package_imports):
    circles = module_circles(package_imports)
    assert not circles, "module import circles: " + _shown(circles)


def test_no_package_circle(package_imports):
    circles = package_circles(package_imports)
    assert not circles, "package import circles: " + _shown(circles)


def test_no_import_reaches_a_higher_layer(package_imports):
    found = upward(package_imports, LAYERS)
    assert not found, "imports into a higher layer (CONTRIBUTING.md, Layers):\n" + "\n".join(found)


def test_every_layer_belongs_to_one_wing_and_the_studies_wing_sits_above_the_gate():
    assert set(WINGS) == {n for _, names in LAYERS for n in names}
    assert set(WINGS.values()) == {"gate", "studies", "both"}, WINGS
    level = layer_of(LAYERS)
    gate, studies, both = ([level[n] for n, w in WINGS.items() if w == wing] for wing in ("gate", "studies", "both"))
    assert max(gate) < min(studies) and max(studies) < min(both)  # so the layer rule alone keeps the gate off the studies
    assert WINGS["studies"] == "studies" and WINGS["plugin"] == WINGS["cli"] == "gate"


def test_no_gate_wing_module_imports_the_studies(package_imports):
    found = gate_reaches_studies(package_imports, WINGS)
    assert not found, "gate-wing modules importing pytest_gpuperf.studies (CONTRIBUTING.md, Layers):\n" + "\n".join(found)


def test_the_gate_names_only_the_declared_studies_modules():
    named = studies_named(PKG, WINGS)
    assert named == {mod: {study} for mod, study in NAMED_STUDIES.items()}, named
    for study in NAMED_STUDIES.values():
        assert (PKG.parent / (study.replace(".", "/") + ".py")).exists(), study


def _tiny(tmp_path: Path, files: dict[str, str]) -> Path:
    pkg = tmp_path / "pytest_gpuperf"
    for name, text in {"__init__.py": "", **files}.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    return pkg


def test_the_checks_see_a_deferred_circle_a_package_circle_and_an_upward_import(tmp_path):
    """The detectors themselves, on a package made for it: a circle closed only by an import inside a
    function, two packages importing each other, and a low layer importing a high one."""
    pkg = _tiny(tmp_path, {
        "a/__init__.py": "", "a/x.py": "from .y import f\n",
        "a/y.py": "def f():\n    from . import x\n",  # the circle exists only when f runs
        "low/__init__.py": "", "low/m.py": "def g():\n    from ..high.n import h\n",
        "high/__init__.py": "", "high/n.py": "from ..low import m\ndef h(): pass\n",
        "top.py": "import pytest_gpuperf.low.m\n",
    })
    found = imports(pkg)
    assert {i.imported for i in found if i.importer == "pytest_gpuperf.a.y" and i.deferred} == {"pytest_gpuperf.a.x"}
    assert any(set(c) == {"pytest_gpuperf.a.x", "pytest_gpuperf.a.y"} for c in module_circles(found))
    assert [set(c) for c in package_circles(found)] == [{"low", "high"}]
    layers = [("base", ["pytest_gpuperf", "a"]), ("low", ["low"]), ("high", ["high", "top"])]
    assert upward(found, layers) == ["pytest_gpuperf.low.m:2 (low layer) imports pytest_gpuperf.high.n (high layer) "
                                     "inside a function"]
    assert units(pkg) == {"pytest_gpuperf", "a", "low", "high", "top"}


def test_the_wing_checks_see_a_gate_import_of_the_studies_and_a_named_one(tmp_path):
    pkg = _tiny(tmp_path, {
        "gate/__init__.py": "", "gate/g.py": "def f():\n    from ..studies.s import h\n",
        "gate/named.py": '"""Docs may name pytest_gpuperf.studies.s."""\nLOAD = "pytest_gpuperf.studies.s"\n',
        "studies/__init__.py": "", "studies/s.py": "from ..gate import g\ndef h(): pass\n",
    })
    wings = {"pytest_gpuperf": "gate", "gate": "gate", "studies": "studies"}
    assert gate_reaches_studies(imports(pkg), wings) == ["pytest_gpuperf.gate.g:2 imports pytest_gpuperf.studies.s "
                                                         "inside a function"]
    assert studies_named(pkg, wings) == {"pytest_gpuperf.gate.named": {"pytest_gpuperf.studies.s"}}


def test_the_layer_table_is_read_bottom_first():
    text = ("## Layers\nintro\n\n| layer | names | job |\n| --- | --- | --- |\n| base | `errors`, `util` | x |\n"
            "| top | `cli` (the command) | y |\n\n## Next\n| a | `b` | c |\n")
    assert declared_layers(text) == [("base", ["errors", "util"]), ("top", ["cli"])]
