"""An outside user's whole journey, on this machine's real OpenCL device, never from this checkout:
build the wheel, install it into a fresh virtual environment, and from a temporary directory that is
its own git repository run the installed suites — the loud first run without a baseline, the distinct
failure when one is required —, make the first baseline with ``gpuperf baseline init --runs 3``, catch
a planted regression against it, and find that repository's commit in the results, in ``gpuperf
history`` and on the dashboard built from those runs.

The selection keeps it to about a minute on two cores: two seeded accuracy tests, deterministic, so the
verdicts do not depend on what else the shared host runs (a timing there may read ``contended``) and
the planted 1-ulp error is caught on any host."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_gpuperf import exits
from pytest_gpuperf.baselines import baseline_file, lookup
from pytest_gpuperf.devices import discover

REPO = Path(__file__).resolve().parents[1]
CL = [d for d in discover().devices if d.backend == "opencl"]
SELECT = ["-k", "test_math_function and fp32 and (sin- or cos-)"]
GIT_ENV = {"GIT_AUTHOR_NAME": "user", "GIT_AUTHOR_EMAIL": "user@example.org", "GIT_COMMITTER_NAME": "user",
           "GIT_COMMITTER_EMAIL": "user@example.org"}

# one worker runs both tests, so the wheel is installed into one outsider's environment, not one per worker
pytestmark = [pytest.mark.skipif(not CL, reason="no OpenCL device (install pocl-opencl-icd)"),
              pytest.mark.xdist_group("outsider-venv")]


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _said(proc: subprocess.CompletedProcess) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout[-6000:]}\n--- stderr\n{proc.stderr[-3000:]}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, checkout_wheel: Path) -> Path:
    """A fresh virtual environment with the wheel built from this checkout installed in it (its bin/).
    ``--no-compile``: pip's byte-compiling of every dependency (NumPy, SciPy, scikit-learn…) is most of an
    install's time and checks nothing; the modules a run imports compile as they load. The environment is
    made without a pip of its own (seeding one costs seconds), and this interpreter's pip installs into it
    (``--python``: it runs under the environment's interpreter, resolving against what that one has)."""
    work = tmp_path_factory.mktemp("journey")
    venv = work / "venv"
    # an outsider's environment: no PYTHONPATH into a checkout (whose egg-info would make pip take the plugin
    # as installed already and leave it out of the fresh environment)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST_"))}
    assert _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], work, env).returncode == 0
    pip = _run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                "--disable-pip-version-check", "--no-compile", str(checkout_wheel)], work, env, timeout=900)
    assert pip.returncode == 0, _said(pip)
    return venv / "bin"


