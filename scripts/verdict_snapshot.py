"""Every verdict the judgement layer gives on saved runs, written as one deterministic JSON file.

Before and after a change to how verdicts are reached, run this and ``diff`` the two files: an equal
output proves the change kept every verdict, reason and figure. It records

* ``gate``: each metric of saved GPU and PoCL results files judged again against the reviewed baseline
  shipped with the package (for its device key), through :func:`pytest_gpuperf.metric_verdict.judge_record` —
  the judgement a pytest run makes when a test records the metric (noise model, band, significance,
  observers' marks, a documented bound); the verdict, the one-line message and the baseline comparison kept
  in results;
* ``compare_gate``: the same metrics judged against a reference run (``--gpuperf-compare``), again
  through :func:`pytest_gpuperf.metric_verdict.judge_record`;
* ``compare``: ``gpuperf compare --format json`` of saved pairs (A/A of one card, an H100 run against an
  H200 run, a planted run against an A/A run) and its exit status;
* ``siblings``: the sibling check of saved runs given distinct cards (:func:`fleet.siblings.check`);
* ``fleet``: ``gpuperf fleet report --format json`` of the saved fleet folders and their exit statuses.

    python scripts/verdict_snapshot.py OUT.json [--quick]

``--quick`` takes two files per gate-check folder (a minute instead of a few).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_gpuperf.baselines import lookup  # noqa: E402
from pytest_gpuperf.cli import main as gpuperf  # noqa: E402
from pytest_gpuperf.devices.base import DeviceInfo  # noqa: E402
from pytest_gpuperf.device_runs import DeviceRun  # noqa: E402
from pytest_gpuperf.fleet import siblings  # noqa: E402
from pytest_gpuperf.metric_verdict import judge_record  # noqa: E402
from pytest_gpuperf.report.results import Metric, jsonable  # noqa: E402
from pytest_gpuperf.schemas.results_doc import ResultsDocument  # noqa: E402
from pytest_gpuperf.util import jsonio  # noqa: E402

RESULTS = ROOT / "results"
#: folders whose every results file is judged again against the shipped reviewed baseline
GATE_FOLDERS = ("nvidia-h200/gatecheck-e003155", "nvidia-h100-80gb-hbm3/gatecheck-04e740c",
                "pocl-pthread-haswell-amd-epyc/gatecheck")
#: single PoCL runs judged the same way
GATE_FILES = ("pocl-cpu-skylake-avx512-amd-epyc/pocl5-gate-1-opencl.json.xz",
              "pocl-pthread-skylake-avx512-amd-epyc/suites-opencl.json.xz",
              "pocl-pthread-haswell-amd-epyc/default-1-opencl.json.xz")
#: (reference files, judged file): a run gated against another run (--gpuperf-compare)
COMPARE_GATE = ((("nvidia-h200/gatecheck-e003155/aa-1.json.xz",), "nvidia-h200/gatecheck-e003155/aa-2.json.xz"),
                (("nvidia-h200/gatecheck-e003155/aa-1.json.xz", "nvidia-h200/gatecheck-e003155/aa-2.json.xz"),
                 "nvidia-h200/gatecheck-e003155/plant-memory-1.json.xz"),
                (("pocl-pthread-haswell-amd-epyc/gatecheck/aa-1.json.xz",),
                 "pocl-pthread-haswell-amd-epyc/gatecheck/plant-compute-1.json.xz"))
#: ``gpuperf compare`` pairs: (side A files, side B files, extra options)
COMPARE = ((("nvidia-h200/gatecheck-e003155/aa-1.json.xz",), ("nvidia-h200/gatecheck-e003155/aa-2.json.xz",), ()),
           (("nvidia-h200/gatecheck-e003155/aa-1.json.xz", "nvidia-h200/gatecheck-e003155/aa-2.json.xz"),
            ("nvidia-h200/gatecheck-e003155/aa-3.json.xz",), ()),
           (("nvidia-h200/default-1-cuda.json.xz",), ("nvidia-h200/default-2-cuda.json.xz",), ()),
           (("nvidia-h100-80gb-hbm3/gatecheck-04e740c/aa-1.json.xz",), ("nvidia-h200/gatecheck-e003155/aa-1.json.xz",),
            ()),
           (("nvidia-h100-80gb-hbm3/gatecheck-04e740c/aa-1.json.xz",), ("nvidia-h200/gatecheck-e003155/aa-1.json.xz",),
            ("--raw",)),
           (("nvidia-h200/gatecheck-e003155/aa-1.json.xz", "nvidia-h200/gatecheck-e003155/aa-2.json.xz",
             "nvidia-h200/gatecheck-e003155/aa-3.json.xz"), ("nvidia-h200/gatecheck-e003155/plant-chase-1.json.xz",),
            ()),
           (("nvidia-h200/gatecheck-e003155/aa-1.json.xz",), ("nvidia-h200/gatecheck-e003155/plant-compute-1.json.xz",),
            ()),
           (("nvidia-h100-80gb-hbm3/gatecheck-04e740c/aa-1.json.xz",),
            ("nvidia-h100-80gb-hbm3/gatecheck-04e740c/plant-ulp-1.json.xz",), ()),
           (("pocl-pthread-haswell-amd-epyc/gatecheck/aa-1.json.xz", "pocl-pthread-haswell-amd-epyc/gatecheck/aa-2.json.xz",
             "pocl-pthread-haswell-amd-epyc/gatecheck/aa-3.json.xz"),
            ("pocl-pthread-haswell-amd-epyc/gatecheck/plant-memory-1.json.xz",), ()),
           (("pocl-pthread-haswell-amd-epyc/gatecheck/aa-1.json.xz",),
            ("pocl-pthread-haswell-amd-epyc/gatecheck/aa-2.json.xz",), ("--alpha", "0.01")))
#: sibling groups: files read as one host's cards (each given its own device index and PCI address)
SIBLINGS = (("nvidia-h200/gatecheck-e003155/aa-1.json.xz", "nvidia-h200/gatecheck-e003155/aa-2.json.xz",
             "nvidia-h200/gatecheck-e003155/plant-memory-1.json.xz"),
            ("pocl-pthread-haswell-amd-epyc/gatecheck/aa-1.json.xz",
             "pocl-pthread-haswell-amd-epyc/gatecheck/plant-compute-1.json.xz"))
#: ``gpuperf fleet report`` invocations of the saved fleet folders
FLEET = (("results/fleet-saved/pocl-planted/run", "--keep-disturbed"),
         ("results/fleet-saved/pocl-planted/run", "--keep-disturbed", "--confirm",
          "results/fleet-saved/pocl-planted/confirm"),
         ("results/fleet-saved/pocl-planted/run",))


def read(rel: str) -> dict[str, Any]:
    return jsonio.read_json(RESULTS / rel)


def device_info(doc: dict[str, Any]) -> DeviceInfo:
    names = {f.name for f in dataclasses.fields(DeviceInfo)}
    return DeviceInfo(**{k: v for k, v in doc["device"].items() if k in names})


def judged(m: Metric) -> dict[str, Any]:
    return jsonable({"verdict": m.verdict, "line": m.info.get("line"), "baseline": m.baseline,
                     "would_regress": m.info.get("would_regress")})


def gate_file(rel: str, nobase: Path, reference: Any = None) -> dict[str, Any]:
    """Every metric of one results file judged again as a live run judges a recorded metric, against the
    reviewed baseline, or against ``reference`` (a ``compare.load.Side``) as under ``--gpuperf-compare``."""
    doc = read(rel)
    info = device_info(doc)
    run = DeviceRun(info, lookup.resolve(nobase, info.key, info.backend, info.family_key), reference=reference)
    out = {}
    for m in doc["metrics"]:
        metric = judge_record(run, m)
        out[metric.name] = judged(metric)
    return {"origin": run.source.origin, "read": [Path(p).name for p in run.source.read], "metrics": out}


def gate_files(quick: bool) -> list[str]:
    files = []
    for folder in GATE_FOLDERS:
        found = sorted(str(p.relative_to(RESULTS)) for p in (RESULTS / folder).glob("*.json.?z") if jsonio.is_results_name(p.name))
        files += found[:2] if quick else found
    return files + list(GATE_FILES)


def run_cli(args: Iterable[str]) -> dict[str, Any]:
    """``gpuperf ARGS`` in this process: its exit status and its output (JSON where it is JSON)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = gpuperf(list(args))
    text = out.getvalue()
    try:
        body: Any = json.loads(text)
    except ValueError:
        body = text
    return {"args": list(args), "exit": code, "output": body}


