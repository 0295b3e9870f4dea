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


@lru_cache(maxsize=None)
def git_commit(root: str | None = None) -> str:
    """Commit of the project checkout, with ``+dirty`` when the tree has uncommitted changes; '' outside git.

    ``GPUPERF_COMMIT`` overrides it: the lent GPU machine receives a copy of the tree without ``.git``."""
    if os.environ.get("GPUPERF_COMMIT"):
        return os.environ["GPUPERF_COMMIT"]
    cwd = root or str(Path(__file__).resolve().parents[2])
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True,
                             timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return sha + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return ""


@lru_cache(maxsize=None)
def package_versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def environment() -> dict[str, object]:
    return {"python": sys.version.split()[0], "platform": platform.platform(), "host": platform.node(),
            "packages": package_versions(), "commit": git_commit()}
