"""Planted regressions deliver their size on the metric they target, and the gate check plants the size that
lands the claim beyond the baseline (``probes.copy_bandwidth.planted_copy``, ``gatecheck.calibrate``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pytest_gpuperf.errors import GpuPerfError
from pytest_gpuperf.gatecheck import families
from pytest_gpuperf.gatecheck import run as gc
from pytest_gpuperf.helpers import Measurer
from pytest_gpuperf.probes import copy_bandwidth
from pytest_gpuperf.timing import observers
from pytest_gpuperf.timing.measure import MeasureConfig
from suite_support import baselined_tiny_suite

DEV = "opencl:0"
#: the copy plant's size on PoCL
SIZE = 2.0
QUICK = MeasureConfig(warmup=2, min_repeats=25, max_repeats=25, target_rel_spread=0.0, budget_s=30)


@pytest.mark.quiet_host
def test_a_copy_plant_slows_the_1mib_copy_by_about_its_size(cl_device):
    """The 1 MiB copy planted with ``memory=2``, five times: each planted span takes at least 0.7 × the time the
    plant was sized to add (``planted_extra_us``: 2 × the unplanted span it measured just before) beyond that
    unplanted span (the median of the five), the copy itself still happens, and the record names what was
    planted. Judged against the plant's own unplanted span, not a separate measurement: PoCL's 1 MiB copy
    switches between modes far apart, so a separately measured copy mixes a mode change into the plant's size."""
    m = Measurer(cl_device, QUICK)
    load = observers.HostLoad()
    load.start()
    delivered, records = [], []
    for _ in range(5):
        c = copy_bandwidth.measure(cl_device, m, "1MiB", SIZE)
        assert c.copied and c.plant is not None
        records.append(c.record())
        delivered.append((c.measurement.stats.median - c.plant.span_s) / (SIZE * c.plant.span_s))
    window = load.stop()
    info = records[-1]["info"]
    assert info["planted_slowdown"] == SIZE and info["planted_span_us"] > 0 and info["planted_spin_steps"] >= 0
    assert info["planted_extra_us"] == pytest.approx(SIZE * info["planted_span_us"])
    got = float(np.median(delivered))
    if got < 0.7 and observers.contended(window):
        pytest.skip(f"other work held this host's cores while the copies were timed (host window {window}): the "
                    f"plant added {got:.0%} of its time per span, not judged; run on a quieter host")
    assert got >= 0.7, (delivered, info)


def test_calibration_lands_the_claim_beyond_the_baseline_in_both_directions():
    """Lower is better: (1 + F')·machine = (1 + F)·baseline; higher is better: machine / (1 + F') = baseline /
    (1 + F). A machine better than the baseline gets more, one worse gets less (still the claim's test), one
    already beyond the claim the smallest plant; the H200's DRAM chase (655 cycles against 666) gets ~9.8 %."""
    lower = families.calibrated_size(0.0799, 666.4, 655.0, "lower")
    assert lower == pytest.approx(1.0799 * 666.4 / 655.0 - 1, abs=1e-3) and lower >= 1.0799 * 666.4 / 655.0 - 1
    assert 1.0799 * 666.4 <= (1 + lower) * 655.0 < 1.0799 * 666.4 * 1.001  # rounded up, never below the claim
    higher = families.calibrated_size(0.0728, 700.0, 712.0, "higher")  # reads faster: a larger plant
    assert 712.0 / (1 + higher) == pytest.approx(700.0 / 1.0728, rel=1e-3) and higher > 0.0728
    worse = families.calibrated_size(0.10, 100.0, 104.0, "lower")  # the machine is 4 % worse: plant 5.8 %
    assert worse == pytest.approx(1.1 * 100 / 104 - 1, abs=1e-3) and worse < 0.10
    assert families.calibrated_size(0.05, 100.0, 110.0, "lower") == families.MIN_SIZE  # already beyond the claim
    assert families.calibrated_size(0.05, 100.0, 100.0, "higher") == 0.05
    with pytest.raises(ValueError, match="positive values"):
        families.calibrated_size(0.05, 100.0, 0.0, "lower")


def test_calibrate_keeps_the_claim_and_leaves_what_it_cannot_calibrate():
    entries = {"a.cycles": {"value": 200.0, "better": "lower"}, "b.gbs": {"value": 50.0, "better": "higher"},
               "model.sampled.mean_error": {"value": 0.1, "better": "lower"}}
    chosen = [gc.Plant("chase", "0.1", "a.cycles", ()), gc.Plant("memory", "0.2", "b.gbs", ()),
              gc.Plant("model", "0.2", "model.sampled.mean_error", ()), gc.Plant("compute", "0.1", "c.none", ()),
              gc.Plant("ulp", "sin", "a.cycles", ())]
    out = families.calibrate(chosen, entries, {"a.cycles": 190.0, "b.gbs": 55.0, "model.sampled.mean_error": 0.05})
    a, b, model, none, ulp = out
    assert (a.size, a.claim, float(a.arg)) == (0.1, 0.1, families.calibrated_size(0.1, 200.0, 190.0, "lower"))
    assert (a.machine, a.baseline) == (190.0, 200.0)
    assert float(b.arg) == families.calibrated_size(0.2, 50.0, 55.0, "higher") and b.size == 0.2
    assert (model, none, ulp) == tuple(chosen[2:])  # additive, no machine reading, not a fraction: as they were


