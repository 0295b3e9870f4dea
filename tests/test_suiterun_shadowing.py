"""Run from inside another copy of this package (a checkout beside an installed wheel), ``gpuperf run`` and
the gate check stop with one line naming both copies and the fix, where pytest would fail collecting every
suite file ("import file mismatch"); the installed copy's own folder, or any other folder, is no such case."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest_gpuperf
from pytest_gpuperf.suiterun import shadowing

INSTALLED = Path(pytest_gpuperf.__file__).resolve().parent


def _copy_checkout(tmp_path: Path) -> Path:
    """A folder holding a ``pytest_gpuperf`` package of its own (its ``__init__.py`` as the checkout's)."""
    (tmp_path / "pytest_gpuperf").mkdir()
    (tmp_path / "pytest_gpuperf" / "__init__.py").write_text((INSTALLED / "__init__.py").read_text())
    return tmp_path


def test_another_copy_in_the_working_folder_is_named_with_the_fix(tmp_path):
    here = _copy_checkout(tmp_path)
    why = shadowing(here)
    assert why and str(here / "pytest_gpuperf") in why and str(INSTALLED) in why and "pip install -e" in why
    assert shadowing(INSTALLED.parent) is None and shadowing(tmp_path / "pytest_gpuperf") is None


def test_gpuperf_run_and_the_gate_check_stop_with_one_line(tmp_path):
    here = _copy_checkout(tmp_path)
    for args in (["run", "--gpuperf-device=opencl:0"], ["baseline", "gatecheck", "--device", "opencl:0", "--aa", "1"]):
        # as the installed ``gpuperf`` script starts: the installed package, not the working folder's (-I)
        out = subprocess.run([sys.executable, "-I", "-c", "import sys; from pytest_gpuperf.cli import main; "
                              "sys.exit(main(sys.argv[1:]))", *args], cwd=here, capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 2, out.stdout[-2000:] + out.stderr[-2000:]
        assert out.stderr.count("\n") == 1 and "holds a copy of pytest_gpuperf" in out.stderr, out.stderr


def test_a_run_of_the_suites_from_the_installed_checkout_in_another_folder_warns_of_no_marker(tmp_path):
    """From an editable install, ``gpuperf run`` in a folder of the user's collects the suites in this checkout and
    loads its root conftest.py without the project's ini: the marker that file adds must be registered by it."""
    out = subprocess.run([sys.executable, "-I", "-c", "import sys; from pytest_gpuperf.cli import main; "
                          "sys.exit(main(sys.argv[1:]))", "run", "--gpuperf-device=opencl:0", "-k",
                          "test_accuracy_composite", "-p", "no:cacheprovider"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    text = out.stdout + out.stderr
    assert out.returncode == 0 and " passed" in text, text[-3000:]
    assert "PytestUnknownMarkWarning" not in text and "warnings summary" not in text, text[-3000:]
