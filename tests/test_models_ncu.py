"""Nsight Compute counter collection (counters/ncu.py, ncu_worker.py) — everything but the GPU run itself:
the CSV parser on real ncu 2025.3.1 output from the H100 and on a synthetic multi-kernel file, the
worker's plan, launch matching, error classification and feature assembly."""

from __future__ import annotations

import json
import math
import os
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

from pytest_gpuperf.corpora import kernel_classes as kc
from pytest_gpuperf.counters import ncu, ncu_worker
from pytest_gpuperf.studies.classification import classify

DATA = Path(__file__).parent / "data" / "ncu"
REAL = (DATA / "h100-ncu-check.txt").read_text()
SYNTH = (DATA / "synthetic-kernel-classes.csv").read_text()
SYNTH_METRICS = ["sm__throughput.avg.pct_of_peak_sustained_elapsed",
                 "dram__throughput.avg.pct_of_peak_sustained_elapsed", "l1tex__t_sector_hit_rate.pct"]


def test_parse_real_h100_output():
    """Banner, ==PROF== lines and the program's own output around the table are skipped; thousands
    separators and quoted fields are read."""
    res = ncu.parse_csv(REAL)
    assert [r.id for r in res] == [0, 1, 2, 3]
    assert res[0].kernel == "cupy_fill" and res[1].kernel == "cupy_multiply__float32_float_float32"
    assert res[2].kernel.startswith("void cub::DeviceReduceKernel<")  # commas inside a quoted field
    assert res[0].block == (128, 1, 1) and res[0].grid == (32768, 1, 1) and res[3].grid == (1, 1, 1)
    assert res[0].values["smsp__inst_executed.sum"] == 4587520.0 and res[0].units["smsp__inst_executed.sum"] == "inst"
    assert res[3].values["smsp__inst_executed.sum"] == 755.0
    assert res[1].values["dram__throughput.avg.pct_of_peak_sustained_elapsed"] == pytest.approx(24.54)
    assert res[0].units["sm__throughput.avg.pct_of_peak_sustained_elapsed"] == "%"
    assert all(len(r.values) == 4 for r in res) and res[0].process == "520"
    assert ncu.parse_version(REAL) == "2025.3.1.0"
    # the three metrics the check collected besides the instruction count are in the dataset's list
    assert {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
            "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"} <= set(ncu.METRIC_NAMES)


def test_parse_synthetic_multi_kernel_csv():
    res = ncu.parse_csv(SYNTH)
    assert [(r.id, r.kernel, r.block, r.grid) for r in res] == [
        (0, "K1", (64, 1, 1), (65536, 1, 1)), (1, "K8", (256, 1, 1), (256, 1, 1)), (2, "spmv", (1024, 1, 1), (64, 1, 1))]
    k1, k8, spmv = res
    assert k1.values["smsp__inst_executed.sum"] == 4587520.0
    assert k1.values["dram__bytes_read.sum.per_second"] == pytest.approx(2204.16e9)  # Gbyte/second → byte/second
    assert k1.units["dram__bytes_read.sum.per_second"] == "byte/second"
    assert k8.values["dram__bytes_read.sum.per_second"] == pytest.approx(512.5e6)
    assert k1.values["gpu__time_duration.sum"] == pytest.approx(45.28e-6) and k1.units["gpu__time_duration.sum"] == "second"
    assert k8.values["gpu__time_duration.sum"] == pytest.approx(2e-5)
    assert spmv.values["dram__bytes_read.sum.per_second"] == 1e12
    assert math.isnan(k8.values["l1tex__t_sector_hit_rate.pct"])
    assert ncu.passes(SYNTH) == {"K1": 7, "K8": 7, "spmv": 8}


@pytest.mark.parametrize("text,unit,expect", [("1,234.5", "%", (1234.5, "%")), ("n/a", "", (math.nan, "")),
                                              ("3", "Kbyte", (3000.0, "byte")), ("2", "usecond", (2e-6, "second")),
                                              ("7", "inst/cycle", (7.0, "inst/cycle")), ("x", "", (math.nan, ""))])
def test_parse_value(text, unit, expect):
    v, u = ncu.parse_value(text, unit)
    assert u == expect[1]
    assert (math.isnan(v) and math.isnan(expect[0])) or v == pytest.approx(expect[0])


