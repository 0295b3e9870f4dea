"""The gate check (``gpuperf baseline gatecheck``) end to end on the real OpenCL device of this machine.

A tiny generated project (its own ``suites/``) stands in for the repository's suites so the A/A runs —
the whole ``suites/`` each time, as the README's command does — take seconds; the memory plant is also
tried on the repository's own copy test, where it lives."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_gpuperf import exits
from pytest_gpuperf.cli import main as gpuperf
from pytest_gpuperf.devices import discover
from pytest_gpuperf.errors import GpuPerfError
from pytest_gpuperf.gatecheck import run as gc

INV = discover()
# xdist_group: one worker runs the module's side-by-side tests (scripts/run_tests.sh: --dist loadgroup), so the tiny
# project's baseline (``project``, an update run) is made once there, not in each worker that runs one of them
pytestmark = [pytest.mark.skipif(not any(d.backend == "opencl" for d in INV.devices),
                                 reason="no OpenCL device (install pocl-opencl-icd)"),
              pytest.mark.xdist_group("gatecheck-tiny-project")]
DEV = "opencl:0"
REPO = Path(__file__).resolve().parents[1]


def _host_busy(results: Path, metric: str) -> bool:
    """Whether the run of ``results`` could not judge ``metric`` because other work held this host's cores
    even after re-measuring (verdict ``contended``, ``info["host"]``): what a loaded CI runner, or the other
    jobs of a shared machine, do to a CPU device's timings. The gate then says it cannot judge (exit
    ``HOST_TOO_BUSY``), which is neither a false alarm of an A/A run nor a plant it missed."""
    m = next(m for m in json.loads(results.read_text())["metrics"] if m["name"] == metric)
    return m["verdict"] == "contended" and bool((m["info"].get("host") or {}).get("contended"))


def main(argv: list[str]) -> int:
    """``gpuperf baseline ARGV``."""
    return gpuperf(["baseline", *argv])

# A copy that honours the memory plant by moving (1 + F) x the bytes it is credited with, and a second,
# exact metric for the missing plant. Its band is the test's own
# (±50 %): this file checks the gate-check protocol, not how noisy PoCL's bandwidth is on a shared host.
# 64 MiB, out of the CPU's caches: a 4 MiB copy (8 MiB touched) read about 56 or about 30 GB/s depending
# on the process (whether it stayed cache-resident; 6 processes on a CI host: 2 and 4), a halving that a
# 1.5x band cannot hold, while 64 MiB copies read 24-28 GB/s in 4 processes. Half a second of repeats (at least
# the default ten) rather than the default two: a median within that band needs no more, and the module's
# gate checks run the suite eight times.
TINY = '''
import numpy as np
from pytest_gpuperf.gatecheck import plants

SRC = """__kernel void copy(__global const uint *a, __global uint *b) { size_t i = get_global_id(0); b[i] = a[i]; }"""
SIZE = 64 << 20

def test_copy(gpu_device, gpu_kernel, gpu_measure, gpuperf_record, gpuperf_plant):
    moved = int(SIZE * (1 + plants.fraction(gpuperf_plant, "memory"))) // 4096 * 4096
    k = gpu_kernel.compile(SRC, "copy")
    a = gpu_kernel.to_device(np.ones(moved // 4, np.uint32))
    b = gpu_kernel.to_device(np.zeros(moved // 4, np.uint32))
    m = gpu_measure(k, (moved // 4,), (64,), [a, b], budget_s=0.5)
    bw = m.stats.reciprocal(2 * SIZE / 1e9)
    gpuperf_record("tiny.copy.bandwidth", bw.median, "GB/s", better="higher", stats=bw, tolerance={"rel": 0.5})
    gpuperf_record("tiny.copy.credited_bytes", float(SIZE), "bytes", better="exact")
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A project with ``suites/test_tiny.py`` and its baseline (one update run); returns (root, baseline dir).
    Shared by the module's gate checks (each writes its own results folder): nothing they run changes it."""
    tmp_path = tmp_path_factory.mktemp("tiny-project")
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "test_tiny.py").write_text(TINY)
    bl = tmp_path / "bl"
    o = gc.run_pytest(DEV, ["suites/", "--gpuperf-update-baselines"], tmp_path / "update.json", tmp_path / "update.log",
                      baseline_dir=str(bl), cwd=tmp_path)
    assert o.exit == 0, o.log.read_text()
    return tmp_path, bl


