"""One name, one job: no two modules of pytest_gpuperf share a file name, and no module is named like a
package (a ``baselines/compare.py`` beside the ``compare`` package reads as one thing and is two).

Three names are roles, the same job in every package that has them, and may repeat: ``__init__.py``;
``cli.py``, a package's ``gpuperf`` subcommand group (``register(subparsers)``, listed in the top-level
``cli.py``, the command that gathers them); ``fixtures.py``, a package's pytest options and fixtures
(a sub-plugin the plugin registers)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

from pytest_gpuperf import cli, plugin

PKG = Path(__file__).resolve().parents[1] / "pytest_gpuperf"
ROLES = ("__init__", "cli", "fixtures")


def name_clashes(pkg: Path = PKG) -> dict[str, list[str]]:
    """Every name (a module's file name without ``.py``, or a package's folder name) used by more than
    one module or package, with where; the role names aside."""
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(pkg.rglob("*.py")):
        if path.stem not in ROLES:
            where[path.stem].append(path.relative_to(pkg).as_posix())
    for folder in sorted(p for p in pkg.rglob("*") if p.is_dir() and any(p.glob("*.py"))):
        where[folder.name].append(folder.relative_to(pkg).as_posix() + "/")
    return {name: places for name, places in where.items() if len(places) > 1}


def _role_modules(name: str) -> list[str]:
    """Dotted names of the ``<package>/<name>.py`` modules below the top level."""
    return sorted(".".join(p.relative_to(PKG.parent).with_suffix("").parts) for p in PKG.glob(f"*/{name}.py"))


def test_no_two_modules_share_a_name():
    clashes = name_clashes()
    assert not clashes, "modules or packages sharing a name (rename one to say its job): " + "; ".join(
        f"{name}: {', '.join(places)}" for name, places in sorted(clashes.items()))


def test_every_cli_module_is_a_subcommand_group_of_gpuperf():
    groups = {module for _, module in cli.GROUPS}
    assert set(_role_modules("cli")) <= groups, sorted(set(_role_modules("cli")) - groups)
    for module in _role_modules("cli"):
        tree = ast.parse((PKG.parent / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
        assert any(isinstance(n, ast.FunctionDef) and n.name == "register" for n in tree.body), module


def test_every_fixtures_module_is_a_registered_sub_plugin():
    assert _role_modules("fixtures") == sorted(plugin.pytest_plugins)


@pytest.mark.parametrize("files, clash", [
    (["a/store.py", "b/store.py"], {"store": ["a/store.py", "b/store.py"]}),
    (["a/compare.py", "compare/engine.py"], {"compare": ["a/compare.py", "compare/"]}),
    (["a/cli.py", "b/cli.py", "a/fixtures.py", "b/fixtures.py", "a/x.py", "b/y.py"], {}),
])
def test_the_check_finds_a_shared_name(tmp_path, files, clash):
    pkg = tmp_path / "pytest_gpuperf"
    for name in ["__init__.py", *files]:
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text("")
    assert name_clashes(pkg) == clash
