"""Bad and concurrently written baseline files (issue 12): real files, real processes, the real CLI (its
entry point in this interpreter where only its statuses and messages are checked: ``suite_support.
gpuperf_in_process``; in a process of its own once, on the shipped baselines).

Each test reproduces one reported failure: duplicated metric names accepted (the last copy won and a
later update kept the bogus one), wrong types that ``check`` passed and the run then crashed on,
``check`` silent on a missing path and stopping at the first bad file, two updaters losing each
other's entries, temporary files of killed writes never cleaned up, a stale ``runs`` count.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pytest_gpuperf import BASELINE_SCHEMA
from pytest_gpuperf.baselines import BaselineFile, load, update
from pytest_gpuperf.devices import discover
from pytest_gpuperf.errors import BaselineFileError
from suite_support import gpuperf_in_process, kill_mid_write

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
ENTRY = '{"value": %s, "better": "lower", "tolerance": {"rel": 0.1}}'


def _file(directory: Path, metrics: str, name: str = "dev", **top: str) -> Path:
    """A baseline file written as text, so it can hold what json.dumps never writes (duplicate keys)."""
    device = top.get("device", '{"key": "%s"}' % name)
    prov = top.get("provenance", '{"driver": "1"}')
    path = directory / f"{name}.json"
    path.write_text('{"schema": "%s", "device": %s, "backends": {"opencl": {"provenance": %s, "metrics": {%s}}}}'
                    % (BASELINE_SCHEMA, device, prov, metrics))
    return path


def _check(capsys: pytest.CaptureFixture, *paths: object) -> subprocess.CompletedProcess:
    """``gpuperf baseline check PATHS`` through the CLI's entry point in this interpreter."""
    code, out, err = gpuperf_in_process(capsys, "baseline", "check", *map(str, paths))
    return subprocess.CompletedProcess(["gpuperf", "baseline", "check"], code, out, err)


# ---- validation ----------------------------------------------------------------------------------
def test_duplicate_metric_name_is_refused_and_never_half_kept(tmp_path, capsys):
    path = _file(tmp_path, f'"a.b": {ENTRY % 1.0}, "a.b": {ENTRY % 999.0}')
    before = path.read_text()
    with pytest.raises(BaselineFileError, match=r"metrics: key 'a.b' appears more than once"):
        load(tmp_path, "dev")
    result = _check(capsys, path)
    assert result.returncode == 1 and "appears more than once" in result.stdout
    with pytest.raises(BaselineFileError):  # an update re-reads the file under its lock: refused too
        update(BaselineFile(path, {}), "opencl", {"key": "dev", "name": "Dev"}, {}, {"c.d": json.loads(ENTRY % 2)})
    assert path.read_text() == before


def test_duplicate_key_inside_an_entry_is_named(tmp_path):
    _file(tmp_path, '"a.b": {"value": 1.0, "better": "lower", "value": 2.0}')
    with pytest.raises(BaselineFileError, match=r"backends.opencl.metrics\['a.b'\]: key 'value' appears more"):
        load(tmp_path, "dev")


@pytest.mark.parametrize("top,where", [
    ({"provenance": '"driver 550"'}, 'backends.opencl.provenance: "driver 550" is not of type "object"'),
    ({"device": '"nvidia"'}, 'device: "nvidia" is not of type "object"'),
])
def test_wrong_types_outside_entries_are_refused(tmp_path, top, where, capsys):
    path = _file(tmp_path, f'"a.b": {ENTRY % 1.0}', **top)
    with pytest.raises(BaselineFileError, match=where.replace(".", r"\.").replace("'", "'")):
        load(tmp_path, "dev")
    result = _check(capsys, path)
    assert result.returncode == 1 and where in result.stdout


def test_every_problem_of_every_file_is_reported(tmp_path, capsys):
    _file(tmp_path, '"a.b": {"value": "fast", "better": "smaller"}, "c.d": {"value": 1, "better": "lower", '
                    '"runs": "three"}', name="one")
    (tmp_path / "two.json").write_text('{"schema": "pytest-gpuperf-baseline/1", "backends": {')  # truncated
    _file(tmp_path, f'"a.b": {ENTRY % 1.0}', name="three")
    result = _check(capsys, tmp_path)
    assert result.returncode == 1
    out = result.stdout
    assert "FAIL" in out and f"ok {tmp_path / 'three.json'}" in out
    for problem in ("value must be a finite number", "better must be one of", 'runs: "three" is not of type',
                    "invalid JSON at line 1"):
        assert problem in out, out
    assert "2 of 3 file(s) malformed" in result.stderr


