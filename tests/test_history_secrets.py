"""A PostgreSQL password given in ``--gpuperf-history`` is never printed nor stored: a real run on the
PoCL device into a real server (trust authentication: the password is carried, not checked), then its
output, every file it wrote and the history's ``runs.argv`` are searched for it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_gpuperf.devices import discover
from pytest_gpuperf.history.backends import read_runs
from pytest_gpuperf.util.redaction import redact, redact_argv

ROOT = Path(__file__).resolve().parents[1]
SECRET = "SECRETPW"

PROJECT = textwrap.dedent('''
    def test_records(gpuperf_record):
        gpuperf_record("secret.value", 1.0, "us")
''')


def test_redaction_masks_every_form_of_a_password() -> None:
    assert redact(f"postgresql://u:{SECRET}@db:5432/h") == "postgresql://u:***@db:5432/h"
    assert redact(f"host=db password={SECRET} user=u") == "host=db password=*** user=u"
    assert redact_argv(["-q", f"--gpuperf-history=postgres://u:{SECRET}@/h?password={SECRET}"]) == [
        "-q", "--gpuperf-history=postgres://u:***@/h?password=***"]


@pytest.mark.skipif(not any(d.backend == "opencl" for d in discover().devices),
                    reason="no OpenCL device (install pocl-opencl-icd)")
def test_a_history_password_is_in_nothing_a_run_prints_or_writes(tmp_path: Path, postgres_url: str) -> None:
    url = postgres_url.replace("postgresql://gpuperf@", f"postgresql://gpuperf:{SECRET}@") + f"&password={SECRET}"
    (tmp_path / "test_project.py").write_text(PROJECT)
    (tmp_path / "bl").mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--gpuperf-device=opencl:0",
                           f"--gpuperf-baseline-dir={tmp_path / 'bl'}", f"--gpuperf-json={tmp_path / 'r.json'}",
                           f"--gpuperf-history={url}", "test_project.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "gpuperf wrote postgresql://gpuperf:***@" in out, out[-3000:]
    assert SECRET not in out
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert tmp_path / "r.json" in written
    assert not [p for p in written if SECRET.encode() in p.read_bytes()]
    (run,) = read_runs(postgres_url)
    assert any("***" in a for a in run.argv) and not any(SECRET in a for a in run.argv), run.argv