def test_parse_without_table_and_bad_header():
    assert ncu.parse_csv("==PROF== Connected\n==WARNING== No kernels were profiled.\n") == []
    with pytest.raises(ncu.NcuError, match="Metric Value"):
        ncu.parse_csv('"ID","Kernel Name","Metric Name"\n"0","K1","x"\n')


def test_plan_order_tags_and_shared_buffers():
    runs = ncu_worker.plan(kc.CLASSES + kc.UNSEEN, kc.GPU_GRID, reps=1)
    per_kernel = len(kc.GPU_GRID.vector_sizes) * len(kc.GPU_GRID.locals)
    assert len(runs) == sum(len(kc.GPU_GRID.sizes(k)) * len(kc.GPU_GRID.locals) for k in kc.CLASSES + kc.UNSEEN)
    assert len(runs) == 13 * per_kernel == 195
    assert [r.index for r in runs] == list(range(len(runs)))  # launch order is the tag
    assert runs[0].tag == "r0000" and runs[-1].tag == "r0194"
    assert [r.kernel for r in runs[:per_kernel]] == ["K1"] * per_kernel and runs[-1].kernel == "spmv"
    assert [r.local for r in runs[:5]] == list(kc.GPU_GRID.locals)  # group size innermost
    assert len({r.seed for r in runs[:5]}) == 1 and runs[5].seed != runs[0].seed  # one data set per size
    assert len({r.group for r in runs}) == len({r.seed for r in runs})
    assert len(ncu_worker.plan(("K1",), kc.GPU_GRID, reps=2)) == 2 * per_kernel
    with pytest.raises(KeyError):
        ncu_worker.plan(("K11",), kc.GPU_GRID)
    small = ncu.dataset_plan(per_kernel=2)
    assert len(small) == 26 and [r.index for r in small] == list(range(26))
    assert [r.kernel for r in small[:4]] == ["K1", "K1", "K2", "K2"]


