"""A saved slice of the project's real history (``tests/data/history/slice.json.gz``): every run of two
devices that recorded one of :data:`METRICS`, with only those metrics — what the hand-labelled step test
(``tests/test_history_detect.py``) reads. Rebuild it from the committed results with
``python tests/history_slice.py`` (it imports ``results/`` into a temporary database first)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLICE = ROOT / "tests/data/history/slice.json.gz"

#: (device key, backend) → the metrics kept: real steps, noise that looked like steps, an identity
#: change, planted runs beside a quiet series, a deterministic change, a metric gated only if stable
METRICS: dict[tuple[str, str], tuple[str, ...]] = {
    ("nvidia-h100-80gb-hbm3", "cuda"): (
        "model.ptx.mean_error", "model.ptx.dwarf.monte_carlo.mape", "memory.global.latency.unloaded.cycles",
        "accuracy.sum.double.parallel.n20.time_us", "memory.l2.latency.cycles", "accuracy.fuzz.fp32.tan.huge.max_ulp",
        "accuracy.fp32.__sinf.max_ulp", "latency.fp32.fma.cycles"),
    ("pocl-pthread-haswell-amd-epyc", "opencl"): (
        "launch.empty.host_us", "model.sampled.intmix.error", "tuning.transpose_naive.kt_pso.quality"),
}
#: what a run keeps of its device description: what the detector reads of it
DEVICE_KEYS = ("key", "backend", "name", "is_cpu", "timer_resolution_s")


def load() -> list:
    """The runs of the slice (RunRecord)."""
    from pytest_gpuperf.history.records import RunRecord
    from pytest_gpuperf.util import jsonio

    return [RunRecord.from_json(doc) for doc in jsonio.read_json(SLICE)["runs"]]


def build() -> None:
    """Import ``results/`` into a temporary database and save the slice."""
    from pytest_gpuperf.cli import main
    from pytest_gpuperf.history.backends import read_runs
    from pytest_gpuperf.util import jsonio

    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "h.db")
        assert main(["history", "import", str(ROOT / "results"), "--db", db]) == 0
        runs = []
        for run in read_runs(db):
            keep = METRICS.get((run.device_key, run.backend), ())
            run.metrics = [m for m in run.metrics if m.name in keep]
            if not run.metrics:
                continue
            run.device = {k: run.device[k] for k in DEVICE_KEYS if k in run.device}
            run.options.pop("_n_metrics", None)
            doc = run.to_json()
            doc["source"] = str(Path(run.source).relative_to(ROOT)) if run.source.startswith(str(ROOT)) else run.source
            runs.append(doc)
    SLICE.parent.mkdir(parents=True, exist_ok=True)
    from pytest_gpuperf.history.records import dumps

    jsonio.write_gz(SLICE, dumps({"about": "tests/history_slice.py", "runs": runs}, separators=(",", ":")).encode())
    print(f"wrote {SLICE} ({len(runs)} runs)")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    build()