@pytest.mark.quiet_host
def test_gatecheck_writes_the_schema_catches_plants_and_appends(project):
    root, bl = project
    out, runs = root / "gatecheck.json", root / "runs"
    memory = gc.Plant("memory", "3", "tiny.copy.bandwidth", ("suites/test_tiny.py",))
    missing = gc.Plant("missing", "tiny.copy.credited_bytes", "tiny.copy.credited_bytes", ("suites/test_tiny.py",))
    kw = dict(device=DEV, out=out, baseline_dir=str(bl), results_dir=runs, cwd=root, echo=lambda line: None)
    doc = gc.gatecheck(aa=1, plant_list=[memory, missing], tries=1, commit="abc1234", append=False,
                       fresh_first=True, **kw)

    assert json.loads(out.read_text()) == doc
    assert doc["schema"] == gc.SCHEMA and doc["commit"] == "abc1234"
    assert doc["device"]["key"] and doc["command"] == f"gpuperf run --gpuperf-device={DEV}"
    (aa,) = doc["aa"]
    assert aa["run"] == 1 and aa["metrics"] == 2 and aa["fresh_machine"] is True
    # an unchanged system never reads regressed or missing, however loaded the host
    assert aa["regressed"] == [] and aa["missing"] == [], aa
    assert (runs / "aa-1.json").exists() and (runs / "aa-1.log").exists()
    busy = [tag for tag in ("aa-1", "plant-memory-1") if _host_busy(runs / f"{tag}.json", "tiny.copy.bandwidth")]
    assert aa["exit"] == (exits.HOST_TOO_BUSY if "aa-1" in busy else 0), aa
    by_kind = {p["kind"]: p for p in doc["planted"]}
    assert by_kind["memory"]["size"] == 3.0 and by_kind["memory"]["tries"] == 1
    if "plant-memory-1" in busy:  # never a pass: on a busy host the 4x plant is not judged (contended)
        assert (by_kind["memory"]["detected"], by_kind["memory"]["verdicts"]) == (0, ["contended"]), by_kind["memory"]
    else:
        assert (by_kind["memory"]["detected"], by_kind["memory"]["verdicts"]) == (1, ["regressed"]), by_kind["memory"]
    assert (by_kind["missing"]["detected"], by_kind["missing"]["verdicts"]) == (1, ["missing"])
    passed, problems = gc.verdict(doc)
    assert passed == (not busy) and len(problems) == len(busy), problems

    # a second call adds to the file: A/A runs are renumbered; each entry keeps its commit, and tries of the
    # same plant are summed only at the same commit
    with pytest.raises(GpuPerfError, match="pass --append"):
        gc.gatecheck(aa=1, plant_list=[], tries=0, commit="abc1234", append=False, fresh_first=False, **kw)
    doc2 = gc.gatecheck(aa=1, plant_list=[missing], tries=1, commit="def5678", append=True, fresh_first=True, **kw)
    assert [r["run"] for r in doc2["aa"]] == [1, 2]
    assert [r["commit"] for r in doc2["aa"]] == ["abc1234", "def5678"]
    assert doc2["aa"][1]["fresh_machine"] is False  # only the file's very first run starts fresh
    assert (runs / "aa-2.json").exists() and (runs / "plant-missing-2.json").exists()
    missing_entries = [p for p in doc2["planted"] if p["kind"] == "missing"]
    assert [(p["commit"], p["tries"], p["runs"]) for p in missing_entries] == [
        ("abc1234", 1, ["plant-missing-1"]), ("def5678", 1, ["plant-missing-2"])]
    assert doc2["commits"] == ["abc1234", "def5678"] and doc2["commit"] == "def5678"

    # a run's files never replace an earlier run's, even one whose entry left the file (moved out by hand)
    (runs / "plant-missing-3.log").write_text("an earlier run, moved out of gatecheck.json\n")
    doc3 = gc.gatecheck(aa=0, plant_list=[missing], tries=1, commit="def5678", append=True, fresh_first=False, **kw)
    assert (runs / "plant-missing-3.log").read_text() == "an earlier run, moved out of gatecheck.json\n"
    later = [p for p in doc3["planted"] if p["kind"] == "missing" and p["commit"] == "def5678"]
    assert [(p["tries"], p["runs"]) for p in later] == [(2, ["plant-missing-2", "plant-missing-4"])]
    if busy:  # the protocol was checked; the timing verdicts could not be, and the test says so
        pytest.skip(f"other work held this host's cores through {', '.join(busy)} (HOST TOO BUSY TO GATE, exit "
                    f"{exits.HOST_TOO_BUSY}): the copy's verdicts were 'contended', not judged; run on a quieter host")