def sibling_docs(files: Iterable[str]) -> list[ResultsDocument]:
    """The saved runs ``files``, each given its own device index and PCI address, read as results documents."""
    docs = []
    for i, rel in enumerate(files):
        doc = read(rel)
        extra = {**(doc["device"].get("extra") or {}), "pci_bus_id": f"0000:{i + 1:02x}:00.0"}
        doc["device"] = {**doc["device"], "index": i, "spec": f"{doc['device']['backend']}:{i}", "extra": extra}
        doc["card"] = {**(doc.get("card") or {}), "pci_bus_id": f"0000:{i + 1:02x}:00.0", "uuid": f"card-{i}"}
        docs.append(ResultsDocument.from_json(doc, rel))
    return docs


def snapshot(quick: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"gate": {}, "compare_gate": [], "compare": [], "siblings": [], "fleet": []}
    with tempfile.TemporaryDirectory() as tmp:
        nobase = Path(tmp) / "no-baselines"  # no user baseline: the reviewed one shipped gates every device
        for rel in gate_files(quick):
            out["gate"][rel] = gate_file(rel, nobase)
        from pytest_gpuperf.compare.gate import load_reference

        for refs, rel in COMPARE_GATE:
            reference = load_reference([str(RESULTS / r) for r in refs])
            out["compare_gate"].append({"reference": list(refs), "file": rel, **gate_file(rel, nobase, reference)})
    for a, b, extra in COMPARE:
        args = ["compare", *(str(RESULTS / x) for x in a), "--against", *(str(RESULTS / x) for x in b),
                "--format", "json", "--no-annotations", *extra]
        res = run_cli(args)
        res["args"] = [str(Path(x).relative_to(ROOT)) if x.startswith(str(ROOT)) else x for x in args]
        out["compare"].append(res)
    for files in SIBLINGS:
        out["siblings"].append({"files": list(files), "report": siblings.check(sibling_docs(files))})
    for args in FLEET:
        res = run_cli(["fleet", "report", *(str(ROOT / a) if a.startswith("results/") else a for a in args),
                       "--format", "json"])
        res["args"] = list(args)
        out["fleet"].append(res)
    return jsonable(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="where the snapshot JSON goes")
    ap.add_argument("--quick", action="store_true", help="two files per gate folder")
    args = ap.parse_args(argv)
    doc = snapshot(args.quick)
    text = json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False, default=repr)
    # paths of this checkout never belong in the snapshot: two checkouts must give the same file
    Path(args.out).write_text(text.replace(str(ROOT), "<root>") + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
