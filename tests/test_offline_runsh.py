"""``run.sh`` of an offline bundle as an unfriendly host would meet it, on this machine's OpenCL device:
a batch system's time limit (SIGTERM to every process of the job, then SIGKILL) still leaves results and
a history line marked interrupted in ``OUT.tgz``; a venv that is not the user's alone is refused before
anything in it runs; names given to ``bundle`` are pasted into the script as words, never as code."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from pytest_gpuperf.cli import main as gpuperf
from pytest_gpuperf.devices import discover
from pytest_gpuperf.offline.bundle import requirements
from test_faults_sigterm import SELECTION, WAIT_AFTER_FIRST, time_limit, wait_for

CL = [d for d in discover().devices if d.backend == "opencl"]
pytestmark = pytest.mark.skipif(not CL, reason="no OpenCL device (install pocl-opencl-icd)")


def _bundle(tmp_path: Path, wheel: Path, *more: str) -> Path:
    """A bundle of the checkout's wheel alone (this machine has every dependency)."""
    have = [r.split(">")[0].split("=")[0] for r in requirements([])]
    folder = tmp_path / "bundle"
    args = ["offline", "bundle", str(folder), "--python", f"{sys.version_info.major}.{sys.version_info.minor}",
            "--wheel", str(wheel), *[a for h in have for a in ("--host-has", h)], *more]
    assert gpuperf(args) == 0
    return folder


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    """The host's environment: no PYTHONPATH into a checkout, this interpreter as the host's python."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST_", "GPUPERF_"))},
            "GPUPERF_PYTHON": sys.executable, "GPUPERF_COMMIT": "abc1234", **more}


def _waiting_after_first(tmp_path: Path, wheel: Path, args: list[str], **env: str) -> tuple[subprocess.Popen, int]:
    """``bash run.sh ARGS`` of a bundle of ``wheel``, in a session of its own, once the pytest run it starts has
    finished its first test and waits (``-p wait_after_first`` among ``args``): the process and that run's id."""
    bundle = _bundle(tmp_path, wheel)
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "wait_after_first.py").write_text(WAIT_AFTER_FIRST)
    marker = tmp_path / "first-done"
    host = _env(tmp_path, GPUPERF_VENV=str(tmp_path / "venv"), PYTHONPATH=str(plugin), GPUPERF_TEST_MARKER=str(marker),
                **env)
    proc = subprocess.Popen(["bash", str(bundle / "run.sh"), *args], cwd=tmp_path, env=host, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    return proc, wait_for(marker, proc, limit_s=500)


def test_a_time_limit_signal_to_the_whole_job_still_packs_results_marked_interrupted(tmp_path, checkout_wheel):
    """Slurm at a time limit: SIGTERM to run.sh and to pytest (every process of the job), SIGKILL after the
    grace period. run.sh waits for pytest's writes and packs OUT.tgz with the results and the history line
    of the test that finished, both marked interrupted."""
    out = tmp_path / "out"
    proc, pytest_pid = _waiting_after_first(tmp_path, checkout_wheel, [str(out), "-p", "wait_after_first",
                                                                       "--gpuperf-device=opencl:0", *SELECTION],
                                            GPUPERF_TAG="cut")
    said = time_limit(proc, proc.pid, os.getpgid(pytest_pid))
    log = (out / "cut.log").read_text() if (out / "cut.log").exists() else ""
    assert proc.returncode == 2, said[-3000:] + log[-3000:]
    with tarfile.open(f"{out}.tgz") as tar:
        names = tar.getnames()
        (member,) = [n for n in names if n.endswith("/cut-opencl.json")]
        doc = json.load(tar.extractfile(member))
        tar.extract("./history.db", tmp_path / "unpacked", filter="data")
    assert doc["run"]["interrupted"] is True and doc["metrics"], log[-3000:]
    with sqlite3.connect(tmp_path / "unpacked" / "history.db") as db:
        (options,) = [json.loads(r[0]) for r in db.execute("SELECT options FROM runs")]
    assert options["interrupted"] is True
    assert "SIGTERM stopped the run" in log


def _refused(tmp_path: Path, bundle: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(bundle / "run.sh"), str(tmp_path / "out"), "--co", "-k", "no_such_test"],
                          cwd=tmp_path, env=_env(tmp_path, **env), capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["--gatecheck", "--help"]])
