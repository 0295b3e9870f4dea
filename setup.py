"""Build hook: a wheel records the commit it was built from (``pytest_gpuperf/_build.json``), so a run
from an installed plugin still names the plugin's commit beside the user's."""

import json
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


def _commit() -> str:
    here = Path(__file__).resolve().parent
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return sha + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return ""


class BuildWithCommit(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "pytest_gpuperf" / "_build.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({"commit": _commit()}) + "\n", encoding="utf-8")


setup(cmdclass={"build_py": BuildWithCommit})
