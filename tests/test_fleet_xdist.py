"""Several devices, one worker each (issue 19): pytest-xdist on two real PoCL devices.

``POCL_DEVICES="pthread pthread"`` gives two OpenCL devices of one model (one device key): the
siblings of a small host. A generated test file logs, for every test, the xdist worker, the device and
the start and end time; the runs are real ``pytest -n …`` subprocesses, nothing is mocked.

What is asserted and why it can fail:
* pinning — every test of one device ran on one worker, the two devices on two workers, and the two
  workers ran at the same time (a rendezvous: each device's first test waits for the other's; if both
  devices were scheduled onto one worker the wait times out and the test fails);
* concurrent writes — both workers write results, history (SQLite and JSONL) and one shared baseline
  file at the end of the same run: nothing may be lost (every metric of both devices, including one
  each device alone records) and nothing torn (every file parses);
* the sibling verdict end to end — one device planted slower (``--gpuperf-plant compute=3@opencl:1``:
  4x the loop for the same credit; PoCL 3.1 cannot limit one pthread device's cores — its devices share
  one thread pool — so the slower card does more work instead) is the outlier, the other is not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_gpuperf.devices import discover
from once_support import built_once, shared_root
from suite_support import baseline_folder

ROOT = Path(__file__).resolve().parents[1]
POCL2 = {"POCL_DEVICES": "pthread pthread"}


def _two_pocl_devices() -> bool:
    """Discovery under POCL_DEVICES runs in a child: the ICD is already loaded in this process."""
    try:
        out = subprocess.run([sys.executable, "-c", "from pytest_gpuperf.devices import discover;"
                              "print(sum(d.backend == 'opencl' for d in discover().devices))"],
                             env={**os.environ, **POCL2, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                             timeout=120)
        return int(out.stdout.strip().splitlines()[-1]) == 2
    except Exception:  # noqa: BLE001 - no PoCL: skip
        return False


pytestmark = [
    pytest.mark.skipif(not any(d.backend == "opencl" for d in discover().devices),
                       reason="no OpenCL device (install pocl-opencl-icd)"),
    pytest.mark.skipif(not _two_pocl_devices(), reason="PoCL does not expose two devices under POCL_DEVICES"),
    pytest.mark.xdist_group("fleet-side-by-side"),  # one worker makes the shared runs, none waits on it
]
xdist = pytest.importorskip("xdist", reason="pytest-xdist not installed (pip install -e .[xdist])")

FLEET = textwrap.dedent('''
    import json
    import os
    import time
    from pathlib import Path

    import numpy as np
    import pytest

    from pytest_gpuperf.gatecheck import plants

    SRC = """__kernel void work(__global float *x, int n) {
        float v = x[get_global_id(0)];
        for (int i = 0; i < n; ++i) v = v * 0.9999f + 0.5f;
        x[get_global_id(0)] = v; }"""
    LOG = Path(os.environ["FLEET_LOG"])


    def _log(request, spec, t0):
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(LOG / f"{worker}.jsonl", "a") as fh:
            fh.write(json.dumps({"worker": worker, "device": spec, "test": request.node.nodeid,
                                 "t0": t0, "t1": time.time(), "pid": os.getpid()}) + "\\n")


    def test_a_rendezvous(gpu_device, request):
        """Each device's first test waits for the other device's: only two workers at once get past it."""
        t0 = time.time()
        if os.environ.get("FLEET_RENDEZVOUS"):
            me = gpu_device.info.spec
            (LOG / f"{me}.started").write_text(me)
            other = "opencl:1" if me == "opencl:0" else "opencl:0"
            deadline = time.time() + float(os.environ["FLEET_RENDEZVOUS"])
            while not (LOG / f"{other}.started").exists():
                assert time.time() < deadline, f"{other} never started while {me} ran: not on two workers at once"
                time.sleep(0.05)
        _log(request, gpu_device.info.spec, t0)


    @pytest.mark.parametrize("size", [64, 128, 256])
    def test_work(gpu_device, gpu_kernel, gpu_measure, gpuperf_record, gpuperf_plant, request, size):
        t0 = time.time()
        n = int(int(os.environ.get("WORK_ITERS", "20000")) * (1.0 + plants.fraction(gpuperf_plant, "compute")))
        k = gpu_kernel.compile(SRC, "work")
        buf = gpu_kernel.to_device(np.ones(size, np.float32))
        m = gpu_measure(k, (size,), (size,), [buf, np.int32(n)])
        ms = m.stats.scaled(1e3)
        gpuperf_record(f"kernel.work.{size}.ms", ms.median, "ms", better="lower", stats=ms)
        gpuperf_record(f"kernel.work.{size}.items", size, "items", better="exact")
        if size == 64:  # a metric only this device records: a merge that drops a writer loses it
            gpuperf_record(f"only.dev{gpu_device.info.index}", 1.0, "items", better="exact")
        _log(request, gpu_device.info.spec, t0)


    def test_host_only(request):
        _log(request, None, time.time())
''')


def _run(tmp_path: Path, *args: str, timeout: float = 480, **env: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_fleet_gen.py").write_text(FLEET)
    log = tmp_path / "log"
    log.mkdir(exist_ok=True)
    full_env = {**os.environ, **POCL2, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                "FLEET_LOG": str(log), **env}
    full_env.pop("PYTEST_XDIST_AUTO_NUM_WORKERS", None)
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--gpuperf-device=all",
           "--gpuperf-budget=0.2", f"--gpuperf-baseline-dir={baseline_folder(tmp_path, 'bl')}", "-rs", *args, "test_fleet_gen.py"]
    return subprocess.run(cmd, cwd=tmp_path, env=full_env, capture_output=True, text=True, timeout=timeout)


def _log(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for f in sorted((tmp_path / "log").glob("*.jsonl")) for line in f.read_text().splitlines()]


@pytest.fixture(scope="module")
def side_by_side(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    """(folder, result) of one ``-n auto`` run that the pinning, the concurrent-write and the worker-count
    checks all read (an xdist run costs seconds): the devices' first tests meet at a rendezvous, so the two
    workers run at once, and both write results, SQLite history and one shared baseline update at the end of
    that run. (The other runs of this file name ``-n 2``: both ways of asking for workers are run.) One run
    for all xdist workers of this test run (``once_support.built_once``); the checks only read it."""
    def build(tmp: Path) -> None:
        res = _run(tmp, "-n", "auto", f"--gpuperf-json={tmp / 'out' / '{key}.json'}", f"--gpuperf-history={tmp / 'h.db'}",
                   "--gpuperf-update-baselines", FLEET_RENDEZVOUS="120")
        (tmp / "run.json").write_text(json.dumps([res.args, res.returncode, res.stdout, res.stderr]))

    tmp = built_once(shared_root(tmp_path_factory), "fleet-side-by-side", build)
    return tmp, subprocess.CompletedProcess(*json.loads((tmp / "run.json").read_text()))


def test_each_device_runs_on_one_worker_and_the_two_run_side_by_side(side_by_side):
    tmp_path, res = side_by_side
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    entries = _log(tmp_path)
    dev = [e for e in entries if e["device"]]
    assert len(dev) == 8 and len([e for e in entries if not e["device"]]) == 1, entries
    workers = {spec: {e["worker"] for e in dev if e["device"] == spec} for spec in ("opencl:0", "opencl:1")}
    assert all(len(w) == 1 for w in workers.values()), workers  # one device, one worker
    assert workers["opencl:0"] != workers["opencl:1"], workers  # two devices, two workers
    assert all(e["worker"].startswith("gw") for e in entries)
    # no two tests of one device overlap in time, on any worker (one device is never shared)
    for spec in ("opencl:0", "opencl:1"):
        spans = sorted((e["t0"], e["t1"]) for e in dev if e["device"] == spec)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans
    # the controller prints both devices' summaries, once each
    assert out.count("gpuperf opencl:0 ") == 1 and out.count("gpuperf opencl:1 ") == 1, out


def test_auto_starts_one_worker_per_device_and_dist_each_is_refused(side_by_side, tmp_path):
    _, res = side_by_side  # a run with -n auto
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert "2 workers" in out, out  # xdist: "created: 2/2 workers" / "2 workers [9 items]"
    res = _run(tmp_path, "-n", "2", "--dist", "each")
    assert res.returncode == pytest.ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert "--dist each" in res.stderr


def test_concurrent_workers_lose_nothing_in_results_history_and_baselines(side_by_side, tmp_path):
    # SQLite history, JSONL history and a baseline update shared by both workers (one device key)
    run_dir, res = side_by_side
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    files = sorted((run_dir / "out").glob("*.json"))
    names = sorted(p.name for p in files)
    assert len([n for n in names if n != "siblings.json"]) == 2, names  # one key, two files: the index apart
    docs = {}
    for p in files:
        if p.name != "siblings.json":
            doc = json.loads(p.read_text())
            docs[doc["device"]["spec"]] = doc
    assert set(docs) == {"opencl:0", "opencl:1"}
    for spec, doc in docs.items():
        index = doc["device"]["index"]
        got = {m["name"] for m in doc["metrics"]}
        want = {f"kernel.work.{s}.{u}" for s in (64, 128, 256) for u in ("ms", "items")} | {f"only.dev{index}"}
        assert got == want, (spec, got)
    from pytest_gpuperf.history.backends import read_runs

    runs = read_runs(str(run_dir / "h.db"))
    assert len(runs) == 2 and sorted(len(r.metrics) for r in runs) == [7, 7]
    assert {m.name for r in runs for m in r.metrics} >= {"only.dev0", "only.dev1"}
    baseline_files = list((run_dir / "bl").glob("*.json"))
    assert len(baseline_files) == 1
    entries = json.loads(baseline_files[0].read_text())
    section = json.dumps(entries)
    assert '"only.dev0"' in section and '"only.dev1"' in section  # both workers' merges kept
    # a second run appends to a JSONL history from both workers at once
    res = _run(tmp_path, "-n", "2", f"--gpuperf-history={tmp_path / 'h.jsonl'}", f"--gpuperf-baseline-dir={baseline_folder(tmp_path, 'bl2')}")
    assert res.returncode == 0, res.stdout + res.stderr
    lines = (tmp_path / "h.jsonl").read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line) for line in lines)


@pytest.mark.quiet_host
def test_a_gated_run_on_two_workers_reads_no_metric_of_the_other_worker_s_device_as_missing(side_by_side, tmp_path):
    """Gated against the baseline both devices wrote (the side-by-side run's ``--gpuperf-update-baselines``): each
    worker judges only its own device — a test that passed on one device never makes the other device's baseline
    entries 'missing' in the worker that did not run them (every metric MISSING and an empty second results file
    per device, before) — and one results file per device is written."""
    run_dir, _ = side_by_side
    bl = baseline_folder(run_dir, "bl")
    res = _run(tmp_path, "-n", "2", f"--gpuperf-baseline-dir={bl}", f"--gpuperf-json={tmp_path / 'out' / '{key}.json'}")
    out = res.stdout + res.stderr
    # only.devN is the one metric one device alone records (the test's design): the other device, gated against the
    # one baseline of their model, misses it; every metric both devices record is there on each
    missing = {line.split()[1] for line in out.splitlines() if line.startswith("MISSING:")}
    assert missing <= {"only.dev0", "only.dev1"}, out[-4000:]
    assert out.count("gpuperf opencl:0 ") == 1 and out.count("gpuperf opencl:1 ") == 1, out[-4000:]
    names = sorted(p.name for p in (tmp_path / "out").glob("*.json") if p.name != "siblings.json")
    assert len(names) == 2, names  # one per device: no empty second file


def test_the_planted_slower_device_is_the_sibling_outlier(tmp_path):
    # 10x the work on opencl:1: the CPU band of times is 100 % (a ratio of 2), and two xdist workers
    # share the host's two cores, which compressed a 4x plant to 1.8-2.4x on a busy host (the check
    # then rightly read "same"); the mechanics under test need a slowdown well past the band. A busy host also
    # widened the ratio's interval to 1.15-6.7 over the samples of a 0.2 s budget (the check read "same"):
    # a second's samples per measurement keep the interval past the band.
    res = _run(tmp_path, "-n", "2", "--gpuperf-budget=1", f"--gpuperf-json={tmp_path / 'out' / 'r.json'}",
               "--gpuperf-plant=compute=9@opencl:1", "--gpuperf-fail-on-outlier", WORK_ITERS="40000")
    out = res.stdout + res.stderr
    assert res.returncode == 1, out  # --gpuperf-fail-on-outlier: the outlier fails the run
    assert "gpuperf siblings" in out and "opencl:1: OUTLIER" in out, out
    rep = json.loads((tmp_path / "out" / "siblings.json").read_text())
    assert rep["schema"] == "pytest-gpuperf-siblings/1"
    (group,) = rep["groups"]
    assert group["outlier_devices"] == ["opencl:1"], group["counts"]
    rows = {(r["device"], r["metric"]): r for r in group["rows"]}
    for size in (64, 128, 256):
        slow = rows[("opencl:1", f"kernel.work.{size}.ms")]
        assert slow["verdict"] == "outlier" and slow["ratio"] > 2.0, slow
        assert rows[("opencl:0", f"kernel.work.{size}.ms")]["verdict"] != "outlier"
        assert rows[("opencl:1", f"kernel.work.{size}.items")]["verdict"] == "same"


def test_a_worker_s_own_exit_status_survives_the_controller(tmp_path):
    """Devices without a baseline under ``--gpuperf-require-baseline``: each worker ends with NO BASELINE
    (6), and so does the run — not the generic 1 of a failed test."""
    from pytest_gpuperf import exits

    import xml.etree.ElementTree as ET

    summary, junit = tmp_path / "summary.md", tmp_path / "junit.xml"
    res = _run(tmp_path, "-n", "2", "--gpuperf-require-baseline", f"--junitxml={junit}",
               GITHUB_ACTIONS="true", GITHUB_STEP_SUMMARY=str(summary))
    assert res.returncode == exits.NO_BASELINE, res.stdout + res.stderr
    # the controller writes the one verdict the workers' reasons make: JUnit's gpuperf.gate, the summary's first line
    gate = next(c for c in ET.parse(junit).getroot().iter("testcase") if c.get("classname") == "gpuperf")
    failure = gate.find("failure")
    assert failure.get("type") == "gpuperf.NO_BASELINE" and failure.get("message").startswith("gpuperf NO BASELINE (exit 6)")
    assert failure.text.count("NO BASELINE: ") == 2, failure.text  # one per worker's device
    text = summary.read_text()
    assert text.startswith("**gpuperf NO BASELINE (exit 6)") and text.count("### gpuperf opencl:") == 2, text
