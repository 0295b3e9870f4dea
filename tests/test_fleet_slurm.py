"""``gpuperf fleet submit|status|wait`` against a real single-node Slurm cluster (scripts/slurm_local.sh:
munge, slurmctld and slurmd from Debian's packages, started on this host), running the shipped suites on
PoCL in real jobs. Nothing is mocked: the scheduler, the runs and the results files are real.

The fleet gate: four jobs on the one node (four cards of the fleet), one of them planted slower and a
1-ulp error on ``sin`` (a deterministic figure the report compares bit for bit, so the planted card fails
even when the host's load leaves the timed figures out as contended); ``gpuperf fleet report`` must fail
exactly that job's card, and after a re-submission without the plant, pass every card.

Only a missing ``sbatch`` skips these tests (CI installs slurm-wlm and munge and runs them).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from suite_support import gpuperf_in_process

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "slurm_local.sh"
#: a few seconds per job on PoCL: the FMA-chain latency probe (which the compute plant slows) and the sin
#: accuracy sweep (which the ulp plant changes bit for bit)
SELECTION = ["suites/test_latency.py", "suites/test_accuracy_math.py",
             "-k", "(test_latency and fp32-ieee) or test_math_function and sin-fp32 and not asin and not sinh"]
PLANT = ["--plant-on", "2=compute=1.0", "--plant-on", "2=ulp=sin"]

needs_sbatch = pytest.mark.skipif(shutil.which("sbatch") is None,
                                  reason="sbatch not installed (apt-get install slurm-wlm munge; CI installs them)")
# one xdist worker runs this module (scripts/run_tests.sh: --dist loadgroup): its jobs share the one-node cluster, so
# side by side on two workers each test's jobs would wait in the queue behind the other's
pytestmark = pytest.mark.xdist_group("slurm-cluster")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SLURM_JOB", "SLURM_ARRAY"))}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    env["PYTHONUNBUFFERED"] = "1"  # the jobs' logs show each test as it ends (sbatch passes this environment on)
    return env


def gpuperf(cwd: Path, *args: str, timeout: float = 600, **env: str) -> subprocess.CompletedProcess:
    """``gpuperf ARGS`` in a process of its own: a submission's environment is the one its jobs run in."""
    return subprocess.run([sys.executable, "-m", "pytest_gpuperf.cli", *args], cwd=cwd, env={**_env(), **env},
                          capture_output=True, text=True, timeout=timeout)


