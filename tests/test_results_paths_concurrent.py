"""Where a key becomes a path, and two runs told to write one results file.

A device key reaches a path in ``--gpuperf-json``'s ``{key}``, in ``baselines/<key>.json`` and in a power
corpus's folder: each goes through :func:`pytest_gpuperf.paths.safe_name`, so a key such as ``../../x``
is an error, never a file outside the folder. Two runs at once with the same ``--gpuperf-json`` path
(real processes on PoCL, made to overlap for certain) both keep their results: the second to finish
writes ``-2``, as ``gpuperf offline collect`` keeps ``-2``; a later run still replaces an earlier file."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_gpuperf.baselines.baseline_file import path_for
from pytest_gpuperf.devices import discover
from pytest_gpuperf.studies.static_power.power_model import corpus_path
from pytest_gpuperf.paths import UnsafeNameError, safe_name
from pytest_gpuperf.session import results_path

ROOT = Path(__file__).resolve().parents[1]
CL = [d for d in discover().devices if d.backend == "opencl"]
BAD_KEYS = ["../../x", "/abs/path", "..", ".", "a/b", "", "a\\b", "x" * 201, None, 5]


@pytest.mark.parametrize("key", BAD_KEYS)
def test_every_place_a_key_becomes_a_path_refuses_a_bad_key(tmp_path, key):
    with pytest.raises(UnsafeNameError, match="cannot name a file or folder"):
        safe_name(key)
    with pytest.raises(UnsafeNameError):
        path_for(tmp_path, key)
    with pytest.raises(UnsafeNameError):
        corpus_path(tmp_path, key, "cuda")
    if CL:
        info = dataclasses.replace(CL[0], key=key)
        for template, several in ((str(tmp_path / "{key}" / "r.json"), False), (str(tmp_path / "r.json"), True)):
            with pytest.raises(UnsafeNameError):
                results_path(template, info, several)
    assert list(tmp_path.iterdir()) == []


def test_a_real_device_key_passes() -> None:
    for info in discover().devices:
        assert safe_name(info.key) == info.key
    assert safe_name("nvidia-h100-80gb-hbm3") == "nvidia-h100-80gb-hbm3"


#: each run records its own value, then waits at the end of its session until the other run got there too:
#: both have measured before either writes, so they overlap for certain
PROJECT = textwrap.dedent('''
    import os

    def test_records(gpu_device, gpuperf_record):
        gpuperf_record("concurrent.value", float(os.environ["VALUE"]), "us")
''')
CONFTEST = textwrap.dedent('''
    import os
    import time
    from pathlib import Path

    import pytest

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(session):
        if not os.environ.get("OTHER"):
            return
        Path(os.environ["MINE"]).touch()
        deadline = time.monotonic() + 120
        while not Path(os.environ["OTHER"]).exists() and time.monotonic() < deadline:
            time.sleep(0.01)
''')


def _start(tmp_path: Path, value: int, mine: str = "", other: str = "") -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "VALUE": str(value), "MINE": str(tmp_path / mine), "OTHER": str(tmp_path / other) if other else ""}
    return subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--gpuperf-device={CL[0].spec}",
                             f"--gpuperf-baseline-dir={tmp_path / 'bl'}", f"--gpuperf-json={tmp_path / 'out' / 'r.json'}",
                             "test_project.py"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _values(folder: Path) -> dict[str, float]:
    return {p.name: json.loads(p.read_text())["metrics"][0]["value"] for p in sorted(folder.glob("r*.json"))}


@pytest.mark.skipif(not CL, reason="no OpenCL device (install pocl-opencl-icd)")
def test_two_runs_at_once_with_one_results_path_keep_both(tmp_path):
    (tmp_path / "test_project.py").write_text(PROJECT)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "bl").mkdir()
    procs = [_start(tmp_path, 1, "one", "two"), _start(tmp_path, 2, "two", "one")]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    values = _values(tmp_path / "out")
    assert sorted(values) == ["r-2.json", "r.json"] and sorted(values.values()) == [1.0, 2.0], outs
    second = next(o for o in outs if "r-2.json" in o)
    assert f"gpuperf wrote {tmp_path / 'out' / 'r-2.json'} (another run wrote {tmp_path / 'out' / 'r.json'}" in second
    # a run after both replaces r.json, as before: only runs at the same time keep -2
    later = _start(tmp_path, 3)
    out = later.communicate(timeout=300)[0]
    assert later.returncode == 0, out
    assert _values(tmp_path / "out") == {"r-2.json": values["r-2.json"], "r.json": 3.0}


ONE_METRIC = '''
def test_work(gpu_device, gpuperf_record):
    gpuperf_record("area.work.us", 12.5, "us", better="lower")
'''


@pytest.mark.skipif(not CL, reason="no OpenCL device (install pocl-opencl-icd)")
def test_json_placeholders_name_each_run_and_n_numbers_them_instead_of_overwriting(pytester, monkeypatch):
    """``{device}``, ``{commit}``, ``{date}`` fill in what tells runs apart; ``{n}`` takes the first number
    whose file does not exist, so a second run never overwrites the first."""
    from pytest_gpuperf.util import jsonio
    from suite_support import baseline_folder

    monkeypatch.setenv("GPUPERF_COMMIT", "0123456789abcdef0123+dirty")
    pytester.makepyfile(ONE_METRIC)
    args = ["--gpuperf-device=opencl:0", f"--gpuperf-baseline-dir={baseline_folder(pytester.path)}"]
    for _ in range(2):
        pytester.runpytest(*args, "--gpuperf-json=results/{device}/{commit}/run{n}.json").assert_outcomes(passed=1)
    folder = pytester.path / "results" / f"{CL[0].key}-opencl" / "0123456789ab-dirty"
    assert sorted(f.name for f in folder.iterdir() if f.suffix == ".json") == ["run1.json", "run2.json"]
    ids = {jsonio.read_json(folder / f"run{n}.json")["run"]["id"] for n in (1, 2)}
    assert len(ids) == 2  # two runs, neither overwritten
    pytester.runpytest(*args, "--gpuperf-json=dated/{date}.json").assert_outcomes(passed=1)
    (f,) = (pytester.path / "dated").glob("*.json")
    started = jsonio.read_json(f)["run"]["started"]  # 2026-12-02T04:05:06+00:00 → 20261202T040506Z
    assert f.stem == started[:19].replace("-", "").replace(":", "") + "Z", (f.name, started)
