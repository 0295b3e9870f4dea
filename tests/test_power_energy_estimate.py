"""Alavani's energy estimate (``studies.static_power.energy_estimate``) on the saved H100 runs: every figure
recomputed from the files, a planted change that moves it, and the power prediction held out by kernel; the
held-out predictions the docs' table reads (``tools.evidence.power_heldout``) are each corpus' fit, refitted here,
and refused for a corpus that changed since."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pytest_gpuperf.schemas.results_doc import ResultsDocument
from pytest_gpuperf.studies.static_power import energy_estimate as ee
from pytest_gpuperf.studies.static_power import power_model as pm
from pytest_gpuperf.util import jsonio
from tools.evidence import power_heldout

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "results/nvidia-h100-80gb-hbm3/power-corpus-cuda.json.xz"
HELDOUT = ROOT / power_heldout.PATH
STUDY = ROOT / "results/nvidia-h100-80gb-hbm3/study-6036ccb/ps-cuda.json.xz"

pytest.importorskip("sklearn")
# one xdist worker runs this module (scripts/run_tests.sh: --dist loadgroup): its fits (nested cross-validations,
# seconds each) run once, not in each worker that runs one of its tests
pytestmark = [pytest.mark.skipif(not (CORPUS.exists() and STUDY.exists()),
                                 reason="the saved H100 power corpus or PTX launch study is not in this checkout"),
              pytest.mark.xdist_group("power-energy-estimate")]


@pytest.fixture(scope="module")
def saved():
    """The H100 corpus, its study, the saved held-out predictions (the refit below checks them) and the estimate."""
    _, entries = pm.load_corpus(CORPUS)
    doc = ResultsDocument.load(STUDY)
    watts = power_heldout.predictions(jsonio.read_json(HELDOUT), str(CORPUS.relative_to(ROOT)), entries)
    return entries, doc, watts, ee.join(entries, watts, ee.study_launches(doc))


def test_the_saved_held_out_predictions_are_each_corpus_fit():
    """The one place the fit runs in CI: every corpus the saved file holds, refitted, gives its predictions
    (to the last few bits: the trees' predictions are summed in threads) from rows of the same digest."""
    held = jsonio.read_json(HELDOUT)
    again = power_heldout.make(ROOT, list(held["corpora"]))
    assert {k: v for k, v in again.items() if k != "corpora"} == {k: v for k, v in held.items() if k != "corpora"}
    assert sorted(held["corpora"]) == sorted(again["corpora"]) and len(held["corpora"]) >= 2
    for corpus, fit in again["corpora"].items():
        assert held["corpora"][corpus]["digest"] == fit["digest"], f"rerun {power_heldout.COMMAND}"
        assert held["corpora"][corpus]["watts"] == pytest.approx(fit["watts"], rel=1e-9, abs=0), \
            f"{corpus}: the saved predictions are not the fit; rerun {power_heldout.COMMAND}"


def test_saved_predictions_of_a_changed_corpus_are_refused_with_the_command(saved):
    entries, _, watts, _ = saved
    held = jsonio.read_json(HELDOUT)
    corpus = str(CORPUS.relative_to(ROOT))
    assert power_heldout.predictions(held, corpus, entries) == watts
    moved = [dataclasses.replace(entries[0], watts=entries[0].watts + 1.0)] + list(entries[1:])
    with pytest.raises(ValueError, match=f"fitted on other rows.*{power_heldout.COMMAND}"):
        power_heldout.predictions(held, corpus, moved)
    with pytest.raises(ValueError, match=f"holds no predictions of results/x.json.*{power_heldout.COMMAND}"):
        power_heldout.predictions(held, "results/x.json", entries)
    with pytest.raises(ValueError, match="fitted with random_forest"):
        power_heldout.predictions({**held, "family": "random_forest"}, corpus, entries)
    with pytest.raises(ValueError, match="not a file of saved held-out predictions"):
        power_heldout.predictions({"schema": "other"}, corpus, entries)


def test_mape_and_energy_by_hand():
    x = ee.Launch("k", "a", "b", 1, 1, t_pred_s=2e-6, t_meas_s=4e-6, p_pred_w=300.0, p_meas_w=200.0, e_nvml_j=1e-3)
    assert x.e_pred_j == pytest.approx(6e-4) and x.e_meas_j == pytest.approx(8e-4)
    def est(*times: tuple[float, float]) -> ee.Estimate:
        return ee.Estimate(tuple(ee.Launch("k", "a", "b", 1, 1, t_pred_s=p, t_meas_s=m, p_pred_w=1.0, p_meas_w=1.0,
                                           e_nvml_j=1.0) for p, m in times), "f", "p", "v")
    assert est((6.0, 8.0), (3.0, 2.0)).mape("time") == pytest.approx(37.5)
    with pytest.raises(ValueError, match="zero measured"):
        est((1.0, 0.0)).mape("time")


def test_every_figure_recomputes_from_the_files(saved):
    entries, doc, watts, est = saved
    raw = json.loads(json.dumps(jsonio.read_json(STUDY)))
    launches = {}
    for m in raw["metrics"]:
        if m["name"].startswith("model.ptx.study.thesis.") and m["name"].endswith(".error") and m["name"].count(".") == 5:
            for ln in m["info"]["launches"]:
                launches[(m["name"].split(".")[4], ln["grid"], ln["block"], tuple(ln["trips"]))] = ln
    by_row = {(e.kernel, e.config): (e, w) for e, w in zip(entries, watts)}
    assert len(est.launches) == 26 and len({x.kernel for x in est.launches}) == 12
    for x in est.launches:
        e, w = by_row[(x.kernel, x.corpus_config)]
        ln = launches[(x.kernel, e.info["grid"], e.info["block"], tuple(e.info["trips"]))]
        assert (x.t_pred_s, x.t_meas_s, x.study_config) == (ln["predicted_s"], ln["measured_s"], ln["config"])
        assert (x.p_pred_w, x.p_meas_w, x.e_nvml_j) == (w, e.watts, e.joules_per_launch)
        assert x.e_pred_j == w * ln["predicted_s"]
    errs = [abs(x.p_pred_w * x.t_pred_s - x.p_meas_w * x.t_meas_s) / (x.p_meas_w * x.t_meas_s) for x in est.launches]
    assert est.mape("energy") == pytest.approx(100 * sum(errs) / len(errs), rel=1e-12)
    with pytest.raises(ValueError, match="choose one of"):
        est.mape("joules")


def test_a_planted_time_moves_the_estimate(saved):
    entries, doc, watts, est = saved
    study = ee.study_launches(doc)
    first = est.launches[0]
    key = next(k for k, v in study.items() if k[0] == first.kernel and v["config"] == first.study_config)
    planted = dict(study)
    planted[key] = {**study[key], "predicted_s": study[key]["predicted_s"] * 3.0}
    moved = ee.join(entries, watts, planted)
    n = len(est.launches)
    old_err = abs(first.e_pred_j - first.e_meas_j) / first.e_meas_j
    new_err = abs(3.0 * first.e_pred_j - first.e_meas_j) / first.e_meas_j
    assert moved.mape("energy") == pytest.approx(est.mape("energy") + 100 * (new_err - old_err) / n, rel=1e-9)
    assert moved.mape("energy") != est.mape("energy") and moved.mape("power") == est.mape("power")


def test_a_launch_power_is_predicted_without_its_kernel(saved):
    """Doubling every measured watt of one kernel leaves that kernel's predictions as they were (no fold that
    predicts it trained on it) and moves others' (the folds that trained on it)."""
    entries, _, watts, _ = saved
    planted = [dataclasses.replace(e, watts=e.watts * 2.0) if e.kernel == "vectorAdd" else e for e in entries]
    again = ee.heldout_watts(planted)
    own = [i for i, e in enumerate(entries) if e.kernel == "vectorAdd"]
    # the trees' predictions are summed in threads: equal to the last few bits, not bit for bit
    assert own and all(again[i] == pytest.approx(watts[i], rel=1e-9) for i in own)
    assert any(abs(again[i] - watts[i]) > 1e-3 * watts[i] for i in range(len(entries)) if i not in own)


def test_bad_input_says_what_to_fix(saved):
    entries, _, watts, _ = saved
    with pytest.raises(ValueError, match="predictions for"):
        ee.join(entries, watts[:-1], {})
    with pytest.raises(ValueError, match="test_model_ptx_study"):
        ee.study_launches(ResultsDocument.from_json({"metrics": []}, "empty.json"))
    with pytest.raises(ValueError, match="choose one of"):
        ee.heldout_watts(entries, family="catboost")


def test_the_docs_table_pairs_each_corpus_with_its_own_card():
    from tools.evidence import markers, runfile  # noqa: PLC0415
    from tools.evidence.power_tables import energy  # noqa: PLC0415
    from tools.evidence.registry import Inputs  # noqa: PLC0415
    from tools.evidence.runfile import EvidenceError  # noqa: PLC0415

    def inputs(corpora: str, studies: str) -> Inputs:
        text = (f"<!-- gpuperf:table power-energy corpora={corpora} studies={studies} heldout={power_heldout.PATH} -->\n"
                "<!-- /gpuperf:table -->\n")
        block = markers.parse("t.md", text)[0]
        return Inputs(block, {r: [runfile.load(ROOT, p) for p in ps] for r, ps in block.roles.items()}, ROOT)

    h200_study = "results/nvidia-h200/study-bbc20d4/ps-cuda.json.xz"
    corpus, study = str(CORPUS.relative_to(ROOT)), str(STUDY.relative_to(ROOT))
    with pytest.raises(EvidenceError, match="pair each card's corpus"):
        energy(inputs(corpus, h200_study))
    with pytest.raises(EvidenceError, match="one PTX launch study per corpus"):
        energy(inputs(corpus, f"{study},{h200_study}"))
    assert energy(inputs(corpus, study))[2].startswith("| H100 | `vectorAdd` |")  # the saved predictions, no fit


def test_the_replayed_time_model_matches_the_same_launches_as_the_study_s_own():
    """Taken from the offline replay (``replay=``), the thesis variant's times pair the corpus with the same 26
    launches as the study's recorded ones, each time within the replay's 1 %; the traced variant's pair them too,
    and an unknown variant or a study the replay does not hold is refused."""
    from tools.evidence import markers, runfile  # noqa: PLC0415
    from tools.evidence.power_tables import energy_estimates  # noqa: PLC0415
    from tools.evidence.registry import Inputs  # noqa: PLC0415
    from tools.evidence.runfile import EvidenceError  # noqa: PLC0415

    corpus, study = str(CORPUS.relative_to(ROOT)), str(STUDY.relative_to(ROOT))

    def inputs(extra: str, studies: str = study) -> Inputs:
        text = (f"<!-- gpuperf:table power-energy corpora={corpus} studies={studies} heldout={power_heldout.PATH} "
                f"{extra} -->\n<!-- /gpuperf:table -->\n")
        block = markers.parse("t.md", text)[0]
        return Inputs(block, {r: [runfile.load(ROOT, p) for p in ps] for r, ps in block.roles.items()}, ROOT)

    (_, own), = energy_estimates(inputs(""))
    (_, replayed), = energy_estimates(inputs("replay=results/offline/ptx-study-replay.json.xz variant=thesis"))
    assert len(own.launches) == len(replayed.launches) == 26
    for a, b in zip(own.launches, replayed.launches, strict=True):
        assert (a.kernel, a.grid, a.block, a.t_meas_s) == (b.kernel, b.grid, b.block, b.t_meas_s)
        assert b.t_pred_s == pytest.approx(a.t_pred_s, rel=0.01)
    (_, traced), = energy_estimates(inputs("replay=results/offline/ptx-study-replay.json.xz variant=traced"))
    assert traced.variant == "traced" and len(traced.launches) == 26 and traced.mape("time") < own.mape("time")
    with pytest.raises(EvidenceError, match="with the nonesuch variant"):
        energy_estimates(inputs("replay=results/offline/ptx-study-replay.json.xz variant=nonesuch"))
