"""Who/what/when of a measurement: git commit, date, package versions."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path

PACKAGES = ("pytest-gpuperf", "pytest", "numpy", "pyopencl", "cupy-cuda13x", "cupy-cuda12x", "nvidia-ml-py",
            "gmpy2", "mpmath", "hypothesis", "scikit-learn", "pytest-benchmark", "kernel_tuner")


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def _git(cwd: str, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=5,
                          check=True).stdout.strip()


@lru_cache(maxsize=None)
def git_commit(root: str | None = None) -> str:
    """Commit of the repository a run measures — the user's: pytest's rootdir (``root``; the current
    directory when not given) —, with ``+dirty`` when tracked files have uncommitted changes; '' outside git.

    ``GPUPERF_COMMIT`` overrides it: an offline host often receives a copy of the tree without ``.git``."""
    if os.environ.get("GPUPERF_COMMIT"):
        return os.environ["GPUPERF_COMMIT"]
    return _plain_commit(str(root or Path.cwd()))


@lru_cache(maxsize=None)
def plugin_commit() -> str:
    """Commit of pytest-gpuperf itself when it runs from its own git checkout (an editable install);
    '' for an installed wheel — and never the commit of a user's repository that happens to hold the
    virtual environment the package is installed in."""
    here = str(Path(__file__).resolve().parents[1])
    try:
        top = Path(_git(here, "rev-parse", "--show-toplevel"))
        project = (top / "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, subprocess.SubprocessError):
        return _built_commit(here)
    if 'name = "pytest-gpuperf"' not in project or not (top / "pytest_gpuperf").resolve() == Path(here):
        return _built_commit(here)
    return _plain_commit(str(top))


def _built_commit(package_dir: str) -> str:
    """The commit an installed wheel was built from (written by the build, ``_build.json``), or ''."""
    import json

    try:
        return str(json.loads((Path(package_dir) / "_build.json").read_text(encoding="utf-8")).get("commit") or "")
    except (OSError, ValueError):
        return ""


def _plain_commit(cwd: str) -> str:
    try:
        sha = _git(cwd, "rev-parse", "HEAD")
        return sha + ("+dirty" if _git(cwd, "status", "--porcelain", "--untracked-files=no") else "")
    except (OSError, subprocess.SubprocessError):
        return ""


def checkout_root() -> Path | None:
    """The pytest-gpuperf source checkout this package runs from (an editable install), or None (an
    installed wheel, the offline bundle). Read from the files, without git."""
    top = Path(__file__).resolve().parents[2]
    try:
        project = (top / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return top if 'name = "pytest-gpuperf"' in project and (top / ".git").exists() else None


def install_hint(extra: str) -> str:
    """The command that installs the optional dependencies ``extra`` (``cuda``, ``power``, …) the way this
    package was installed: from PyPI for a wheel, editable from its checkout otherwise."""
    root = checkout_root()
    if root is None:
        return f'pip install "pytest-gpuperf[{extra}]"'
    return f'pip install -e "{root}[{extra}]"'


def plugin() -> dict[str, str]:
    """The plugin's own version and commit, recorded beside (never instead of) the user's commit."""
    try:
        version = metadata.version("pytest-gpuperf")
    except metadata.PackageNotFoundError:
        version = ""
    return {"version": version, "commit": plugin_commit()}


@lru_cache(maxsize=None)
def package_versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def environment(root: str | Path | None = None) -> dict[str, object]:
    """Who/what of a run: ``commit`` is the user's repository at ``root`` (pytest's rootdir),
    ``plugin`` the version and commit of pytest-gpuperf."""
    return {"python": sys.version.split()[0], "platform": platform.platform(), "host": platform.node(),
            "packages": package_versions(), "commit": git_commit(None if root is None else str(root)),
            "plugin": plugin()}
