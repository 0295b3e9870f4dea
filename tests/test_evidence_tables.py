"""The docs' table generators on committed runs: each reads what its marker names and states the
conditions of every seed figure it sets beside ours."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.evidence import markers, runfile
from tools.evidence.model_tables import ptx_dwarfs, sampled_vs_dao
from tools.evidence.power_tables import model as power_model_table, reference
from tools.evidence.precision_tables import tuner
from tools.evidence.registry import Inputs
from tools.evidence.tuning_tables import dao_per_gpu, transformed

ROOT = Path(__file__).resolve().parents[1]
H100 = "results/nvidia-h100-80gb-hbm3"
POCL = "results/pocl-pthread-skylake-avx512-intel-r-xeon-r-processor"


def _inputs(name: str, root: Path = ROOT, **roles: str) -> Inputs:
    words = " ".join(f"{k}={v}" for k, v in roles.items())
    text = f"<!-- gpuperf:table {name} {words} -->\n<!-- /gpuperf:table -->\n"
    block = markers.parse("t.md", text)[0]
    return Inputs(block, {r: [runfile.load(root, p) for p in ps] for r, ps in block.roles.items()}, root)


def _row(lines: list[str], start: str) -> list[str]:
    return [c.strip() for c in next(line for line in lines if line.startswith(start)).strip("|").split("|")]


def test_dao_per_gpu_separates_the_workload_transformed_kernels():
    inp = _inputs("tuning-dao-per-gpu", runs=f"{H100}/tuning-cuda.json.xz")
    assert transformed(inp.run("runs")) == ["matvec_wg", "reduce"]
    lines = dao_per_gpu(inp)
    assert _row(lines, "| GTX Titan X")[3] == "1.06" and "54" in _row(lines, "| GTX 580")
    ours = _row(lines, "| H100")
    assert ours[3] == "0.975" and ours[5] == "1.005 (10)"


def test_sampled_rows_name_the_protocol_of_each_row():
    lines = sampled_vs_dao(_inputs("models-sampled-vs-dao", runs=f"{H100}/default-7c-cuda.json.xz"))
    assert "2nd/3rd saturation points" in _row(lines, "| GTX 580")[1]
    assert "10th and 15th saturation points of a run of 800 waves" in _row(lines, "| H100")[1]


def test_ptx_dwarfs_count_the_dwarfs_at_or_below_table_4_9s_median():
    lines = ptx_dwarfs(_inputs("models-ptx-dwarfs", runs=f"{H100}/default-7b-cuda.json.xz", variants="thesis,hopper"))
    assert "108 launch configurations" in lines[0]
    assert _row(lines, "| dwarfs at or below the median")[-2:] == ["2 of 8", "4 of 8"]


def test_the_no_feature_reference_is_computed_from_the_corpora():
    lines = reference(_inputs("power-reference", corpora=f"{H100}/power-corpus-cuda.json.xz"))
    assert _row(lines, "| H100, rows")[-1] == "9.51 %" and _row(lines, "| H100, held-out")[-1] == "21.44 %"


POWER_MODEL = "results/offline/power-model.json.xz"


def test_the_power_model_table_ends_with_the_timed_variant_on_held_out_kernels():
    lines = power_model_table(_inputs("power-model", model=POWER_MODEL))
    label = "static features + measured launch time (ours, not the thesis' model)"
    timed = [i for i, line in enumerate(lines) if label in line]
    held_out = [i for i, line in enumerate(lines) if "held-out kernels (goal" in line]
    assert len(timed) == 2 and len(held_out) == 2 and min(timed) > max(held_out) and max(timed) == len(lines) - 1
    h100, h200 = (_row(lines, f"| **{card}, held-out kernels, static") for card in ("H100", "H200"))
    assert h100[-1] == "14.37 / 14.02 / 11.50 / 17.25 %" and h200[-1] == "16.00 / 15.24 / 12.26 / 18.37 %"
    assert _row(lines, "| **H100, held-out kernels (goal")[-1] == "17.99 / 16.90 / 15.45 / 18.72 %"  # unchanged


def test_the_power_model_table_refuses_a_fit_without_the_timed_variant(tmp_path):
    doc = runfile.load(ROOT, POWER_MODEL).doc
    stale = json.loads(json.dumps(doc))
    for dev in stale["devices"].values():
        del dev["variants"]
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "old.json").write_text(json.dumps(stale))
    with pytest.raises(runfile.EvidenceError, match=r"results/old\.json has no timed variant .*rerun python "
                                                    r"scripts/power_model_offline\.py"):
        power_model_table(_inputs("power-model", root=tmp_path, model="results/old.json"))


def test_two_runs_of_the_deterministic_choice_read_the_same_mixes():
    runs = f"{POCL}/precision-choice-1-opencl.json.xz,{POCL}/precision-choice-2-opencl.json.xz"
    for line in tuner(_inputs("precision-tuner", runs=runs))[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        passing, chosen = cells[2].split(" / "), cells[3].split(" / ")
        assert passing == chosen and len(set(chosen)) == 1 and cells[4] == "most lowered", line


def test_the_per_kernel_table_reads_the_svr_s_kernels_from_its_mean_where_a_run_keeps_them_there():
    """Runs of the current suites keep the SVR's per-kernel errors in its mean's info (H200, 171978e)."""
    from tools.evidence.model_tables import pct, sampled

    lines = sampled(_inputs("models-sampled-kernels", cuda="results/nvidia-h200/baseline-171978e/b1-cuda.json.xz"))
    doc = runfile.load(ROOT, "results/nvidia-h200/baseline-171978e/b1-cuda.json.xz")
    per = doc.info("model.svr.mean_error")["per_kernel"]
    row = _row(lines, "| copy")
    assert "model.svr.copy.error" not in doc.metrics and row[2] != "–"
    assert row[2] == pct(per["copy"]["error"])


def test_the_fractional_maxima_table_sets_both_cards_beside_the_paper_and_says_where_a_column_lacks_a_run(monkeypatch):
    from tools.evidence import accuracy_tables
    from tools.evidence.accuracy_tables import fractional_table
    both = _inputs("accuracy-fractional", h100=f"{H100}/gatecheck-fa43429/aa-1.json.xz",
                   h200="results/nvidia-h200/gatecheck-e003155/aa-1.json.xz",
                   opencl=f"{H100}/accuracy-r3-opencl.json.xz")
    lines = fractional_table(both)
    assert len(lines) == 2 + 27  # every binary32 function the certificates cover, no intrinsic or fast variant
    exp = _row(lines, "| expf")
    assert exp[1] == "1.931" and exp[2] == "same (H100 CUDA 1.9310; H200 CUDA 1.9310)"
    assert exp[3] == exp[4] == "1.9310 (-0x1.bcc73p+3)" and exp[5] == "1.9310 (-0x1.bcc73p+3)"
    assert _row(lines, "| sinf")[5] == "—"  # NVIDIA's OpenCL sin was swept with a stride, not exhaustively
    older = _inputs("accuracy-fractional", h100=f"{H100}/h100-aa1-cuda.json.xz",
                    h200="results/nvidia-h200/gatecheck-e003155/aa-1.json.xz")
    assert _row(fractional_table(older), "| expf")[3] == "needs a run"  # a run from before the metric existed
    # a published figure the cards do not match: each card's figure and its difference from the paper
    monkeypatch.setitem(accuracy_tables.PUBLISHED_CUDA_11_2, "sin", 1.4)
    assert _row(fractional_table(both), "| sinf")[2] == "differs: H100 CUDA 1.4994 (+0.0994), H200 CUDA 1.4994 (+0.0994)"


def test_the_gate_check_table_counts_clean_a_a_runs_and_families_caught_in_every_try():
    """Two saved gate checks: the H200's at 724a9eb (ten families caught in every try, three A/A runs all clean)
    meets both bars; the H100's at 0322ea6 (nine families, both A/A runs failed) does not, nor does one with a
    family missed in a try; a results document named as a gate check is refused."""
    from tools.evidence.gate_tables import gate_checks

    checks = ",".join(f"results/{c}/gatecheck.json" for c in (
        "nvidia-h200/gatecheck-724a9eb", "nvidia-h100-80gb-hbm3/gatecheck-0322ea6", "nvidia-h200/gatecheck-7ee28c0"))
    lines = gate_checks(_inputs("gate-checks", checks=checks))
    good = _row(lines, "| nvidia-h200 (cuda) | `gatecheck-724a9eb`")
    assert good[4] == "3 of 3" and good[5].startswith("10: ") and good[6] == "–" and good[7] == "yes"
    h100 = _row(lines, "| nvidia-h100-80gb-hbm3 (cuda) | `gatecheck-0322ea6`")
    assert h100[3].startswith("GPU-4c4e16fa") and h100[4] == "0 of 2" and h100[5].startswith("9: ") and h100[7] == "no"
    missed = _row(lines, "| nvidia-h200 (cuda) | `gatecheck-7ee28c0`")
    assert "tuner" in missed[6] and "tuner" not in missed[5] and missed[7] == "no"
    with pytest.raises(runfile.EvidenceError, match="not a gate-check file"):
        gate_checks(_inputs("gate-checks", checks=f"{H100}/tuning-cuda.json.xz"))