def test_check_of_a_missing_path_or_an_empty_directory_exits_2(tmp_path, capsys):
    result = _check(capsys, "/does/not/exist")
    assert result.returncode == 2 and "/does/not/exist does not exist" in result.stderr
    result = _check(capsys, tmp_path)
    assert result.returncode == 2 and "holds no baseline files" in result.stderr


def test_committed_baselines_pass_check():
    """In a process of its own: the console command's exit status, not only the entry point's."""
    result = subprocess.run([sys.executable, "-m", "pytest_gpuperf.cli", "baseline", "check",
                             str(ROOT / "pytest_gpuperf" / "baselines" / "reviewed")],
                            env=ENV, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


# ---- updates -------------------------------------------------------------------------------------
UPDATER = textwrap.dedent('''
    import sys, time
    from pathlib import Path
    from pytest_gpuperf.baselines import load, update
    directory, wid, rounds, go = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    while not go.exists():
        time.sleep(0.005)
    for i in range(rounds):
        baseline = load(directory, "dev")  # as a session does at start-up, long before it writes
        time.sleep(0.002)
        update(baseline, "opencl", {"key": "dev", "name": "Dev"}, {"driver": str(wid)},
               {f"w{wid}.m{i}": {"value": float(wid * 1000 + i), "better": "lower", "tolerance": {"rel": 0.1}}})
''')


def test_four_concurrent_updaters_lose_nothing(tmp_path):
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", UPDATER, str(tmp_path), str(w), "25", str(go)], env=ENV,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for w in range(4)]
    go.write_text("go")
    outs = [p.communicate(timeout=240)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    metrics = load(tmp_path, "dev").metrics("opencl")
    want = {f"w{w}.m{i}": float(w * 1000 + i) for w in range(4) for i in range(25)}
    assert {k: v["value"] for k, v in metrics.items()} == want, f"lost {sorted(set(want) - set(metrics))[:10]}"
    assert not list(tmp_path.glob(".dev.json.*.tmp"))


KILLED = textwrap.dedent('''
    import sys, time
    from pytest_gpuperf.util.atomic import atomic_write_chunks
    def chunks():
        yield b'{"partial": ' + b'1' * 1000
        open(sys.argv[2], 'w').close()
        time.sleep(60)
        yield b'}'
    atomic_write_chunks(sys.argv[1], chunks())
''')


def test_temp_file_of_a_killed_write_is_removed_by_the_next_update(tmp_path):
    _file(tmp_path, f'"a.b": {ENTRY % 1.0}')
    flag = tmp_path / "mid-write"
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(tmp_path / "dev.json"), str(flag)], env=ENV)
    kill_mid_write(proc, flag)
    assert list(tmp_path.glob(".dev.json.*.tmp")), "the killed write left its temporary file"
    update(load(tmp_path, "dev"), "opencl", {"key": "dev", "name": "Dev"}, {"driver": "2"},
           {"c.d": {"value": 2.0, "better": "lower"}})
    assert not list(tmp_path.glob(".dev.json.*.tmp"))
    assert set(load(tmp_path, "dev").metrics("opencl")) == {"a.b", "c.d"}


def test_rewritten_entry_drops_the_stale_runs_count(tmp_path):
    path = _file(tmp_path, '"a.b": {"value": 1.0, "better": "lower", "runs": 3, "run_values": [1, 1.1, 0.9], '
                           '"note": "kept"}')
    update(load(tmp_path, "dev"), "opencl", {"key": "dev", "name": "Dev"}, {"driver": "2"},
           {"a.b": {"value": 1.5, "better": "lower"}})
    entry = json.loads(path.read_text())["backends"]["opencl"]["metrics"]["a.b"]
    assert entry == {"value": 1.5, "better": "lower", "note": "kept"}


# ---- whole sessions ----------------------------------------------------------------------------------
SESSION = textwrap.dedent('''
    import os, time
    from pathlib import Path
    import pytest

    @pytest.mark.parametrize("part", range(4), ids=["copy", "launch", "fill", "chase"])
    def test_part(gpu_device, gpuperf_record, part):
        # every session loaded the baseline at start-up; wait until all four are running, then record
        Path(f"ready-{part}").write_text("x")
        deadline = time.time() + 120
        while len(list(Path(".").glob("ready-*"))) < 4:
            assert time.time() < deadline, "the other sessions never started"
            time.sleep(0.05)
        gpuperf_record(f"part{part}.count", part + 1, "items", better="exact")
''')


@pytest.mark.skipif(not any(d.backend == "opencl" for d in discover().devices),
                    reason="no OpenCL device (install pocl-opencl-icd)")
