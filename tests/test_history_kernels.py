"""A change of a metric's kernel in the history: the series is split there, and the change is reported as
``kernel changed``, never as a step.

* Real PoCL runs of a generated suite recorded live into a SQLite history (``--gpuperf-history``): the
  kernel's text changes between the second and the third run, which moves its figure by far more than its
  band. ``gpuperf history detect`` reports a kernel change at the third run's commit and no step;
  ``history show`` marks the run (text, JSON and CSV), and the dashboard lists the change apart from the
  regressions and draws it on the plot. The same runs read without their digests (as runs recorded before
  digests were) show the step: what the split prevents.
* A run without digests (a figure of the host alone, a run recorded before digests were) is unknown, never
  a change: ``tests/test_history_detect.py`` checks it on a synthetic series.
* A committed results file written before digests imports as before, every metric's digest unknown.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_gpuperf.devices import discover
from pytest_gpuperf.history.backends import read_runs
from pytest_gpuperf.history.dashboard import build_data, render_html
from pytest_gpuperf.history.detect import detect_all
from pytest_gpuperf.verdictwords import Trend
from history_support import browse, chromium
from suite_support import baseline_folder, gpuperf_in_process

HAVE_CL = any(d.backend == "opencl" for d in discover().devices)
needs_cl = pytest.mark.skipif(not HAVE_CL, reason="no OpenCL device (install pocl-opencl-icd)")
ROOT = Path(__file__).resolve().parents[1]
OLD_RUN = ROOT / "results/pocl-pthread-skylake-avx512-amd-epyc/suites-opencl.json.xz"  # written before digests

KERNEL = "__kernel void fill(__global float* x) { x[get_global_id(0)] = 1.5f; }"
CHANGED = KERNEL.replace("1.5f", "2.5f")  # one character of the kernel text: the figure moves from 96 to 160
FIGURE = "kernels.fill.sum"

#: a generated suite: one figure of a kernel (exact: no noise, so one run per level shows a move), one of the
#: host alone (no kernel, no digest)
SUITE = '''import numpy as np

KERNEL = {kernel!r}


def test_fill(gpu_device, gpu_kernel, gpuperf_record):
    k = gpu_kernel.compile(KERNEL, "fill")
    buf = gpu_device.empty(4 * 64)
    gpu_kernel.launch(k, (64,), None, [buf])
    gpuperf_record({figure!r}, float(gpu_device.to_host(buf, np.float32).sum()), "1", better="lower",
                   info={{"noise": "deterministic"}})


def test_host(gpu_device, gpuperf_record):
    gpuperf_record("kernels.host.answer", 42.0, "1", better="lower", info={{"noise": "deterministic"}})
'''


# one xdist worker runs this module (scripts/run_tests.sh: --dist loadgroup): its tests share one history of three
# real runs (``history``), recorded once, not in each worker that runs one of them
pytestmark = pytest.mark.xdist_group("history-kernels")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite history of three real PoCL runs of the suite, recorded live, at commits ``c1``, ``c2`` (the
    kernel as written) and ``c3`` (its text changed)."""
    if not HAVE_CL:
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    root = tmp_path_factory.mktemp("kernels")
    db = root / "history.db"
    for commit, kernel in (("c1", KERNEL), ("c2", KERNEL), ("c3", CHANGED)):
        folder = root / commit
        folder.mkdir()
        (folder / "test_kernel_suite.py").write_text(SUITE.format(kernel=kernel, figure=FIGURE))
        proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                               "--gpuperf-device=opencl:0", f"--gpuperf-baseline-dir={baseline_folder(root)}",
                               f"--gpuperf-history={db}", "test_kernel_suite.py"],
                              cwd=folder, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "GPUPERF_COMMIT": commit})
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return str(db)


@needs_cl
def test_a_changed_kernel_is_a_kernel_change_not_a_step(history):
    runs = read_runs(history)
    assert [r.commit for r in runs] == ["c1", "c2", "c3"]
    fill = [next(m for m in r.metrics if m.name == FIGURE) for r in runs]
    assert [m.value for m in fill] == [96.0, 96.0, 160.0]
    assert fill[0].source_digest == fill[1].source_digest != fill[2].source_digest is not None
    assert all(m.source_digest is None for r in runs for m in r.metrics if m.name != FIGURE)  # the host's figure

    found = detect_all(runs)
    assert found.steps == []
    [change] = found.kernel_changes
    assert (change.name, change.previous_commit, change.commit) == (FIGURE, "c2", "c3")
    assert (change.before, change.after) == (fill[0].source_digest, fill[2].source_digest)

    # the same runs as a history without digests would hold them: the move is a step toward worse
    blind = [dataclasses.replace(r, metrics=[dataclasses.replace(m, source_digest=None) for m in r.metrics])
             for r in runs]
    [step] = detect_all(blind).steps
    assert (step.name, step.commit, step.direction) == (FIGURE, "c3", "worse")
    assert detect_all(blind).kernel_changes == []


