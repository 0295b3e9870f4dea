"""Saved NVML samples: the energy figures of a GPU run's results file, re-derived from the readings
the power suite saved with them (``info.nvml_samples`` of ``power.*.joules_per_op``). Runs on every
committed results file that has them; none exists until the power suite's first run on a GPU
(``gpuperf run suites/test_power.py --gpuperf-json=…``), so until then this test skips with that reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_gpuperf.util import jsonio
from pytest_gpuperf.devices.nvml import Reading
from pytest_gpuperf.timing.energy import energy_of

ROOT = Path(__file__).resolve().parents[1]


def _saved() -> list[tuple[str, dict]]:
    out = []
    for path in sorted((ROOT / "results").glob("*/power-*.json*")):
        if "corpus" in path.name:
            continue
        doc = jsonio.read_json(path)
        out += [(f"{path.parent.name}/{path.name}:{m['name']}", m) for m in doc.get("metrics", [])
                if m["name"].endswith(".joules_per_op") and m.get("info", {}).get("nvml_samples")]
    return out


SAVED = _saved()


@pytest.mark.skipif(not SAVED, reason="no results/<key>/power-*.json with saved NVML samples yet (run "
                                      "suites/test_power.py on a GPU with --gpuperf-json)")
@pytest.mark.parametrize("where,metric", SAVED, ids=[w for w, _ in SAVED] or None)
def test_saved_samples_give_the_recorded_figures(where, metric):
    info = metric["info"]
    readings = [Reading.from_json(r) for r in info["nvml_samples"]]
    e = energy_of(readings, int(info["power"]["launches"]), float(info["ops_per_launch"]))
    assert e.joules_per_op == pytest.approx(metric["value"], rel=1e-9)
    assert e.watts == pytest.approx(info["power"]["watts"], abs=0.01)
    assert e.steps == pytest.approx(info["power"]["steps"], abs=0.1)
    assert e.throttled == info["power"]["throttled"]


# ---- saved corpora -------------------------------------------------------------------------------
from pytest_gpuperf.studies.static_power import power_model as pmodel  # noqa: E402

#: each saved corpus once, whichever form it is stored in
CORPORA = sorted({p for pattern in ("*/power-corpus-*.json", "*/power-corpus-*.json.gz", "*/power-corpus-*.json.xz")
                  for p in (ROOT / "results").glob(pattern)})


@pytest.mark.skipif(not CORPORA, reason="no results/<key>/power-corpus-*.json[.gz|.xz] yet (python -m "
                                        "pytest_gpuperf.studies.static_power.collect on a GPU)")
@pytest.mark.parametrize("path", CORPORA, ids=[f"{p.parent.name}/{p.name}" for p in CORPORA] or None)
def test_saved_corpus_is_complete_and_reproduces_the_recorded_scores(path):
    """Every entry has power and the model's features; where a results file of the same device recorded
    the random forest's held-out error over this corpus, the same seeds give it again (the cross-validation,
    seconds of fitting, runs only where there is a recorded figure to compare it with)."""
    _, entries = pmodel.load_corpus(path)
    assert entries and all(e.watts > 0 and set(pmodel.SELECTED) <= set(e.features) for e in entries)
    results = [jsonio.read_json(p) for p in sorted(path.parent.glob("power-*.json*")) if p != path
               and "corpus" not in p.name]
    recorded = [m for doc in results for m in doc.get("metrics", []) if m["name"] == "model.power.random_forest.mape"
                and m.get("identity", {}).get("corpus_entries") == len(entries)]
    if len({e.kernel for e in entries}) < 2:
        pytest.skip(f"{path.name}: fewer than two kernels collected so far")
    got = pmodel.nested_cv(entries, only=["random_forest"])["random_forest"].scores["mape"] if recorded else None
    for m in recorded:  # the same corpus and seeds give the same held-out error
        assert got == pytest.approx(m["value"], rel=0.02)  # seeded; scikit-learn versions may differ a little