def test_an_interrupted_gatecheck_keeps_what_it_measured(project, tmp_path):
    """Ctrl-C in the second plant's try: the file holds the A/A run and the first plant, each written when it
    ended (a SIGTERM or a kill at any point loses only the run under way), and a later call appends to it."""
    root, bl = project
    missing = gc.Plant("missing", "tiny.copy.credited_bytes", "tiny.copy.credited_bytes", ("suites/test_tiny.py",))
    out = tmp_path / "g.json"
    kw = dict(device=DEV, out=out, baseline_dir=str(bl), results_dir=tmp_path / "runs", commit="c1",
              fresh_first=False, cwd=root)
    seen: list[str] = []

    def echo(line: str) -> None:  # the second plant's try has run: stop before its entry is complete
        seen.extend([line] if line.startswith("plant missing=") else [])
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        gc.gatecheck(aa=1, plant_list=[missing, missing], tries=1, append=False, echo=echo, **kw)
    doc = json.loads(out.read_text())
    assert [r["run"] for r in doc["aa"]] == [1] and doc["device"]["key"]
    assert [(p["kind"], p["tries"], p["runs"]) for p in doc["planted"]] == [("missing", 1, ["plant-missing-1"])]
    assert (tmp_path / "runs" / "plant-missing-2.json").exists()  # measured, but its entry never ended
    doc = gc.gatecheck(aa=0, plant_list=[], tries=1, append=True, echo=lambda line: None, **kw)
    assert [r["run"] for r in doc["aa"]] == [1] and len(doc["planted"]) == 1


def test_a_sigterm_stops_the_command_with_its_status_and_keeps_the_runs_that_ended(project, tmp_path):
    """``gpuperf baseline gatecheck`` under a batch system's SIGTERM, sent once the first A/A run's entry is in
    the file: the command says what it kept and exits INTERRUPTED, never with a traceback."""
    root, bl = project
    out = tmp_path / "g.json"
    cmd = [sys.executable, "-m", "pytest_gpuperf.cli", "baseline", "gatecheck", "--device", DEV, "--aa", "3",
           "--plant", "none", "--baseline-dir", str(bl), "--results-dir", str(tmp_path / "runs"), "--out", str(out),
           "--commit", "c1", "--", "suites/test_tiny.py"]
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if json.loads(out.read_text())["aa"]:
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == exits.INTERRUPTED, err
    assert f"stopped by SIGTERM; {out} keeps 1 A/A runs and 0 planted kinds" in err and "Traceback" not in err
    assert [r["run"] for r in json.loads(out.read_text())["aa"]] == [1]


def test_a_stop_that_code_swallowed_starts_no_further_run(project, tmp_path):
    """A Ctrl-C or SIGTERM lost where it landed (a bare ``except:``, a generator's finalizer, where Python only
    prints "Exception ignored") is remembered by the latch: the gate check starts no run after it."""
    from pytest_gpuperf.util.interrupt_latch import Latch

    root, bl = project
    session = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)  # this test session's own latch must not see it
    latch = Latch()
    assert latch.install()
    try:
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:  # swallowed, as third-party code does
            pass
        with pytest.raises(KeyboardInterrupt):
            gc.gatecheck(device=DEV, out=tmp_path / "g.json", aa=2, plant_list=[], tries=0, baseline_dir=str(bl),
                         results_dir=tmp_path / "runs", commit="x", append=False, fresh_first=False, cwd=root,
                         echo=lambda line: None, checkpoint=latch.check)
    finally:
        latch.uninstall()
        for sig, handler in session.items():
            signal.signal(sig, handler)
    assert not (tmp_path / "runs" / "aa-1.json").exists() and not (tmp_path / "g.json").exists()


