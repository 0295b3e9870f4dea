"""Kernel parameters tuned through Kernel Tuner by ``api.tune`` on the real PoCL device: the docs' blur
example runs as written, its output is checked for every configuration (a wrong variant is refused), the
cache file is reused (nothing benchmarked again), the best configuration is a metric the gate judges, and
the CUDA text of the blur compiles with NVRTC."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nvrtc_support import nvrtc_env
from pytest_gpuperf import api, exits
from pytest_gpuperf.devices import discover
from pytest_gpuperf.devices.occupancy import sm_limits
from pytest_gpuperf.tuning import ktparams
from suite_support import baseline_folder

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "tuning.md"
needs_opencl = pytest.mark.skipif(not any(d.backend == "opencl" for d in discover().devices),
                                  reason="needs an OpenCL device (install pocl-opencl-icd)")


def doc_example() -> str:
    """The ``tune_params`` example of docs/tuning.md, as a reader copies it."""
    text = DOC.read_text()
    m = re.search(r"<!-- example: listing \(tune_params[^>]*-->\n```python\n(.*?)```", text, re.S)
    assert m, "docs/tuning.md lost its tune_params example"
    return m.group(1)


@pytest.fixture
def kt_cache(tmp_path, monkeypatch):
    """A tuning cache folder of this test's own (Kernel Tuner's files go under ``kernel_tuner/``)."""
    monkeypatch.setenv("GPUPERF_TUNING_CACHE", str(tmp_path))
    return tmp_path / ktparams.KT_FOLDER


@pytest.fixture
def example(kt_cache):
    """The doc example run in this process (device "0", as written); its names afterwards."""
    ns: dict = {}
    exec(compile(doc_example(), str(DOC), "exec"), ns)
    return ns


def blur_args(ns: dict) -> tuple[list, tuple[int]]:
    return [ns["x"], np.zeros_like(ns["x"]), np.int32(ns["n"])], (ns["n"],)


@needs_opencl
def test_the_doc_example_tunes_tile_and_work_group_with_every_output_checked(example, kt_cache):
    best = example["best"]
    assert isinstance(best, ktparams.ParamsTuned) and best.checked
    assert best.best["block_size_x"] in (32, 64) and best.best["TILE"] in (1, 2, 4)
    assert best.local == (best.best["block_size_x"],)
    assert best.space == 6 and best.visited == 6 and best.evaluations == 6  # a fresh cache: all benchmarked
    assert best.time_s > 0 and len(best.times_s) >= 1 and best.cache == kt_cache / "blur.json"
    stored = json.loads(best.cache.read_text())
    assert len(stored["cache"]) == 6 and stored["tune_params_keys"] == ["block_size_x", "TILE"]
    # the stored best is the minimum of what Kernel Tuner measured, not a pick of ours
    timed = {(e["block_size_x"], e["TILE"]): e["time"] for e in stored["cache"].values()}
    assert min(timed, key=timed.get) == (best.best["block_size_x"], best.best["TILE"])


@needs_opencl
def test_a_wrong_variant_is_refused_by_the_answer_check(example, kt_cache):
    """TILE = 4 reads its middle point twice instead of its right neighbour: the check must refuse that configuration."""
    wrong = example["SRC"].replace("(tile[j] + tile[j + 1] + tile[j + 2])",
                                   "(tile[j] + tile[j + 1] + tile[j + 2 - (TILE == 4)])")
    assert wrong != example["SRC"]
    args, size = blur_args(example)
    with pytest.raises(ktparams.ParamsTuningError, match=r"refused a configuration.*TILE=4") as refused:
        api.tune(wrong, "blur", args, size, tune_params={"block_size_x": [32], "TILE": [1, 4]},
                 grid_div=[["block_size_x", "TILE"]], answer=[None, example["reference"], None], atol=1e-5)
    # Kernel Tuner's copy of the refused source is moved out of the working directory and named
    kept = re.search(r"its source as compiled: (\S+?)\)", str(refused.value))
    assert kept and Path(kept.group(1)).parent == kt_cache / "failed", str(refused.value)
    assert "#define TILE 4" in Path(kept.group(1)).read_text() and not list(Path.cwd().glob("temp_*"))
    # a verify function of one's own decides as Kernel Tuner's does: refusing, it stops the tuning
    seen = []

    def refuse(answer, result, atol):
        seen.append(np.asarray(result[1]).copy())
        return False

    with pytest.raises(ktparams.ParamsTuningError, match="refused a configuration"):
        api.tune(example["SRC"], "blur", args, size, tune_params={"block_size_x": [32], "TILE": [1]},
                 grid_div=[["block_size_x", "TILE"]], answer=[None, example["reference"], None], verify=refuse)
    assert len(seen) == 1 and np.allclose(seen[0], example["reference"], atol=1e-5)  # it saw the real output
    # the same wrong kernel without the variant the check refuses tunes
    ok = api.tune(wrong, "blur", args, size, tune_params={"block_size_x": [32], "TILE": [1, 2]},
                  grid_div=[["block_size_x", "TILE"]], answer=[None, example["reference"], None], atol=1e-5)
    assert ok.checked and ok.space == 2


@needs_opencl
def test_the_cache_file_is_reused_without_benchmarking_again(example):
    first = example["best"]
    before = first.cache.read_text()
    args, size = blur_args(example)
    again = api.tune(example["SRC"], "blur", args, size, tune_params={"block_size_x": [32, 64], "TILE": [1, 2, 4]},
                     grid_div=[["block_size_x", "TILE"]], answer=[None, example["reference"], None], atol=1e-5,
                     cache="blur.json")
    assert again.evaluations == 0 and again.visited == 6 and again.best == first.best
    after = json.loads(again.cache.read_text())
    assert after["cache"] == json.loads(before)["cache"]  # no entry added or re-timed (timestamps unchanged)
    # one more tile size: only its two new configurations are benchmarked, the six stored ones are read
    more = api.tune(example["SRC"], "blur", args, size, tune_params={"block_size_x": [32, 64], "TILE": [1, 2, 4, 8]},
                    grid_div=[["block_size_x", "TILE"]], answer=[None, example["reference"], None], atol=1e-5,
                    cache=True)
    assert more.evaluations == 8 and more.cache != first.cache  # cache=True: its own file per parameter set
    # another kernel text is another cache file (measured afresh), yet the same metric: the gate judges the change
    changed = api.tune(example["SRC"].replace("/ 3.0f", "* (1.0f / 3.0f)"), "blur", args, size,
                       tune_params={"block_size_x": [32, 64], "TILE": [1, 2, 4, 8]}, grid_div=[["block_size_x", "TILE"]],
                       answer=[None, example["reference"], None], atol=1e-5, cache=True)
    assert changed.cache != more.cache and changed.evaluations == 8 and changed.identity == more.identity
    # a file of the user's name made for another kernel text is moved aside and the new text measured afresh: its old
    # times are never read as this kernel's
    edited = api.tune(example["SRC"].replace("/ 3.0f", "* (1.0f / 3.0f)"), "blur", args, size,
                      tune_params={"block_size_x": [32, 64], "TILE": [1, 2, 4]}, grid_div=[["block_size_x", "TILE"]],
                      answer=[None, example["reference"], None], atol=1e-5, cache="blur.json")
    assert edited.cache == first.cache and edited.evaluations == 6
    assert first.cache.with_name("blur.json.stale").exists()  # the other text's results, kept aside


@needs_opencl
def test_a_space_the_restrictions_or_the_device_leave_empty_says_so(kt_cache):
    src = "__kernel void k(__global float* y, int n) { int i = get_global_id(0); if (i < n) y[i] = 2.0f; }"
    args = [np.zeros(1024, np.float32), np.int32(1024)]
    with pytest.raises(ktparams.ParamsTuningError, match=r"no configuration of .* passes the restrictions"):
        api.tune(src, "k", args, (1024,), tune_params={"block_size_x": [32, 64]}, restrictions=["block_size_x > 100"])
    with pytest.raises(ktparams.ParamsTuningError, match=r"is left once the device's limits are applied"):
        api.tune(src, "k", args, (1024,), tune_params={"block_size_x": [100000]})


@needs_opencl
def test_strategies_restrictions_and_pruning_reach_kernel_tuner(example):
    args, size = blur_args(example)
    common = dict(grid_div=[["block_size_x", "TILE"]], answer=[None, example["reference"], None], atol=1e-5)
    r = api.tune(example["SRC"], "blur", args, size, tune_params={"block_size_x": [16, 32, 64], "TILE": [1, 2, 4]},
                 restrictions=["block_size_x * TILE <= 64"], strategy="random_sample",
                 strategy_options={"max_fevals": 3}, **common)
    assert r.space == 6 and r.visited <= 3 and r.best["block_size_x"] * r.best["TILE"] <= 64
    assert r.strategy == "random_sample"
    p = api.tune(example["SRC"], "blur", args, size, tune_params={"block_size_x": [32], "TILE": [1, 2]},
                 strategy="lim_static", **common)
    assert "no SM occupancy model" in p.pruning["lim_static"] and p.space == 2  # PoCL: nothing pruned, said so
    with pytest.raises(ValueError, match="unknown strategy 'no_such'.*brute_force"):
        api.tune(example["SRC"], "blur", args, size, tune_params={"TILE": [1]}, strategy="no_such")
    with pytest.raises(ValueError, match="work-group size alone"):
        api.tune(example["SRC"], "blur", args, size, tune_params={"TILE": [1]}, strategy="dao")


@needs_opencl
def test_lim_static_pruning_is_a_kernel_tuner_restriction(example):
    """Lim's T* with the H100's SM limits over the blur's resources as this device compiled them: 32-wide
    groups stop at 32 blocks (half the warps), a 64-point tile per work-item fills shared memory (13 groups of
    2 warps); what reaches full occupancy is kept, and Kernel Tuner benchmarks only that."""
    params = {"block_size_x": [32, 64, 128], "TILE": [1, 16, 64]}
    rule, info = ktparams.occupancy_restriction(api.device("0"), example["SRC"], "blur", params, (), [],
                                                sm=sm_limits("9.0"))
    kept = {(b, t) for b in params["block_size_x"] for t in params["TILE"] if rule[0](block_size_x=b, TILE=t)}
    assert kept == {(64, 1), (64, 16), (128, 1), (128, 16)}, kept
    assert info == {"space": 9, "after_static": 4, "occupancy": 1.0}
    args, size = blur_args(example)
    r = api.tune(example["SRC"], "blur", args, size, tune_params=params, restrictions=[rule],
                 grid_div=[["block_size_x", "TILE"]], answer=[None, example["reference"], None], atol=1e-5)
    assert r.space == 4 and r.visited == 4 and (r.best["block_size_x"], r.best["TILE"]) in kept


@needs_opencl
def test_without_block_size_the_packages_work_group_space_is_tuned(example):
    args, size = blur_args(example)
    r = api.tune(example["SRC"], "blur", args, size, tune_params={"TILE": [4]}, grid_div=[["block_size_x", "TILE"]],
                 answer=[None, example["reference"], None], atol=1e-5, strategy="random_sample",
                 strategy_options={"max_fevals": 2})
    sizes = ktparams.work_group_values(api.device("0"), 1)["block_size_x"]
    assert r.identity["tune_params"]["block_size_x"] == sizes and r.space == len(sizes) and r.visited <= 2
    assert r.best["block_size_x"] in sizes


GATED = '''
import os, numpy as np
from pytest_gpuperf import api

SRC = {src!r}

def test_blur(gpu_device, gpuperf_record):
    n = 1 << 16
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    ref = np.convolve(np.pad(x, 1), np.full(3, 1 / 3), "valid").astype(np.float32)
    best = api.tune(SRC.replace("/ 3.0f", os.environ.get("PLANT", "/ 3.0f")), "blur",
                    [x, np.zeros_like(x), np.int32(n)], (n,), dev=gpu_device,
                    tune_params={{"block_size_x": [32], "TILE": [2]}}, grid_div=[["block_size_x", "TILE"]],
                    answer=[None, ref, None], atol=1e-5)
    for r in best.records("user.blur"):
        gpuperf_record(**r)
'''


# a planted slowdown judged on PoCL, against a baseline this test records: run alone (scripts/run_tests.sh), since
# a baseline recorded beside other tests spreads so far that even a hundredfold slowdown is not "far beyond" it
@pytest.mark.quiet_host
@needs_opencl
def test_the_best_configuration_is_a_metric_the_gate_judges(pytester, example, monkeypatch):
    """Recorded with ``--gpuperf-update-baselines``, then gated: unchanged, it passes, and a kernel made
    hundreds of times slower (transcendentals multiplied by zero: the output still passes the check) is
    another kernel text, so it reads incomparable against the entry made of the old text (``source_digest``),
    and regresses against the same entry made before digests were recorded; on a busy host the first reads
    contended and the last "would have regressed", each saying so. Its baseline entry holds the best
    configuration."""
    pytester.makepyfile(GATED.format(src=example["SRC"]))
    bl = baseline_folder(pytester.path, "bl")
    args = ["--gpuperf-device=opencl:0", f"--gpuperf-baseline-dir={bl}", "-p", "no:cacheprovider"]
    pytester.runpytest(*args, "--gpuperf-update-baselines").assert_outcomes(passed=1)
    files = list((pytester.path / "bl").glob("*.json"))
    text = files[0].read_text()
    assert "user.blur.best_us" in text and "block_size_x" in text
    result = pytester.runpytest(*args)
    if result.ret == exits.HOST_TOO_BUSY:  # never a pass: a host too busy to judge it says so (timing.observers)
        result.stdout.fnmatch_lines(["*user.blur.best_us*contended*"])
    else:
        result.assert_outcomes(passed=1)
    monkeypatch.setenv("PLANT", "/ 3.0f + 0.0f * pow(fabs(sin(cos((float)j))), tan((float)k) + 2.5f) * exp(cos((float)l))")
    result = pytester.runpytest(*args)  # the text handed to Kernel Tuner changed: not compared
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*user.blur.best_us*incomparable*"])
    doc = json.loads(files[0].read_text())  # the entry as it was made before kernel digests were recorded
    for section in doc["backends"].values():
        section["metrics"]["user.blur.best_us"].pop("source_digest")
    files[0].write_text(json.dumps(doc))
    result = pytester.runpytest(*args)
    if result.ret == exits.HOST_TOO_BUSY:  # contended, yet hundreds of times slower: named, not waved through
        result.stdout.fnmatch_lines(["*WOULD HAVE REGRESSED*user.blur.best_us x*"])
        return
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*user.blur.best_us: REGRESSED*"])


def test_the_blur_compiles_as_cuda_with_nvrtc(tmp_path):
    """The CUDA path: the doc's kernel through the language prelude, with Kernel Tuner's defines, compiles."""
    env = nvrtc_env()
    script = tmp_path / "compile_blur.py"
    script.write_text(
        "import re, sys\n"
        "from pytest_gpuperf.devices import recompile\n"
        "from pytest_gpuperf.devices.dialect import portable\n"
        f"doc = open({str(DOC)!r}).read()\n"
        "src = re.search(r'SRC = \"\"\"(.*?)\"\"\"', doc, re.S).group(1)\n"
        "for bx, tile in ((32, 1), (64, 4)):\n"
        "    text = f'#define block_size_x {bx}\\n#define TILE {tile}\\n' + portable(src, 'cuda')\n"
        "    recompile.compile_ptx(text, ['-arch=compute_90', '-std=c++17'])\n"
        "print('compiled')\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0 and "compiled" in out.stdout, out.stdout + out.stderr


def test_without_kernel_tuner_the_error_names_the_extra():
    """An environment where ``kernel_tuner`` cannot be imported (a plain install: it is the ``[tune]`` extra):
    api.tune with parameters and the tuning suite's race say which extra installs it; the gate's own
    modules import without it."""
    code = (
        "import sys; sys.modules['kernel_tuner'] = None\n"  # import kernel_tuner now raises ImportError
        "import numpy as np\n"
        "from pytest_gpuperf import api, plugin\n"
        "from pytest_gpuperf.compare import cli\n"
        "from pytest_gpuperf.tuning import ktsim, ktparams\n"
        "print('missing:', ktsim.missing())\n"
        "try:\n"
        "    api.tune('__kernel void k() {}', 'k', [], (64,), tune_params={'T': [1]})\n"
        "except ktparams.ParamsTuningError as exc:\n"
        "    print('refused:', exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert "missing: Kernel Tuner is not installed" in out.stdout and "pytest-gpuperf[tune]" in out.stdout
    assert "refused: tuning kernel parameters needs Kernel Tuner" in out.stdout, out.stdout


@needs_opencl
def test_the_work_group_tuner_finds_a_kernel_that_writes_past_its_array_instead_of_crashing(kt_cache):
    """The tuner pads the NDRange to each work-group shape; a kernel that does not guard its index then writes past
    its array. The arrays are uploaded with a slack holding a canary, so those writes land there: the tune raises a
    one-line error saying what to do, where the process used to abort on a corrupted heap. A guarded kernel tunes."""
    unguarded = "__kernel void k(__global float* y) { y[get_global_id(0)] = 2.0f; }"
    y = np.zeros(1000, np.float32)
    with pytest.raises(ValueError, match=r"k wrote past the end of one of its arrays .* guard the kernel's index"):
        api.tune(unguarded, "k", [y], (1000,), dev="opencl:0")
    guarded = "__kernel void k(__global float* y, int n) { int i = get_global_id(0); if (i < n) y[i] = 2.0f; }"
    seen: list[np.ndarray] = []
    best = api.tune(guarded, "k", [y, np.int32(1000)], (1000,), dev="opencl:0", check=lambda out: seen.extend(out))
    assert best.evaluations >= 1 and best.checked and np.all(seen[0] == 2.0)