# One figure that is (1 + the memory plant's size) MB, lower is better: the calibration's bookkeeping without a
# device figure's noise. It judges no timing (every figure it reads is exact), so it runs side by side with the
# other tests, not among the quiet_host ones.


def test_a_calibrated_plant_records_its_claim_and_the_size_it_planted(cl_device, tmp_path):
    """Unplanted results where this machine reads 2 % below the baseline (named by ``--calibrate-from``): the
    0.05 plant is planted at 1.05 / 0.98 − 1, the entry keeps 0.05 as its size and lists what each try planted;
    results of another device are refused before any run; the file's own A/A runs, or an unplanted run before
    each try (``calibrate_each``), calibrate where no results are named."""
    o, bl = baselined_tiny_suite(tmp_path, DEV, "lower")
    key = o.doc.device["key"]
    machine = json.loads((tmp_path / "u.json").read_text())
    (m,) = [m for m in machine["metrics"] if m["name"] == "tiny.moved"]
    m["value"] = 0.98e6
    m["verdict"] = "pass"
    (tmp_path / "machine.json").write_text(json.dumps(machine))
    entries = {"tiny.moved": {"value": 1e6, "better": "lower"}}
    plant = gc.Plant("memory", "0.05", "tiny.moved", ("suites/test_tiny.py",))
    common = dict(device=DEV, aa=0, plant_list=[plant], tries=1, baseline_dir=str(bl), results_dir=tmp_path / "runs",
                  commit="c1", append=False, fresh_first=False, cwd=tmp_path, echo=lambda line: None,
                  calibrate=lambda ps, mv: families.calibrate(ps, entries, mv), device_key=key)
    with pytest.raises(GpuPerfError, match="not of 'other-device'"):
        gc.gatecheck(out=tmp_path / "x.json", **{**common, "device_key": "other-device"},
                     calibrate_from=[tmp_path / "machine.json"])
    assert not (tmp_path / "runs").exists()  # refused before any run
    doc = gc.gatecheck(out=tmp_path / "g.json", calibrate_from=[tmp_path / "machine.json"], **common)
    (p,) = doc["planted"]
    s = families.calibrated_size(0.05, 1e6, 0.98e6, "lower")
    assert (p["size"], p["arg"], p["planted"]) == (0.05, f"{s:g}", [s]) and s > 0.05
    assert p["calibration"] == [{"machine": 0.98e6, "baseline": 1e6}]
    (got,) = [m for m in json.loads((tmp_path / "runs" / "plant-memory-1.json").read_text())["metrics"]
              if m["name"] == "tiny.moved"]
    assert got["value"] == pytest.approx(1e6 * (1 + s))  # the run was planted at the calibrated size
    miss = {**p, "detected": 0, "verdicts": ["pass"]}
    assert f"claim 0.05 beyond the baseline, planted {s:g}" in gc.verdict({"aa": [], "planted": [miss]})[1][0]
    # without results named, the file's own A/A runs of the commit are the machine: here it reads the baseline
    doc = gc.gatecheck(out=tmp_path / "g.json", **{**common, "aa": 1, "append": True})
    assert [(q["size"], q["tries"], q["planted"]) for q in doc["planted"]] == [(0.05, 2, [s, 0.05])]
    assert len(doc["planted"][0]["realized"]) == 2
    # --calibrate-each: an unplanted run of the plant's tests just before the try is the machine
    doc = gc.gatecheck(out=tmp_path / "g.json", **{**common, "append": True, "calibrate_each": True})
    (p,) = doc["planted"]
    assert (p["tries"], p["planted"], len(p["calibration"]), len(p["realized"])) == (3, [s, 0.05, 0.05], 3, 3)
    assert p["calibration"][-1] == {"machine": 1e6, "baseline": 1e6}
    assert (tmp_path / "runs" / "calib-memory-3.json").exists()
    # a call that makes no A/A run and names no results (the file's runs may be another machine's): one unplanted
    # run of the plant's tests before its first try is the machine, for every try of the call
    doc = gc.gatecheck(out=tmp_path / "g.json", **{**common, "tries": 2, "append": True})
    (p,) = doc["planted"]
    assert (p["tries"], p["planted"], len(p["calibration"])) == (5, [s, 0.05, 0.05, 0.05, 0.05], 5)
    assert p["calibration"][-2:] == [{"machine": 1e6, "baseline": 1e6}] * 2
    assert sorted(f.name for f in (tmp_path / "runs").glob("calib-memory-*.json")) == \
        ["calib-memory-3.json", "calib-memory-4.json"]
    # such a call keeps a function plant's argument: the math plant still names its function, not its 1 ulp size
    ulp = gc.Plant("ulp", "sin", "accuracy.fp32.sin.max_ulp", ("suites/test_tiny.py",))
    doc = gc.gatecheck(out=tmp_path / "g.json", **{**common, "plant_list": [ulp], "append": True})
    (u,) = [q for q in doc["planted"] if q["kind"] == "ulp"]
    assert (u["arg"], u["size"]) == ("sin", 1.0) and "planted" not in u
    log = (tmp_path / "runs" / "plant-ulp-1.log").read_text()
    assert "--gpuperf-plant ulp=sin" in log and "takes a math function" not in log


