"""The sampled GPU gates the exact rank test gave power, proved on saved raw samples.

Every entry of the shipped H200 and H100 baselines whose gate could not regress under the normal
approximation (``scripts/aa_bands.py``: ``gained_power``) is judged against the samples of every saved A/A run
made since its baseline on a new machine: unchanged, no run reads ``regressed``; the same samples
scaled so that their median moves by the entry's stated MDE in its bad direction read ``regressed`` in every
run. The bands the script set from the spread between machines are what the shipped files hold."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest

from pytest_gpuperf.baselines import baseline_file, catalog
from pytest_gpuperf.baselines.detection import LOOSE
from pytest_gpuperf.baselines.table import power
from pytest_gpuperf.baselines.verdicts import compare
from pytest_gpuperf.paths import REVIEWED_BASELINES
from suite_support import load_script

ROOT = Path(__file__).resolve().parents[1]
aa_bands = load_script("aa_bands")
# one xdist worker runs this module and the others of its group (test_aa_band_plants.py, test_derived_bands.py,
# test_derived_informational.py; scripts/run_tests.sh: --dist loadgroup): the saved A/A runs and shipped baselines
# they read are parsed once, not once in each worker
pytestmark = pytest.mark.xdist_group("saved-aa-runs")


_runs = aa_bands.aa_runs  # read once per process (aa_bands caches them)


@pytest.fixture(scope="module", params=aa_bands.KEYS)
def device(request):
    """(key, the mended entries by name, the A/A runs of the key's cards)."""
    metrics = baseline_file.load(REVIEWED_BASELINES, request.param).data["backends"]["cuda"]["metrics"]
    mended = {n: e for n, e in metrics.items() if aa_bands.gained_power(e)}
    return request.param, mended, _runs(request.param, "cuda")


def _judge(name: str, entry: dict, samples: list[float]) -> str:
    return compare(statistics.median(samples), entry["better"], entry, samples=samples, name=name,
                   unit=entry["unit"], identity=entry.get("identity"), info=entry.get("info")).verdict


def test_the_mended_gates_are_the_blind_spot_the_gate_check_found(device):
    """About a hundred sampled entries per card: throughput, summation times, pointer chases."""
    key, mended, runs = device
    families = {".".join(n.split(".")[:2]) for n in mended}
    assert len(mended) >= 95 and {"throughput.fp32", "accuracy.sum", "memory.chase"} <= families, families
    assert len({r.machine for r in runs}) >= 4


def test_every_mended_gate_states_a_finite_mde_and_a_loose_one_its_written_cause(device):
    """Finite everywhere; the few still looser than 25 % are summation times whose runs differ by up to 10 %,
    the cause their catalog row writes."""
    _, mended, _ = device
    powers = {n: power(n, e) for n, e in mended.items()}
    assert not [n for n, p in powers.items() if p.mde is None or not math.isfinite(p.mde)]
    loose = [n for n, p in powers.items() if p.mde > LOOSE]
    assert len(loose) < 10 and all(catalog.wide_band_cause(n, mended[n]["unit"]) for n in loose), loose


def test_saved_a_a_runs_read_no_regression_and_mde_plants_on_their_samples_regress(device):
    key, mended, runs = device
    false_alarms, missed, judged = [], [], 0
    for name, entry in sorted(mended.items()):
        mde = power(name, entry).mde
        sign = -1.0 if entry["better"] == "higher" else 1.0
        target = float(entry["value"]) * (1.0 + sign * mde * 1.001)
        for reading in aa_bands.readings(name, entry, runs):
            if len(reading.samples) < 5:
                continue
            judged += 1
            samples = list(reading.samples)
            if _judge(name, entry, samples) == "regressed":
                false_alarms.append(f"{name} {reading.run.label} {reading.delta:+.2%}")
            scale = target / statistics.median(samples)
            if _judge(name, entry, [x * scale for x in samples]) != "regressed":
                missed.append(f"{name} {reading.run.label} (MDE {mde:.2%})")
    assert judged > 500, judged
    assert false_alarms == [] and missed == [], (false_alarms[:10], missed[:10])


def test_the_bands_set_between_machines_are_the_shipped_ones():
    """``scripts/aa_bands.py`` finds nothing left to set: every A/A run of a mended gate is inside its band, and
    each band it set names its runs and cause in the entry's provenance."""
    for key in aa_bands.KEYS:
        metrics = baseline_file.load(REVIEWED_BASELINES, key).data["backends"]["cuda"]["metrics"]
        causes, _ = aa_bands.mend_section(key, metrics, _runs(key, "cuda"))
        assert causes == {}, causes
        named = {n: e["provenance"]["band_from"] for n, e in metrics.items()
                 if e.get("provenance", {}).get("band_from", {}).get("script") == "scripts/aa_bands.py"}
        assert named and all(n in b["causes"] and b["runs"] for n, b in named.items())
        assert all(e["tolerance"]["k"] * e["tolerance"]["spread"] > 0.01 * e["value"] for n, e in metrics.items()
                   if n in named)


def test_the_h200_gate_check_s_own_plants_that_read_pass_now_regress():
    """The planted runs of the gate check that found the blind spot (results/nvidia-h200/gatecheck-7ee28c0):
    every planted figure of a mended gate that left its band (the throughput chains 1.5 % slower, the summation
    times, the 4 and 16 MiB chases) reads ``regressed``, where 35 of them read ``pass`` then, at p = 0.0012."""
    from pytest_gpuperf.util import jsonio

    metrics = baseline_file.load(REVIEWED_BASELINES, "nvidia-h200").data["backends"]["cuda"]["metrics"]
    folder = ROOT / "results" / "nvidia-h200" / "gatecheck-7ee28c0"
    then, now = [], []
    for path in sorted((p for p in folder.glob("plant-*.json*") if jsonio.is_results_name(p.name))):
        if path.name.split("-")[1] not in ("throughput", "summation", "chase"):
            continue
        for m in jsonio.read_json(path)["metrics"]:
            entry = metrics.get(m["name"])
            samples = (m.get("stats") or {}).get("samples") or []
            if entry is None or not aa_bands.gained_power(entry) or len(samples) < 5 \
                    or not aa_bands.outside(entry, float(m["value"])):
                continue
            then.append(m["verdict"])
            now.append(compare(float(m["value"]), entry["better"], entry, samples=samples, name=m["name"],
                               unit=entry["unit"], identity=m.get("identity"), info=m.get("info")).verdict)
    assert then.count("pass") >= 30 and set(now) == {"regressed"}, (then.count("pass"), len(now), set(now))