def gpuperf_here(capsys: pytest.CaptureFixture, *args: str) -> subprocess.CompletedProcess:
    """``gpuperf ARGS`` through the CLI's entry point in this interpreter (``suite_support.gpuperf_in_process``)
    for the commands that submit nothing (dry runs, refusals, status, report): the same statuses and output
    without a second's start of a fresh interpreter each; :func:`gpuperf` checks the process's own."""
    code, out, err = gpuperf_in_process(capsys, *args)
    return subprocess.CompletedProcess(["gpuperf", *args], code, out, err)


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[str]:
    """The single-node cluster (started if it is not up); SLURM_CONF set for this session's commands."""
    if shutil.which("sbatch") is None:
        pytest.skip("sbatch not installed (apt-get install slurm-wlm munge; CI installs them)")
    res = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"scripts/slurm_local.sh failed:\n{res.stdout}\n{res.stderr}"
    conf = re.search(r"SLURM_CONF=(\S+)", res.stdout).group(1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SLURM_CONF", conf)
        yield conf


@pytest.fixture(scope="session")
def node(slurm_cluster: str) -> str:
    out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N"], capture_output=True, text=True, env=_env()).stdout.split()
    assert out, "the local cluster has no node"
    return out[0]


def report(capsys: pytest.CaptureFixture, run_dir: Path, *extra: str) -> tuple[int, dict]:
    res = gpuperf_here(capsys, "fleet", "report", str(run_dir), "--format", "json", *extra)
    assert res.returncode in (0, 1, 3), res.stdout + res.stderr
    return res.returncode, json.loads(res.stdout)


def verdicts(rep: dict) -> dict[str, str]:
    """Card name → verdict, from the report's JSON (the card's job label is the first part of its name)."""
    return {c["card"] if "card" in c else c["name"]: c["verdict"] for c in rep["cards"]}


@pytest.fixture
def fleet_root(tmp_path: Path) -> Iterator[Path]:
    """The shared folder of a test's fleet runs; any of their jobs still queued or running is cancelled after."""
    root = tmp_path / "fleet"
    yield root
    for manifest in root.glob("*/fleet.json"):
        for sub in json.loads(manifest.read_text()).get("submissions", []):
            subprocess.run(["scancel", str(sub["job_id"])], capture_output=True, env=_env())


def results_docs(folder: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(folder.rglob("run-*.json"))]


# --------------------------------------------------------------------------------------------------------


def test_dry_run_script_quotes_every_value(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The batch script's shell reads every value exactly as given (spaces, quotes, $(...), globs): the
    script's own definitions, run by bash, give back the arguments unchanged; nothing is submitted."""
    weird = ["-k", "a and not b", "--gpuperf-tag=it's $(touch pwned) `x` *", "semi;colon"]
    res = gpuperf_here(capsys, "fleet", "submit", "--root", str(tmp_path / "root"), "--nodes", "n1,n2,n3",
                  "--fleet-run", "dry", "--partition", "gpu", "--reservation", "rollout", "--exclusive",
                  "--array-throttle", "2", "--time", "00:30:00", "--plant-on", "1=compute=0.5", "--dry-run",
                  "--history", "postgresql://u:p w@db/fleet?a=1&b='2'",
                  "--", *weird)
    assert res.returncode == 0, res.stderr
    script = res.stdout.split("\n# then:")[0]
    for line in ("#SBATCH --array=0,1,2%2", "#SBATCH --partition=gpu", "#SBATCH --reservation=rollout",
                 "#SBATCH --exclusive", "#SBATCH --time=00:30:00", "#SBATCH --signal=B:TERM@60", "#SBATCH --nodes=1"):
        assert line in script.splitlines(), line
    assert "ReqNodeList=n2" in res.stdout and "scontrol release" in res.stdout
    assert not (tmp_path / "root").exists(), "a dry run writes nothing"
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0
    head = script.split("node_work() {")[0]
    probe = head + 'printf "%s\\n" "$root" "$fleet_run" "$history" "${pytest_args[@]}" "${plants[@]}"\n'
    out = subprocess.run(["bash"], input=probe, text=True, capture_output=True, cwd=tmp_path,
                         env={**_env(), "SLURM_ARRAY_TASK_ID": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [str(tmp_path / "root"), "dry", "postgresql://u:p w@db/fleet?a=1&b='2'", *weird,
                                       "--gpuperf-plant=compute=0.5"]
    assert not (tmp_path / "pwned").exists()


def test_submit_refuses_what_slurm_cannot_carry(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A value an #SBATCH line cannot hold, a plant on a job that does not exist, a node named twice in one
    job: exit 2 with the problem named, before anything is submitted."""
    cases = [(["--root", str(tmp_path / "with space"), "--nodes", "n1"], "#SBATCH value"),
             (["--root", str(tmp_path), "--nodes", "n1,n2", "--plant-on", "5=compute=0.5"], "jobs 0..1"),
             (["--root", str(tmp_path), "--nodes", "n1", "--plant-on", "0=speed=2"], "KIND=ARG"),
             (["--root", str(tmp_path), "--nodes", "n1,n1", "--chunk", "2"], "twice")]
    for args, words in cases:
        res = gpuperf_here(capsys, "fleet", "submit", *args, "--fleet-run", "x", "--dry-run")
        assert res.returncode == 2 and words in res.stderr, (args, res.stderr)
    for cmd in ("status", "wait"):
        res = gpuperf_here(capsys, "fleet", cmd, str(tmp_path))
        assert res.returncode == 2 and "fleet.json not found" in res.stderr, res.stderr


def test_dry_run_chunks_and_offline_bundle(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """``--chunk 2``: a job spans two nodes (one step per node, TERM to the steps); ``--offline-bundle``: the
    bundle's run.sh runs instead of an installed gpuperf, and a bundle without one is refused."""
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (tmp_path / "nodes.txt").write_text("# the rack\na\nb c  # the last one alone\n")
    args = ["fleet", "submit", "--root", str(tmp_path / "root"), "--nodes-file", str(tmp_path / "nodes.txt"), "--chunk", "2",
            "--offline-bundle", str(bundle), "--fleet-run", "c", "--dry-run"]
    res = gpuperf_here(capsys, *args)
    assert res.returncode == 2 and "no run.sh" in res.stderr
    (bundle / "run.sh").write_text("#!/bin/bash\n")
    res = gpuperf_here(capsys, *args)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert "#SBATCH --array=0,1" in lines and "#SBATCH --nodes=2" in lines and "#SBATCH --signal=TERM@60" in lines
    assert f"bundle={bundle}" in lines and "srun --ntasks-per-node=1 --kill-on-bad-exit=0 bash \"$0\"" in lines
    assert "ReqNodeList=a,b NumNodes=2" in res.stdout and "ReqNodeList=c NumNodes=1" in res.stdout


def test_physical_gpus_counts_the_selected_devices() -> None:
    """The job's ``-n auto`` choice counts the physical GPUs ``--gpuperf-device=all`` selects here."""
    from pytest_gpuperf.devices import discover
    from pytest_gpuperf.fleet.identity import physical_id
    from pytest_gpuperf.fleet.slurm_jobs import physical_gpus

    assert physical_gpus() == len({physical_id(d) for d in discover().devices}) >= 1


@needs_sbatch
def test_fleet_gate_on_slurm(tmp_path: Path, fleet_root: Path, node: str, capsys: pytest.CaptureFixture) -> None:
    """Four jobs on the node, job 2 planted: every job folder holds its job.json and complete results; the
    fleet report fails exactly job 2's card. Then job 2's folder is removed and the fleet run submitted
    again without the plant: only job 2 runs (the complete ones are skipped), and every card passes. A
    confirmation run of job 2's card keeps its label and is marked as one."""
    root = fleet_root
    nodes = ",".join([node] * 4)
    res = gpuperf(tmp_path, "fleet", "submit", "--root", str(root), "--nodes", nodes, "--fleet-run", "gate",
                  "--time", "15", *PLANT, "--wait", "--poll", "1", "--", *SELECTION)
    run_dir = root / "gate"
    assert res.returncode == 0, res.stdout + res.stderr + _logs(run_dir)
    manifest = json.loads((run_dir / "fleet.json").read_text())
    assert [t["labels"] for t in manifest["tasks"]] == [[f"{node}-{i}"] for i in range(4)]
    assert manifest["submissions"][0]["plants"] == {"2": ["compute=1.0", "ulp=sin"]}
    for i in range(4):
        folder = run_dir / f"{node}-{i}"
        job = json.loads((folder / "job.json").read_text())
        assert {k: job[k] for k in ("fleet_run", "node", "array_task", "confirm")} == \
            {"fleet_run": "gate", "node": node, "array_task": i, "confirm": False}
        assert job["job_id"].isdigit()
        docs = results_docs(folder)
        assert len(docs) == 1 and not docs[0]["run"]["interrupted"]
        planted = [m["name"] for m in docs[0]["metrics"]]
        assert "accuracy.fp32.sin.max_ulp" in planted and "latency.fp32.fma.cycles" in planted
    st = gpuperf_here(capsys, "fleet", "status", str(run_dir), "--format", "json")
    assert st.returncode == 0 and json.loads(st.stdout)["complete"] == 4, st.stdout

    code, rep = report(capsys, run_dir)
    failed = [name for name, v in verdicts(rep).items() if v == "fail"]
    assert code == 1 and len(failed) == 1 and failed[0].startswith(f"{node}-2/"), json.dumps(rep, indent=1)[:4000]

    shutil.rmtree(run_dir / f"{node}-2")
    res = gpuperf(tmp_path, "fleet", "submit", "--root", str(root), "--fleet-run", "gate", "--wait", "--poll", "1")
    assert res.returncode == 0, res.stdout + res.stderr + _logs(run_dir)
    assert sum(f"skip job {i} " in res.stdout for i in (0, 1, 3)) == 3 and "skip job 2 " not in res.stdout, res.stdout
    manifest = json.loads((run_dir / "fleet.json").read_text())
    assert [s["indices"] for s in manifest["submissions"]] == [[0, 1, 2, 3], [2]]
    assert manifest["submissions"][1]["plants"] == {}
    assert manifest["submissions"][1]["settings"]["pytest_args"] == SELECTION, "a re-submission measures the same"

    res = gpuperf(tmp_path, "fleet", "submit", "--root", str(root), "--confirm", "gate", "--cards",
                  f"{node}-2/some-card-key", "--wait", "--poll", "1")
    confirm_dir = root / "gate-confirm"
    assert res.returncode == 0, res.stdout + res.stderr + _logs(confirm_dir)
    assert sorted(p.name for p in confirm_dir.iterdir() if p.is_dir()) == [f"{node}-2"]
    job = json.loads((confirm_dir / f"{node}-2" / "job.json").read_text())
    assert job["confirm"] is True and job["array_task"] == 2
    confirm_manifest = json.loads((confirm_dir / "fleet.json").read_text())
    assert confirm_manifest["confirm_of"] == "gate" and confirm_manifest["submissions"][0]["settings"]["pytest_args"] == SELECTION

    # no card fails; on a noisy CPU host a card may be flagged against the fleet's timings and await its
    # confirmation ("uncertain", exit 3): that is the report's statistics, not a failed card
    code, rep = report(capsys, run_dir)
    assert code in (0, 3) and "fail" not in verdicts(rep).values(), json.dumps(rep, indent=1)[:4000]
    code, rep = report(capsys, run_dir, "--confirm", str(confirm_dir))
    assert code in (0, 3) and "fail" not in verdicts(rep).values(), json.dumps(rep, indent=1)[:4000]
    assert verdicts(rep)[next(n for n in verdicts(rep) if n.startswith(f"{node}-2/"))] in ("ok", "warn")


@needs_sbatch
def test_term_before_the_time_limit_leaves_interrupted_results(tmp_path: Path, fleet_root: Path, node: str,
                                                              capsys: pytest.CaptureFixture) -> None:
    """The TERM Slurm sends the batch shell before a time limit (``--signal=B:TERM@S``, sent here at once with
    ``scancel --signal=TERM --batch``) ends the run as interrupted with its results written; the next
    submission of the fleet run picks that job again."""
    root = fleet_root
    res = gpuperf(tmp_path, "fleet", "submit", "--root", str(root), "--nodes", node, "--fleet-run", "term",
                  "--time", "15", "--", "suites/test_latency.py")
    assert res.returncode == 0, res.stdout + res.stderr
    run_dir = root / "term"
    job = json.loads((run_dir / "fleet.json").read_text())["submissions"][0]["job_id"] + "_0"
    log = run_dir / f"{node}-0"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:  # TERM once pytest has started measuring
        text = "".join(p.read_text(errors="replace") for p in log.glob("slurm-*.out"))
        if ".." in text.partition(" items")[2]:  # two tests have passed since pytest collected
            break
        if "gpuperf fleet: " in text:
            pytest.fail("the run ended before a TERM could be sent:\n" + _logs(run_dir))
        time.sleep(0.5)
    else:
        pytest.fail("the job never started its run:\n" + _logs(run_dir))
    subprocess.run(["scancel", "--signal=TERM", "--batch", job], check=True, env=_env())
    res = gpuperf(tmp_path, "fleet", "wait", str(run_dir), "--poll", "1", "--timeout", "300", "--format", "json")
    rep = json.loads(res.stdout)
    assert res.returncode == 1 and rep["jobs"][0]["results"] == "interrupted", res.stdout + _logs(run_dir)
    docs = results_docs(log)
    assert docs and all(d["run"]["interrupted"] for d in docs)
    assert any(d["metrics"] for d in docs), "the tests that finished before the TERM are kept"
    said = "".join(p.read_text(errors="replace") for p in log.glob("slurm-*.out"))
    assert "gpuperf INTERRUPTED: SIGTERM stopped the run" in said, _logs(run_dir)  # the time limit's own signal
    again = gpuperf_here(capsys, "fleet", "submit", "--root", str(root), "--fleet-run", "term", "--dry-run")
    assert again.returncode == 0 and "#SBATCH --array=0" in again.stdout, again.stdout + again.stderr


def _logs(run_dir: Path) -> str:
    return "".join(f"\n--- {p}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(run_dir.rglob("slurm-*.out")))


@needs_sbatch
def test_offline_bundle_job(tmp_path: Path, fleet_root: Path, node: str, checkout_wheel: Path,
                            capsys: pytest.CaptureFixture) -> None:
    """``--offline-bundle``: the job runs the bundle's run.sh (installing from the bundle into a virtual
    environment on the node) into its job folder; the results and job.json land where the report reads them."""
    from pytest_gpuperf.offline.bundle import requirements

    bundle = tmp_path / "bundle"
    have = [r.split(">")[0].split("=")[0] for r in requirements([])]  # this machine has them all: only the plugin
    res = gpuperf_here(capsys, "offline", "bundle", str(bundle), "--python",
                       f"{sys.version_info.major}.{sys.version_info.minor}", "--wheel", str(checkout_wheel),
                       *[a for h in have for a in ("--host-has", h)])
    assert res.returncode == 0, res.stderr
    res = gpuperf(tmp_path, "fleet", "submit", "--root", str(fleet_root), "--nodes", node, "--fleet-run", "off",
                  "--offline-bundle", str(bundle), "--time", "15", "--wait", "--poll", "1", "--",
                  "-k", "test_math_function and sin-fp32 and not asin and not sinh",
                  GPUPERF_VENV=str(tmp_path / "venv"), GPUPERF_PYTHON=sys.executable)
    run_dir = fleet_root / "off"
    assert res.returncode == 0, res.stdout + res.stderr + _logs(run_dir)
    folder = run_dir / f"{node}-0"
    (doc,) = results_docs(folder / "results")
    assert any(m["name"] == "accuracy.fp32.sin.max_ulp" for m in doc["metrics"]) and not doc["run"]["interrupted"]
    assert json.loads((folder / "job.json").read_text())["fleet_run"] == "off"
    assert (tmp_path / "venv" / "bin" / "gpuperf").is_file(), "run.sh installed the bundle's plugin on the node"


def test_a_wait_says_what_it_waits_for_when_the_jobs_states_change() -> None:
    """``--wait`` and ``fleet wait`` print a line on stderr whenever the jobs' Slurm states change (a 97 s wait
    printed nothing): the states counted, most first."""
    from pytest_gpuperf.fleet.slurm_submit import _waiting

    jobs = [{"slurm": s} for s in ("RUNNING", "PENDING", "RUNNING", "COMPLETED")]
    assert _waiting({"jobs": jobs}) == "2 RUNNING, 1 COMPLETED, 1 PENDING"
