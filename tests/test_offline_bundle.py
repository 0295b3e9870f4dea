"""An offline host's round trip on this machine's OpenCL device: ``gpuperf offline bundle`` writes the
plugin wheel, the wheels the host lacks and ``run.sh``; ``run.sh`` installs from the bundle alone into a
virtual environment, runs the shipped suites and packs ``OUT.tgz``; ``gpuperf offline collect`` puts
its results under ``results/<key>/`` without overwriting anything and imports them into a history."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_gpuperf.cli import main as gpuperf
from pytest_gpuperf.devices import discover
from pytest_gpuperf.offline.bundle import manifest_of, requirements
from pytest_gpuperf.util import jsonio

CL = [d for d in discover().devices if d.backend == "opencl"]
pytestmark = pytest.mark.skipif(not CL, reason="no OpenCL device (install pocl-opencl-icd)")


def test_bundle_run_collect(tmp_path: Path, checkout_wheel: Path) -> None:
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    have = [r.split(">")[0].split("=")[0] for r in requirements([])]  # this machine has them all: only the plugin
    bundle = tmp_path / "bundle"
    # the wheel the bundle builds without --wheel, built once per session (conftest.checkout_wheel)
    args = ["offline", "bundle", str(bundle), "--python", here, "--wheel", str(checkout_wheel)] + [
        a for h in have for a in ("--host-has", h)]
    assert gpuperf(args) == 0
    manifest = manifest_of(bundle)
    assert manifest["plugin"]["wheel"] == checkout_wheel.name and manifest["wheels"] == []
    assert (bundle / "wheels" / checkout_wheel.name).read_bytes() == checkout_wheel.read_bytes()
    out = tmp_path / "out"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST_")) and k != "GPUPERF_CACHE"},
           "GPUPERF_VENV": str(tmp_path / "venv"), "GPUPERF_PYTHON": sys.executable, "GPUPERF_TAG": "host-1",
           "GPUPERF_COMMIT": "abc1234"}
    work = tmp_path / "work"
    work.mkdir()
    started = time.monotonic()
    proc = subprocess.run(["bash", str(bundle / "run.sh"), str(out), "--gpuperf-device=0", "-k",
                           "test_math_function and sin- and fp32"], cwd=work, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    # what one short test and the start-up took here (on a busy host, far more than on a quiet one): the batch
    # limit below must leave the first tuning test time to finish, never the whole selection below
    limit = int(min(45, max(10, 1.5 * (time.monotonic() - started))))
    site = subprocess.run([str(tmp_path / "venv" / "bin" / "python"), "-c",
                           "import pytest_gpuperf; print(pytest_gpuperf.__file__)"], capture_output=True, text=True,
                          cwd=work, env=env)  # the host's environment: no PYTHONPATH into a checkout
    assert str(tmp_path / "venv") in site.stdout  # the bundle's plugin, not this checkout's
    assert (bundle / "cache").is_dir()  # what a first run stores, beside the bundle for every host that runs it
    # CuPy's compiled kernels are kept in the same cache, unless the host names a folder of its own
    assert 'export CUPY_CACHE_DIR="${CUPY_CACHE_DIR:-$GPUPERF_CACHE/cupy}"' in (bundle / "run.sh").read_text()
    archive = Path(f"{out}.tgz")
    assert archive.is_file()
    import tarfile
    with tarfile.open(archive) as tar:  # the writers' lock files stay on the host
        assert not [n for n in tar.getnames() if ".gpuperf-locks" in n], tar.getnames()
    into, history = tmp_path / "results", tmp_path / "h.db"
    for _ in range(2):  # collecting twice keeps one copy of an identical file
        assert gpuperf(["offline", "collect", str(archive), "--into", str(into), "--history", str(history)]) == 0
    (placed,) = into.glob("*/host-1-opencl.json.xz")  # evidence is stored compressed
    doc = jsonio.read_json(placed)
    assert doc["environment"]["commit"] == "abc1234"
    assert any(m["name"] == "accuracy.fp32.sin.max_ulp" for m in doc["metrics"])
    assert list(into.glob("*/logs/host-1.log.xz"))
    assert gpuperf(["offline", "collect", str(tmp_path / "nothing.tgz"), "--into", str(into)]) == 2

    # the gate check on the host (run.sh --gatecheck): its file and runs under OUT/gatecheck/, packed, and
    # collected as one folder of the device key and commit; a later --append call's archive extends it
    gco, gc_archive = tmp_path / "gc", tmp_path / "gc.tgz"
    plant = ["--plant", "missing=accuracy.fp32.sin.max_ulp", "--tries", "1", "--", "-k", "test_math_function and sin- and fp32"]
    for extra in (["--aa", "1"], ["--aa", "0", "--append"]):
        # a time limit far off: run.sh ends with the check, and nothing of its session (the limit's watchdog
        # included) is left holding its output, which this call reads to the end
        proc = subprocess.Popen(["bash", str(bundle / "run.sh"), "--gatecheck", str(gco), *extra, *plant], cwd=work,
                                env={**env, "GPUPERF_TIME_LIMIT": "900"}, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        said, err = proc.communicate(timeout=600)
        left = subprocess.run(["pgrep", "-a", "-s", str(proc.pid)], capture_output=True, text=True).stdout
        assert proc.returncode == 0 and not left, said[-3000:] + err[-2000:] + left
        if extra[-1] == "1":
            first = gc_archive.with_name("gc-first.tgz")
            first.write_bytes(gc_archive.read_bytes())
        assert gpuperf(["offline", "collect", str(gc_archive), "--into", str(into)]) == 0
    (folder,) = into.glob("*/gatecheck-abc1234*")
    assert folder.name == "gatecheck-abc1234" and folder.parent.name == placed.parent.name
    doc = json.loads((folder / "gatecheck.json").read_text())
    assert doc["commit"] == "abc1234" and [r["run"] for r in doc["aa"]] == [1]
    assert [(p["kind"], p["detected"], p["runs"]) for p in doc["planted"]] == [
        ("missing", 2, ["plant-missing-1", "plant-missing-2"])]  # tries at one commit are summed
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["gatecheck.json"] + [f"{r}.{ext}.xz" for r in ("aa-1", "plant-missing-1", "plant-missing-2")
                              for ext in ("json", "log")])
    # the first call's archive is held already: nothing new, no second folder
    assert gpuperf(["offline", "collect", str(first), "--into", str(into)]) == 0
    assert [p.name for p in into.glob("*/gatecheck-*")] == ["gatecheck-abc1234"]

    # a batch limit interrupts the run: what finished is written, marked interrupted, and packed
    cut = tmp_path / "cut"
    # far more work than the limit allows on any host: the tuning suite, then the latency and math suites
    proc = subprocess.run(["bash", str(bundle / "run.sh"), str(cut), "--gpuperf-device=0", "suites/test_workgroup_tuning.py",
                           "suites/test_latency.py", "suites/test_accuracy_math.py"],
                          cwd=work, env={**env, "GPUPERF_TAG": "cut", "GPUPERF_TIME_LIMIT": str(limit)}, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert Path(f"{cut}.tgz").is_file() and f"GPUPERF_TIME_LIMIT={limit} s reached" in (cut / "cut.log").read_text()
    (doc_path,) = cut.glob("results/*/cut-opencl.json")
    cut_doc = json.loads(doc_path.read_text())
    assert cut_doc["run"]["interrupted"] is True and cut_doc["metrics"]


def test_a_bundle_starts_its_cache_from_a_named_folder_and_refuses_a_missing_one(tmp_path: Path, checkout_wheel: Path) -> None:
    have = [r.split(">")[0].split("=")[0] for r in requirements([])]
    base = ["--python", f"{sys.version_info.major}.{sys.version_info.minor}", "--wheel", str(checkout_wheel)] + [
        a for h in have for a in ("--host-has", h)]
    old = tmp_path / "old-cache" / "tuning"
    old.mkdir(parents=True)
    (old / "entry.json").write_text("{}")
    assert gpuperf(["offline", "bundle", str(tmp_path / "b"), *base, "--cache", str(tmp_path / "old-cache")]) == 0
    assert (tmp_path / "b" / "cache" / "tuning" / "entry.json").read_text() == "{}"
    assert manifest_of(tmp_path / "b")["cache"] == str(tmp_path / "old-cache")
    assert gpuperf(["offline", "bundle", str(tmp_path / "c"), *base, "--cache", str(tmp_path / "nowhere")]) == 2


def test_a_gate_check_brought_back_extends_its_folder_or_gets_its_own(tmp_path: Path) -> None:
    """Collecting gate checks of one commit: an archive holding every file of the folder unchanged and every
    run the folder's file named extends it; one whose run differs from the folder's lands in ``-2``; nothing
    is overwritten; a gate-check file of another schema or an unsafe device key is refused."""
    import tarfile

    from pytest_gpuperf.gatecheck.run import SCHEMA

    def archive(name: str, runs: dict[str, str], aa: list[str], planted: list[str], key: str = "some-card") -> Path:
        out = tmp_path / name
        (out / "gatecheck").mkdir(parents=True)
        doc = {"schema": SCHEMA, "device": {"key": key}, "commit": "abc1234+dirty",
               "aa": [{"run": i + 1, "results": f"{r}.json"} for i, r in enumerate(aa)],
               "planted": [{"kind": "missing", "runs": planted}] if planted else []}
        (out / "gatecheck" / "gatecheck.json").write_text(json.dumps(doc))
        for run, text in runs.items():
            (out / "gatecheck" / f"{run}.json").write_text(text)
            (out / "gatecheck" / f"{run}.log").write_text(f"log of {run}\n")
        with tarfile.open(tmp_path / f"{name}.tgz", "w:gz") as tar:
            tar.add(out, arcname=".")
        return tmp_path / f"{name}.tgz"

    into = tmp_path / "results"
    one = archive("one", {"aa-1": '{"a": 1}'}, ["aa-1"], [])
    assert gpuperf(["offline", "collect", str(one), "--into", str(into)]) == 0
    folder = into / "some-card" / "gatecheck-abc1234-dirty"
    assert sorted(p.name for p in folder.iterdir()) == ["aa-1.json.xz", "aa-1.log.xz", "gatecheck.json"]
    two = archive("two", {"aa-1": '{"a": 1}', "plant-missing-1": '{"p": 1}'}, ["aa-1"], ["plant-missing-1"])
    assert gpuperf(["offline", "collect", str(two), "--into", str(into)]) == 0
    assert len(list(folder.iterdir())) == 5 and "plant-missing-1" in (folder / "gatecheck.json").read_text()
    assert gpuperf(["offline", "collect", str(one), "--into", str(into)]) == 0  # held already
    other = archive("other", {"aa-1": '{"a": 2}'}, ["aa-1"], [])  # another gate check's aa-1: its own folder
    assert gpuperf(["offline", "collect", str(other), "--into", str(into)]) == 0
    assert jsonio.read_json(folder / "aa-1.json.xz") == {"a": 1}
    assert jsonio.read_json(folder.with_name(folder.name + "-2") / "aa-1.json.xz") == {"a": 2}
    shrunk = archive("shrunk", {"aa-1": '{"a": 1}'}, ["aa-1"], [])  # drops a run the folder's file named
    (tmp_path / "shrunk" / "gatecheck" / "aa-1.log").write_text("another log\n")
    with tarfile.open(shrunk, "w:gz") as tar:
        tar.add(tmp_path / "shrunk", arcname=".")
    assert gpuperf(["offline", "collect", str(shrunk), "--into", str(into)]) == 0
    assert sorted(p.name for p in into.glob("some-card/gatecheck-*")) == [
        "gatecheck-abc1234-dirty", "gatecheck-abc1234-dirty-2", "gatecheck-abc1234-dirty-3"]
    for bad, key in (("schema", "some-card"), ("key", "../up")):
        path = archive(f"bad-{bad}", {"aa-1": "{}"}, ["aa-1"], [], key=key)
        if bad == "schema":
            doc_path = tmp_path / "bad-schema" / "gatecheck" / "gatecheck.json"
            doc_path.write_text(json.dumps({**json.loads(doc_path.read_text()), "schema": "other/1"}))
            with tarfile.open(path, "w:gz") as tar:
                tar.add(tmp_path / "bad-schema", arcname=".")
        assert gpuperf(["offline", "collect", str(path), "--into", str(into)]) == 2
    assert not (into.parent / "up").exists() and len(list(into.glob("some-card/gatecheck-*"))) == 3
