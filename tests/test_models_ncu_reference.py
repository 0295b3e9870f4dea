"""The kernel-class suite's stored Nsight Compute profiles (counters/ncu_reference.py), without a GPU: the
key, the store, the spot-check rule on saved H100/H200 profiles, the figures of a stored profile, and the
whole collection (miss, hit, failed spot check, retune) on a real PoCL device with ncu replaced by a
replayer of saved ncu output (no GPU here to profile; the flow around ncu is what is tested)."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import sys
import warnings
from pathlib import Path

import pytest

from pytest_gpuperf import NCU_REFERENCE_SCHEMA, TUNING_CACHE_SCHEMA
from pytest_gpuperf.corpora import kernel_classes as kc
from pytest_gpuperf.counters import ncu, ncu_reference as nr
from pytest_gpuperf.devices.base import DeviceInfo
from pytest_gpuperf.schemas import SchemaError
from pytest_gpuperf.studies.classification import class_records
from pytest_gpuperf.util import jsonio

RESULTS = Path(__file__).resolve().parents[1] / "results"
H100 = RESULTS / "nvidia-h100-80gb-hbm3" / "ncu-kernel-classes-cuda0.csv.gz"
H100_RUN1 = RESULTS / "nvidia-h100-80gb-hbm3" / "ncu-kernel-classes-run1-cuda0.csv.gz"
H200 = RESULTS / "nvidia-h200" / "ncu-kernel-classes-cuda0.csv.gz"
VERSION = "2025.3.1.0"
INFO = DeviceInfo(backend="cuda", index=0, name="NVIDIA H100 80GB HBM3", vendor="NVIDIA", key="nvidia-h100-80gb-hbm3",
                  driver_version="580.95.05", runtime_version="13.0", toolkit_version="13.0",
                  compute_capability="9.0")


def _saved(path: Path, runs: list | None = None) -> ncu.Profile:
    """A saved ncu CSV of the whole dataset as :func:`ncu.profile` returns it (the launch log is the rows'
    own launch shapes: the saved runs were checked against the worker's log when they were taken)."""
    runs = runs or ncu.dataset_plan()
    text = jsonio.read_text(path)
    res = ncu.parse_csv(text)
    assert [r.kernel for r in res] == [r.kernel for r in runs]  # the saved profile is of this plan
    launches = [{"tag": r.tag, "index": r.index, "kernel": x.kernel, "block": list(x.block), "grid": list(x.grid)}
                for r, x in zip(runs, res)]
    return ncu.Profile(runs, res, list(ncu.METRIC_NAMES), [], ["ncu", "--csv"], 90.0, text, VERSION, {"K1": 9}, launches)


@pytest.fixture(scope="module")
def h100() -> ncu.Profile:
    return _saved(H100)


def _subset(prof: ncu.Profile, runs: list) -> ncu.Profile:
    """The profile of ``runs`` only, as a spot profile of them would come back."""
    idx = [r.index for r in runs]
    return dataclasses.replace(prof, runs=list(runs), results=[prof.results[i] for i in idx])


# ---- the key ------------------------------------------------------------------------------------------
def test_key_is_stable_and_changes_with_everything_that_shapes_a_counter(monkeypatch):
    runs = ncu.dataset_plan()
    base = nr.key(nr.key_fields(runs, INFO, VERSION))
    assert base == nr.key(nr.key_fields(ncu.dataset_plan(), INFO, VERSION)) and base.startswith("ncu-")
    json.dumps(nr.key_fields(runs, INFO, VERSION), allow_nan=False)
    changed = {
        "driver": nr.key(nr.key_fields(runs, dataclasses.replace(INFO, driver_version="575.57.08"), VERSION)),
        "toolkit": nr.key(nr.key_fields(runs, dataclasses.replace(INFO, toolkit_version="12.9"), VERSION)),
        "runtime": nr.key(nr.key_fields(runs, dataclasses.replace(INFO, runtime_version="12.9"), VERSION)),
        "device": nr.key(nr.key_fields(runs, dataclasses.replace(INFO, key="nvidia-h200"), VERSION)),
        "ncu": nr.key(nr.key_fields(runs, INFO, "2025.2.0.0")),
        "metrics": nr.key(nr.key_fields(runs, INFO, VERSION, ncu.METRIC_NAMES[:-1])),
        "plan": nr.key(nr.key_fields(ncu.dataset_plan(per_kernel=1), INFO, VERSION)),
        "seed": nr.key(nr.key_fields([dataclasses.replace(runs[0], seed=99)] + runs[1:], INFO, VERSION)),
    }
    monkeypatch.setitem(kc.SOURCES, "K1", kc.SOURCES["K1"].replace("0.5f", "0.25f") + " ")
    changed["source"] = nr.key(nr.key_fields(runs, INFO, VERSION))
    monkeypatch.undo()
    monkeypatch.setattr(ncu, "NCU_OPTIONS", ncu.NCU_OPTIONS[:-2] + ("--clock-control", "base"))
    changed["ncu options"] = nr.key(nr.key_fields(runs, INFO, VERSION))
    monkeypatch.undo()
    assert all(k != base for k in changed.values()), [n for n, k in changed.items() if k == base]
    assert len(set(changed.values())) == len(changed)
    # which card of the model, and its index, do not shape counters: the spot check tells cards apart
    assert nr.key(nr.key_fields(runs, dataclasses.replace(INFO, index=3, name="other"), VERSION)) == base


def test_the_cache_folder_is_the_user_cache_dir_unless_named(monkeypatch, tmp_path):
    monkeypatch.delenv(nr.ENV, raising=False)
    monkeypatch.delenv("GPUPERF_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert nr.cache_dir() == tmp_path / "xdg" / "pytest-gpuperf" / nr.FOLDER
    monkeypatch.setenv("GPUPERF_CACHE", str(tmp_path / "all"))
    assert nr.cache_dir() == tmp_path / "all" / nr.FOLDER
    monkeypatch.setenv(nr.ENV, str(tmp_path / "mine"))
    assert nr.cache_dir() == tmp_path / "mine"


# ---- the store ----------------------------------------------------------------------------------------
def test_store_and_load_round_trip_a_saved_profile(h100, tmp_path):
    fields = nr.key_fields(h100.runs, INFO, VERSION)
    cache = nr.NcuReferenceCache(tmp_path)
    path = cache.put(nr.key(fields), nr.entry_of(h100, fields, "2025-01-01T00:00:00+00:00"))
    entry = cache.get(nr.key(fields))
    assert entry["schema"] == NCU_REFERENCE_SCHEMA and entry["key"] == nr.key(fields) and path.exists()
    back = nr.profile_of(entry, ncu.dataset_plan())
    assert back.raw == h100.raw and back.metrics == h100.metrics and back.version == VERSION
    assert back.passes == {"K1": 9} and back.launches == h100.launches and back.command == h100.command
    assert [(r.id, r.kernel, r.block, r.grid, r.units) for r in back.results] == \
        [(r.id, r.kernel, r.block, r.grid, r.units) for r in h100.results]
    x0, _ = ncu.feature_matrix(h100.results, h100.metrics)
    x1, _ = ncu.feature_matrix(back.results, back.metrics)
    assert (x0 == x1).all()


def test_a_stored_profile_gives_the_figures_its_csv_gives(h100, tmp_path):
    fields = nr.key_fields(h100.runs, INFO, VERSION)
    cache = nr.NcuReferenceCache(tmp_path)
    cache.put(nr.key(fields), nr.entry_of(h100, fields, "2025-01-01T00:00:00+00:00"))
    back = nr.profile_of(cache.get(nr.key(fields)), ncu.dataset_plan())
    direct, cached = class_records.classify_counters(h100), class_records.classify_counters(back)
    assert direct.evaluation.accuracy == cached.evaluation.accuracy
    assert direct.evaluation.predictions == cached.evaluation.predictions and direct.non_finite == cached.non_finite
    info = {"cached": True, "key": nr.key(fields)}
    a = class_records.counter_records(h100, direct, tmp_path / "a.csv")
    b = class_records.counter_records(back, cached, tmp_path / "a.csv", info)
    assert [(r["name"], r["value"], r["identity"]) for r in a] == [(r["name"], r["value"], r["identity"]) for r in b]
    accuracy = [r for r in b if r["name"].endswith(".accuracy")]
    assert accuracy and all(r["info"]["collection"]["reference"] == info for r in accuracy)
    assert all(r["info"]["reference"] == info for r in b if r["name"].endswith(".unseen_agreement"))
    assert b[0]["info"]["dataset"] == a[0]["info"]["dataset"]


def _refused(cache: nr.NcuReferenceCache, key: str, match: str) -> None:
    with pytest.warns(nr.StaleNcuReference, match=match):
        assert cache.get(key) is None


def test_torn_foreign_and_broken_entries_are_misses_that_say_why(h100, tmp_path):
    cache = nr.NcuReferenceCache(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.get("absent") is None  # a plain miss says nothing
    fields = nr.key_fields(h100.runs, INFO, VERSION)
    good = {"schema": NCU_REFERENCE_SCHEMA, "key": "k", **nr.entry_of(h100, fields, "2025-01-01T00:00:00+00:00")}
    text = json.dumps(good)
    cache.path("torn").write_text(text[: len(text) // 2])
    _refused(cache, "torn", "not JSON")
    cache.path("v2").write_text(json.dumps({**good, "schema": "pytest-gpuperf-ncu-reference/2"}))
    _refused(cache, "v2", "pytest-gpuperf-ncu-reference/2")
    cache.path("tuning").write_text(json.dumps({**good, "schema": TUNING_CACHE_SCHEMA}))
    _refused(cache, "tuning", "expected 'pytest-gpuperf-ncu-reference/1'")
    cache.path("nocsv").write_text(json.dumps({k: v for k, v in good.items() if k != "csv"}))
    _refused(cache, "nocsv", "csv")
    with pytest.raises(SchemaError, match="metrics"):
        cache.put("bad", {**nr.entry_of(h100, fields, "t"), "metrics": []})
    assert not cache.path("bad").exists()


def test_an_entry_that_does_not_hold_the_plan_is_refused(h100):
    fields = nr.key_fields(h100.runs, INFO, VERSION)
    entry = nr.entry_of(h100, fields, "t")
    with pytest.raises(ncu.NcuError, match="stored plan"):
        nr.profile_of(entry, ncu.dataset_plan(per_kernel=1))
    swapped = {**entry, "launches": [entry["launches"][1], entry["launches"][0]] + entry["launches"][2:]}
    with pytest.raises(ncu.NcuError, match="launch order"):
        nr.profile_of(swapped, ncu.dataset_plan())
    with pytest.raises(ncu.NcuError, match="dropped"):
        nr.profile_of({**entry, "dropped": [ncu.METRIC_NAMES[0]]}, ncu.dataset_plan())
    with pytest.raises(ncu.NcuError, match="no value for"):
        nr.profile_of({**entry, "metrics": entry["metrics"] + ["smsp__inst_executed.sum"]}, ncu.dataset_plan())


def test_only_a_clean_whole_profile_is_stored(h100, tmp_path):
    fields = nr.key_fields(h100.runs, INFO, VERSION)
    cache = nr.NcuReferenceCache(tmp_path / "c")
    ref = nr.store(cache, nr.CounterReference("k1", str(cache.path("k1"))), dataclasses.replace(h100, dropped=["x.y"]),
                   fields)
    assert not ref.stored and "dropped" in ref.why and not cache.path("k1").exists()
    ref = nr.store(cache, nr.CounterReference("k2", ""), h100, fields, "the card throttled while ncu profiled")
    assert not ref.stored and ref.why == "the card throttled while ncu profiled" and not cache.path("k2").exists()
    ref = nr.store(cache, nr.CounterReference("k3", ""), h100, fields)
    assert ref.stored and ref.measured and cache.get("k3")["measured"] == ref.measured
    (tmp_path / "file").write_text("")
    ref = nr.store(nr.NcuReferenceCache(tmp_path / "file"), nr.CounterReference("k4", ""), h100, fields)
    assert not ref.stored and ref.why.startswith("not written")
    info = ref.info()
    assert info["cached"] is False and info["stored"] is False and "why" in info
    json.dumps(info, allow_nan=False)


# ---- the spot check -----------------------------------------------------------------------------------
def test_spot_plan_takes_the_middle_run_of_each_kernel():
    runs = ncu.dataset_plan()
    spot = nr.spot_plan(runs)
    assert [r.kernel for r in spot] == list(kc.CLASSES + kc.UNSEEN)
    assert all(r.size == kc.GPU_GRID.sizes(r.kernel)[1] and r.local == kc.GPU_GRID.locals[2] for r in spot)
    assert all(runs[r.index] == r for r in spot)  # the very launches of the plan, seeds included


def test_spot_rule():
    assert nr.allowed("%", 50.0, 45.0) == 10.0 and nr.allowed("%", 90.0, 80.0) == pytest.approx(18.0)
    assert nr.allowed("inst/cycle", 0.02, 0.05) == 0.1 and nr.allowed("inst", 10.0, 12.0) == pytest.approx(2.4)


def test_two_profiles_of_one_build_agree_and_another_card_does_not(h100):
    run1 = _saved(H100_RUN1)
    whole = nr.spot_check(h100, run1)  # every value of the dataset, not only the spot runs
    assert whole.agrees and whole.values == 195 * len(ncu.METRIC_NAMES) and 0 < whole.worst.ratio <= 1.0
    spot = nr.spot_check(h100, _subset(run1, nr.spot_plan(h100.runs)))
    assert spot.agrees and spot.runs == 13 and spot.values == 13 * len(ncu.METRIC_NAMES)
    assert spot.info()["max_deviation"] <= 1.0 and "why" not in spot.info()
    other = nr.spot_check(h100, _subset(_saved(H200), nr.spot_plan(h100.runs)))
    assert not other.agrees and len({d.kernel for d in other.disagreeing}) >= 7
    assert other.info()["max_deviation"] > 1.0 and "out of" in other.info()["why"]
    json.dumps(other.info(), allow_nan=False)


def _perturbed(prof: ncu.Profile, run: int, metric: str, value: float) -> ncu.Profile:
    results = list(prof.results)
    res = results[run]
    results[run] = dataclasses.replace(res, values={**res.values, metric: value})
    return dataclasses.replace(prof, results=results)


def test_one_counter_out_of_its_band_fails_the_spot_check(h100):
    spot_runs = nr.spot_plan(h100.runs)
    k9 = next(r for r in spot_runs if r.kernel == "K9")
    metric = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
    old = h100.results[k9.index].values[metric]
    within = nr.spot_check(h100, _subset(_perturbed(h100, k9.index, metric, old + 9.5), spot_runs))
    assert within.agrees and within.worst.metric == metric and within.worst.ratio == pytest.approx(0.95, rel=0.02)
    out = nr.spot_check(h100, _subset(_perturbed(h100, k9.index, metric, old * 1.3 + 10.5), spot_runs))
    assert not out.agrees and [(d.kernel, d.metric) for d in out.disagreeing] == [("K9", metric)]
    assert f"K9 ({k9.tag}) {metric}" in out.describe()
    ratio = "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"
    k8 = next(r for r in spot_runs if r.kernel == "K8")
    doubled = _perturbed(h100, k8.index, ratio, 2 * h100.results[k8.index].values[ratio] + 0.2)
    assert [d.metric for d in nr.spot_check(h100, _subset(doubled, spot_runs)).disagreeing] == [ratio]
    # a counter the spot profile lacks (ncu dropped it) is a disagreement, not a pass
    res = h100.results[k8.index]
    lacking = dataclasses.replace(res, values={k: v for k, v in res.values.items() if k != ratio})
    gone = nr.spot_check(h100, _subset(dataclasses.replace(h100, results=[lacking if i == k8.index else r
                                                                          for i, r in enumerate(h100.results)]),
                                       spot_runs))
    assert not gone.agrees and gone.missing == (f"{k8.tag} {ratio}",) and "lacks" in gone.describe()


def test_non_finite_counters_compare_as_the_classifier_sees_them(h100):
    spot_runs = nr.spot_plan(h100.runs)[:1]
    metric = "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio"
    zero = _perturbed(h100, spot_runs[0].index, metric, 0.0)
    nan = _perturbed(h100, spot_runs[0].index, metric, float("nan"))
    assert nr.spot_check(zero, _subset(nan, spot_runs)).agrees  # n/a reads 0 in the features, as here
    assert not nr.spot_check(h100, _subset(h100, [])).agrees  # nothing compared is no agreement


# ---- the whole collection ---------------------------------------------------------------------------
#: ncu's stand-in: prints the saved profile's rows of the spec's runs (from $REPLAY_SPOT for fewer runs than
#: the whole plan) renumbered as ncu numbers them, and writes the launch log the worker would have written
REPLAY = r'''
import csv, gzip, json, os, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2025.3.1.0 (build 0) (public-release)")
    sys.exit(0)
spec = json.load(open(args[-1]))
runs = spec["runs"]
source = os.environ["REPLAY_SPOT" if len(runs) < 195 else "REPLAY_FULL"]
lines = gzip.decompress(open(source, "rb").read()).decode().splitlines()
start = next(i for i, ln in enumerate(lines) if ln.startswith('"ID"'))
header = next(csv.reader([lines[start]]))
col = {h: i for i, h in enumerate(header)}
rows = {}
for row in csv.reader(ln for ln in lines[start + 1:] if ln.startswith('"')):
    rows.setdefault(int(row[col["ID"]]), []).append(row)
out = csv.writer(sys.stdout, quoting=csv.QUOTE_ALL, lineterminator="\n")
print("==PROF== Connected to process 1 (python)")
out.writerow(header)
log = []
for n, run in enumerate(runs):
    for row in rows[run["index"]]:
        out.writerow([str(n) if i == col["ID"] else v for i, v in enumerate(row)])
    first = rows[run["index"]][0]
    log.append({"tag": "r%04d" % run["index"], "index": run["index"], "kernel": first[col["Kernel Name"]],
                "block": [int(v) for v in first[col["Block Size"]].strip("()").split(",")],
                "grid": [int(v) for v in first[col["Grid Size"]].strip("()").split(",")]})
json.dump(log, open(spec["launch_log"], "w"))
'''


@pytest.fixture
def replay_ncu(tmp_path, monkeypatch) -> str:
    path = tmp_path / "bin" / "ncu"
    path.parent.mkdir()
    path.write_text(f"#!{sys.executable}\n{REPLAY}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("REPLAY_FULL", str(H100))
    monkeypatch.setenv("REPLAY_SPOT", str(H100_RUN1))
    return str(path)


def test_collection_stores_then_spot_checks_then_reprofiles(cl_device, replay_ncu, tmp_path, monkeypatch):
    runs, root = ncu.dataset_plan(), tmp_path / "cache"
    cold, ref = nr.collect(cl_device, runs, replay_ncu, 60, tmp_path / "w1", root=root)
    assert not ref.cached and ref.stored and "no stored profile" in ref.miss and Path(ref.path).exists()
    assert cold.version == VERSION and len(cold.results) == 195 and len(cold.launches) == 195
    warm, hit = nr.collect(cl_device, runs, replay_ncu, 60, tmp_path / "w2", root=root)
    assert hit.cached and hit.key == ref.key and hit.measured == ref.measured
    assert hit.spot["runs"] == 13 and hit.spot["agrees"] and hit.spot["max_deviation"] <= 1.0
    assert warm.raw == cold.raw and warm.metrics == cold.metrics and warm.runs == runs
    assert (ncu.feature_matrix(warm.results, warm.metrics)[0] == ncu.feature_matrix(cold.results, cold.metrics)[0]).all()
    assert set(hit.info()) == {"cached", "key", "measured", "spot_check", "reviewed"} and not hit.reviewed
    json.dumps(hit.info(), allow_nan=False)
    monkeypatch.setenv("REPLAY_SPOT", str(H200))  # the card no longer gives the stored counters
    again, miss = nr.collect(cl_device, runs, replay_ncu, 60, tmp_path / "w3", root=root)
    assert not miss.cached and miss.miss.startswith("spot check disagreed") and miss.stored
    assert miss.spot["agrees"] is False and miss.measured != "" and len(again.results) == 195
    fresh, retuned = nr.collect(cl_device, runs, replay_ncu, 60, tmp_path / "w4", root=root, retune=True)
    assert not retuned.cached and "--gpuperf-retune" in retuned.miss and retuned.spot is None and retuned.stored
    assert os.listdir(root) == [Path(ref.path).name]