def test_an_undetected_plant_fails_the_gate_check(project, tmp_path):
    """A plant the gate misses is reported: a planted 'missing' of a metric nobody records is not caught. (No
    timing is judged: no A/A run, and the ghost metric is never recorded whatever the copy reads; so it runs side
    by side with the other tests, not among the quiet_host ones.)"""
    root, bl = project
    ghost = gc.Plant("missing", "tiny.no.such.metric", "tiny.no.such.metric", ("suites/test_tiny.py",))
    doc = gc.gatecheck(device=DEV, out=tmp_path / "g.json", aa=0, plant_list=[ghost], tries=1, baseline_dir=str(bl),
                       results_dir=tmp_path / "runs", commit="x", append=False, fresh_first=False, cwd=root,
                       echo=lambda line: None)
    passed, problems = gc.verdict(doc)
    assert not passed and problems == ["plant missing=tiny.no.such.metric on tiny.no.such.metric: caught 0 of 1"]


@pytest.mark.quiet_host
def test_memory_plant_is_caught_on_the_copy_suite(tmp_path):
    """The repository's copy test with the memory plant: each copy is followed by a spin of 3x its unplanted
    time, its info says so, and the gate (baseline from an unchanged run) calls it a regression."""
    bl, runs = tmp_path / "bl", tmp_path / "runs"
    sel = ("suites/test_memory.py", "-k", "copy_bandwidth and 16MiB")
    o = gc.run_pytest(DEV, [*sel, "--gpuperf-update-baselines"], runs / "u.json", runs / "u.log", baseline_dir=str(bl),
                      cwd=REPO)
    assert o.exit == 0, o.log.read_text()
    plant = gc.Plant("memory", "3", "memory.copy.bandwidth.16MiB", sel)
    doc = gc.gatecheck(device=DEV, out=tmp_path / "g.json", aa=0, plant_list=[plant], tries=1, baseline_dir=str(bl),
                       results_dir=runs, commit="x", append=False, fresh_first=False, cwd=REPO, echo=lambda line: None)
    (p,) = doc["planted"]
    (m,) = [m for m in json.loads((runs / "plant-memory-1.json").read_text())["metrics"]
            if m["name"] == "memory.copy.bandwidth.16MiB"]
    assert m["info"]["planted_slowdown"] == pytest.approx(3.0)
    assert "planted_slowdown" not in m.get("identity", {})  # a plant is recorded, never part of what is compared
    if _host_busy(runs / "plant-memory-1.json", "memory.copy.bandwidth.16MiB"):  # never a pass: not judged
        assert p["verdicts"] == ["contended"] and p["detected"] == 0, p
        pytest.skip(f"other work held this host's cores through the planted run (HOST TOO BUSY TO GATE, exit "
                    f"{exits.HOST_TOO_BUSY}): the 4x plant read 'contended', not judged; run on a quieter host")
    assert p["verdicts"] == ["regressed"] and p["detected"] == 1, p


def test_node_id_of_a_baseline_test_is_what_a_run_collects(tmp_path):
    """The baseline's device-free test id, with the device put back, names a test pytest collects."""
    ids = [gc.node_id("suites/test_memory.py::test_copy_bandwidth[16MiB]", DEV),
           gc.node_id("suites/test_memory_hierarchy.py::test_launch_overhead_vs_grid", DEV)]
    assert ids == ["suites/test_memory.py::test_copy_bandwidth[opencl:0-16MiB]",
                   "suites/test_memory_hierarchy.py::test_launch_overhead_vs_grid[opencl:0]"]
    o = gc.run_pytest(DEV, [*ids, "--collect-only"], tmp_path / "r.json", tmp_path / "r.log", baseline_dir=None,
                      cwd=REPO)
    assert o.exit == 0 and "2 tests collected" in o.log.read_text(), o.log.read_text()