def test_gatecheck_cli_refuses_calibration_results_that_are_not_there(tmp_path, capsys):
    from pytest_gpuperf.cli import main as gpuperf

    code = gpuperf(["baseline", "gatecheck", f"--device={DEV}", "--families", "chase", "--aa", "0",
                    "--calibrate-from", str(tmp_path / "nope.json"), "--out", str(tmp_path / "g.json"),
                    "--results-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code != 0 and "nope.json: no such results file to calibrate the plants from" in err, err
    assert not (tmp_path / "g.json").exists() and not (tmp_path / "gatecheck").exists()


def test_a_calibration_run_is_pooled_with_the_a_a_runs_of_the_same_card(cl_device, tmp_path):
    """A call that makes no A/A run sizes its plants from one unplanted run, pooled with the file's A/A runs made
    on the same card (its UUID): one run caught in another state of the board (its measured clock read higher in
    that process) no longer sizes every try. Runs of another card, or of a device that names no UUID (PoCL), are
    not pooled."""
    baselined_tiny_suite(tmp_path, DEV, "lower")
    doc = json.loads((tmp_path / "u.json").read_text())

    def saved(name: str, value: float, uuid: str | None):
        d = json.loads(json.dumps(doc))
        for m in d["metrics"]:
            if m["name"] == "tiny.moved":
                m["value"], m["verdict"] = value, "pass"
        if uuid is not None:
            d["card"] = {**(d.get("card") or {}), "uuid": uuid}
        (tmp_path / name).write_text(json.dumps(d))
        return tmp_path / name

    calib = saved("calib.json", 0.99e6, "GPU-a")
    aa = [saved("aa-1.json", 1e6, "GPU-a"), saved("aa-2.json", 1e6, "GPU-a"), saved("aa-3.json", 0.9e6, "GPU-b")]
    assert gc.same_card(aa, calib) == aa[:2]
    assert gc.same_card(aa, saved("pocl.json", 0.99e6, None)) == []  # no UUID: nothing to tell the boards apart by
    entries = {"tiny.moved": {"value": 1e6, "better": "lower"}}
    plant = gc.Plant("memory", "0.05", "tiny.moved", ("suites/test_tiny.py",))
    alone = families.calibrate([plant], entries, gc.machine_values([calib]))[0]
    pooled = families.calibrate([plant], entries, gc.machine_values([calib, *gc.same_card(aa, calib)]))[0]
    assert pooled.machine == 1e6 and alone.machine == 0.99e6  # the median of the card's three unplanted runs
    assert float(pooled.arg) == 0.05 and float(alone.arg) > 0.05


def test_an_a_a_run_that_failed_a_test_says_which_though_nothing_regressed_or_went_missing():
    """An A/A run can exit 1 with every metric judged clean: a test failed (a library's error, say). The entry keeps the
    failed tests from the run's results and the verdict names them, so the cause is not hidden behind ``regressed []``."""
    tests = [{"test": "suites/test_memory.py::test_copy_bandwidth[1GiB]", "duration_s": 4.2, "outcome": "passed"},
             {"test": "suites/test_workgroup_tuning.py::test_tile_and_work_group_through_kernel_tuner",
              "duration_s": 0.3, "outcome": "failed"},
             {"test": "suites/test_power.py::test_energy_pareto[reduce]", "duration_s": 0.0, "outcome": "skipped"}]
    assert gc.failed_tests(tests) == ["suites/test_workgroup_tuning.py::test_tile_and_work_group_through_kernel_tuner"]
    entry = {"run": 1, "metrics": 2019, "regressed": [], "missing": [], "exit": 1,
             "failed_tests": gc.failed_tests(tests)}
    passed, problems = gc.verdict({"aa": [entry], "planted": []})
    assert not passed
    assert problems == ["A/A run 1: exit 1, regressed [], missing [], failed tests "
                        "['suites/test_workgroup_tuning.py::test_tile_and_work_group_through_kernel_tuner']"]
    # a file written before A/A entries kept their failed tests still reads
    del entry["failed_tests"]
    assert gc.verdict({"aa": [entry], "planted": []})[1] == ["A/A run 1: exit 1, regressed [], missing []"]