def test_an_outside_user_installs_runs_makes_a_baseline_and_is_gated(installed: Path, tmp_path: Path) -> None:
    user = tmp_path / "their-repo"
    user.mkdir()
    (user / "README.md").write_text("a team's kernels\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "GPUPERF_", "PYTEST_"))}
    env.update(GIT_ENV, PATH=f"{installed}:{env.get('PATH', '')}")
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "theirs"]):
        subprocess.run(cmd, cwd=user, env=env, check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=user, capture_output=True, text=True,
                            check=True).stdout.strip()
    gpuperf = str(installed / "gpuperf")
    where = _run([str(installed / "python"), "-c", "import pytest_gpuperf, sys; print(pytest_gpuperf.__file__)"],
                 user, env)
    assert str(installed.parent) in where.stdout and str(REPO) not in where.stdout, _said(where)
    key = CL[0].key
    common = ["--gpuperf-device=opencl:0", "--gpuperf-budget=0.2", "-p", "no:cacheprovider", *SELECT,
              "--gpuperf-history=history.db"]

    # 1. the first run on a device without a baseline is loud, and exits 0 unless a baseline is required
    first = _run([gpuperf, "run", *common, "--gpuperf-json=results/{key}/first-{backend}.json"], user, env)
    assert first.returncode == 0, _said(first)
    required = _run([gpuperf, "run", *common, "--gpuperf-require-baseline"], user, env)
    if baseline_file.path_for(lookup.REVIEWED_BASELINES, key).is_file():
        # this host's exact key has a reviewed baseline shipped: the first run is gated against it
        assert "gated against the reviewed baseline shipped with pytest-gpuperf" in first.stdout, _said(first)
        assert required.returncode == 0, _said(required)
    else:
        assert f"NO BASELINE for {key}:" in first.stdout and "gpuperf baseline init --runs 3" in first.stdout, \
            _said(first)
        assert required.returncode == exits.NO_BASELINE, _said(required)

    # 2. the first baseline is one command (three runs merged, with their provenance: one header per section)
    init = _run([gpuperf, "baseline", "init", "--runs", "3", "--device", "opencl:0", "--", "--gpuperf-budget=0.2", *SELECT],
                user, env, timeout=900)
    assert init.returncode == 0, _said(init)
    made = json.loads((user / "baselines" / f"{key}.json").read_text())
    section = made["backends"]["opencl"]
    entries = section["metrics"]
    assert "accuracy.fp32.sin.max_ulp" in entries and "accuracy.fp32.cos.max_ulp" in entries
    assert section["provenance"]["commit"] == commit and section["provenance"]["runs"] == 3
    assert not any("provenance" in e for e in entries.values())  # no entry repeats the header

    # 3. gated against it: unchanged passes, a planted 1-ulp error in sin is caught
    clean = _run([gpuperf, "run", *common], user, env)
    assert clean.returncode == 0 and "gated against your baseline" in clean.stdout, _said(clean)
    planted = _run([gpuperf, "run", *common, "--gpuperf-plant", "ulp=sin",
                    "--gpuperf-json=results/{key}/planted-{backend}.json"], user, env)
    assert planted.returncode == 1, _said(planted)
    doc = json.loads((user / "results" / key / "planted-opencl.json").read_text())
    verdicts = {m["name"]: m["verdict"] for m in doc["metrics"]}
    assert verdicts["accuracy.fp32.sin.max_ulp"] == "regressed", verdicts

    # 4. results and history name the user's repository commit; the plugin's is recorded apart
    assert doc["environment"]["commit"] == commit
    plugin = doc["environment"]["plugin"]
    assert plugin["version"] and plugin["commit"] and plugin["commit"] != commit  # the wheel's own build commit
    runs = _run([gpuperf, "history", "list", "--db", "history.db"], user, env)
    assert runs.returncode == 0 and commit[:7] in runs.stdout, _said(runs)

    # 5. the dashboard is built from those runs
    site = user / "site"
    report = _run([gpuperf, "history", "report", "--db", "history.db", "--html", str(site)], user, env)
    assert report.returncode == 0, _said(report)
    html = "\n".join(p.read_text(encoding="utf-8") for p in site.rglob("*.html"))
    assert commit[:7] in html, "the dashboard does not name the user's commit"
    assert ":Infinity" not in html and ":NaN" not in html  # its data is strict JSON
    shutil.rmtree(site)


def test_an_installed_wheel_bundles_itself_for_an_offline_host(installed: Path, tmp_path: Path,
                                                               checkout_wheel: Path) -> None:
    """``gpuperf offline bundle`` from a wheel install (no checkout to build from): the bundle carries the
    installed plugin repacked as a wheel — the same files as the wheel it was installed from — and a failed
    bundle leaves no folder to block the next try."""
    import zipfile
    from importlib import metadata

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "GPUPERF_", "PYTEST_"))}
    have = [a for r in metadata.requires("pytest-gpuperf") or []
            for a in ("--host-has", re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0])]
    made = _run([str(installed / "gpuperf"), "offline", "bundle", "b", "--python", "3.11", *have], tmp_path, env)
    assert made.returncode == 0, _said(made)
    (packed,) = (tmp_path / "b" / "wheels").glob("pytest_gpuperf-*.whl")
    names = set(zipfile.ZipFile(packed).namelist())
    assert names == set(zipfile.ZipFile(checkout_wheel).namelist()), sorted(names ^ set(zipfile.ZipFile(checkout_wheel).namelist()))
    failed = _run([str(installed / "gpuperf"), "offline", "bundle", "c", "--python", "3.11", "--wheel", "not-a-wheel"],
                  tmp_path, env)
    assert failed.returncode == 2 and "--wheel not-a-wheel" in failed.stderr and not (tmp_path / "c").exists(), _said(failed)
