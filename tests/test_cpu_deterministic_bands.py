"""Figures every run on a CPU device reads the same — summation errors, composite operations' errors, a solver's
or a precision search's counts — gate on the CPU family files as derived figures do on a GPU (catalog
``CPU_DETERMINISTIC``), not at the CPU class's 200 % floor for timings. Checked on the shipped files and on the saved
PoCL 5.0 runs of an Intel Xeon host, which the family file made on an AMD EPYC gates: it passes every such entry, and
a count one higher or an error a fifth larger reads ``regressed``."""

from __future__ import annotations

import functools
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from pytest_gpuperf.baselines import baseline_file, catalog
from pytest_gpuperf.baselines.verdicts import band, compare
from pytest_gpuperf.paths import REVIEWED_BASELINES
from pytest_gpuperf.util import jsonio

ROOT = Path(__file__).resolve().parents[1]
XEON = ROOT / "results" / "pocl-cpu-skylake-avx512-intel-r-xeon-r-processor"
#: a default run, and a refinement run made since its matrices changed (their figures' identity)
XEON_RUNS = (XEON / "ocl-1-opencl.json.xz", XEON / "refine-1-opencl.json.xz")
CPU_FILES = ("pocl-3-1-debian-llvm-15-0-6-cpu", "pocl-5-0-debian-llvm-16-0-6-cpu", "pocl-6-0-debian-llvm-18-1-8-cpu",
             "pocl-pthread-haswell-amd-epyc")
ROWS = [f for f in catalog.FAMILIES if catalog.DETERMINISTIC_SUM in (f.cpu, f.gpu) or f.cpu == catalog.CPU_DETERMINISTIC]


def _rows_entries(key: str) -> dict[str, dict]:
    metrics = baseline_file.load(REVIEWED_BASELINES, key).data["backends"]["opencl"]["metrics"]
    return {n: e for n, e in metrics.items() if any(fnmatchcase(n, f.pattern) for f in ROWS)}


@functools.lru_cache(maxsize=1)
def _xeon() -> dict[str, dict]:
    return {m["name"]: m for run in XEON_RUNS for m in jsonio.read_json(run)["metrics"]}  # the later run's last


def test_the_rows_cover_what_they_were_written_for():
    assert {f.pattern for f in ROWS} == {"accuracy.sum.*.abs_err", "accuracy.cmp.*.max_rel_err",
                                         "precision.*.iterations", "precision.vprec.*.min_mantissa_bits"}


@pytest.mark.parametrize("key", CPU_FILES)
def test_each_cpu_file_gates_its_deterministic_entries_within_ten_percent(key):
    entries = _rows_entries(key)
    assert len(entries) >= 28, (key, len(entries))
    for name, e in entries.items():
        assert len(set(e.get("run_values") or [e["value"]])) == 1, (key, name)  # every run read one value
        width = band(float(e["value"]), e["tolerance"])
        assert width <= 0.1 * abs(float(e["value"])) or width <= 1e-30, (key, name, e["tolerance"])


def test_an_intel_xeon_passes_the_epyc_made_family_and_a_changed_figure_regresses():
    entries, xeon = _rows_entries("pocl-5-0-debian-llvm-16-0-6-cpu"), _xeon()
    assert len(entries) == 44
    moved = 0
    for name, e in entries.items():
        gate, m = catalog.across_hosts(name, e), xeon[name]
        same = dict(identity=m.get("identity"), source_digest=m.get("source_digest"))
        assert compare(m["value"], e["better"], gate, **same).verdict == "pass", name
        if e["value"]:
            worse = m["value"] + 1 if e["unit"] in ("iterations", "bits") else m["value"] * 1.2
            assert compare(worse, e["better"], gate, **same).verdict == "regressed", (name, gate["tolerance"])
            moved += 1
    assert moved >= 39
