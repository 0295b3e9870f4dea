"""A user's first run on a device without a baseline, through pytester on the real OpenCL device: the
summary says so loudly, a required baseline fails with its own exit status, a named baseline folder
that is not there is a usage error, the run records the user's repository commit, and the lookup order
(yours, the reviewed one shipped, the CPU family's deterministic entries) holds."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pytest_gpuperf import exits
from pytest_gpuperf.baselines import lookup, baseline_file
from pytest_gpuperf.devices import discover
from pytest_gpuperf.session import canonical_test, strip_device_id
from pytest_gpuperf.util import provenance
from suite_support import WORK_HEAD, baseline_folder

INV = discover()
CL = [d for d in INV.devices if d.backend == "opencl"]
pytestmark = pytest.mark.skipif(not CL, reason="no OpenCL device (install pocl-opencl-icd)")
DEV = "--gpuperf-device=opencl:0"
FAST = "--gpuperf-budget=0.2"

WORK = WORK_HEAD + '''
def test_work(gpu_device, gpu_kernel, gpu_measure, gpuperf_record):
    k = gpu_kernel.compile(SRC, "work")
    buf = gpu_kernel.to_device(np.ones(64, np.float32))
    m = gpu_measure(k, (64,), (64,), [buf, np.int32(1000)])
    gpuperf_record("kernel.work.ms", m.stats.scaled(1e3).median, "ms", better="lower", stats=m.stats.scaled(1e3))
    gpuperf_record("kernel.count", 3, "items", better="exact")
'''


def _git_repo(path: Path) -> str:
    env = {"GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@x", "GIT_COMMITTER_NAME": "u", "GIT_COMMITTER_EMAIL": "u@x",
           "PATH": "/usr/bin:/bin"}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "user code"]):
        subprocess.run(cmd, cwd=path, check=True, env=env)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, capture_output=True, text=True, check=True).stdout.strip()


def test_first_run_without_baseline_says_so_and_names_the_command(pytester):
    pytester.makepyfile(WORK)
    result = pytester.runpytest(DEV, FAST, f"--gpuperf-baseline-dir={baseline_folder(pytester.path)}")
    assert result.ret == 0
    result.stdout.fnmatch_lines([f"NO BASELINE for {CL[0].key}: 2 recorded, 0 of them gated by documented bounds*",
                                 "*make one*gpuperf baseline init --runs 3 --device opencl:0 --dir bl*"])
    assert "kernel.work.ms" not in result.stdout.str()  # 'new' rows are counted, not listed
    assert "gpuperf opencl:0: 2 new" in result.stdout.str()


def test_required_baseline_fails_with_its_own_exit_status_and_a_github_error(pytester, monkeypatch):
    pytester.makepyfile(WORK)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = pytester.runpytest(DEV, FAST, f"--gpuperf-baseline-dir={baseline_folder(pytester.path)}",
                                "--gpuperf-require-baseline")
    assert result.ret == exits.NO_BASELINE
    out = result.stdout.str()
    assert f"FAIL (NO BASELINE, exit {exits.NO_BASELINE})" in out
    assert f"::error title=gpuperf%3A NO BASELINE for {CL[0].key}" in out


def test_without_requirement_github_gets_a_warning(pytester, monkeypatch):
    pytester.makepyfile(WORK)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = pytester.runpytest(DEV, FAST, f"--gpuperf-baseline-dir={baseline_folder(pytester.path)}")
    assert result.ret == 0
    assert f"::warning title=gpuperf%3A NO BASELINE for {CL[0].key}" in result.stdout.str()


def test_ini_key_requires_a_baseline(pytester):
    pytester.makepyfile(WORK)
    pytester.makeini("[pytest]\ngpuperf_require_baseline = true\n")
    result = pytester.runpytest(DEV, FAST)
    assert result.ret == exits.NO_BASELINE


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_named_baseline_folder_that_is_not_one_is_a_usage_error(pytester, kind):
    pytester.makepyfile(WORK)
    target = pytester.path / "nowhere"
    if kind == "file":
        target.write_text("not a folder")
    result = pytester.runpytest(DEV, FAST, f"--gpuperf-baseline-dir={target}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--gpuperf-baseline-dir" in result.stderr.str()
    assert ("does not exist" if kind == "missing" else "is not a directory") in result.stderr.str()


def test_the_default_folder_may_be_absent_and_an_update_creates_it(pytester):
    pytester.makepyfile(WORK)
    assert pytester.runpytest(DEV, FAST).ret == 0  # ./baselines not there yet: the first run
    assert pytester.runpytest(DEV, FAST, "--gpuperf-update-baselines").ret == 0
    assert (pytester.path / "baselines" / f"{CL[0].key}.json").is_file()
    result = pytester.runpytest(DEV, FAST)
    # gated, not judged: a host whose other work held the CPU device's cores through the timing reads
    # 'contended' and says HOST TOO BUSY TO GATE (its own status), which is not what this test is about
    assert result.ret in (0, exits.HOST_TOO_BUSY) and "NO BASELINE" not in result.stdout.str()
    result.stdout.fnmatch_lines(["gated against your baseline*"])


def test_results_name_the_users_commit_and_the_plugins_apart(pytester):
    pytester.makepyfile(WORK)
    commit = _git_repo(pytester.path)
    out = pytester.path / "r.json"
    pytester.runpytest(DEV, FAST, f"--gpuperf-json={out}")
    env = json.loads(out.read_text())["environment"]
    assert env["commit"] == commit
    assert set(env["plugin"]) == {"version", "commit"} and env["plugin"]["commit"] != commit


def test_shipped_suite_ids_are_the_same_wherever_installed():
    assert canonical_test("pytest_gpuperf/suites/test_memory.py::test_copy[1MiB]") == "suites/test_memory.py::test_copy[1MiB]"
    assert canonical_test("../../v/lib/python3.11/site-packages/pytest_gpuperf/suites/test_x.py::t") == "suites/test_x.py::t"
    assert canonical_test("tests/suites/test_mine.py::t") == "tests/suites/test_mine.py::t"  # a user's own suites
    assert strip_device_id("pytest_gpuperf/suites/t.py::f[opencl:0-a]", "opencl:0") == "suites/t.py::f[a]"


def _write(directory: Path, key: str, metrics: dict) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    doc = {"schema": "pytest-gpuperf-baseline/1", "device": {"key": key, "name": key},
           "backends": {"opencl": {"provenance": {}, "metrics": metrics}}}
    (directory / f"{key}.json").write_text(json.dumps(doc))


def _entry(value: float, unit: str, better: str = "lower") -> dict:
    return {"value": value, "unit": unit, "better": better, "test": "t.py::t", "tolerance": {"abs": 1e-6}}


def test_a_baseline_that_holds_none_of_the_runs_metrics_is_no_baseline(pytester):
    """A baseline of the device's key that holds none of the metrics the run recorded (another suite's) gates
    nothing: the summary says NO BASELINE and whose file holds none of them, and a required baseline fails the run
    with its own status, never a quiet run of 'new' rows; a file that holds one of them is a baseline."""
    pytester.makepyfile(WORK)
    key, folder = CL[0].key, baseline_folder(pytester.path)
    _write(folder, key, {"another.suite.time_us": _entry(1.0, "us")})
    result = pytester.runpytest(DEV, FAST, f"--gpuperf-baseline-dir={folder}")
    assert result.ret == 0
    result.stdout.fnmatch_lines([f"NO BASELINE for {key}: 2 recorded, 0 of them gated by *; your baseline "
                                 f"*{key}.json holds none of them"])
    required = pytester.runpytest(DEV, FAST, f"--gpuperf-baseline-dir={folder}", "--gpuperf-require-baseline")
    assert required.ret == exits.NO_BASELINE
    _write(folder, key, {"kernel.count": {**_entry(3, "items", "exact"), "test": "test_a_baseline_that_holds_none"
                                          "_of_the_runs_metrics_is_no_baseline.py::test_work"}})
    held = pytester.runpytest(DEV, FAST, f"--gpuperf-baseline-dir={folder}", "--gpuperf-require-baseline")
    assert "NO BASELINE" not in held.stdout.str() and held.ret != exits.NO_BASELINE, held.stdout.str()
    held.stdout.fnmatch_lines(["gated against your baseline*"])


def test_lookup_prefers_yours_then_reviewed_and_adds_only_deterministic_family_entries(tmp_path):
    yours, reviewed = tmp_path / "yours", tmp_path / "reviewed"
    _write(reviewed, "dev", {"a.time": _entry(1.0, "us")})
    _write(reviewed, "fam", {"accuracy.fp32.sin.max_ulp": _entry(1.0, "ulp"), "latency.x.cycles": _entry(4, "cycles")})
    src = lookup.resolve(yours, "dev", "opencl", "fam", reviewed_dir=reviewed)
    assert src.origin == "reviewed" and set(src.file.metrics("opencl")) == {"a.time", "accuracy.fp32.sin.max_ulp"}
    assert src.write_path == yours / "dev.json"  # updates go to the user's folder, never the package
    _write(yours, "dev", {"b.time": _entry(2.0, "us")})
    src = lookup.resolve(yours, "dev", "opencl", "fam", reviewed_dir=reviewed)
    assert src.origin == "yours" and set(src.file.metrics("opencl")) == {"b.time", "accuracy.fp32.sin.max_ulp"}
    src = lookup.resolve(yours, "other", "opencl", "fam", reviewed_dir=reviewed)
    assert src.origin == "family" and set(src.file.metrics("opencl")) == {"accuracy.fp32.sin.max_ulp"}
    assert lookup.resolve(yours, "other", "opencl", "", reviewed_dir=reviewed).origin == "none"


def test_the_shipped_family_baseline_is_found_for_this_hosts_pocl():
    """CI's host, whatever its CPU model: PoCL's deterministic figures gate against the family file, or, on a host
    whose exact key has a reviewed baseline shipped, against that file (the family then adds what it lacks)."""
    info = CL[0]
    if not info.key.startswith("pocl-"):
        pytest.skip("not a PoCL device")
    src = lookup.resolve(Path("/nonexistent-user-dir"), info.key, info.backend, info.family_key)
    if info.family_key != "pocl-3-1-debian-llvm-15-0-6-cpu":
        pytest.skip(f"no shipped family baseline for {info.family_key}")
    if src.origin == "reviewed":
        assert Path(src.read[0]).stem == info.key and len(src.file.metrics(info.backend)) > 200
    else:
        assert src.family_count > 200
    assert all(baseline_file.path_for(Path(p).parent, Path(p).stem).is_file() for p in src.read)


def test_gpuperf_run_keeps_the_users_directory_as_rootdir(tmp_path):
    """Naming shipped suite files must not move the rootdir into the installed package."""
    from pytest_gpuperf.suiterun import command

    cmd = command(["suites/test_memory.py", "-k", "copy"], cwd=tmp_path)
    assert f"--rootdir={tmp_path}" in cmd and "--pyargs" not in cmd
    assert any(a.endswith("pytest_gpuperf/suites/test_memory.py") for a in cmd)
    assert "--pyargs" in command(["-k", "copy"], cwd=tmp_path)
    assert command(["--rootdir=/x"], cwd=tmp_path).count("--rootdir=/x") == 1


def test_the_same_suite_test_has_one_id_and_seed_however_it_is_collected(tmp_path):
    """--pyargs (ids relative to the package), named files (ids through site-packages) and the checkout's
    path all record ``suites/<file>::<test>`` and derive the same seed from it, so baselines match."""
    import sys
    import zlib

    from pytest_gpuperf.paths import SUITES

    sel = ["-k", "test_math_function and sin- and fp32", "--gpuperf-device=opencl:0", "-p", "no:cacheprovider"]
    docs = []
    for n, how in enumerate((["--pyargs", "pytest_gpuperf.suites"], [str(SUITES / "test_accuracy_math.py")])):
        out = tmp_path / f"r{n}.json"
        proc = subprocess.run([sys.executable, "-m", "pytest", *how, *sel, f"--gpuperf-json={out}"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)
        assert out.exists(), proc.stdout[-2000:] + proc.stderr[-1000:]
        docs.append({m["name"]: m for m in json.loads(out.read_text())["metrics"]})
    a, b = docs
    m = a["accuracy.fp32.sin.max_ulp"]
    assert m["test"] == "suites/test_accuracy_math.py::test_math_function[sin-fp32]"
    assert m["test"] == b["accuracy.fp32.sin.max_ulp"]["test"]
    assert m["identity"] == b["accuracy.fp32.sin.max_ulp"]["identity"] and "seed" in m["identity"]
    # the seed is the CRC of that device-free id (the plugin's gpuperf_test_id): the same on every card
    assert m["identity"]["seed"] == zlib.crc32(m["test"].encode())


def test_a_test_file_outside_the_folder_it_runs_in_is_named_by_its_path_from_there(pytester):
    """``gpuperf run ../test_x.py`` (the rootdir is the folder it runs in): pytest gives a file outside the rootdir
    no file part in its ids; the run names it by its path from the rootdir, in its results and in the command that
    makes a baseline, which collects it."""
    pytester.makepyfile(test_outside=WORK)
    here = pytester.path / "sub"
    here.mkdir()
    out = here / "r.json"
    result = pytester.runpytest(DEV, FAST, f"--rootdir={here}", f"--gpuperf-baseline-dir={baseline_folder(here)}",
                                f"--gpuperf-json={out}", str(pytester.path / "test_outside.py"))
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*make one*gpuperf baseline init --runs 3 --device opencl:0 --dir * -- ../test_outside.py"])
    tests = [t["test"] for t in json.loads(out.read_text())["tests"]]
    assert tests and all(t.startswith("../test_outside.py::test_work") for t in tests), tests


def test_records_of_a_folder_outside_git_say_they_name_no_commit(pytester, monkeypatch):
    """A run from a copy of the code without ``.git`` (an offline host) and without GPUPERF_COMMIT writes results
    that name no commit: the run says so, and how to name it; from a git checkout it says nothing."""
    pytester.makepyfile(WORK)
    monkeypatch.delenv("GPUPERF_COMMIT", raising=False)
    result = pytester.runpytest(DEV, FAST, f"--gpuperf-json={pytester.path / 'r.json'}")
    result.stdout.fnmatch_lines(["gpuperf: these records name no commit: * is not a git checkout; set GPUPERF_COMMIT*"])
    _git_repo(pytester.path)  # the same folder as a git checkout: its commit is named, nothing said
    provenance.git_commit.cache_clear()  # read once per process: this one ran the first run too
    result = pytester.runpytest(DEV, FAST, f"--gpuperf-json={pytester.path / 'r2.json'}")
    assert "name no commit" not in result.stdout.str()