def test_choose_plants():
    recorded = {"accuracy.fp32.cos.max_ulp": "suites/test_accuracy_math.py::test_math_function[cos-fp32]"}
    assert [p.kind for p in gc.choose_plants(None, True)] == ["memory", "compute", "ulp", "missing"]
    assert gc.choose_plants(["none"], True) == []
    mem, ulp, gone = gc.choose_plants(["memory=0.5", "ulp=cos", "missing=x.y"], False, recorded, spec="cuda:0")
    assert (mem.size, mem.metric) == (0.5, "memory.copy.bandwidth.1GiB")
    assert ulp.metric == "accuracy.fp32.cos.max_ulp"
    assert ulp.tests == ("suites/test_accuracy_math.py::test_math_function[cuda:0-cos-fp32]",)
    assert (gone.metric, gone.tests) == ("x.y", ("suites/",))
    (own,) = gc.choose_plants(["missing=my.metric"], True, own_tests=("test_my_kernel.py",))
    assert own.tests == ("test_my_kernel.py",)  # the gate check of your own tests plants in them
    (comp,) = gc.choose_plants(["compute"], True)
    assert comp.size == 1.2  # a CPU device's default: the smallest compute slowdown its noise lets it catch
    # a compute or memory plant in a gate check of your own tests lands in them, and any of their metrics catches it
    mine, slow = gc.choose_plants(["compute=3", "memory=0.5"], True, own_tests=("test_my_kernel.py",))
    assert (mine.tests, mine.metric, slow.tests, slow.metric) == (("test_my_kernel.py",), gc.ANY_METRIC,
                                                                  ("test_my_kernel.py",), gc.ANY_METRIC)
    # judged on a real planted run (the H200's fp32 chains slower, caught) and its A/A run (nothing regressed)
    from pytest_gpuperf.schemas.results_doc import ResultsDocument
    saved = REPO / "results" / "nvidia-h200" / "gatecheck-04e740c"
    caught = gc.RunOutcome(1, ResultsDocument.load(saved / "plant-compute-1.json.xz"), 1.0, saved / "x.log", saved / "x")
    hit, said = gc.detected(mine, caught)  # the plant slows the whole fp32 chain group, each figure of it caught
    assert hit and said.startswith("regressed: ") and "latency.fp32.fma.cycles" in said
    assert gc.realized(mine, caught) is None  # no one target to read a move off
    clean = gc.RunOutcome(0, ResultsDocument.load(saved / "aa-1.json.xz"), 1.0, saved / "x.log", saved / "x")
    hit, said = gc.detected(mine, clean)
    assert not hit and said.startswith("no metric regressed (")


