"""Corpus collection mechanics (studies/static_power/model_corpus.py, studies/static_power/collect.py) without a GPU.

The stand-in device hands out PTX saved from NVRTC (tests/data/models) and the power sensor is a
simulated stepping counter: the entries written here test the plumbing — features, resume, reasons —
and are not measurements (their watts are the simulation's constant)."""

from __future__ import annotations

import time
import dataclasses
from pathlib import Path

import pytest

from pytest_gpuperf.devices.base import DeviceInfo
from pytest_gpuperf.devices.nvml import Reading, decode_throttle
from pytest_gpuperf.devices.resources import Resources
from pytest_gpuperf.studies.ptx_model import cfg as cfgmod
from pytest_gpuperf.studies.ptx_model import ptx as ptxmod
from pytest_gpuperf.studies.ptx_model.ptx_latency import latencies
from pytest_gpuperf.studies.static_power.power_model import load_corpus
from pytest_gpuperf.studies.static_power import collect as collect_cli
from pytest_gpuperf.studies.static_power.model_corpus import Job, _trips_for, collect

DATA = Path(__file__).parent / "data" / "models"


class SimCounter:
    def __init__(self, watts=300.0, period=0.005):
        self.t0, self.watts, self.period, self.last_error = time.perf_counter(), watts, period, None

    def read(self):
        t = time.perf_counter()
        return Reading(t, int((t - self.t0) / self.period) * self.watts * self.period * 1000.0, self.watts,
                       1980.0, 2619.0, 50.0, 0)

    def reasons(self, mask):
        return decode_throttle(mask)


class StandIn:
    """Just enough of a Device: saved PTX, fixed resources, launches that cost nothing."""

    def __init__(self, sensor):
        self.info = DeviceInfo("cuda", 0, "stand-in H100", "NVIDIA", "stand-in", compute_capability="9.0",
                               compute_units=132, warp_size=32, l2_bytes=50 << 20, clock_mhz=1980.0)
        self._sensor = sensor

    def power_sensor(self):
        return (self._sensor, "simulated") if self._sensor else (None, "no sensor")

    def compile(self, source, name, options=()):
        return name

    def kernel_ptx(self, kernel):
        path = DATA / f"{kernel}.ptx"
        return path.read_text() if path.exists() else ""

    def kernel_resources(self, kernel):
        return Resources(32, 0, "stand-in")

    def launch(self, *a):
        return None

    def timed(self, run):
        run()

    def elapsed(self, h, timeout_s):
        return 1e-4

    def synchronize(self, timeout_s=60.0):
        time.sleep(0.0005)


@pytest.fixture(scope="module")
def gpu_plan() -> list[Job]:
    """The plan a GPU gets (GPU problem sizes, through the offline stand-in), made once for the module's
    checks: building it generates the GPU-sized inputs (seconds); its jobs are frozen."""
    from pytest_gpuperf.studies.static_power.model_corpus import PlanDevice, jobs

    return jobs(PlanDevice(), "cuda")


def _job(name, trips=(), grid=264):
    return Job(name, f"grid={grid}", "", name, (), (grid * 256,), (256,), lambda: [], list(trips), "test")


@pytest.fixture()
def table(tmp_path):
    return latencies(tmp_path, "none", "cuda", 1980.0, baseline_dir=tmp_path)


def test_trip_counts_match_or_leave_out():
    loop = cfgmod.build(ptxmod.parse((DATA / "matrixMulCUDA.ptx").read_text()))
    flat = cfgmod.build(ptxmod.parse((DATA / "saxpy.ptx").read_text()))
    assert _trips_for(loop, [8]) == ([8], "as listed")
    assert _trips_for(flat, [8]) == ([], "the compiler unrolled every loop")
    trips, why = _trips_for(loop, [8, 8])
    assert trips is None and "1 loop(s), the source 2" in why


