"""A failure caused by a figure measured on a busy host says so, with the host's marks and the mend: the
saved PoCL 5.0 run on a GPU machine's Xeon (hypervisor steal up to a core) gives both kinds of figure."""

from __future__ import annotations

from pathlib import Path

from pytest_gpuperf.timing import observers
from pytest_gpuperf.util import jsonio

RUN = (Path(__file__).resolve().parents[1] / "results" / "pocl-cpu-skylake-avx512-intel-r-xeon-r-processor"
       / "ocl-1-opencl.json.xz")


def test_a_contended_figure_names_the_hosts_marks_and_a_quiet_one_nothing():
    metrics = jsonio.read_json(RUN)["metrics"]  # a saved run, read whole where it is stored as a delta
    busy = next(m for m in metrics if m["name"] == "latency.fp64.sqrt.fast.ns")
    note = observers.busy_note(busy["info"])
    assert "5 of 15 windows contended" in note and "steal up to 0.954 cores" in note and "quiet host" in note
    quiet = next(m for m in metrics if m["info"].get("host") and not observers.contended_metric(m["info"]))
    assert observers.busy_note(quiet["info"]) == "" and observers.busy_note(None) == ""
