"""Helpers of the compare tests: results documents with known numbers (valid against the results schema)
and the real results files under results/."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
H100 = ROOT / "results" / "nvidia-h100-80gb-hbm3"
POCL = ROOT / "results" / "pocl-pthread-haswell-amd-epyc"
#: the H100 gate check of the trust work (A/A runs and planted regressions), kept under gatecheck-dev/
H100_GC = H100 / "gatecheck-dev" / "gatecheck"

GPU = {"backend": "cuda", "index": 0, "name": "Test GPU 80GB", "vendor": "NVIDIA", "key": "test-gpu-80gb",
       "driver_version": "580.1", "runtime_version": "13.0", "toolkit_version": "13.0", "is_cpu": False,
       "clock_mhz": 1980.0, "extra": {"mem_clock_khz": 2619000, "bus_width": 5120}, "peak_bandwidth_gbs": 3352.32}


def device(**changes: Any) -> dict[str, Any]:
    d = copy.deepcopy(GPU)
    d.update(changes)
    return d


def metric(name: str, value: float, unit: str = "us", better: str = "lower", samples: Any = None,
           identity: dict | None = None, info: dict | None = None, tolerance: dict | None = None) -> dict[str, Any]:
    stats = None
    if samples is not None:
        xs = [float(x) for x in samples]
        med = float(np.median(xs))
        stats = {"median": med, "mad": float(np.median(np.abs(np.asarray(xs) - med))), "min": min(xs),
                 "max": max(xs), "n": len(xs), "samples": xs}
    return {"test": f"suites/test_x.py::test_{name.split('.')[0]}", "name": name, "value": float(value), "unit": unit,
            "better": better, "stats": stats, "baseline": None, "verdict": "new", "info": dict(info or {}),
            "tolerance": tolerance, "identity": dict(identity or {})}


def results(metrics: list[dict[str, Any]], dev: dict[str, Any] | None = None, driver: str = "580.1") -> dict[str, Any]:
    d = dev or device()
    return {"schema": "pytest-gpuperf/1", "device": d,
            "environment": {"python": "3.12", "commit": "abc1234", "driver": driver,
                            "runtime": d.get("runtime_version"), "toolkit": d.get("toolkit_version"),
                            "packages": {"numpy": "2.0"}},
            "run": {"started": "2026-01-01T00:00:00+00:00", "finished": "2026-01-01T00:01:00+00:00", "argv": []},
            "metrics": metrics, "missing": []}


def side_of(label: str, docs: list[dict[str, Any]], paths: list[str]):
    """One side of a comparison from results documents: each as the results file ``paths[i]`` a run writes
    (a non-finite number as its string), read back as ``gpuperf compare`` reads it (checked against the
    results schema, typed: ``compare.load``)."""
    from pytest_gpuperf.compare.load import results_document, side_from_docs
    from pytest_gpuperf.report.results import jsonable

    return side_from_docs(label, [results_document(json.loads(json.dumps(jsonable(d))), p)
                                  for d, p in zip(docs, paths)], paths)


def record(m: dict[str, Any]):
    """A metric as a results file stores it, read as :class:`MetricRecord` (what the readers take)."""
    from pytest_gpuperf.schemas.results_doc import MetricRecord

    return MetricRecord.from_json(m)


def write(path: Path, doc: dict[str, Any]) -> str:
    path.write_text(json.dumps(doc))
    return str(path)


def noisy(median: float, rel_sigma: float, n: int, seed: int) -> np.ndarray:
    """Timing-like samples: normal noise around ``median`` plus a few one-sided outliers."""
    rng = np.random.default_rng(seed)
    xs = median * (1 + rel_sigma * rng.standard_normal(n))
    xs[rng.choice(n, max(1, n // 20), replace=False)] *= 1.3
    return xs


def scaled_results(n: int, path: Path = POCL / "default-1-opencl.json.xz") -> dict[str, Any]:
    """A results document of ``n`` metrics made from a real one: its metrics repeated under numbered names
    (``<name>.copy<i>``) until there are ``n`` — the size of a large fleet's run, for the scaling test."""
    from pytest_gpuperf.util import jsonio

    doc = jsonio.read_json(path)
    base = doc["metrics"]
    out = []
    for i in range(n):
        m = dict(base[i % len(base)])
        m["name"] = f"{m['name']}.copy{i // len(base)}"
        out.append(m)
    doc["metrics"] = out
    doc["tests"] = []
    return doc