def test_collect_writes_resumes_and_gives_reasons(tmp_path, table, monkeypatch):
    import pytest_gpuperf.timing.energy as energy

    dev = StandIn(SimCounter())
    path = tmp_path / "corpus.json"
    todo = [_job("saxpy"), _job("matrixMulCUDA", [4]), _job("matrixMulCUDA", [4, 4], grid=132), _job("nope")]
    import pytest_gpuperf.studies.static_power.model_corpus as model_corpus

    monkeypatch.setattr(model_corpus, "steady_state_energy",
                        lambda *a, **k: energy.steady_state_energy(*a, warmup_s=0.01, k_steps=5))
    n, total, left = collect(dev, table, path, 60.0, "cuda", log=lambda s: None, todo=todo[:2])
    assert (n, total, left) == (2, 2, [])
    _, entries = load_corpus(path)
    assert [e.kernel for e in entries] == ["saxpy", "matrixMulCUDA"]
    assert entries[0].features["glob_inst_kernel"] == 3 and entries[0].info["loops_in_ptx"] == 0
    assert entries[0].watts > 0 and entries[0].info["grid"] == 264
    # a second call keeps both, skips them, and says why the others were left out
    n, total, left = collect(dev, table, path, 60.0, "cuda", log=lambda s: None, todo=todo)
    assert n == 2 and total == 4 and len(left) == 2
    assert "trip counts unknown" in left[0] and "no PTX" in left[1]


def test_collect_refuses_a_device_without_a_sensor(tmp_path, table):
    with pytest.raises(RuntimeError, match="no power sensor"):
        collect(StandIn(None), table, tmp_path / "c.json", 1.0, "cuda", todo=[])


def test_the_cli_exits_2_on_pocl_with_the_reason(capsys):
    from pytest_gpuperf.devices import discover

    if not any(d.backend == "opencl" for d in discover().devices):
        pytest.skip("no OpenCL device")
    assert collect_cli.main(["--device", "opencl:0", "--budget-s", "1"]) == 2
    assert "no power sensor" in capsys.readouterr().err


def test_the_corpus_is_43_kernels_in_404_configurations(cl_device):
    from pytest_gpuperf.studies.static_power.model_corpus import jobs

    js = jobs(cl_device, cl_device.info.backend)
    assert len(js) == 404 and len({j.kernel for j in js}) == 43  # at least 40 kernels
    assert len({(j.kernel, j.config) for j in js}) == len(js)  # one entry per (kernel, configuration)
    assert all(j.local_size[0] <= 256 for j in js if j.kernel in ("group_reduce", "local_reverse"))


def test_the_planned_gpu_corpus_without_a_gpu(gpu_plan):
    """The plan a GPU gets (GPU problem sizes, through the offline stand-in): 43 kernels in 404 configurations,
    every configuration of the first plan (158, the saved corpora's) among them under its label; the kernels
    whose PTX loops are not their source's carry per-PTX-loop counts and say why."""
    import numpy as np
    from pytest_gpuperf.studies.static_power.model_corpus import EXTRA, unrolled_by_4
    from pytest_gpuperf.tuning.kernels import by_name

    js = gpu_plan
    assert len(js) == 404 and len({j.kernel for j in js}) == 43
    assert len({(j.kernel, j.config) for j in js}) == len(js)
    assert len({(j.kernel, j.global_size, j.local_size, tuple(j.trips)) for j in js}) == len(js)  # no launch twice
    first = {(e.kernel, e.config) for e in load_corpus(Path(__file__).resolve().parents[1] / "results" / "nvidia-h200"
                                                       / "power-corpus-cuda.json.xz")[1]}
    assert len(first) == 158 and first <= {(j.kernel, j.config) for j in js}
    by = {j.kernel: j for j in js}
    assert by["trig"].trips == [0.0, 0.0] and by["sinloop"].trips == [0.0] * 8
    assert by["matvec_row"].trips == [32.0, 0.0] and by["sgemm_naive"].trips == [250.0, 0.0]
    assert by["matvec64"].trips == [4.0]  # NVRTC unrolls its 64-step loop by 16
    assert unrolled_by_4(3) == [0.0, 3.0] and unrolled_by_4(1001) == [250.0, 1.0]
    # bfs_step: the frontier's (level 0, about a fifth of the vertices) mean degree over all work-items
    (t,) = by["bfs_step"].trips
    assert 0.2 * 1.0 < t < 0.2 * 256 and by["bfs_step"].global_size == (by_name("bfs_step").sizes_gpu["n"],)
    assert all(by[k].trips_note for k in ("trig", "sinloop", "matvec64", "matvec_row", "sgemm_naive", "bfs_step"))
    assert {k.name for k in EXTRA} <= set(by) and "cl_khr_fp64" not in by["dpoly128"].source
    # the inputs of every sinf/cosf are far below the range-reduction slow path the zero counts assume
    a = np.random.default_rng(7).random(1 << 22, dtype=np.float32) + 0.5
    assert 0.5 <= a.min() and a.max() <= 1.5  # the float32 sum may round up to 1.5