def test_four_concurrent_sessions_updating_one_baseline_and_history_lose_nothing(tmp_path):
    """The reported case, whole: sessions selecting different tests (``-k``) update one baseline file
    and append to one history at the same time; every session's entries and history line survive."""
    (tmp_path / "test_parts.py").write_text(SESSION)
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--gpuperf-device=opencl:0",
            "--gpuperf-update-baselines", f"--gpuperf-baseline-dir={tmp_path / 'bl'}",
            f"--gpuperf-history={tmp_path / 'h.jsonl'}", "test_parts.py"]
    procs = [subprocess.Popen([*base, "-k", part], cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for part in ("copy", "launch", "fill", "chase")]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    (path,) = (tmp_path / "bl").glob("*.json")
    metrics = json.loads(path.read_text())["backends"]["opencl"]["metrics"]
    assert {name: e["value"] for name, e in metrics.items()} == {f"part{i}.count": i + 1.0 for i in range(4)}
    lines = (tmp_path / "h.jsonl").read_text().splitlines()
    assert sorted(next(iter(json.loads(x)["metrics"])) for x in lines) == [f"part{i}.count" for i in range(4)]


@pytest.mark.skipif(not any(d.backend == "opencl" for d in discover().devices),
                    reason="no OpenCL device (install pocl-opencl-icd)")
def test_malformed_baseline_is_reported_once_per_run_not_per_test(tmp_path):
    """A truncated file used to print its message and traceback once per test (399 lines for one file)."""
    (tmp_path / "test_many.py").write_text(textwrap.dedent('''
        import pytest
        @pytest.mark.parametrize("i", range(20))
        def test_many(gpu_device, i):
            pass
    '''))
    key = next(d.key for d in discover().devices if d.backend == "opencl")
    (tmp_path / "bl").mkdir()
    (tmp_path / "bl" / f"{key}.json").write_text('{"schema": "pytest-gpuperf-baseline/1", "backends": {"op')
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--gpuperf-device=opencl:0",
                             f"--gpuperf-baseline-dir={tmp_path / 'bl'}", "test_many.py"], cwd=tmp_path, env=ENV,
                            capture_output=True, text=True, timeout=120)
    out = result.stdout + result.stderr
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, out
    assert out.count("malformed baseline file") == 1 and "Traceback" not in out
    assert "invalid JSON at line 1" in out


def _from_results(capsys: pytest.CaptureFixture, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """``gpuperf baseline from-results`` through the CLI's entry point in this interpreter."""
    code, out, err = gpuperf_in_process(capsys, "baseline", "from-results", f"--dir={tmp_path / 'bl'}", *args)
    return subprocess.CompletedProcess(["gpuperf", "baseline", "from-results"], code, out, err)


@pytest.mark.parametrize("content,message", [
    (None, "cannot be read (No such file or directory)"),
    ("{trunc", "not a JSON results file"),
    ('{"x": 1}', "not a results file"),
    ('{"device": {"key": "k", "backend": "opencl"}, "metrics": [{"value": 1}]}', "lack a field from-results needs"),
])
def test_from_results_with_a_bad_file_is_one_line(tmp_path, content, message, capsys):
    path = tmp_path / "r.json"
    if content is not None:
        path.write_text(content)
    result = _from_results(capsys, tmp_path, str(path))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert not (tmp_path / "bl").exists()


@pytest.mark.parametrize("args", [["--k=nan"], ["--k=-1"], ["--floor", "-1", "0.1"]])
def test_from_results_refuses_bad_numbers(tmp_path, args, capsys):
    result = _from_results(capsys, tmp_path, *args, "r.json")
    assert result.returncode == 2 and "must be a" in result.stderr and "Traceback" not in result.stderr


def test_unlocked_writes_remove_only_old_temp_files(tmp_path):
    """Results files have no lock: a leftover temp file is removed once it is older than any live write
    could be, and a fresh one (perhaps a concurrent writer's) is left alone."""
    from pytest_gpuperf.util.atomic import STALE_AFTER_S, atomic_write_json

    old, fresh = tmp_path / ".r.json.old1.tmp", tmp_path / ".r.json.new1.tmp"
    old.write_text("torn")
    fresh.write_text("in progress")
    past = time.time() - STALE_AFTER_S - 60
    os.utime(old, (past, past))
    atomic_write_json(tmp_path / "r.json", {"ok": True})
    assert not old.exists() and fresh.exists()
    assert json.loads((tmp_path / "r.json").read_text()) == {"ok": True}
