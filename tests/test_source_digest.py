"""The kernel source a figure was measured with is part of what makes a baseline entry comparable.

* A kernel's digest covers its source and build options only; a test's ``source_digest`` is one digest over
  the sorted digests of the kernels it compiled, noted by ``Device.compile`` whether the kernel was built now
  or cached by an earlier test, and carried by ``Device.once`` to the tests that reuse a per-device result.
* Real PoCL runs of a test-local kernel (pytest subprocesses): two runs give the same ``source_digest``
  whatever else ran before and wherever the test file lies; one character changed in the kernel text changes
  it, and the gate then reads ``incomparable`` naming the change, never ``regressed``; a baseline entry
  without a digest (every entry made before digests) judges exactly as before; ``gpuperf compare`` reads the
  changed kernel's row ``incomparable`` too.
* Entries made from runs keep their kernels' digest (a mix of kernels is refused, runs without one make an
  entry without one), and ``--identity-changed`` re-makes the entries whose kernels changed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pytest_gpuperf import BASELINE_SCHEMA
from pytest_gpuperf.baselines.baseline_file import BaselineFile, load, update
from pytest_gpuperf.baselines.cli import changed_identity
from pytest_gpuperf.baselines.merge import merge_runs
from pytest_gpuperf.baselines.problems import problems
from pytest_gpuperf.baselines.verdicts import REBASELINE, compare, source_problem
from pytest_gpuperf.devices import discover
from pytest_gpuperf.devices.dialect import portable
from pytest_gpuperf.errors import GpuPerfError
from pytest_gpuperf.schemas.results_doc import ResultsDocument
from pytest_gpuperf.tuning.fixtures import TunedWorkgroup, TuningCache
from pytest_gpuperf.tuning.kernels import by_name
from pytest_gpuperf.util.source_digest import combined, kernel_digest
from pytest_gpuperf.verdictwords import Compare, Gate
from suite_support import baseline_folder

HAVE_CL = any(d.backend == "opencl" for d in discover().devices)
needs_cl = pytest.mark.skipif(not HAVE_CL, reason="no OpenCL device (install pocl-opencl-icd)")
DEV = "opencl:0"
HEX = re.compile(r"[0-9a-f]{16}")

KERNEL = "__kernel void fill(__global float* x) { x[get_global_id(0)] = 1.5f; }"
CHANGED = KERNEL.replace("1.5f", "2.5f")  # one character of the kernel text
OTHER = "__kernel void other(__global float* x) { x[get_global_id(0)] = 3.0f; }"

#: a test-local probe: ``test_other`` compiles (and so caches) ``fill`` before ``test_fill`` asks for it;
#: ``test_host`` records a figure of the host alone
PROBE = '''import numpy as np

KERNEL = {kernel!r}
OTHER = {other!r}


def test_other(gpu_device, gpu_kernel):
    gpu_kernel.compile(OTHER, "other")
    gpu_kernel.compile(KERNEL, "fill")


def test_fill(gpu_device, gpu_kernel, gpuperf_record):
    k = gpu_kernel.compile(KERNEL, "fill")
    buf = gpu_device.empty(4 * 64)
    gpu_kernel.launch(k, (64,), None, [buf])
    gpuperf_record("digest.fill.sum", float(gpu_device.to_host(buf, np.float32).sum()), "1", better="exact")


def test_host(gpu_device, gpuperf_record):
    gpuperf_record("digest.host.answer", 42.0, "1", better="exact")
'''


# ---- the digests -------------------------------------------------------------------------------------------
def test_kernel_digest_is_the_source_and_options_only():
    d = kernel_digest(KERNEL, ("-cl-fast-relaxed-math",))
    assert HEX.fullmatch(d)
    assert d == kernel_digest(KERNEL, ["-cl-fast-relaxed-math"])  # a list or a tuple: the same options
    assert d != kernel_digest(KERNEL)  # build options are part of the kernel
    assert kernel_digest(KERNEL) != kernel_digest(CHANGED)  # one character
    # the source and the options are kept apart: text moved from one to the other is another kernel
    assert kernel_digest("a", ("b",)) != kernel_digest("ab") != kernel_digest("a", ("", "b"))


def test_combined_ignores_order_and_repeats_and_is_absent_for_no_kernels():
    a, b = kernel_digest(KERNEL), kernel_digest(OTHER)
    assert combined([a, b]) == combined([b, a, b]) != combined([a])
    assert HEX.fullmatch(combined([a]) or "")
    assert combined([]) is None


# ---- the rule ----------------------------------------------------------------------------------------------
ENTRY = {"value": 96.0, "better": "exact", "tolerance": {}, "identity": {}}


def test_a_changed_kernel_is_incomparable_with_the_command_that_rebaselines():
    entry = dict(ENTRY, source_digest="aaaaaaaaaaaaaaaa")
    cmp = compare(160.0, "exact", entry, source_digest="bbbbbbbbbbbbbbbb")
    assert cmp.verdict == Gate.INCOMPARABLE
    assert "kernel source changed since the baseline" in cmp.reason and REBASELINE in cmp.reason
    assert "aaaaaaaaaaaaaaaa" in cmp.reason and "bbbbbbbbbbbbbbbb" in cmp.reason
    assert compare(96.0, "exact", entry, source_digest="aaaaaaaaaaaaaaaa").verdict == Gate.PASS


@pytest.mark.parametrize("entry_digest, run_digest", [(None, "bbbbbbbbbbbbbbbb"), ("aaaaaaaaaaaaaaaa", None),
                                                      (None, None)])
def test_a_side_without_a_digest_judges_as_before(entry_digest, run_digest):
    entry = dict(ENTRY) if entry_digest is None else dict(ENTRY, source_digest=entry_digest)
    for value, verdict in ((96.0, Gate.PASS), (160.0, Gate.REGRESSED)):
        assert compare(value, "exact", entry, source_digest=run_digest).verdict == verdict
        assert compare(value, "exact", dict(ENTRY)).verdict == verdict  # the verdict without digests
    assert source_problem(entry_digest, run_digest) is None


# ---- the device notes what a test compiles -------------------------------------------------------------------
@needs_cl
def test_a_cached_kernel_is_noted_again_and_helpers_are_not(cl_device):
    cl_device.source_digests.clear()
    cl_device.compile(KERNEL, "fill")
    first = set(cl_device.source_digests)
    assert first == {kernel_digest(KERNEL)}
    cl_device.source_digests.clear()  # the next test begins: the kernel is cached on the device now
    cl_device.compile(KERNEL, "fill")
    assert cl_device.source_digests == first
    cl_device.compile_many(OTHER, ["other"])
    assert cl_device.source_digests == first | {kernel_digest(OTHER)}
    cl_device.source_digests.clear()
    with cl_device.unnoted():
        cl_device.compile(OTHER, "other", ("-DUNUSED=1",))
    assert cl_device.source_digests == set()


@needs_cl
def test_a_per_device_result_carries_its_kernels_to_the_tests_that_reuse_it(cl_device):
    def measure() -> float:
        k = cl_device.compile(OTHER, "other")
        buf = cl_device.empty(4 * 8)
        cl_device.elapsed(cl_device.timed(lambda: cl_device.launch(k, (8,), None, [buf])), 30.0)
        return float(cl_device.to_host(buf, np.float32).sum())

    cl_device.measured.pop("test.digest", None)
    cl_device.source_digests.clear()
    assert cl_device.once("test.digest", measure) == 24.0
    assert cl_device.source_digests == {kernel_digest(OTHER)}
    cl_device.source_digests.clear()  # a later test reuses the result without compiling anything
    assert cl_device.once("test.digest", lambda: pytest.fail("measured twice")) == 24.0
    assert cl_device.source_digests == {kernel_digest(OTHER)}


# ---- real runs -----------------------------------------------------------------------------------------------
def _run(tmp_path: Path, tag: str, kernel: str, *options: str) -> tuple[int, str, dict[str, dict]]:
    """Run the probe (written into its own folder per run) on the OpenCL device; (exit code, output, metrics)."""
    folder = tmp_path / tag
    folder.mkdir()
    (folder / "test_digest_probe.py").write_text(PROBE.format(kernel=kernel, other=OTHER))
    out = tmp_path / f"{tag}.json"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--gpuperf-device={DEV}",
                           f"--gpuperf-baseline-dir={baseline_folder(tmp_path, 'bl')}", f"--gpuperf-json={out}",
                           *options, "test_digest_probe.py"],
                          cwd=folder, capture_output=True, text=True, timeout=300)
    log = proc.stdout + proc.stderr
    assert out.exists(), log
    return proc.returncode, log, {m["name"]: m for m in json.loads(out.read_text())["metrics"]}


def _strip_digests(folder: Path) -> None:
    """The baseline files as they were made before digests: every entry without ``source_digest``."""
    for path in folder.glob("*.json"):
        doc = json.loads(path.read_text())
        for section in doc["backends"].values():
            for entry in section["metrics"].values():
                entry.pop("source_digest", None)
        path.write_text(json.dumps(doc, indent=1))


@needs_cl
def test_real_runs_same_kernel_same_digest_one_character_incomparable(tmp_path):
    rc, log, base = _run(tmp_path, "base", KERNEL, "--gpuperf-update-baselines")
    assert rc == 0, log
    fill, host = base["digest.fill.sum"], base["digest.host.answer"]
    assert fill["value"] == 96.0 and HEX.fullmatch(fill["source_digest"]), fill
    assert "source_digest" not in host, host  # a figure of the host alone
    (bl,) = (baseline_folder(tmp_path, "bl")).glob("*.json")
    entries = next(iter(json.loads(bl.read_text())["backends"].values()))["metrics"]
    assert entries["digest.fill.sum"]["source_digest"] == fill["source_digest"]
    assert "source_digest" not in entries["digest.host.answer"]

    # the same kernel from another folder, without the test that compiled (and cached) it first: same digest
    rc, log, again = _run(tmp_path, "again", KERNEL, "-k", "test_fill or test_host")
    assert rc == 0, log
    assert again["digest.fill.sum"]["source_digest"] == fill["source_digest"]
    assert again["digest.fill.sum"]["verdict"] == Gate.PASS, again["digest.fill.sum"]

    # one character of the kernel: another digest, and the figure is not compared with the old kernel's
    rc, log, changed = _run(tmp_path, "changed", CHANGED)
    m = changed["digest.fill.sum"]
    assert m["value"] == 160.0 and m["source_digest"] != fill["source_digest"], m
    assert m["verdict"] == Gate.INCOMPARABLE, m
    assert "kernel source changed since the baseline" in m["info"]["line"] and REBASELINE in m["info"]["line"]
    assert m["baseline"]["source_digest"] == fill["source_digest"]
    assert changed["digest.host.answer"]["verdict"] == Gate.PASS
    assert rc == 0, log  # incomparable does not fail the run

    # gpuperf compare of the two runs: the changed kernel's row is not compared either
    rows = _compare(tmp_path / "again.json", tmp_path / "changed.json")
    assert rows["digest.fill.sum"]["verdict"] == Compare.INCOMPARABLE, rows["digest.fill.sum"]
    assert "kernel source changed" in rows["digest.fill.sum"]["reason"]
    assert _compare(tmp_path / "base.json", tmp_path / "again.json")["digest.fill.sum"]["verdict"] == Compare.SAME

    # entries made before digests: the very verdicts of a gate that never heard of them
    _strip_digests(baseline_folder(tmp_path, "bl"))
    rc, log, old = _run(tmp_path, "old-baseline", CHANGED)
    assert old["digest.fill.sum"]["verdict"] == Gate.REGRESSED and rc == 1, old["digest.fill.sum"]
    rc, log, same = _run(tmp_path, "old-baseline-same", KERNEL)
    assert same["digest.fill.sum"]["verdict"] == Gate.PASS and rc == 0, log


def _compare(a: Path, b: Path) -> dict[str, dict]:
    proc = subprocess.run([sys.executable, "-m", "pytest_gpuperf.cli", "compare", str(a), str(b), "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip(), proc.stderr
    return {r["name"]: r for r in json.loads(proc.stdout)["rows"]}


# ---- entries made from runs ----------------------------------------------------------------------------------
def _doc(value: float, digest: str | None) -> ResultsDocument:
    metric = {"test": "t.py::test_fill", "name": "digest.fill.sum", "value": value, "unit": "1", "better": "exact",
              "stats": None, "baseline": None, "verdict": "new", "info": {}, "tolerance": None, "identity": {}}
    if digest is not None:
        metric["source_digest"] = digest
    return ResultsDocument.from_json({"schema": "pytest-gpuperf/1", "run": {}, "environment": {},
                                      "device": {"key": "k", "name": "n", "backend": "opencl", "is_cpu": True},
                                      "metrics": [metric]})


def test_entries_from_runs_keep_the_digest_of_their_runs_kernels_and_refuse_a_mix():
    a, b = "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"
    entry = merge_runs([_doc(96.0, a), _doc(96.0, a)], 6.0)["digest.fill.sum"]
    assert entry["source_digest"] == a
    assert "source_digest" not in merge_runs([_doc(96.0, a), _doc(96.0, None)], 6.0)["digest.fill.sum"]
    with pytest.raises(GpuPerfError, match="different kernel sources"):
        merge_runs([_doc(96.0, a), _doc(96.0, b)], 6.0)
    # --identity-changed re-makes the entries whose kernels changed, and only those
    existing = {"same": dict(entry), "changed": dict(entry, source_digest=b), "undigested": {"value": 96.0}}
    made = {name: dict(entry) for name in existing}
    assert set(changed_identity(made, existing)) == {"changed"}


def test_an_entry_remade_without_a_digest_keeps_no_old_one_and_a_bad_digest_is_named(tmp_path):
    file = BaselineFile(tmp_path / "k.json", {})
    base = {"value": 96.0, "unit": "1", "better": "exact", "tolerance": {}, "identity": {}}
    update(file, "opencl", {"key": "k", "name": "n"}, {}, {"digest.fill.sum": dict(base, source_digest="a" * 16)})
    assert load(tmp_path, "k").metrics("opencl")["digest.fill.sum"]["source_digest"] == "a" * 16
    update(file, "opencl", {"key": "k", "name": "n"}, {}, {"digest.fill.sum": dict(base)})
    assert "source_digest" not in load(tmp_path, "k").metrics("opencl")["digest.fill.sum"]
    bad = {"schema": BASELINE_SCHEMA,
           "backends": {"opencl": {"metrics": {"digest.fill.sum": dict(base, source_digest="family x")}}}}
    assert any("source_digest must be the hex digest" in why for why in problems(bad)), problems(bad)


@needs_cl
def test_a_tuned_shape_notes_the_same_kernels_tuned_now_or_read_from_the_cache(cl_device, tmp_path):
    """Which configurations a tuning run compiles depends on its cache; the digest its figures carry does not."""
    tw = TunedWorkgroup(cl_device, TuningCache(tmp_path), retune=False)
    cl_device.source_digests.clear()
    tw("matvec_row", {"m": 200, "n": 64})
    cold = set(cl_device.source_digests)
    cl_device.source_digests.clear()
    tw("matvec_row", {"m": 200, "n": 64})
    assert tw.last_from_cache and cl_device.source_digests == cold
    bench = by_name("matvec_row")
    assert cold == {kernel_digest(portable(bench.source, cl_device.info.backend), bench.extra_options)}


@needs_cl
def test_a_library_kernel_is_noted_by_its_library_version_call_and_type(cl_device):
    import pyopencl

    from pytest_gpuperf.devices.usermath import library_source, user_math

    um = user_math(cl_device, "pyopencl")
    x = np.linspace(0.1, 1.0, 64)
    digests = {}
    for fn, dtype in (("sin", np.float32), ("cos", np.float32), ("sin", np.float64)):
        cl_device.source_digests.clear()
        y = um.evaluate(fn, [x], dtype)
        assert np.allclose(y, getattr(np, fn)(x.astype(dtype)), rtol=1e-5)  # the library really ran
        expected = kernel_digest(library_source(f"PyOpenCL {pyopencl.VERSION_TEXT}", f"pyopencl.clmath.{fn}", dtype),
                                 um.options)
        assert cl_device.source_digests == {expected}
        digests[(fn, np.dtype(dtype).name)] = expected
    assert len(set(digests.values())) == 3  # another function or element type is another kernel
    # another version of the library names another kernel text
    assert library_source("PyOpenCL 2025.1", "pyopencl.clmath.sin", np.float32) != \
        library_source("PyOpenCL 2025.2", "pyopencl.clmath.sin", np.float32)
