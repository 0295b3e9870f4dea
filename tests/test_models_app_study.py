"""The application-corpus study end to end on PoCL: the shipped suite under ``--gpuperf-profile=study``, every
figure through the plugin's record path (the catalog's identity keys, the validity checks, the results file).

A CPU device runs the corpus at its PoCL size, warm, in seconds (``studies.sampled.sampled_apps.CPU_NOTE``); the
kernels whose PoCL size spans too few waves of the device's cores are left out and named, and every other
kernel of the corpus must have its figures. The default profile deselects the study, so only this test puts
its records through the session on every change.
"""

from __future__ import annotations

import json

import pytest

from pytest_gpuperf.baselines import catalog
from pytest_gpuperf.corpora.app_kernels import APP_KERNELS
from suite_support import app_study_on_pocl

MEANS = ("model.sampled_apps.mean_error", "model.sampled_apps.mean_overhead", "model.svr_apps.mean_error")


def _long_enough(units: int) -> set[str]:
    """The kernels whose PoCL size has a run of more than three waves of one work-group per core."""
    return {k.name for k in APP_KERNELS if k.cost(**k.tiny).groups > 3 * units}


# on the worker that runs the study's doc table's test (tests/test_evidence_model_studies.py): one run serves both
@pytest.mark.xdist_group("app-study-on-pocl")
def test_the_study_records_every_figure_through_the_plugin_on_pocl(pytester, cl_device):
    units = int(cl_device.info.compute_units)
    if not cl_device.info.is_cpu:
        pytest.skip(f"{cl_device.info.name} is a GPU: the study's GPU size runs for minutes there")
    measured = _long_enough(units)
    if len(measured) < 3:
        pytest.skip(f"this CPU's {units} compute units leave {len(measured)} kernels of the corpus' PoCL size long "
                    "enough for Dao's points; the SVR trains on three or more")
    out, lines = app_study_on_pocl(pytester)  # the study's test passed, Dao's counter model skipped
    # the study runs on a CPU device; Dao's counter model skips there, saying why (no counters, none made up)
    pytest.LineMatcher(lines).fnmatch_lines(["SKIPPED*Dao's ML model reads hardware counters*is opencl, a CPU "
                                             "device: no counter model is run*"])
    doc = json.loads(out.read_text())
    assert doc["run"]["profile"] == "study"
    metrics = {m["name"]: m for m in doc["metrics"]}
    kernels = {n.split(".")[2] for n in metrics if n.startswith("model.sampled_apps.") and n.endswith(".error")
               and ".mean_" not in n}
    assert kernels == measured
    assert set(MEANS) <= set(metrics)
    assert set(metrics) == set(MEANS) | {f"model.sampled_apps.{k}.{f}" for k in measured for f in ("error", "overhead")}
    for name, m in metrics.items():
        assert catalog.missing_identity(name, m["identity"]) == [], name
        assert (m["identity"]["size"], m["identity"]["cache"]) == ("tiny", "warm"), name
    for mean in MEANS:
        assert metrics[mean]["identity"]["kernels"] == ",".join(sorted(measured))
        assert [w.split("=")[0] for w in metrics[mean]["identity"]["waves"].split(",")] == sorted(measured)
    left = metrics["model.sampled_apps.mean_error"]["info"]["left_out_on_this_cpu"]
    assert set(left) == {k.name for k in APP_KERNELS} - measured