@needs_cl
def test_detect_and_show_say_kernel_changed(history, capsys):
    code, out, err = gpuperf_in_process(capsys, "history", "detect", "--db", history)
    assert code == 0, err
    assert f"{Trend.KERNEL_CHANGED.upper()} for 1 metric(s) at commit c3" in out
    assert "WORSE" not in out and "0 step(s) confirmed" in out and "1 kernel change(s)" in out
    code, out, err = gpuperf_in_process(capsys, "history", "detect", "--db", history, "--json", "--fail-on-step")
    doc = json.loads(out)
    assert code == 0 and doc["steps"] == []
    assert [(c["name"], c["change"], c["commit_range"]) for c in doc["kernel_changes"]] == [
        (FIGURE, Trend.KERNEL_CHANGED, "c2..c3")]

    code, out, err = gpuperf_in_process(capsys, "history", "show", FIGURE, "--db", history)
    assert code == 0, err
    rows = [line for line in out.splitlines() if FIGURE in line]
    assert len(rows) == 3 and [Trend.KERNEL_CHANGED in line for line in rows] == [False, False, True]
    assert "c3" in rows[2]
    code, out, _ = gpuperf_in_process(capsys, "history", "show", FIGURE, "--db", history, "--format", "json")
    shown = json.loads(out)
    assert [r["kernel_changed"] for r in shown] == [False, False, True]
    assert len({r["source_digest"] for r in shown}) == 2
    code, out, _ = gpuperf_in_process(capsys, "history", "show", "kernels.", "--db", history, "--format", "csv")
    table = list(csv.DictReader(io.StringIO(out)))
    assert [(r["metric"], r["commit"]) for r in table if r["kernel_changed"] == "True"] == [(FIGURE, "c3")]
    assert {r["source_digest"] for r in table if r["metric"] == "kernels.host.answer"} == {""}


@needs_cl
def test_the_dashboard_lists_the_kernel_change_apart_from_the_regressions(history, tmp_path):
    runs = read_runs(history)
    found = detect_all(runs)
    data = build_data(runs, found)
    [dev] = data["metrics"]
    by_name = {m["name"]: m for m in data["metrics"][dev]}
    assert by_name[FIGURE]["steps"] == []
    assert [(c["p"], c["i"]) for c in by_name[FIGURE]["kc"]] == [(1, 2)]  # drawn between the 2nd and 3rd run
    assert "kc" not in by_name["kernels.host.answer"]
    page = tmp_path / "index.html"
    page.write_text(render_html(runs, found))
    html = page.read_text()
    assert "No step toward worse" in html
    assert 'id="kernel-changes"' in html and "1 kernel change(s) in 1 run(s)" in html
    if chromium() is None:
        return  # the page's data and its front page are checked; the drawing needs a browser
    dom, console = browse(page)
    assert console == [] and 'data-rendered="yes"' in dom and "data-js-errors" not in dom
    assert re.search(r'<h3 class="changes">Changes — no metric', dom)  # the lead holds no step…
    assert re.search(r'<h3 class="kernels">Kernel changed — 1 metric', dom)  # …and the kernel change apart
    assert re.search(rf'<li class="kernel">{Trend.KERNEL_CHANGED}: [0-9a-f]{{8}} → [0-9a-f]{{8}} at', dom)


def test_an_older_results_file_without_digests_imports_as_before(tmp_path, capsys):
    db = str(tmp_path / "h.db")
    code, out, err = gpuperf_in_process(capsys, "history", "import", str(OLD_RUN), "--db", db)
    assert code == 0, err
    [run] = read_runs(db)
    assert run.metrics and all(m.source_digest is None for m in run.metrics)
    assert detect_all([run]).kernel_changes == []
    code, out, err = gpuperf_in_process(capsys, "history", "show", run.metrics[0].name, "--db", db, "--format", "json")
    assert code == 0 and [r["source_digest"] for r in json.loads(out)] == [None]
    assert [r["kernel_changed"] for r in json.loads(out)] == [False]