def test_resume_measures_only_the_configurations_missing_from_the_file(tmp_path, table, monkeypatch, gpu_plan):
    """The saved H100 corpus, less the kernels it once left out or mis-counted, against the full plan: a
    resumed collection measures exactly the configurations it lacks and nothing it has; one that fails is
    not written, so the next call tries only that one; a complete file measures nothing."""
    import pytest_gpuperf.studies.static_power.model_corpus as model_corpus
    from pytest_gpuperf.studies.static_power.power_model import Entry, save_corpus

    saved = Path(__file__).resolve().parents[1] / "results" / "nvidia-h100-80gb-hbm3" / "power-corpus-cuda.json.xz"
    device, saved_entries = load_corpus(saved)
    redo = {"trig", "sinloop", "matvec_row", "sgemm_naive", "bfs_step", "matvec64", "dpoly128", "atomic_hist"}
    path = tmp_path / "power-corpus-cuda.json"
    save_corpus(path, device, [e for e in saved_entries if e.kernel not in redo])
    _, before = load_corpus(path)
    have = [(e.kernel, e.config) for e in before]
    plan = gpu_plan
    missing = [(j.kernel, j.config) for j in plan if (j.kernel, j.config) not in set(have)]
    assert len(have) >= 100 and set(have) <= {(j.kernel, j.config) for j in plan}
    assert redo <= {k for k, _ in missing} and len(missing) == len(plan) - len(have)
    calls: list[tuple[str, str]] = []

    def fake(device, sensor, job, table, timeout_s=10.0):
        calls.append((job.kernel, job.config))
        if calls == missing[:missing.index(("bfs_step", "128")) + 1]:  # fails the first time only
            return "simulated failure"
        return Entry(job.kernel, job.config, {"x": 1.0}, 100.0, 1e-3, {"trips": job.trips})

    monkeypatch.setattr(model_corpus, "measure_job", fake)
    dev = StandIn(SimCounter())
    n, total, left = collect(dev, table, path, 600.0, "cuda", log=lambda s: None, todo=plan)
    k = len(have)
    assert calls == missing and (n, total) == (len(plan) - 1, len(plan)) and left == ["bfs_step 128: simulated failure"]
    _, after = load_corpus(path)
    assert [(e.kernel, e.config) for e in after[:k]] == have
    assert [e.watts for e in after[:k]] == [e.watts for e in before]  # kept as measured, not measured again
    assert {(e.kernel, e.config) for e in after} == {(j.kernel, j.config) for j in plan} - {("bfs_step", "128")}
    calls.clear()
    assert collect(dev, table, path, 600.0, "cuda", log=lambda s: None, todo=plan)[:2] == (len(plan), len(plan))
    assert calls == [("bfs_step", "128")]
    calls.clear()
    assert collect(dev, table, path, 600.0, "cuda", log=lambda s: None, todo=plan) == (len(plan), len(plan), [])
    assert calls == []


