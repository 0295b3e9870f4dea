"""Build hook: a wheel records the commit it was built from (``pytest_gpuperf/_build.json``), so a run
from an installed plugin still names the plugin's commit beside the user's."""

import importlib.util
import json
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


def _commit() -> str:
    """The checkout's commit by the plugin's own rule (util/provenance.py, loaded alone: it needs only the
    standard library, and the package itself may not import before its dependencies are installed)."""
    path = Path(__file__).resolve().parent / "pytest_gpuperf" / "util" / "provenance.py"
    spec = importlib.util.spec_from_file_location("_gpuperf_provenance", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._plain_commit(str(path.parents[2]))


class BuildWithCommit(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "pytest_gpuperf" / "_build.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({"commit": _commit()}) + "\n", encoding="utf-8")


setup(cmdclass={"build_py": BuildWithCommit})
