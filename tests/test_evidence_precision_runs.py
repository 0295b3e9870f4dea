"""docs/precision.md's tables over many unchanged runs (``tools.evidence.precision_aa_tables``), on the committed
GPU runs of the README's main command: the tuner's choice per device, each choice with the runs that made it,
and the refinement speedup's spread with what the runs recorded about its timing."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tools.evidence import markers, runfile
from tools.evidence.precision_aa_tables import (beyond_span_ms, distribution, refine_runs, tuner_choices,
                                                         window_s)
from tools.evidence.registry import Inputs
from tools.evidence.runfile import EvidenceError, Run

ROOT = Path(__file__).resolve().parents[1]
H100 = "results/nvidia-h100-80gb-hbm3"
H200 = "results/nvidia-h200"
H100_RUNS = [f"{H100}/gatecheck-{d}/aa-{i}.json.xz" for d, ii in
             (("eb31b28", (1, 2, 3)), ("cab4226", (2, 3)), ("30e9367", (1, 2)), ("37994ee", (3, 4))) for i in ii]
H200_RUNS = ([f"{H200}/gatecheck-{d}/aa-{i}.json.xz" for d, ii in
              (("171978e-first", (1, 2)), ("171978e", (1, 2)), ("eba93a7", (1, 2)), ("37994ee", (1, 2, 3))) for i in ii]
             + [f"{H200}/baseline-171978e/b{i}-cuda.json.xz" for i in (1, 2, 3)])
TIMED_POOL = [f"{H100}/{s}-cuda.json.xz" for s in ("default-5c", "default-6c", "h100-b1", "h100-aa1")]


#: each saved run read once for the module (the tables only read them): several tests build their tables from
#: the same twenty-odd runs of a few MB each
_load = functools.lru_cache(maxsize=None)(runfile.load)
# one xdist worker runs this module (scripts/run_tests.sh: --dist loadgroup), so those runs are read once, not in
# each worker that runs one of its tests
pytestmark = pytest.mark.xdist_group("evidence-precision-runs")


def _inputs(name: str, **roles: list[str]) -> Inputs:
    words = " ".join(f"{k}={','.join(v)}" for k, v in roles.items())
    block = markers.parse("t.md", f"<!-- gpuperf:table {name} {words} -->\n<!-- /gpuperf:table -->\n")[0]
    return Inputs(block, {r: [_load(ROOT, p) for p in ps] for r, ps in block.roles.items()}, ROOT)


def _rows(lines: list[str]) -> list[dict[str, str]]:
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(head, (c.strip() for c in line.strip("|").split("|")))) for line in lines[2:]]


def test_every_gpu_run_of_the_readme_command_chose_the_same_mix():
    rows = _rows(tuner_choices(_inputs("precision-tuner-choices", h100=H100_RUNS, h200=H200_RUNS)))
    assert [r["kernel"] for r in rows] == ["gaussian", "lu", "lavamd", "stencil", "nbody", "reduction"]
    for r in rows:
        assert r["chosen by"] == "most lowered", r
        assert r["H100 CUDA: fp32 operations chosen"].endswith("in 9 of 9 runs"), r
        assert r["H200 CUDA: fp32 operations chosen"].endswith("in 12 of 12 runs"), r
        assert "(" not in r["chosen fp32 operations"], r  # one set of operations, no runs named
    lavamd = next(r for r in rows if r["kernel"] == "lavamd")
    assert lavamd["H100 CUDA: fp32 operations chosen"].startswith("11 of 15 (0.733)")
    # GE and LU (about 1,022 launches a run) wait out the CUDA timer's 0.2 s hold; one-launch kernels do not
    wall = {r["kernel"]: [float(x) for x in r["wall clock per timed run, ms (all runs)"].split("–")] for r in rows}
    assert all(200 <= w <= 230 for k in ("gaussian", "lu") for w in wall[k]), wall
    assert all(w < 20 for k in ("lavamd", "stencil", "nbody", "reduction") for w in wall[k]), wall


def test_a_run_that_chose_otherwise_is_named_in_its_cell():
    """The thesis' timed pool chose LavaMD's 11-operation mix in one of four H100 runs, 7 in the others."""
    rows = _rows(tuner_choices(_inputs("precision-tuner-choices", h100=TIMED_POOL)))
    lavamd = next(r for r in rows if r["kernel"] == "lavamd")
    assert lavamd["H100 CUDA: fp32 operations chosen"] == "7 of 15 (0.467): 3 runs; 11 of 15 (0.733): `h100-aa1-cuda`"
    assert lavamd["chosen by"] == "thesis cost (timed)"
    assert "(`h100-aa1-cuda`)" in lavamd["chosen fp32 operations"]


def test_a_role_must_hold_one_device():
    with pytest.raises(EvidenceError, match="2 devices .* give each device a role of its own"):
        tuner_choices(_inputs("precision-tuner-choices", gpus=[H100_RUNS[0], H200_RUNS[0]]))


def test_a_run_without_the_suite_s_figures_is_an_error_naming_it():
    with pytest.raises(EvidenceError, match="memory-cuda record no precision.refine"):
        refine_runs(_inputs("precision-refine-runs", h100=[H100_RUNS[0], f"{H100}/memory-cuda.json.xz"]))


def test_every_timed_solve_waited_out_the_cuda_timer_s_hold():
    """Each timed solve of these runs took 0.2 s of wall clock beyond its timed span (the hold's limit), and
    every run stopped at 5 pairs."""
    rows = [r for r in _rows(refine_runs(_inputs("precision-refine-runs", h100=H100_RUNS, h200=H200_RUNS)))
            if r["n"].isdigit()]
    assert [(r["device"], r["n"]) for r in rows] == [(d, n) for d in ("H100 CUDA", "H200 CUDA")
                                                     for n in ("512", "1024", "2048")]
    for r in rows:
        low, high = (float(x) for x in r["wall clock per timed solve beyond its timed span, ms"].split("–"))
        assert 190 <= low <= high <= 215, r
        assert r["pairs per run"] == "5" and r["refinements"] == "2", r
    h100 = next(r for r in rows if r["device"] == "H100 CUDA" and r["n"] == "1024")
    assert h100["runs"] == "9" and h100["min–max over runs"] == "0.674–1.058"


def _run(stem: str, metrics: dict[str, dict]) -> Run:
    return Run(f"results/dev-x/{stem}.json.gz", {}, {n: {"name": n, **m} for n, m in metrics.items()})


def _speedup(windows: int, wall: float) -> dict:
    return {"value": 0.9, "info": {"power": {"windows": windows, "wall_s": wall}, "pairs": 5,
                                   "t_mixed_us": 10_000.0, "t_fp64_us": 8_000.0}}


def test_a_size_s_window_is_its_power_summary_less_the_one_before_it():
    run = _run("r", {"precision.refine.n512.speedup": _speedup(1, 2.1),
                     "precision.refine.n1024.speedup": _speedup(2, 4.6)})
    assert window_s(run, "precision.refine.n512.speedup") == pytest.approx(2.1)
    assert window_s(run, "precision.refine.n1024.speedup") == pytest.approx(2.5)
    assert beyond_span_ms(run, "precision.refine.n1024.speedup") == pytest.approx(250.0 - 9.0)


def test_a_window_taken_again_leaves_the_wall_clock_unknown():
    run = _run("r", {"precision.refine.n512.speedup": _speedup(1, 2.1),
                     "precision.refine.n1024.speedup": _speedup(3, 7.0)})
    assert window_s(run, "precision.refine.n1024.speedup") is None
    assert beyond_span_ms(run, "precision.refine.n1024.speedup") is None


def test_a_run_lacking_a_figure_is_named_not_dropped():
    runs = [_run("a", {"x": {"value": 1.0}}), _run("b", {"x": {"value": 1.0}}), _run("c", {})]
    cell = distribution(runs, lambda r: r.value("x"), lambda v: f"{v:g}")
    assert cell == "1: 2 runs; not recorded: `c`"
