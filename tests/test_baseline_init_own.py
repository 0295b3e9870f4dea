"""``gpuperf baseline init`` and ``gatecheck`` as a user with a suite of their own runs them: only the tests
named after ``--`` run, no results file is replaced, runs measured on a busy host are left out (or the init
refused, or kept flagged on request) and the file says so, impossible samples are never stored, no lock
file lands where ``git add baselines/`` would commit it, and each inner run is one line on the terminal
with its full log in a file.

The journey runs the docs' own example (``docs/examples/test_my_kernel.py``) on this machine's real
OpenCL device; on a loaded host its timing reads ``contended``, and the test asserts that the commands say
so (the refused init, HOST TOO BUSY TO GATE) instead of passing a check that did not run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_gpuperf import exits
from pytest_gpuperf.baselines import contention
from pytest_gpuperf.baselines.first import first_free
from pytest_gpuperf.devices import discover
from pytest_gpuperf.schemas.results_doc import ResultsDocument
from pytest_gpuperf.suiterun import command, named_tests
from pytest_gpuperf.util import locks

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "docs" / "examples" / "test_my_kernel.py"
CL = [d for d in discover().devices if d.backend == "opencl"]
FAST = "--gpuperf-budget=0.2"
GIT_ENV = {"GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@x", "GIT_COMMITTER_NAME": "u", "GIT_COMMITTER_EMAIL": "u@x"}


# ---- which tests a run runs ---------------------------------------------------------------------------

def test_named_tests_are_paths_and_shipped_suites_never_option_values(tmp_path: Path) -> None:
    (tmp_path / "test_my_kernel.py").write_text("")
    (tmp_path / "wait_after_first.py").write_text("")
    args = ["-k", "test_my_kernel.py", "-p", "wait_after_first", "--gpuperf-budget=0.2", "test_my_kernel.py::test_a",
            "--ignore", "test_my_kernel.py", "not_there.py"]
    assert named_tests(args, tmp_path) == ["test_my_kernel.py::test_a"]
    assert named_tests(["suites/test_memory.py", "-x"], tmp_path) == ["suites/test_memory.py"]
    assert named_tests(["-k", "memory or latency"], tmp_path) == []


def test_a_run_of_your_own_tests_leaves_the_shipped_suites_out(tmp_path: Path) -> None:
    (tmp_path / "test_my_kernel.py").write_text("")
    own = command(["--gpuperf-device=0", "test_my_kernel.py"], cwd=tmp_path)
    assert "--pyargs" not in own and "pytest_gpuperf.suites" not in own and own[-1] == "test_my_kernel.py"
    assert "--pyargs" in command(["--gpuperf-device=0", "-k", "copy"], cwd=tmp_path)  # none named: the suites


def test_init_numbers_its_runs_past_every_earlier_file(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    assert first_free([a, b, tmp_path / "absent"]) == 1
    for name in ("init-1-opencl.json", "init-3.log", "init-2-cuda.json.gz", "gate-9-opencl.json", "init-x.json"):
        (a / name).write_text("")
    (b / "init-4-opencl-2.json").write_text("")  # a run that found its name taken wrote -2
    assert first_free([a, b]) == 5


# ---- where locks live ---------------------------------------------------------------------------------

def test_locks_live_in_a_folder_git_ignores(tmp_path: Path) -> None:
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True, env=env)
    target = tmp_path / "baselines" / "dev.json"
    with locks.file_lock(target):
        target.write_text("{}\n")
    assert locks.lock_path(target).exists() and locks.lock_path(target).parent.name == locks.FOLDER
    subprocess.run(["git", "add", "baselines/"], cwd=tmp_path, check=True, env=env)
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=tmp_path, capture_output=True, text=True,
                            check=True, env=env).stdout.split()
    assert staged == ["baselines/dev.json"]
    assert not [p for p in (tmp_path / "baselines").iterdir() if p.name.endswith(".lock")]


# ---- screening the runs of a baseline -----------------------------------------------------------------

def _metric(name: str, value: float, busy: bool = False, samples: list[float] | None = None) -> dict[str, Any]:
    host = {"windows": 1, "contended": int(busy), "foreign_cores_max": 1.5 if busy else 0.0}
    return {"name": name, "value": value, "unit": "us", "better": "lower", "verdict": "new",
            "info": {"host": host}, "stats": {"samples": samples or [value, value * 1.01], "mad": 0.1}}


def _doc(*metrics: dict[str, Any]) -> ResultsDocument:
    return ResultsDocument.from_json({"device": {"key": "dev", "backend": "opencl", "is_cpu": True},
                                      "metrics": list(metrics)})


def test_screen_sets_aside_busy_runs_leaves_out_always_busy_and_impossible_entries() -> None:
    docs = [_doc(_metric("a.us", 10, busy=True), _metric("b.us", 5, busy=True), _metric("c.us", 7)),
            _doc(_metric("a.us", 11), _metric("b.us", 5, busy=True), _metric("c.us", 7, samples=[7, -2.5, 7])),
            _doc(_metric("a.us", 12), _metric("b.us", 5, busy=True), _metric("c.us", 7))]
    sc = contention.screen(docs)
    assert set(sc.left_out) == {"b.us", "c.us"} and sc.impossible == ["c.us"]
    assert "in runs 1, 2, 3 of 3" in sc.left_out["b.us"] and "busy" in sc.left_out["b.us"]
    assert sc.left_out["c.us"].startswith("run 2: impossible value: c.us: 1 of its 3 samples are negative")
    assert "-2.5" in sc.left_out["c.us"]
    assert sc.partial == {"a.us": "in run 1 of 3 the host's CPUs were busy with other work: made from the other runs"}
    assert [[m.name for m in d.metrics] for d in sc.docs] == [[], ["a.us"], ["a.us"]]
    assert sc.too_disturbed() and sc.main_cause() == "contended"  # 1 of 3 always busy: more than a tenth
    prov = contention.provenance({"runs": 3}, sc)
    assert set(prov["left_out"]) == {"b.us", "c.us"} and set(prov["partial"]) == {"a.us"} and "contended" not in prov
    kept = contention.screen(docs, keep_contended=True)
    assert set(kept.left_out) == {"c.us"} and set(kept.flagged) == {"b.us"} and not kept.too_disturbed()
    assert "--keep-contended" in contention.provenance({}, kept)["contended"]["b.us"]


def test_a_deterministic_figure_is_kept_whatever_the_host_did() -> None:
    exact = {**_metric("a.count", 3, busy=True), "unit": "items", "better": "exact", "stats": None}
    sc = contention.screen([_doc(exact), _doc(exact)])
    assert not sc.left_out and not sc.partial and sc.metrics == 1


# ---- what a written baseline would catch, and what --replace drops -------------------------------------

def _write_baseline(path: Path, metrics: dict[str, dict[str, Any]], backend: str = "opencl") -> None:
    from pytest_gpuperf.baselines import baseline_file

    baseline_file.update(baseline_file.BaselineFile(path), backend, {"key": "dev", "name": "dev"}, {"runs": 3}, metrics)


def test_init_says_what_the_written_entries_catch_and_names_the_loose_ones(tmp_path: Path) -> None:
    from pytest_gpuperf.baselines.first import power_line

    path = tmp_path / "dev.json"
    samples = [100.0 + 0.01 * i for i in range(-5, 6)]
    tight = {"value": 100.0, "unit": "us", "better": "lower", "tolerance": {"rel": 0.01}, "samples": samples}
    loose = {"value": 100.0, "unit": "us", "better": "lower", "tolerance": {"rel": 1.0}, "samples": samples}
    _write_baseline(path, {"a.time_us": tight, "b.time_us": loose})
    line = power_line(path, "opencl", ["a.time_us", "b.time_us"], "dev")
    assert line.startswith("dev (opencl): the smallest change each entry's gate catches: 1 entry ≤2 %, 1 entry loose")
    assert "loose (a change under 25 % passes): b.time_us catches ≥ 100 %" in line and "a.time_us catches" not in line
    assert "loose" not in power_line(path, "opencl", ["a.time_us"], "dev")


def test_replace_names_the_entries_it_drops(tmp_path: Path) -> None:
    from pytest_gpuperf.baselines.first import _say_dropped

    path = tmp_path / "dev.json"
    entry = {"value": 1.0, "unit": "us", "better": "lower", "tolerance": {"rel": 0.05}}
    _write_baseline(path, {"my_kernel.time_us": entry, "saxpy.time_us": entry})
    _write_baseline(path, {"other.time_us": entry}, backend="cuda")
    said: list[str] = []
    _say_dropped(said.append, path, {"my_kernel.time_us": entry}, "opencl")
    assert len(said) == 1 and "2 of its entries are not among this init's metrics and are dropped" in said[0]
    assert "saxpy.time_us" in said[0] and "cuda: other.time_us" in said[0] and "my_kernel.time_us" not in said[0]
    said.clear()
    _write_baseline(tmp_path / "one.json", {"my_kernel.time_us": entry})
    _say_dropped(said.append, tmp_path / "one.json", {"my_kernel.time_us": entry}, "opencl")
    assert said == []  # nothing dropped, nothing said


# ---- the journey: the docs' example, init, a gate run, a planted slowdown -----------------------------

def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _said(proc: subprocess.CompletedProcess) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout[-5000:]}\n--- stderr\n{proc.stderr[-3000:]}"


@pytest.mark.quiet_host
@pytest.mark.skipif(not CL, reason="no OpenCL device (install pocl-opencl-icd)")
def test_a_users_own_suite_is_baselined_alone_gated_and_a_plant_caught(tmp_path: Path) -> None:
    user = tmp_path / "their-repo"
    user.mkdir()
    shutil.copy(EXAMPLE, user / "test_my_kernel.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUPERF_", "PYTEST_"))}
    env.update(GIT_ENV, PYTHONPATH=str(REPO))
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "theirs"]):
        subprocess.run(cmd, cwd=user, env=env, check=True)
    key = CL[0].key
    gpuperf = [sys.executable, "-m", "pytest_gpuperf.cli"]
    folder = user / "results" / key
    folder.mkdir(parents=True)
    earlier = folder / "init-1-opencl.json"  # the results an earlier baseline was made from
    earlier.write_text('{"kept": true}\n')
    init = [*gpuperf, "baseline", "init", "--runs", "3", "--device", "opencl:0", "--", "test_my_kernel.py", FAST]

    made = _run(init, user, env)
    baseline = user / "baselines" / f"{key}.json"
    busy = made.returncode == exits.HOST_TOO_BUSY
    if busy:  # a loaded host: refused, saying why and what to do
        assert "busy" in made.stderr and "my_kernel.time_us" in made.stderr and "quiet host" in made.stderr, _said(made)
        assert "--keep-contended" in made.stderr and not baseline.exists(), _said(made)
        made = _run([*init[:5], "--keep-contended", *init[5:]], user, env)
        # kept and flagged, or (the load eased for a run) made from the undisturbed runs only, saying so; where
        # the load eased for every run, no run line counts a disturbed metric and nothing needs saying
        runs = [ln for ln in made.stdout.splitlines() if ": run " in ln and " of 3: " in ln]
        disturbed = any("measured on a busy host or card" in ln for ln in runs)  # first.run_line's count of them
        if disturbed:
            assert ("warning" in made.stdout and "--keep-contended" in made.stdout
                    or "made from their undisturbed runs only" in made.stdout), _said(made)
    assert made.returncode == 0, _said(made)
    assert earlier.read_text() == '{"kept": true}\n'  # never replaced: this init's runs are numbered on
    lines = [ln for ln in made.stdout.splitlines() if ": run " in ln and " of 3: " in ln]
    assert len(lines) == 3 and all("1 test (1 passed)" in ln and "1 metric (" in ln for ln in lines), _said(made)
    assert "NO BASELINE" not in made.stdout and "test session starts" not in made.stdout, _said(made)
    assert f"{key} (opencl): the smallest change each entry's gate catches: 1 entry " in made.stdout, _said(made)
    assert "'--gpuperf-json=results/{key}/init-" in made.stdout  # the echoed command keeps its quoting
    first = 5 if busy else 2  # after the earlier file (and the refused init's runs)
    for n in range(first, first + 3):
        doc = json.loads((folder / f"init-{n}-opencl.json").read_text())
        assert [t["test"] for t in doc["tests"]] == ["test_my_kernel.py::test_my_kernel"]  # that file, alone
        log = folder / f"init-{n}.log"
        said = log.read_text()  # the child's whole output, with the hint that makes this very baseline
        assert str(log.relative_to(user)) in made.stdout and "NO BASELINE" in said
        assert "gpuperf baseline init --runs 3 --device opencl:0 --dir baselines -- test_my_kernel.py" in said
    section = json.loads(baseline.read_text())["backends"]["opencl"]
    assert list(section["metrics"]) == ["my_kernel.time_us"]
    prov = section["provenance"]
    if busy:
        # the file says it was made on a busy host (kept and flagged), or from its undisturbed runs only; where the
        # load eased for every kept run, nothing was disturbed and the file claims nothing
        flagged = {**prov.get("contended", {}), **prov.get("partial", {})}
        assert ("my_kernel.time_us" in flagged) == disturbed, (prov, runs)
    assert all(x >= 0 for x in section["metrics"]["my_kernel.time_us"]["samples"]["values"])

    subprocess.run(["git", "add", "baselines/", "results/"], cwd=user, env=env, check=True)
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=user, env=env, capture_output=True,
                            text=True, check=True).stdout.split()
    assert f"baselines/{key}.json" in staged and not [s for s in staged if s.endswith(".lock")], staged
    assert not [p for p in (user / "baselines").iterdir() if p.name.endswith(".lock")]

    # the gate: an A/A run of that file alone against the baseline
    gate = _run([*gpuperf, "baseline", "gatecheck", "--device", "opencl:0", "--aa", "1", "--", "test_my_kernel.py",
                 FAST], user, env)
    check = json.loads((folder / "gatecheck.json").read_text())
    (aa,) = check["aa"]
    assert aa["metrics"] == 1 and not aa["regressed"] and not aa["missing"], _said(gate)
    assert check["command"].endswith("test_my_kernel.py --gpuperf-budget=0.2") and check["planted"] == []
    assert "no plant (the default plants target the shipped suites' metrics)" in gate.stdout, _said(gate)
    aa_log = (folder / "gatecheck" / aa["log"]).read_text()
    if aa["exit"] == exits.HOST_TOO_BUSY:
        assert aa["verdicts"] == {"contended": 1} and "HOST TOO BUSY TO GATE" in aa_log, aa_log[-3000:]
        assert gate.returncode == 1 and "GATE CHECK FAILED" in gate.stdout, _said(gate)
    else:
        assert aa["exit"] == 0 and gate.returncode == 0 and "gate check passed" in gate.stdout, _said(gate)

    # a planted slowdown: the kernel really does 10x the work it is credited with
    planted = _run([*gpuperf, "run", "--gpuperf-device=opencl:0", "test_my_kernel.py", FAST, "-p", "no:cacheprovider",
                    "--gpuperf-plant", "compute=9", "--gpuperf-json=results/{key}/planted-{backend}.json"], user, env)
    (m,) = json.loads((folder / "planted-opencl.json").read_text())["metrics"]
    if m["verdict"] == "contended":
        assert planted.returncode == exits.HOST_TOO_BUSY and "HOST TOO BUSY TO GATE" in planted.stdout, _said(planted)
        if m["info"].get("would_regress"):
            assert "would have regressed" in planted.stdout.lower(), _said(planted)
    else:
        assert m["verdict"] == "regressed" and planted.returncode == 1, _said(planted)


FIT = '''
from pytest_gpuperf.timing.stats import Stats


def test_fit(gpu_device, gpuperf_record):
    # a differenced figure of one's own (two timings' difference): one pair negative, their median positive
    gpuperf_record("my.fit.latency_ns", 2.2, "ns", better="lower", stats=Stats.of([-0.4, 2.0, 2.2, 2.4, 2.6]),
                   info={"differenced": True})
    gpuperf_record("my.fit.points", 5, "items", better="exact")


def test_broken(gpu_device, gpuperf_record):
    # a time (not a difference) with a negative sample: the test fails as an error, nothing is recorded
    gpuperf_record("my.broken_ns", 2.2, "ns", better="lower", stats=Stats.of([-0.4, 2.0, 2.2, 2.4, 2.6]))


def test_not_a_number(gpu_device, gpuperf_record):
    gpuperf_record("my.error_ns", float("nan"), "ns", better="lower")
'''


@pytest.mark.skipif(not CL, reason="no OpenCL device (install pocl-opencl-icd)")
def test_impossible_values_are_never_stored_and_init_says_so(tmp_path: Path) -> None:
    """The runs refuse to record an impossible figure (its test fails, named in the run's log, and init says the
    run had failing tests); a results file that holds one anyway is screened by the same rule
    (``test_screen_sets_aside_busy_runs_leaves_out_always_busy_and_impossible_entries``)."""
    (tmp_path / "test_fit.py").write_text(FIT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUPERF_", "PYTEST_"))}
    env["PYTHONPATH"] = str(REPO)
    made = _run([sys.executable, "-m", "pytest_gpuperf.cli", "baseline", "init", "--runs", "1", "--device", "opencl:0",
                 "--", "test_fit.py"], tmp_path, env)
    assert made.returncode == 0 and "run 1 had failing tests" in made.stdout and "2 failed" in made.stdout, _said(made)
    (log,) = (tmp_path / "results" / CL[0].key).glob("init-1.log")
    said = log.read_text()
    assert "impossible value: my.broken_ns: 1 of its 5 samples are negative (lowest -0.4 ns)" in said, said[-3000:]
    assert "impossible value: my.error_ns = nan ns is not a number" in said, said[-3000:]
    (section,) = json.loads((tmp_path / "baselines" / f"{CL[0].key}.json").read_text())["backends"].values()
    assert sorted(section["metrics"]) == ["my.fit.latency_ns", "my.fit.points"]
    kept = section["metrics"]["my.fit.latency_ns"]
    assert kept["differenced"] is True and min(kept["samples"]["values"]) < 0  # a declared difference keeps its pairs


SLOW_SUITE = '''
import time


def test_count(gpu_device, gpuperf_record):
    gpuperf_record("mine.count", 3.0, "count", better="exact")


def test_slow(gpu_device):
    time.sleep(8)
'''


@pytest.mark.skipif(not CL, reason="no OpenCL device (install pocl-opencl-icd)")
def test_a_sigterm_to_init_alone_stops_the_run_under_way_which_keeps_what_it_measured(tmp_path: Path) -> None:
    """A batch system's SIGTERM to ``gpuperf baseline init`` alone (not its inner run) during the second of three
    runs: init passes the stop on, the inner run ends as interrupted and writes its results, no third run starts, no
    baseline is written, and init says so and exits INTERRUPTED, never with a traceback."""
    import signal
    import time

    (tmp_path / "test_slow_suite.py").write_text(SLOW_SUITE)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUPERF_", "PYTEST_"))}
    env.update(PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "pytest_gpuperf.cli", "baseline", "init", "--runs", "3", "--device", "opencl:0",
           "--", "test_slow_suite.py"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    folder = tmp_path / "results" / CL[0].key
    second = folder / "init-2.log"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:  # run 2's first test has passed: it is in test_slow
        if second.exists() and "test_slow_suite.py ." in second.read_text():
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == exits.INTERRUPTED, f"exit {proc.returncode}\n{out[-3000:]}\n{err[-3000:]}"
    assert "stopped by SIGTERM: no baseline written" in err and "Traceback" not in err, err
    assert not (tmp_path / "baselines" / f"{CL[0].key}.json").exists()
    assert not (folder / "init-3.log").exists()
    kept = ResultsDocument.load(folder / "init-2-opencl.json")
    assert kept.run.get("interrupted") is True and [m.name for m in kept.metrics] == ["mine.count"]
    assert ResultsDocument.load(folder / "init-1-opencl.json").run.get("interrupted") is not True