@pytest.mark.parametrize("argv, message", [
    (["--plant", "bogus"], "--plant 'bogus': use KIND or KIND=ARG with KIND one of"),
    (["--plant", "memory=fast"], "--plant 'memory=fast': memory takes the added share of work, a number in (0, 10) such as 0.05"),
    (["--aa", "-1"], "--aa and --tries must be non-negative"),
])
def test_cli_errors_are_one_line(tmp_path, capsys, argv, message):
    code = main(["gatecheck", "--device", DEV, "--out", str(tmp_path / "g.json"), "--results-dir", str(tmp_path), *argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("gpuperf baseline: ") and message in err, err


def test_cli_refuses_to_extend_a_foreign_file(tmp_path, capsys):
    out = tmp_path / "g.json"
    out.write_text("{not json")
    argv = ["gatecheck", "--device", DEV, "--out", str(out), "--results-dir", str(tmp_path), "--plant", "none"]
    assert main([*argv, "--aa", "0"]) == 2
    assert "exists; pass --append" in capsys.readouterr().err
    assert main([*argv, "--aa", "0", "--append"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not valid JSON" in err and "move it aside" in err
    assert out.read_text() == "{not json"  # never overwritten


def test_appended_runs_keep_the_number_of_their_results_files():
    """A run whose earlier index was taken by a killed run's log (``aa-1.log`` without a result) is
    ``aa-2``: appended later, it stays run 2, and the next is run 3, as their files are named."""
    from pytest_gpuperf.gatecheck.run import merge

    dev = {"key": "card"}
    first = {"device": dev, "commit": "a", "aa": [{"run": 2, "results": "aa-2.json"}], "planted": []}
    second = {"device": dev, "commit": "a", "aa": [{"run": 3, "results": "aa-3.json"}], "planted": []}
    doc = merge(first, second)
    assert [(r["run"], r["results"]) for r in doc["aa"]] == [(2, "aa-2.json"), (3, "aa-3.json")]
    # runs from another folder whose numbers the old file already holds are numbered after it
    doc = merge(doc, {"device": dev, "commit": "b", "aa": [{"run": 1, "results": "aa-1.json"}], "planted": []})
    assert [r["run"] for r in doc["aa"]] == [2, 3, 4]


def test_a_run_that_recorded_nothing_says_why_from_its_log(tmp_path, capsys):
    """An A/A run that ends before measuring anything (here pytest cannot find the file it was given) is named
    with the lines of its log that say why, not with its exit status alone."""
    argv = ["gatecheck", "--device", DEV, "--out", str(tmp_path / "g.json"), "--results-dir", str(tmp_path),
            "--plant", "none", "--aa", "1", "--", "suites/test_no_such_suite.py"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "A/A run 1: 0 metrics, exit 4" in out and "it recorded nothing; from " in out, out
    assert "test_no_such_suite.py" in out.split("it recorded nothing")[1], out


def test_why_nothing_keeps_the_first_lines_of_each_kind_and_the_last(tmp_path):
    log = tmp_path / "run.log"
    log.write_text("$ python -m pytest\n" + "".join(f"ERROR collecting test_{i}.py\n" for i in range(9))
                   + "noise\n!!!!!!! Interrupted: 9 errors during collection !!!!!!!\n")
    lines = gc.why_nothing(log, limit=4)
    assert lines == ["ERROR collecting test_0.py", "ERROR collecting test_1.py", "ERROR collecting test_2.py",
                     "!!!!!!! Interrupted: 9 errors during collection !!!!!!!"]
    assert gc.why_nothing(tmp_path / "absent.log")[0].startswith("its log ")


def test_appending_without_aa_tops_this_commits_runs_up_to_three():
    """``--append`` without ``--aa`` (adding plants to a file) makes only the A/A runs this commit still lacks; a
    given ``--aa`` is the number to make, as before; a new file gets three."""
    file = {"aa": [{"run": 1, "commit": "c"}, {"run": 2, "commit": "b"}]}
    assert gc.aa_of(file, "c") == 1 and gc.aa_to_make(None, file, "c") == gc.DEFAULT_AA - 1 == 2
    file["aa"] += [{"run": 3, "commit": "c"}, {"run": 4, "commit": "c"}, {"run": 5, "commit": "c"}]
    assert gc.aa_to_make(None, file, "c") == 0  # four of this commit: none more
    assert gc.aa_to_make(2, file, "c") == 2 and gc.aa_to_make(0, None, "c") == 0
    assert gc.aa_to_make(None, None, "c") == gc.DEFAULT_AA


def test_an_a_a_run_names_the_metrics_it_could_not_judge(project, tmp_path, monkeypatch):
    """A metric whose baseline entry was measured another way (another identity) reads ``incomparable``: the run is
    clean, yet that metric was not judged, and the gate check says which metrics and how to mend them. Each run
    also records whether the runs' cache was empty as it started (a first run's time), here a folder of its own."""
    root, bl = project
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("GPUPERF_CACHE", str(cache))
    other = tmp_path / "bl"
    shutil.copytree(bl, other)
    (path,) = other.glob("*.json")
    doc = json.loads(path.read_text())
    (section,) = doc["backends"].values()
    section["metrics"]["tiny.copy.credited_bytes"]["identity"] = {"bytes": "counted another way"}
    path.write_text(json.dumps(doc))
    lines: list[str] = []
    out = gc.gatecheck(device=DEV, out=tmp_path / "gatecheck.json", baseline_dir=str(other),
                       results_dir=tmp_path / "runs", cwd=root, echo=lines.append, aa=1, plant_list=[], tries=0,
                       commit="abc1234", append=False, fresh_first=False)
    (aa,) = out["aa"]
    assert aa["incomparable"] == ["tiny.copy.credited_bytes"], aa
    assert out["detection"]["aa"]["incomparable"] == ["tiny.copy.credited_bytes"]
    assert any(line.startswith("A/A run 1: 2 metrics")
               and line.endswith(" s with an empty cache, 1 incomparable (not judged)") for line in lines), lines
    (cache / "tuning").mkdir(exist_ok=True)
    (cache / "tuning" / "entry.json").write_text("{}")
    again = gc.gatecheck(device=DEV, out=tmp_path / "gatecheck.json", baseline_dir=str(other),
                         results_dir=tmp_path / "runs", cwd=root, echo=lines.append, aa=1, plant_list=[], tries=0,
                         commit="abc1234", append=True, fresh_first=False)
    assert [r["cache"] for r in again["aa"]] == ["empty", "warm"]