def test_merge_keeps_first_measurement_and_repeats(tmp_path):
    """Two collections of one device: a configuration measured in both keeps the first, the second is in
    ``info["repeats"]``; a corpus of another device is refused (saved H100 and H200 corpora)."""
    from pytest_gpuperf.studies.static_power.power_model import load_corpus, save_corpus
    from pytest_gpuperf.studies.static_power.model_corpus import merge, repeatability

    root = Path(__file__).resolve().parents[1] / "results"
    dev, entries = load_corpus(root / "nvidia-h100-80gb-hbm3" / "power-corpus-cuda.json.xz")
    entries = [dataclasses.replace(e, info={k: v for k, v in e.info.items() if k != "repeats"}) for e in entries]
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    save_corpus(a, dev, entries[:30])
    # configurations 20-29 measured again (2 % more watts), 30-39 new
    save_corpus(b, dev, [dataclasses.replace(e, watts=e.watts * 1.02) for e in entries[20:30]] + entries[30:40])
    _, merged, meta = merge([a, b])
    assert len(merged) == 40 and meta["merged_from"] == ["a.json", "b.json"]
    assert [bool(e.info.get("repeats")) for e in merged[:30]].count(True) == 10
    assert [e.watts for e in merged[20:30]] == [e.watts for e in entries[20:30]]  # the first measurement stays
    rep = repeatability(merged)
    assert rep["n"] == 10 and rep["max_rel"] == pytest.approx(0.02)
    h200, other = load_corpus(root / "nvidia-h200" / "power-corpus-cuda.json.xz")
    c = tmp_path / "c.json"
    save_corpus(c, h200, other[:5])
    with pytest.raises(ValueError, match="merge one device"):
        merge([a, c])


def test_the_two_hold_out_protocols_differ_on_the_saved_corpus():
    """Rows (the thesis' shuffled folds) let a kernel's other configurations train the model; held-out
    kernels do not — on the H100 corpus the first must score better, which is why both are reported."""
    from pytest_gpuperf.studies.static_power.power_model import load_corpus, nested_cv

    root = Path(__file__).resolve().parents[1] / "results"
    _, entries = load_corpus(root / "nvidia-h100-80gb-hbm3" / "power-corpus-cuda.json.xz")
    rows = nested_cv(entries, only=["xgboost"], protocol="rows")["xgboost"].scores
    kernels = nested_cv(entries, only=["xgboost"], protocol="kernels")["xgboost"].scores
    assert rows["mape"] < kernels["mape"]
    with pytest.raises(ValueError, match="protocol"):
        nested_cv(entries, protocol="random")


def test_merging_a_corpus_with_a_copy_of_itself_adds_no_repeats(tmp_path):
    """A session on an offline GPU host carries the corpus it resumes and brings it back: merging the two copies must not count
    each measurement as its own repeat (which read as 0.0 % median repeatability); a real second
    measurement is still a repeat, once, however often the files holding it are merged."""
    from pytest_gpuperf.studies.static_power.power_model import Entry, save_corpus
    from pytest_gpuperf.studies.static_power.model_corpus import merge, repeatability

    a = Entry("k", "local=64", {"x": 1.0}, 200.0, 1e-3, {})
    b = Entry("k", "local=128", {"x": 2.0}, 250.0, 2e-3, {})
    dev = {"key": "dev"}
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    save_corpus(one, dev, [a, b])
    save_corpus(two, dev, [a, Entry("k", "local=128", {"x": 2.0}, 255.0, 2.1e-3, {})])
    _, same, _ = merge([one, one])
    assert all(not e.info.get("repeats") for e in same) and repeatability(same)["n"] == 0
    _, merged, _ = merge([one, two])
    save_corpus(tmp_path / "m.json", dev, merged)
    _, again, _ = merge([tmp_path / "m.json", tmp_path / "m.json", two])
    rep = {e.config: e.info.get("repeats") or [] for e in again}
    assert rep["local=64"] == [] and [r["watts"] for r in rep["local=128"]] == [255.0]