def test_spec_round_trip(tmp_path):
    runs = ncu_worker.plan(("K1", "spmv"), kc.GPU_GRID)
    ncu_worker.write_spec(tmp_path / "s.json", runs, 3, tmp_path / "log.json", sync_timeout_s=5)
    doc = ncu_worker.read_spec(tmp_path / "s.json")
    assert doc["runs"] == runs and doc["device"] == 3 and doc["sync_timeout_s"] == 5.0
    assert doc["launch_log"] == str(tmp_path / "log.json")
    bad = json.loads((tmp_path / "s.json").read_text())
    bad["version"] = 99
    (tmp_path / "b.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="version"):
        ncu_worker.read_spec(tmp_path / "b.json")
    assert ncu_worker.main([]) == 2


class HostArrays:
    """Buffer creation only (the generators' data; no kernels run)."""

    def to_device(self, a):
        return np.asarray(a)

    def empty(self, nbytes):
        return np.empty(nbytes, dtype=np.uint8)


def _launches(runs):
    rng = np.random.default_rng(0)
    return [ncu_worker.launch_record(r, kc.generate(r.kernel, r.size, r.local, HostArrays(), rng).with_local(r.local))
            for r in runs]


def test_launch_records_and_matching():
    runs = [ncu_worker.PlannedRun(0, "K1", 1 << 22, 64, 0, 7), ncu_worker.PlannedRun(1, "K8", 256, 1024, 0, 8),
            ncu_worker.PlannedRun(2, "spmv", 1 << 16, 1024, 0, 9)]
    launches = _launches(runs)
    assert launches[1]["block"] == [256, 1, 1]  # K8 keeps its 16×16 tile whatever the plan's group size
    res = ncu.parse_csv(SYNTH)
    ncu.match(res, launches)  # the synthetic table is exactly these three launches
    with pytest.raises(ncu.NcuError, match="reported 2 kernels"):
        ncu.match(res[:2], launches)
    swapped = [launches[0], launches[2], launches[1]]
    with pytest.raises(ncu.NcuError, match="launch order"):
        ncu.match(res, swapped)
    other_size = _launches([ncu_worker.PlannedRun(0, "K1", 1 << 22, 128, 0, 7)]) + launches[1:]
    with pytest.raises(ncu.NcuError, match="r0000"):
        ncu.match(res, other_size)


def test_command_keeps_clocks_and_filters_kernels(tmp_path):
    cmd = ncu.command("/usr/local/cuda/bin/ncu", ["a.b", "c.d"], tmp_path / "spec.json", python="/usr/bin/python3")
    assert cmd[0] == "/usr/local/cuda/bin/ncu"
    assert cmd[cmd.index("--clock-control") + 1] == "none"  # never change the card's clocks
    assert cmd[cmd.index("--cache-control") + 1] == "all"
    assert cmd[cmd.index("--metrics") + 1] == "a.b,c.d" and "--csv" in cmd
    assert cmd[cmd.index("--target-processes") + 1] == "all" and cmd[cmd.index("--print-units") + 1] == "base"
    flt = cmd[cmd.index("--kernel-name") + 1]
    assert flt.startswith("regex:^(") and all(f"|{k}|" in f"|{flt[8:-2]}|" for k in kc.CLASSES + kc.UNSEEN)
    assert cmd[-4:] == ["/usr/bin/python3", "-m", "pytest_gpuperf.counters.ncu_worker", str(tmp_path / "spec.json")]


def test_worker_env_finds_this_package_first():
    """The worker starts as ``python -m`` in a scratch folder: the first PYTHONPATH entry is the folder that
    holds this very package, and the worker's module name is a file there."""
    first = Path(ncu.worker_env()["PYTHONPATH"].split(os.pathsep)[0])
    assert first / "pytest_gpuperf" == Path(ncu.__file__).resolve().parents[1]
    assert (first / (ncu.WORKER.replace(".", "/") + ".py")).is_file()


def test_metric_list_is_unique_and_mapped():
    assert len(set(ncu.METRIC_NAMES)) == len(ncu.METRIC_NAMES) >= 12
    assert all(m.paper and m.why for m in ncu.METRICS)
    assert not any(n.startswith("smsp__sass") for n in ncu.METRIC_NAMES)  # no SASS-patched (instrumented) metrics
    assert "gld_requested_throughput" in ncu.UNMAPPED


def test_missing_ncu_is_a_skip_reason(tmp_path):
    assert ncu.find_ncu(candidates=(str(tmp_path / "nope" / "ncu"),), path=str(tmp_path)) is None
    with pytest.raises(ncu.NcuUnavailable, match="not found") as exc:
        ncu.require_ncu(candidates=(str(tmp_path / "nope" / "ncu"),), path=str(tmp_path))
    assert "ncu" in exc.value.reason
    fake = tmp_path / "bin" / "ncu"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    assert ncu.find_ncu(candidates=(str(tmp_path / "*" / "ncu"),), path=str(tmp_path)) == str(fake)
    assert ncu.find_ncu(candidates=(), path=str(fake.parent)) == str(fake)


def test_permission_error_is_a_skip_with_the_fix():
    # the form ncu prints when counters are restricted to admin users (see NVIDIA's ERR_NVGPUCTRPERM page)
    out = ("==PROF== Connected to process 77 (/usr/bin/python3)\n"
           "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
           "Counters on the target device 0. For instructions on enabling permissions and to get more "
           "information see https://developer.nvidia.com/ERR_NVGPUCTRPERM\n"
           "==PROF== Disconnected from process 77\n==WARNING== No kernels were profiled.\n")
    err = ncu.diagnose(out, 0, ncu.METRIC_NAMES)
    assert isinstance(err, ncu.NcuUnavailable)
    assert "ERR_NVGPUCTRPERM" in err.reason and "NVreg_RestrictProfilingToAdminUsers=0" in err.reason
    assert isinstance(ncu.diagnose("does not have permission to access NVIDIA GPU Performance Counters", 1, []),
                      ncu.NcuUnavailable)


def test_other_failures_are_errors():
    m = ncu.METRIC_NAMES[3]
    err = ncu.diagnose(f"==ERROR== Failed to find metric {m}\n", 1, ncu.METRIC_NAMES)
    assert isinstance(err, ncu.NcuMetricError) and err.metrics == [m]
    err = ncu.diagnose("Traceback (most recent call last):\nRuntimeError: boom\n", 1, ncu.METRIC_NAMES)
    assert type(err) is ncu.NcuError and "status 1" in str(err) and "boom" in str(err)
    err = ncu.diagnose("==WARNING== No kernels were profiled.\n", 0, ncu.METRIC_NAMES)
    assert type(err) is ncu.NcuError and "no kernel" in str(err)
    assert ncu.diagnose(REAL, 0, ncu.METRIC_NAMES) is None


def test_timeout_kills_the_process_group_and_names_the_limit():
    # a shell starts in milliseconds even on a loaded host (a Python child may not print within the limit there)
    cmd = ["sh", "-c", "sleep 30 & echo started; sleep 30"]
    with pytest.raises(ncu.NcuTimeout, match="2 s timeout") as exc:
        ncu.run_command(cmd, 2.0)
    assert "started" in str(exc.value) and "--gpuperf-ncu-timeout" in str(exc.value)
    rc, out, _, wall = ncu.run_command([sys.executable, "-c", "print('ok')"], 10)
    assert rc == 0 and out.strip() == "ok" and wall < 10


def test_feature_matrix_and_compact():
    res = ncu.parse_csv(SYNTH)
    x, non_finite = ncu.feature_matrix(res, SYNTH_METRICS)
    assert x.shape == (3, 3)
    assert x[:, 0].tolist() == [11.52, 78.90, 20.25] and x[:, 1].tolist() == [87.31, 3.10, 41.00]
    assert x[1, 2] == 0.0 and non_finite == {"l1tex__t_sector_hit_rate.pct": 1}  # n/a → 0, counted
    with pytest.raises(ncu.NcuError, match="no value for"):
        ncu.feature_matrix(res, SYNTH_METRICS + ["smsp__issue_active.avg.pct_of_peak_sustained_active"])
    runs = [ncu_worker.PlannedRun(0, "K1", 1 << 22, 64, 0, 7), ncu_worker.PlannedRun(1, "K8", 256, 1024, 0, 8),
            ncu_worker.PlannedRun(2, "spmv", 1 << 16, 1024, 0, 9)]
    prof = ncu.Profile(runs, res, SYNTH_METRICS, [], ["ncu"], 1.0, SYNTH)
    c = ncu.compact(prof)
    assert c["metrics"] == SYNTH_METRICS and [r["tag"] for r in c["runs"]] == ["r0000", "r0001", "r0002"]
    assert c["runs"][1]["x"] == [78.9, 3.1, 0.0] and c["runs"][2]["block"] == [1024, 1, 1]
    json.dumps(c)


def test_split_unseen_and_agreement():
    x = np.arange(12, dtype=float).reshape(6, 2)
    labels = ["K1", "K1", "K9", "stencil9", "spmv", "K9"]
    xk, y, unseen = classify.split_unseen(x, labels, kc.CLASSES, kc.UNSEEN)
    assert y == ["K1", "K1", "K9", "K9"] and xk[:, 0].tolist() == [0, 2, 4, 10]
    assert set(unseen) == {"stencil9", "spmv"} and unseen["spmv"].tolist() == [[8, 9]]
    with pytest.raises(ValueError, match="neither"):
        classify.split_unseen(x, labels[:-1] + ["copy"], kc.CLASSES, kc.UNSEEN)
    votes = {"stencil9": {"K9": 3, "K1": 1}, "spmv": {"K7": 2, "K8": 2}}
    assert classify.unseen_agreement(votes, kc.UNSEEN_EXPECTED) == pytest.approx(5 / 8)
    with pytest.raises(ValueError):
        classify.unseen_agreement({}, kc.UNSEEN_EXPECTED)
    rng = np.random.default_rng(1)
    ev = classify.evaluate(np.concatenate([rng.normal(c, 0.05, (10, 3)) for c in range(3)]),
                           [f"K{c + 1}" for c in range(3) for _ in range(10)], {"spmv": rng.normal(2, 0.05, (4, 3))})
    assert all(p["spmv"] == ["K3"] * 4 for p in ev.predictions.values())


def test_worker_refuses_without_cuda(tmp_path):
    """Without CuPy/CUDA the worker fails with the backend's reason (what ncu's parent then reports)."""
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is importable here; the worker would open a real device")
    except Exception:  # noqa: BLE001
        pass
    ncu_worker.write_spec(tmp_path / "s.json", ncu_worker.plan(("K1",), kc.CPU_GRID)[:1], 0, tmp_path / "l.json")
    from pytest_gpuperf.errors import BackendUnavailableError
    with pytest.raises(BackendUnavailableError, match="CuPy"):
        ncu_worker.execute(ncu_worker.read_spec(tmp_path / "s.json"))
    assert not os.path.exists(tmp_path / "l.json")
