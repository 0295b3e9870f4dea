"""One judgement: a saved metric judged again through :func:`pytest_gpuperf.metric_verdict.judge_record` gets the
verdict, message and baseline comparison the live run gave it, and no module or script reaches a private
function or method of another module (as the scripts once called the session's private judging method)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from pytest_gpuperf.device_runs import DeviceRun
from pytest_gpuperf.metric_verdict import WRITTEN, judge_record, unjudged
from pytest_gpuperf.schemas.results_doc import MetricRecord, ResultsDocumentError
from pytest_gpuperf.session import GpuPerfSession, Options
from pytest_gpuperf.timing.stats import Stats

ROOT = Path(__file__).resolve().parents[1]

#: twelve repeats around 1 (enough for the timing gate's significance test)
JITTER = [1.0 + 0.01 * ((i * 7) % 5 - 2) for i in range(12)]
#: (name, unit, better, the baseline's samples, the live run's samples, a documented bound)
FIGURES = (("k.time", "s", "lower", JITTER, [3 * x for x in reversed(JITTER)], None),
           ("k.bw", "GB/s", "higher", [10 * x for x in JITTER], [10 * x for x in reversed(JITTER)], None),
           ("k.count", "items", "exact", [3.0], [4.0], None),
           ("acc.err", "ulp", "bound", [3.0], [7.0], 5.0))


def _record(s: GpuPerfSession, spec: str, figures: Any, live: bool) -> list[Any]:
    out = []
    for name, unit, better, base, now, bound in figures:
        xs = now if live else base
        stats = Stats.of(xs) if len(xs) > 1 else None
        out.append(s.record(f"t.py::test_a[{spec}]", spec, name, stats.median if stats else xs[0], unit, better,
                            stats=stats, bound=bound))
    return out


def _seen(m: Any) -> tuple[Any, ...]:
    return m.verdict, m.info.get("line"), m.baseline, m.info.get("would_regress")


@pytest.fixture
def saved(tmp_path: Path, cl_device: Any) -> tuple[Path, Path]:
    """A baseline folder and a results file written by a run that recorded :data:`FIGURES`' baseline samples."""
    bl, ref = tmp_path / "bl", tmp_path / "ref.json"
    s = GpuPerfSession(Options(device="opencl:0", baseline_dir=str(bl), update_baselines=True,
                               json_path=str(ref)), tmp_path)
    _record(s, s.selected()[0].spec, FIGURES, live=False)
    s.finish([])
    return bl, ref


def test_a_saved_metric_judged_again_reads_as_the_live_run_judged_it(tmp_path, saved):
    bl, _ = saved
    s = GpuPerfSession(Options(device="opencl:0", baseline_dir=str(bl)), tmp_path)
    spec = s.selected()[0].spec
    live = _record(s, spec, FIGURES + (("k.fresh", "items", "exact", [1.0], [2.0], None),), live=True)
    verdicts = {m.name: m.verdict for m in live}
    assert verdicts["k.time"] == verdicts["k.count"] == "regressed" and verdicts["k.fresh"] == "new", verdicts
    assert verdicts["k.bw"] in ("pass", "loose"), verdicts  # unchanged: in band (loose where one run made it)
    run = s.run_for(spec)
    for m in live:
        again = judge_record(DeviceRun(run.info, run.source), m.to_json())
        assert _seen(again) == _seen(m), m.name
        typed = judge_record(DeviceRun(run.info, run.source), MetricRecord.from_json(m.to_json()))
        assert _seen(typed) == _seen(m), m.name


def test_a_saved_metric_judged_again_against_a_reference_run_reads_as_under_gpuperf_compare(tmp_path, saved):
    bl, ref = saved
    s = GpuPerfSession(Options(device="opencl:0", baseline_dir=str(bl), compare_paths=(str(ref),)), tmp_path)
    s.load_reference()
    spec = s.selected()[0].spec
    live = _record(s, spec, FIGURES, live=True)
    assert {m.name: m.verdict for m in live}["k.count"] == "regressed"
    run = s.run_for(spec)
    for m in live:
        again = judge_record(DeviceRun(run.info, run.source, reference=s.reference), m.to_json())
        assert _seen(again) == _seen(m), m.name


def test_a_stored_metric_sheds_what_the_judgement_wrote_and_keeps_its_bound():
    stored = {"test": "t.py::f", "name": "acc.err", "value": 7.0, "unit": "ulp", "better": "bound", "stats": None,
              "baseline": {"value": 5.0}, "verdict": "regressed", "identity": {"n": 3}, "tolerance": None,
              "info": {"bound": 5, "host": {"busy": 0.1}, **{k: "written" for k in WRITTEN}}}
    metric, bound = unjudged(stored)
    assert bound == 5.0 and metric.info == {"bound": 5, "host": {"busy": 0.1}}
    assert metric.verdict == "new" and metric.baseline is None and metric.identity == {"n": 3}
    with pytest.raises(ResultsDocumentError, match="has no unit, better"):
        unjudged({k: v for k, v in stored.items() if k not in ("unit", "better")})


def _files(*folders: str) -> list[Path]:
    return sorted(p for f in folders for p in (ROOT / f).rglob("*.py"))


def _private_callables() -> dict[str, set[Path]]:
    """Every private function, method and class the package defines (``_name``, not dunder) → its files."""
    out: dict[str, set[Path]] = {}
    for path in _files("pytest_gpuperf"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                    and node.name.startswith("_") and not node.name.startswith("__")):
                out.setdefault(node.name, set()).add(path)
    return out


def test_no_module_or_script_reaches_another_modules_private_function():
    """A private name is its module's own: a caller elsewhere (a script re-judging saved runs through the
    session's private judging method, say) uses the public entry instead, so the private one can change."""
    defined = _private_callables()
    found = []
    for path in _files("pytest_gpuperf", "scripts", "tools"):
        outside = path.relative_to(ROOT).parts[0] != "pytest_gpuperf"  # a script or tool: no private name at all
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                ours = node.level > 0 or (node.module or "").split(".")[0] == "pytest_gpuperf"
                for alias in node.names:
                    private = alias.name.startswith("_") and not alias.name.startswith("__")
                    if ours and private and (outside or path not in defined.get(alias.name, {path})):
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {alias.name}")
            elif isinstance(node, ast.Attribute) and node.attr in defined and path not in defined[node.attr]:
                if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} reaches {ast.unparse(node)}")
    assert not found, "use the module's public entry (or make one) instead: " + "; ".join(found)