def test_help_prints_the_usage_and_touches_nothing(tmp_path, checkout_wheel, args):
    """``run.sh --help`` (also after ``--gatecheck``) prints the script's usage and environment, exit 0, and makes
    no folder and no venv: it is never taken for OUT."""
    bundle = _bundle(tmp_path, checkout_wheel)
    venv = tmp_path / "venv"
    proc = subprocess.run(["bash", str(bundle / "run.sh"), *args], cwd=tmp_path, capture_output=True, text=True,
                          env=_env(tmp_path, GPUPERF_VENV=str(venv)), timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "bash run.sh --gatecheck OUT" in proc.stdout and "GPUPERF_TIME_LIMIT" in proc.stdout, proc.stdout
    assert not proc.stdout.startswith("#!") and "set -uo" not in proc.stdout, proc.stdout
    assert not venv.exists() and not (tmp_path / args[-1]).exists()


@pytest.mark.parametrize("args, says", [([], "OUT, the folder the results go to, is missing"),
                                        (["--gatecheck"], "OUT, the folder the results go to, is missing"),
                                        (["--gpuperf-device=0", "out"], "'--gpuperf-device=0' looks like an option"),
                                        (["--gatecheck", "--aa", "3"], "'--aa' looks like an option")])
def test_a_missing_out_or_an_option_in_its_place_is_a_usage_error(tmp_path, checkout_wheel, args, says):
    """Without OUT, or with an option where OUT belongs, ``run.sh`` exits 2 with the usage and what was wrong,
    before it makes a folder or a venv."""
    bundle = _bundle(tmp_path, checkout_wheel)
    venv = tmp_path / "venv"
    before = set(tmp_path.iterdir())
    proc = subprocess.run(["bash", str(bundle / "run.sh"), *args], cwd=tmp_path, capture_output=True, text=True,
                          env=_env(tmp_path, GPUPERF_VENV=str(venv)), timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert says in proc.stderr and "usage: bash run.sh [--gatecheck] OUT" in proc.stderr, proc.stderr
    assert set(tmp_path.iterdir()) == before and not venv.exists()


@pytest.mark.parametrize("how", ["world-writable", "another user's", "a link to another user's"])
def test_a_venv_that_is_not_the_users_alone_is_refused_before_anything_in_it_runs(tmp_path, checkout_wheel, how):
    """The default venv is per user (``$TMPDIR/gpuperf-venv-<uid>``); one planted there by another user, or
    one others may write to, is refused (exit 3, a message naming it) and nothing in it runs."""
    if how != "world-writable" and os.geteuid() != 0:
        pytest.skip("making a folder another user owns needs root")
    bundle = _bundle(tmp_path, checkout_wheel)
    shared = tmp_path / "shared"
    shared.mkdir()
    planted = shared / f"gpuperf-venv-{os.getuid()}"
    target = planted if how != "a link to another user's" else shared / "elsewhere"
    (target / "bin").mkdir(parents=True)
    ran = tmp_path / "planted-ran"
    for name in ("gpuperf", "python"):
        (target / "bin" / name).write_text(f"#!/bin/sh\ntouch {ran}\n")
        (target / "bin" / name).chmod(0o755)
    if how == "world-writable":
        target.chmod(0o777)
    else:
        for path in (target, target / "bin"):
            os.chown(path, 65534, 65534)
    if how == "a link to another user's":
        planted.symlink_to(target)
    proc = _refused(tmp_path, bundle, TMPDIR=str(shared))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"{planted}" in proc.stderr and "not yours alone" in proc.stderr, proc.stderr
    assert not ran.exists()


def test_names_given_to_bundle_are_pasted_into_run_sh_as_words_never_run(tmp_path, checkout_wheel):
    """``--extra 'x$(touch M)'`` (an extra the plugin lacks downloads nothing, so only run.sh reads it): the
    install of the odd name fails (exit 3), and the shell never ran what it holds."""
    marker = tmp_path / "ran"
    bundle = _bundle(tmp_path, checkout_wheel, "--extra", f"x$(touch {marker})", "--extra", f"y`touch {marker}`")
    proc = _refused(tmp_path, bundle, GPUPERF_VENV=str(tmp_path / "venv"))
    assert not marker.exists()
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"'pytest-gpuperf[x$(touch {marker}),y`touch {marker}`]'" in (bundle / "run.sh").read_text()


def test_a_time_limit_during_a_gate_check_on_the_host_stops_it_as_interrupted_and_packs_it(tmp_path, checkout_wheel):
    """``run.sh --gatecheck`` at a batch time limit: SIGTERM to run.sh and to the gate check's A/A run (every
    process of the job) while the run waits after its first test. The gate check stops as interrupted (exit 2,
    saying what its file keeps), and run.sh still packs OUT.tgz with the gate check's folder and the run's log."""
    out = tmp_path / "gc"
    proc, run_pid = _waiting_after_first(tmp_path, checkout_wheel, ["--gatecheck", str(out), "--aa", "2", "--plant",
                                                                    "none", "--", "-p", "wait_after_first", *SELECTION])
    said = time_limit(proc, proc.pid, os.getpgid(run_pid))
    log = (out / "gatecheck.log").read_text() if (out / "gatecheck.log").exists() else ""
    assert proc.returncode == 2, said[-3000:] + log[-3000:]
    assert "gatecheck: stopped by SIGTERM" in log, log[-3000:]
    with tarfile.open(f"{out}.tgz") as tar:
        names = tar.getnames()
    assert "./gatecheck.log" in names and "./gatecheck/aa-1.log" in names, names


#: a pytest plugin: after the run's verdict is printed, its last steps wait for the test's go (a slow exit)
SLOW_EXIT = '''
import os
import time
from pathlib import Path

def pytest_unconfigure(config):
    Path(os.environ["GPUPERF_TEST_MARKER"]).write_text("in its last steps")
    go = Path(os.environ["GPUPERF_TEST_GO"])
    deadline = time.monotonic() + 120
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
'''
#: GPUPERF_TIME_LIMIT of that run, tried in turn: past its verdict on a quiet host (about 2 s there), then far past it
#: on one that is not overloaded; a limit the verdict does not beat by 3 s is given up for the next
LATE_LIMITS_S = (8, 25)


def test_a_time_limit_that_lands_after_the_verdict_leaves_the_run_to_end_as_it_ends(tmp_path, checkout_wheel):
    """GPUPERF_TIME_LIMIT reached while a run that has printed its verdict is in its last steps: its results are
    written and it is ending, so run.sh does not interrupt it — the run's own status is the script's."""
    import time

    bundle = _bundle(tmp_path, checkout_wheel)
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "slow_exit.py").write_text(SLOW_EXIT)
    marker, go = tmp_path / "in-exit", tmp_path / "go"
    host = _env(tmp_path, GPUPERF_VENV=str(tmp_path / "venv"), PYTHONPATH=str(plugin), GPUPERF_TAG="late",
                GPUPERF_TEST_MARKER=str(marker), GPUPERF_TEST_GO=str(go))
    # the venv first: its install is not what the limit is about
    assert subprocess.run(["bash", str(bundle / "run.sh"), str(tmp_path / "warm"), "--co", "-q", "-p", "no:slow_exit"],
                          cwd=tmp_path, env=host, capture_output=True, text=True, timeout=600).returncode == 0
    for limit in LATE_LIMITS_S:
        out = tmp_path / f"out-{limit}"
        marker.unlink(missing_ok=True)
        go.unlink(missing_ok=True)
        started = time.monotonic()
        proc = subprocess.Popen(["bash", str(bundle / "run.sh"), str(out), "-p", "slow_exit", "--gpuperf-device=opencl:0",
                                 *SELECTION], cwd=tmp_path, env={**host, "GPUPERF_TIME_LIMIT": str(limit)},
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        while not marker.exists() and proc.poll() is None and time.monotonic() - started < 300:
            time.sleep(0.1)
        reached = time.monotonic() - started
        if reached <= limit - 3:
            break
        go.write_text("go")
        proc.communicate(timeout=300)
    else:
        pytest.skip(f"this loaded host took {reached:.0f} s to its verdict: the {limit} s limit came first")
    time.sleep(limit + 2 - reached)  # the limit passes while the run is in its last steps
    go.write_text("go")
    said = proc.communicate(timeout=300)[0]
    log = (out / "late.log").read_text()
    assert proc.returncode == 0 and "reached: interrupting" not in log, said[-2000:] + log[-3000:]
