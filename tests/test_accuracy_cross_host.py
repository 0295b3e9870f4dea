"""The same device outputs scored on two hosts: a binary64 mean error is scored against a long double
reference whose last bits depend on the host's CPU. Saved PoCL 5.0 runs of an AMD EPYC and of an Intel Xeon
host both pass every deterministic accuracy figure of the shipped PoCL 5.0 family baseline as it gates a host
(``baselines.lookup``: a family entry across hosts), while one input's error moved by one ulp still regresses
any of them; the family file itself holds the exact band."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_gpuperf import baselines as bl
from pytest_gpuperf.baselines import lookup
from pytest_gpuperf.util import jsonio
from pytest_gpuperf.verdictwords import Gate

ROOT = Path(__file__).resolve().parents[1]
FAMILY = ROOT / "pytest_gpuperf" / "baselines" / "reviewed" / "pocl-5-0-debian-llvm-16-0-6-cpu.json"
RUNS = {"amd": "pocl-cpu-skylake-avx512-amd-epyc/pocl5-1-opencl.json.xz",
        "intel": "pocl-cpu-skylake-avx512-intel-r-xeon-r-processor/ocl-1-opencl.json.xz"}
MEANS = re.compile(r"^accuracy\.(fp64|pyopencl\.fp64|cupy\.fp64)\.[a-z0-9_]+\.mean_ulp$")


def _entries() -> dict:
    """The family's entries as they gate a host with no baseline of its own (the Xeon's key)."""
    src = lookup.resolve(ROOT / "no-such-folder", "pocl-cpu-skylake-avx512-intel-r-xeon-r-processor", "opencl",
                         family_key=FAMILY.stem)
    assert src.family_count > 300
    return src.file.metrics("opencl")


def test_the_family_file_itself_holds_the_exact_band():
    shipped = json.loads(FAMILY.read_text())["backends"]["opencl"]["metrics"]
    means = [e for n, e in shipped.items() if MEANS.match(n)]
    assert means and all(e["tolerance"]["abs"] == 1e-06 for e in means)


def _run(host: str) -> dict:
    return {m["name"]: m for m in jsonio.read_json(ROOT / "results" / RUNS[host])["metrics"]}  # a delta read whole


@pytest.mark.parametrize("host", sorted(RUNS))
def test_every_deterministic_accuracy_figure_passes_on_both_hosts(host):
    run, judged = _run(host), 0
    for name, entry in _entries().items():
        if not name.startswith("accuracy.") or name not in run or entry.get("better") == "bound":
            continue
        m = run[name]
        cmp = bl.compare(m["value"], m["better"], entry, identity=m.get("identity") or {}, name=name, unit=m["unit"],
                         info=m.get("info") or {}, source_digest=m.get("source_digest"))
        assert cmp.verdict in (Gate.PASS, Gate.LOOSE), (name, m["value"], entry["value"], entry["tolerance"])
        judged += 1
    assert judged > 200


def test_the_hosts_differ_and_one_input_off_by_one_ulp_is_still_caught():
    amd, intel, entries = _run("amd"), _run("intel"), _entries()
    means = [n for n in entries if MEANS.match(n) and n in amd and n in intel]
    assert means, "the family lost its binary64 means"
    moved = [n for n in means if amd[n]["value"] != intel[n]["value"]]
    assert len(moved) > 10, "the two hosts' references no longer differ: is the x87 note still true?"
    for n in means:
        m, entry = intel[n], entries[n]
        shift = 1.0 / int(m["info"].get("n") or m["identity"]["n"])  # one of its n inputs one ulp further off
        worse = bl.compare(entry["value"] + shift, m["better"], entry, identity=m.get("identity") or {}, name=n,
                           unit=m["unit"], info=m.get("info") or {}, source_digest=m.get("source_digest"))
        assert worse.verdict == Gate.REGRESSED, (n, shift, entry["tolerance"])
